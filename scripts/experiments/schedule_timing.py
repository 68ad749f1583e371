"""Seed 002's timing measurement of an OCS schedule, by the packets, on the `ocs` switch alone.

    sudo .venv/bin/python -m scripts.experiments.schedule_timing [--day-ms 10] [--night-ms 1] [--pps 8000]
        [--seconds 5] [--modes thread,dataplane] [--out results/schedule-timing]

Three OCS ports on veth pairs (the switch of $P4C/$SWITCH, as the other benches), a round robin of
their two maps (1->2, 2->3, 3->1, then 1->3, 2->1, 3->2), each a night then a day. A sender process
stamps frames on port 1 with sequence numbers at `pps`, on an absolute time grid, and records when it
sent each; tcpdump on ports 2 and 3 records which came out where, and when (the kernel's receive
timestamp, in ns). A day is a run of consecutive frames out of one port, a night the time from the
end of one day to the start of the next; both are measured twice: in send time (OCSEMU's perceived
day, sender side: what reached the OCS while lit) and in receive time (seed 002's method, at the
receivers). The sender's busy loop gets a core of its own and the switch the others, as a host's
NIC and a switch would not share a core. Modes: `thread` (emulation/ocs/schedule.py's
ScheduleRunner: a circuit-table write per map from a Python thread) and `dataplane` (the cycle written
once into the time-flow tables). Resolution: one send interval (125 us at 8000 pps).
"""

from __future__ import annotations

import argparse
import json
import logging
import multiprocessing
import os
import signal
import socket
import statistics
import struct
import subprocess
import time
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from control.switch import Pipeline, SwitchSession
from emulation.links import switch_port_offloads_off
from emulation.ocs.dataplane import P4RuntimeCircuits
from emulation.ocs.delay import DelayModel
from emulation.ocs.emulator import EmulatedOcs
from emulation.ocs.schedule import Schedule, ScheduleRunner, round_robin, write_dataplane_schedule
from emulation.switchproc import start_switch
from p4sim.target import Target, label
from scripts.hosts.capture import parse_tcpdump_stats, tcpdump_command

log = logging.getLogger(__name__)

ROOT = Path(__file__).resolve().parents[2]
ETHERTYPE = 0x88B8  # never parsed: the ocs program forwards by ingress port only
FRAME = struct.Struct("!6s6sHQ")
SETTLE_S = 0.3  # before measuring: the first map set (thread) or the first cycle (dataplane)


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True)


def runs(seqs_by_port: dict[int, list[int]]) -> list[tuple[int, int, int]]:
    """(port, first seq, last seq) of each run of consecutive sequence numbers out of one port, in
    sequence order (a run ends at a gap or at a frame out of another port)."""
    where = sorted((s, p) for p, seqs in seqs_by_port.items() for s in seqs)
    out: list[tuple[int, int, int]] = []
    for s, p in where:
        if out and out[-1][0] == p and out[-1][2] == s - 1:
            out[-1] = (p, out[-1][1], s)
        else:
            out.append((p, s, s))
    return out


def days_and_nights(at: Sequence[float] | Mapping[int, float], seqs_by_port: dict[int, list[int]],
                    interval: float) -> tuple[list[float], list[float]]:
    """(days, nights) in ms from each frame's time `at[seq]` (its send time, or its arrival): each
    inner run of frames out of one port is a day; the time between two runs out of different ports
    (nothing delivered) is a night. The first and last runs are cut by the measurement's edges and
    left out."""
    rs = runs(seqs_by_port)[1:-1]
    days = [1000 * (at[b] - at[a] + interval) for _, a, b in rs]
    nights = [1000 * (at[c] - at[b] - interval) for (p, _, b), (q, c, _) in zip(rs, rs[1:], strict=False)
              if p != q]
    return days, nights


