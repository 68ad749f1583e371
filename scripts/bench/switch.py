"""Benchmark the p4sim switch: frames per second through the fabric program over veth pairs.

One switch process (a child running p4sim's Device on two veth pairs, the tables installed through
the runtime-state API) and --senders sender processes that offer 64 B and 1500 B frames as fast as
they can. The figure is what reaches the sink interface per second in the steady state (read from
its counters), and that count per CPU-second the switch process used: the machine's cores are shared
with the senders and with anything else running, so the second figure is what the switch does with
a core to itself. Needs root. Also reports the in-process rate (no sockets) and the runtime-state
API insert rate.

    sudo .venv/bin/python -m scripts.bench.switch [--seconds 3] [--json build/fabric.json] [--senders 1]
"""

from __future__ import annotations

import argparse
import logging
import multiprocessing as mp
import os
import socket
import sys
import tempfile
import time
from pathlib import Path

from emulation.state import cpu_seconds
from fabric.contract import (
    LIVENESS_SELECTOR,
    PATH,
    PATH_STATIC,
    PORT_LIVENESS,
    PORT_MAC,
    PORT_UP,
    ROUTE,
    SET_PATH,
    SET_SMAC,
)
from p4sim.compiler import cli as compile_cli
from p4sim.switch.device import Device
from p4sim.switch.heap import limit_malloc_arenas
from p4sim.switch.ports import PortIO
from p4sim.switch.testdata.veth import ETH_P_ALL, is_root, veth_pairs
from p4sim.switch.values import ActionCall, Exact, GroupRef, Lpm

ROOT = Path(__file__).resolve().parents[2]
log = logging.getLogger("bench_switch")
SIZES = (64, 1500)


def fabric_json(path: str | None) -> bytes:
    """The fabric program: the given JSON, or p4src/fabric.p4 compiled with p4sim-compile."""
    if path:
        return Path(path).read_bytes()

    out = Path(tempfile.mkdtemp(prefix="bench_switch_"))
    rc = compile_cli.main([str(ROOT / "p4src/fabric.p4"), "-I", str(ROOT / "p4src"), "-o", str(out / "f.json"),
                           "--p4runtime-files", str(out / "f.p4info.txtpb")])
    if rc != 0:
        raise SystemExit("bench_switch: p4sim-compile failed on p4src/fabric.p4")
    return (out / "f.json").read_bytes()


def install(dev: Device) -> None:
    """Route 10.0.2.0/24 over static path 5 (port 2), the fabric's common case on a ToR."""
    pl = dev.pipeline
    pl.table(ROUTE).insert((Lpm(0x0A000200, 24),), ActionCall(f"FabricIngress.routing.{SET_PATH}", (5,)))
    pl.table(PATH).insert((Exact(5), Exact(0)), ActionCall(f"FabricIngress.path_select.{PATH_STATIC}", (2, 0x020000000002)))
    live = pl.profile(LIVENESS_SELECTOR)
    for port in (1, 2):
        live.insert_member(port, ActionCall(f"FabricIngress.failover.{PORT_UP}"))
        live.insert_group(port, [(port, 1, port)])
        pl.table(PORT_LIVENESS).insert((Exact(port),), GroupRef(port))
        pl.table(PORT_MAC).insert((Exact(port),), ActionCall(f"FabricEgress.egress_rewrite.{SET_SMAC}", (0x0A0000000000 + port,)))


def frame(size: int, seq: int = 0) -> bytes:
    """An Ethernet/IPv4/UDP frame of `size` bytes (without FCS) to 10.0.2.9."""
    payload = max(0, size - 42)
    ip_len = 28 + payload
    ip = bytearray(b"\x45\x00" + ip_len.to_bytes(2, "big") + b"\x00\x01\x00\x00\x40\x11\x00\x00"
                   + bytes([10, 0, 1, 1, 10, 0, 2, 9]))
    s = sum(int.from_bytes(ip[i:i + 2], "big") for i in range(0, 20, 2))
    s = (s & 0xFFFF) + (s >> 16)
    ip[10:12] = (~s & 0xFFFF).to_bytes(2, "big")
    udp = (1000 + seq % 1000).to_bytes(2, "big") + b"\x00\x50" + (8 + payload).to_bytes(2, "big") + b"\x00\x00"
    return bytes.fromhex("0a0000000001" "000000000001" "0800") + bytes(ip) + udp + b"\xab" * payload


def switch_child(json_bytes: bytes, ports: dict[int, str], ready, stop, profile: bool) -> None:  # noqa: ANN001
    """The switch process: load, install, run until told to stop (--profile: cProfile the I/O loop)."""
    limit_malloc_arenas()  # as p4sim-switch
    dev = Device(ports=ports, cpu_port=255, freeze_heap=True)
    dev.commit_pipeline(dev.load_pipeline(json_bytes))
    install(dev)
    if not profile:
        dev.start()
        ready.set()
        stop.wait()
        dev.stop()
        return
    import cProfile
    import pstats
    import threading


    io = dev._io = PortIO(dev)

    def stopper() -> None:
        stop.wait()
        io._stop = True
        os.write(io._wake_w, b"x")

    threading.Thread(target=stopper, daemon=True).start()
    ready.set()
    prof = cProfile.Profile()
    prof.runcall(io._loop)
    io.close()
    pstats.Stats(prof).sort_stats("tottime").print_stats(18)


