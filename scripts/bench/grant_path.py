"""Benchmark: what a grant's way to a ToR costs, as a table write (seed 001's grants today) and as a
packet (the grant as a control packet, not built), on one switch under traffic.

Starts the ucd4 network on veth pairs (emulation/vethnet.py, the run's target: P4C and SWITCH,
the programs of `--build`, compiled when stale) with a UDP stream h2 -> h3 through it, and times,
alternately on s3:
- *write*: one `slot_policy` entry added to s3's desired state as the reservation agent adds a grant
  (`SwitchSession.apply`: one P4Runtime Write, which returns once the switch has applied it), then
  removed (not timed);
- *packet*: a packet-out to s3 leaving by its port 1, from the stream message's send until the frame
  arrives on h3's interface.
Prints median and 90th percentile of each and their ratio (write / packet). `--hogs N` adds N
busy processes for the run (a loaded machine, as in a seed 001 run: load 3-20 on 2 cores).

    sudo P4C=p4c-bm2-ss SWITCH=simple_switch_grpc .venv/bin/python -m scripts.bench.grant_path \
        [--rounds 100] [--pps 2000] [--hogs 0] [--build build]
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

from control.network import Network
from control.switch import Pipeline
from emulation.ocs.delay import DelayModel
from emulation.vethnet import NetTestbed, Stream, udp_frame
from p4rt.entities import TableEntry
from p4rt.resources import Packet
from p4sim.target import Target
from tablegen.entries import generate_states
from topo.generators import ucd4

ROOT = Path(__file__).resolve().parents[2]
MARK = b"GRANTPATH"
FREE_PATH = 4000  # a path id no ucd4 route uses


class Arrivals:
    """When each marked frame (MARK + round number) reaches an interface."""

    def __init__(self, ifname: str) -> None:
        self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
        self.sock.bind((ifname, 0))
        self.sock.settimeout(0.05)
        self.at: dict[int, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._recv, daemon=True)
        self._thread.start()

    def _recv(self) -> None:
        while not self._stop.is_set():
            try:
                data = self.sock.recv(2048)
            except (TimeoutError, OSError):
                continue
            i = data.find(MARK)
            if i >= 0:
                self.at.setdefault(int.from_bytes(data[i + len(MARK):i + len(MARK) + 4], "big"), time.monotonic())

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.sock.close()


def quantiles(xs: list[float]) -> tuple[float, float]:
    """(median, 90th percentile) in ms."""
    xs = sorted(xs)
    return 1000 * statistics.median(xs), 1000 * xs[min(len(xs) - 1, int(0.9 * len(xs)))]


def run(rounds: int, pps: int, build: Path) -> tuple[list[float], list[float], int, int]:
    """(write latencies, packet latencies, packets not seen, stream frames lost)."""
    topo = ucd4()
    Target.from_env().ensure_build(build, ROOT / "p4src")
    fabric, ocs = Pipeline.from_build("fabric", build), Pipeline.from_build("ocs", build)
    tb = NetTestbed(topo, fabric, ocs, DelayModel(missed_poll_prob=0)).start()
    net = Network(topo, fabric, timeout=5)
    writes: list[float] = []
    try:
        net.install(generate_states(topo, "ecmp"))
        hosts, sw_mac = topo.host_map(), topo.switch_map()["s2"].ports[1]
        h2, h3 = hosts["h2"], hosts["h3"]
        stream = Stream(tb.host_if["h2"], tb.host_if["h3"],
                        lambda seq: udp_frame(h2.mac, sw_mac, h2.address, h3.address, seq), interval=1 / pps)
        arrivals = Arrivals(tb.host_if["h3"])
        sess = net.sessions["s3"]
        table = "FabricIngress.slot_route.slot_policy"
        entry = TableEntry(table=table, match={"path_id": FREE_PATH}, action="FabricIngress.slot_route.slot_electrical")
        stream.start()
        time.sleep(0.5)
        sent: dict[int, float] = {}
        head = bytes.fromhex(h3.mac.replace(":", "") + sw_mac.replace(":", "")) + b"\x88\xb5"  # local ethertype
        try:
            for k in range(rounds):
                t0 = time.monotonic()
                sess.apply(add=[entry])
                writes.append(time.monotonic() - t0)
                sess.apply(remove=[entry])
                payload = head + MARK + k.to_bytes(4, "big")
                sent[k] = time.monotonic()
                sess.client.packet_out(Packet(payload, {"egress_port": 1}))
                time.sleep(0.01)
            time.sleep(0.5)
        finally:
            stream.stop()
            arrivals.close()
        packets = [arrivals.at[k] - sent[k] for k in sent if k in arrivals.at]
        return writes, packets, len(sent) - len(packets), len(stream.lost)
    finally:
        net.close()
        tb.close()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=200, metavar="N")
    p.add_argument("--pps", type=int, default=2000, metavar="N", help="the stream's rate through the switches")
    p.add_argument("--hogs", type=int, default=0, metavar="N", help="busy processes beside the run")
    p.add_argument("--build", default=str(ROOT / "build"), metavar="DIR")
    args = p.parse_args(argv)
    if not 1 <= args.rounds <= 100_000 or not 1 <= args.pps <= 100_000 or not 0 <= args.hogs <= 16:
        p.error(f"--rounds {args.rounds}, --pps {args.pps}, --hogs {args.hogs}: expected 1..100000, 1..100000, 0..16")
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.hogs)]
    try:
        writes, packets, not_seen, stream_lost = run(args.rounds, args.pps, Path(args.build))
    finally:
        for h in hogs:
            h.kill()
            h.wait()
    if not packets:
        print("no packet-out reached h3", file=sys.stderr)
        return 1
    w, pk = quantiles(writes), quantiles(packets)
    print(f"target {os.environ.get('SWITCH', 'default')}, {args.rounds} rounds, stream {args.pps} pps "
          f"(lost {stream_lost}), {args.hogs} hogs, load {os.getloadavg()[0]:.1f}")
    print(f"  write  (insert one entry):     median {w[0]:7.2f} ms, p90 {w[1]:7.2f} ms")
    print(f"  packet (packet-out to a port): median {pk[0]:7.2f} ms, p90 {pk[1]:7.2f} ms, "
          f"{not_seen} of {args.rounds} not seen")
    print(f"  write / packet: median {w[0] / pk[0]:.1f}x, p90 {w[1] / pk[1]:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