def summary(vals: list[float], configured: float) -> dict[str, float]:
    """Mean, spread and the share within 2% of the configured length."""
    if not vals:
        return {"n": 0}
    s = sorted(vals)
    return {"n": len(s), "mean": statistics.fmean(s), "std_us": 1000 * statistics.pstdev(s),
            "p1": s[len(s) // 100], "p50": s[len(s) // 2], "p99": s[min(len(s) - 1, 99 * len(s) // 100)],
            "within_2pct": sum(abs(v - configured) <= 0.02 * configured for v in s) / len(s)}


class Bed:
    """The ocs switch on three veth pairs; the test ends opened as AF_PACKET sockets."""

    def __init__(self, target: Target, build: Path) -> None:
        self.tag = uuid.uuid4().hex[:4]
        self.ports = {p: (f"st{self.tag}s{p}", f"st{self.tag}p{p}") for p in (1, 2, 3)}
        self.made: list[str] = []
        self.target, self.build = target, build
        self.proc = None
        self.circuits: P4RuntimeCircuits | None = None  # the ocs switch's tables, through its session

    def __enter__(self) -> Bed:
        for sw, peer in self.ports.values():
            _ip("link", "add", sw, "type", "veth", "peer", "name", peer)
            self.made.append(sw)
            for x in (sw, peer):
                _ip("link", "set", x, "up")
            switch_port_offloads_off(sw)
        self.proc = start_switch(self.target, self.build / "ocs.json", {p: sw for p, (sw, _) in self.ports.items()},
                                 device_id=1)
        # at the switches' priority, as start_switch runs them (emulation/priority.py); and off the core
        # the sender's busy loop takes (send_stream)
        switch_cpus, _ = split_cpus()
        for tid in os.listdir(f"/proc/{self.proc.proc.pid}/task"):
            os.sched_setaffinity(int(tid), switch_cpus)
        session = SwitchSession("ocs", self.proc.grpc_addr, 1, Pipeline.from_build("ocs", self.build))
        self.circuits = P4RuntimeCircuits(session)
        session.connect()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.circuits is not None:
            self.circuits.session.close()
        if self.proc is not None:
            self.proc.stop()
        for sw in self.made:
            subprocess.run(["ip", "link", "del", sw], capture_output=True)


def split_cpus() -> tuple[list[int], list[int]]:
    """(the switch's CPUs, the sender's): the last core for the sender's busy loop, so that it never
    delays the switch, and the rest for the switch (one core: both share it)."""
    cpus = sorted(os.sched_getaffinity(0))
    return (cpus[:-1], cpus[-1:]) if len(cpus) > 1 else (cpus, cpus)


def send_stream(port_if: str, pps: float, n: int, sent: Any) -> None:
    """The sender (run in a process of its own, so that no receiver or switch thread shares its
    interpreter): `n` stamped frames on an absolute grid of 1/pps, each send time into `sent`."""
    os.sched_setaffinity(0, split_cpus()[1])
    tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETHERTYPE))
    tx.bind((port_if, 0))
    interval, pad = 1.0 / pps, bytes(46)
    t0 = time.monotonic()
    for i in range(n):
        due = t0 + i * interval
        while time.monotonic() < due:
            pass
        sent[i] = time.monotonic()
        tx.send(FRAME.pack(b"\xff" * 6, b"\x02" * 6, ETHERTYPE, i) + pad)
    tx.close()


def read_arrivals(pcap: Path) -> dict[int, float]:
    """Sequence number -> the receiving kernel's timestamp (s) of each stamped frame in a capture."""
    from scapy.utils import RawPcapReader

    out: dict[int, float] = {}
    with RawPcapReader(str(pcap)) as reader:
        scale = 1e-9 if reader.nano else 1e-6
        for data, meta in reader:
            if len(data) >= FRAME.size:
                _, _, ethertype, seq = FRAME.unpack_from(data)
                if ethertype == ETHERTYPE:
                    out[seq] = meta.sec + meta.usec * scale
    return out