def run_veth(json_bytes: bytes, seconds: float, profile: bool,
             senders: int = 1) -> dict[int, tuple[float, float, float]]:
    """(fps received, frames per CPU-second of the switch process, its CPU seconds) per frame size."""
    results = {}
    with veth_pairs(2, "swb") as pairs:
        ports = {1: pairs[0][0], 2: pairs[1][0]}
        ctx = mp.get_context("fork")
        ready, stop = ctx.Event(), ctx.Event()
        child = ctx.Process(target=switch_child, args=(json_bytes, ports, ready, stop, profile))
        child.start()
        try:
            if not ready.wait(60):
                raise SystemExit("bench_switch: the switch did not start")
            for size in SIZES:
                frames = [frame(size, i) for i in range(64)]
                cpu0 = cpu_seconds(child.pid) or 0.0
                fps, got = _offer(pairs[0][1], pairs[1][1], frames, seconds, senders)
                cpu = cpu_seconds(child.pid) or 0.0 - cpu0
                results[size] = (fps, got / cpu if cpu > 0 else 0.0, cpu)
        finally:
            stop.set()
            child.join(30)
            if child.is_alive():
                child.terminate()
                child.join()
    return results


def _rx_packets(ifname: str) -> int:
    """The interface's received-frames counter (the sink needs no socket and no CPU)."""
    with open(f"/sys/class/net/{ifname}/statistics/rx_packets") as f:
        return int(f.read())


def _blast(ifname: str, frames: list[bytes], seconds: float) -> None:
    """A sender process: send frames on ifname as fast as possible for `seconds`."""
    tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    tx.bind((ifname, 0))
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        for f in frames:
            tx.send(f)
    tx.close()


def _offer(src: str, sink: str, frames: list[bytes], seconds: float, senders: int) -> tuple[float, int]:
    """Offer frames from `senders` processes for `seconds`; return (frames/s that reached sink, count)."""
    _blast(src, frames[:8], 0.0)  # warm-up
    time.sleep(0.3)
    ctx = mp.get_context("fork")
    procs = [ctx.Process(target=_blast, args=(src, frames, seconds + 1.0)) for _ in range(senders)]
    for p in procs:
        p.start()
    time.sleep(0.5)  # ramp-up: measure the steady state, the switch's input queue full at both ends
    start = _rx_packets(sink)
    t0 = time.perf_counter()
    time.sleep(seconds)
    got = _rx_packets(sink) - start
    t1 = time.perf_counter()
    for p in procs:
        p.join()
    time.sleep(0.5)  # let the switch drain before the next run
    return got / (t1 - t0), got


def run_in_process(json_bytes: bytes, n: int = 30000) -> dict[int, float]:
    """Frames per second through Device.process (no sockets), for each frame size."""
    dev = Device(ports={1: "x1", 2: "x2"}, cpu_port=255, freeze_heap=True)
    dev.commit_pipeline(dev.load_pipeline(json_bytes))
    install(dev)
    out = {}
    for size in SIZES:
        f = frame(size)
        assert dev.process(1, f), "the benchmark frame is not forwarded"
        t0 = time.perf_counter()
        for _ in range(n):
            dev.process(1, f)
        out[size] = n / (time.perf_counter() - t0)
    return out


def run_writes(json_bytes: bytes, n: int = 4000) -> float:
    """Runtime-state API inserts per second (exact-match `path` entries), no P4Runtime."""
    dev = Device(freeze_heap=True)
    dev.commit_pipeline(dev.load_pipeline(json_bytes))
    path = dev.pipeline.table(PATH)
    t0 = time.perf_counter()
    for i in range(n):
        path.insert((Exact(i), Exact(0)), ActionCall(f"FabricIngress.path_select.{PATH_STATIC}", (2, i)))
    return n / (time.perf_counter() - t0)


def main() -> int:
    """Entry point."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", metavar="PROG.json", help="bmv2 JSON of the fabric (default: compile p4src/fabric.p4)")
    ap.add_argument("--seconds", type=float, default=3.0, metavar="S", help="offered-load time per size")
    ap.add_argument("--profile", action="store_true", help="cProfile the switch process")
    ap.add_argument("--senders", type=int, default=1, metavar="N", help="sender processes (default 1)")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    data = fabric_json(args.json)
    for size, fps in run_in_process(data).items():
        print(f"switch in-process (no I/O)  fabric  {size:5d} B: {fps:10,.0f} frames/s")
    print(f"switch state API inserts (exact table): {run_writes(data):10,.0f} writes/s")
    if not is_root():
        print("switch over veth: skipped (needs root)")
        return 0
    for size, (fps, per_cpu, cpu) in run_veth(data, args.seconds, args.profile, args.senders).items():
        print(f"switch over veth, one process  fabric  {size:5d} B: {fps:10,.0f} frames/s "
              f"({per_cpu:,.0f} frames per CPU-second of the switch; it used {cpu / args.seconds:.0%} of a core)")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