def measure(bed: Bed, mode: str, day_ms: float, night_ms: float, pps: float, seconds: float,
            workdir: Path) -> dict[str, Any]:
    """One run of one mode: the schedule, the stream, days and nights at both ends.

    The receivers are tcpdump captures (kernel receive timestamps, nanosecond precision), the sender
    a process of its own: an earlier version received in Python threads beside the sender's busy
    loop, and on a quiet machine they lost most frames (14485 of 40000 on bmv2), which broke days up."""
    assert bed.circuits is not None
    schedule = Schedule(round_robin(3), day_ms, night_ms)
    runner = None
    bed.circuits.clear_all()
    if mode == "dataplane":
        write_dataplane_schedule(bed.circuits, schedule, 3)
    else:
        runner = ScheduleRunner(EmulatedOcs(3, DelayModel.instant(), bed.circuits), schedule)
        runner.start()
    n = int(pps * seconds)
    interval = 1.0 / pps
    pcaps = {p: workdir / f"{mode}-port{p}.pcap" for p in (2, 3)}
    captures = [subprocess.Popen([*tcpdump_command(bed.ports[p][1], pcaps[p], f"ether proto {ETHERTYPE:#x}", 64),
                                  "--time-stamp-precision", "nano"], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, text=True) for p in pcaps]
    try:
        time.sleep(SETTLE_S)
        ctx = multiprocessing.get_context("spawn")
        sent = ctx.Array("d", n, lock=False)
        sender = ctx.Process(target=send_stream, args=(bed.ports[1][1], pps, n, sent))
        sender.start()
        sender.join()
        time.sleep(0.3)
    finally:
        stats = []
        for c in captures:
            c.send_signal(signal.SIGINT)
            _, err = c.communicate(timeout=10)
            stats.append(parse_tcpdump_stats(err))
        if runner is not None:
            runner.stop()
    sent_at = list(sent)
    arrivals = {p: read_arrivals(pcaps[p]) for p in pcaps}
    got = {p: sorted(a) for p, a in arrivals.items()}
    rx_at = {s: t for a in arrivals.values() for s, t in a.items()}
    late = sum(1 for i in range(n) if sent_at[i] - (sent_at[0] + i * interval) > interval)
    days, nights = days_and_nights(sent_at, got, interval)
    rx_days, rx_nights = days_and_nights(rx_at, got, interval)
    return {"mode": mode, "day_configured_ms": day_ms, "night_configured_ms": night_ms, "pps": pps,
            "sent": n, "received": len(rx_at), "late_sends": late,
            "capture_unwritten": sum(s.unwritten for s in stats if s is not None),
            "days_ms": days, "nights_ms": nights, "day": summary(days, day_ms), "night": summary(nights, night_ms),
            "rx_days_ms": rx_days, "rx_nights_ms": rx_nights,
            "rx_day": summary(rx_days, day_ms), "rx_night": summary(rx_nights, night_ms)}


def plot(results: list[dict[str, Any]], out: Path, name: str) -> list[Path]:
    """CDFs of the days and nights the packets saw, one curve per mode and end (sent, received)."""
    from scripts.analysis.plots import cdf

    return [cdf({f"{r['mode']} {end}": r[f"{prefix}{what}s_ms"] for r in results
                 for end, prefix in (("sent", ""), ("received", "rx_"))},
                f"{what} length seen by the packets (ms)", out / f"{name}-{what}-cdf.png", name)
            for what in ("day", "night")]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--day-ms", type=float, default=10.0, metavar="MS")
    p.add_argument("--night-ms", type=float, default=1.0, metavar="MS")
    p.add_argument("--pps", type=float, default=8000.0, metavar="N")
    p.add_argument("--seconds", type=float, default=5.0, metavar="S")
    p.add_argument("--modes", default="thread,dataplane", metavar="M[,M]")
    p.add_argument("--build", default=str(ROOT / "build"), metavar="DIR")
    p.add_argument("--out", default=str(ROOT / "results" / "schedule-timing"), metavar="DIR")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    if os.geteuid() != 0:
        raise SystemExit("schedule_timing: needs root (veth pairs); expected sudo")
    target = Target.from_env()
    build = Path(args.build)
    print(target.ensure_build(build, ROOT / "p4src"), flush=True)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    who = label(target.switch)
    load = os.getloadavg()[0]
    results = []
    for mode in args.modes.split(","):
        if mode not in ("thread", "dataplane"):
            raise SystemExit(f"mode {mode!r}: expected thread or dataplane")
        with Bed(target, build) as bed:
            r = measure(bed, mode, args.day_ms, args.night_ms, args.pps, args.seconds, out)
        r.update({"switch": who, "load_avg_1min": load})
        results.append(r)
        for end, prefix in (("sent", ""), ("received", "rx_")):
            d, nt = r[f"{prefix}day"], r[f"{prefix}night"]
            print(f"{who} {mode}, by {end} time: days {d.get('n', 0)} mean {d.get('mean', 0):.3f} ms std "
                  f"{d.get('std_us', 0):.0f} us, {100 * d.get('within_2pct', 0):.1f}% within 2%; nights mean "
                  f"{nt.get('mean', 0):.3f} ms std {nt.get('std_us', 0):.0f} us", flush=True)
        print(f"{who} {mode}: sent {r['sent']} ({r['late_sends']} late), received {r['received']}, "
              f"unwritten by the captures {r['capture_unwritten']}; load {load:.1f}", flush=True)
    name = f"{who}-day{args.day_ms:g}-night{args.night_ms:g}"
    (out / f"{name}.json").write_text(json.dumps(results))
    figures = plot(results, out, name)
    print(f"written {out / name}.json, {', '.join(str(f) for f in figures)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
