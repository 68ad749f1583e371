"""Experiment 7: OCS schedule mode timing, measured in the data plane (OCSEMU style).

The OCS cycles round-robin maps (day, then a dark night before the next map). One UDP stream crosses
one scheduled circuit; at the receiver its arrivals come in bursts: a burst is a day of that circuit,
the silence between bursts is the rest of the cycle. With n slots the circuit is lit in one of n-1
maps, so silence = (n-2) days + (n-1) nights, and the measured night is derived from it.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from control.plan import without_shadow
from scripts.analysis.metrics import parse_arrivals, percentile
from scripts.experiments.spec import Spec, Variant
from scripts.hosts.hostproc import HostProcs, wait_listening
from tablegen.entries import generate_states

PORT = 5301
PORT_IN = 3  # the OCS input port of the measured circuit (ucd4: br2's optical port)


def ocs_timeline(events_file: Path, port: int, t0: float, t1: float) -> tuple[list[float], list[float]]:
    """(lit periods, dark periods) in ms of one OCS port from the emulator's event log (its own view:
    port-up to port-down, port-down to port-up), within the monotonic window [t0, t1]."""
    if not events_file.exists():
        return [], []
    marks = []
    for line in events_file.read_text().splitlines():
        try:
            e = json.loads(line)
        except ValueError:
            continue
        if e.get("event") in ("port-up", "port-down") and port in (e.get("slot"), e.get("dp_port")) \
                and t0 <= e.get("t_mono", 0) <= t1:
            marks.append((e["t_mono"], e["event"]))
    marks.sort()
    day, night = [], []
    for (ta, ea), (tb, eb) in zip(marks, marks[1:], strict=False):
        if ea == "port-up" and eb == "port-down":
            day.append(1000 * (tb - ta))
        elif ea == "port-down" and eb == "port-up":
            night.append(1000 * (tb - ta))
    return day, night


def bursts(times: list[float], gap_s: float) -> tuple[list[float], list[float]]:
    """(on periods, off periods) in ms of sorted arrival times split where the gap exceeds gap_s;
    the first and last bursts are cut by the run's edges and left out."""
    if len(times) < 2:
        return [], []
    groups = [[times[0]]]
    for a, b in zip(times, times[1:], strict=False):
        if b - a > gap_s:
            groups.append([b])
        else:
            groups[-1].append(b)
    inner = groups[1:-1]
    on = [1000 * (g[-1] - g[0]) for g in inner]
    off = [1000 * (b[0] - a[-1]) for a, b in zip(groups, groups[1:], strict=False)][1:-1]
    return on, off


def _stats(vals: list[float]) -> dict[str, float]:
    s = sorted(vals)
    if not s:
        return {"n": 0}
    return {"n": len(s), "mean": statistics.fmean(s), "p5": percentile(s, 5), "p50": percentile(s, 50),
            "p95": percentile(s, 95), "std": statistics.pstdev(s)}


def configured(spec: Spec, variant: Variant) -> tuple[float, float]:
    """(day ms, night ms): the spec's schedule, overridden by the variant's --day-ms/--night-ms."""
    vals = {"--day-ms": float(spec.schedule.get("day_ms", 100)), "--night-ms": float(spec.schedule.get("night_ms", 10))}
    args = variant.ocs_args
    for i, a in enumerate(args[:-1]):
        if a in vals:
            vals[a] = float(args[i + 1])
    return vals["--day-ms"], vals["--night-ms"]


class ScheduleTiming:
    """Runs of one schedule on ucd4: tables for the target map without shadow paths, UDP h_src -> h_dst."""

    def __init__(self, emu: Any, spec: Spec, variant: Variant) -> None:
        self.emu, self.spec, self.variant = emu, spec, variant
        o = emu.topo.ocs[0]
        circuits = {o.name: [tuple(c) for c in o.circuit_maps[spec.target_map]]}
        states = generate_states(emu.topo, variant.mode, circuits, emu.spray)
        emu.controller.sync({n: without_shadow(s) for n, s in states.items()}, step="schedule-tables")

    def close(self) -> None:
        """Nothing to close."""

    def run(self, run_dir: Path) -> dict[str, Any]:
        """One run: the stream for duration_s, then on/off periods against the configured day/night."""
        run_dir.mkdir(parents=True, exist_ok=True)
        s = self.spec.streams[0]
        sched = self.spec.schedule
        pps = float(sched.get("pps", 2000))
        hosts = self.emu.hosts
        addr = {h.name: h.address for h in self.emu.topo.hosts}
        procs = HostProcs(self.emu.record_process)
        arrivals = run_dir / "arrivals.csv"
        t_mono0 = time.monotonic()
        try:
            procs.start(hosts[s.dst], [sys.executable, "-m", "scripts.hosts.udp", "recv", "--port", str(PORT), "--out",
                                       str(arrivals), "--seconds", str(self.spec.duration_s + 2)], "udp recv")
            wait_listening(hosts[s.dst], PORT, "u")
            sender = procs.start(hosts[s.src], [sys.executable, "-m", "scripts.hosts.udp", "send", "--dst", addr[s.dst],
                                                "--port", str(PORT), "--pps", str(pps), "--seconds",
                                                str(self.spec.duration_s)], "udp send", run_dir / "sent.txt")
            sender.wait(timeout=self.spec.duration_s + 30)
            time.sleep(0.5)
        finally:
            procs.stop_all()
        times = sorted(t for _, t in parse_arrivals(arrivals.read_text()))
        slots = len(sched.get("slots") or []) or 6
        day, night = configured(self.spec, self.variant)
        on, off = bursts(times, max(3.0 / pps, float(sched.get("gap_ms", 2.0)) / 1000))
        on_mean = statistics.fmean(on) if on else day
        nights = [(x - (slots - 2) * on_mean) / (slots - 1) for x in off]
        ocs_day, ocs_night = ocs_timeline(self.emu.log_dir / "ocs-events.jsonl", PORT_IN, t_mono0, time.monotonic())
        out = {"variant": self.variant.name, "day_configured": day, "night_configured": night, "slots": slots,
               "received": len(times), "on_ms": on, "off_ms": off, "day_ms": _stats(on), "night_ms": _stats(nights),
               "ocs_day_ms": ocs_day, "ocs_night_ms": ocs_night}
        (run_dir / "metrics.json").write_text(json.dumps(out))
        return out


def schedule_summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """All runs of one schedule: configured vs measured day and night."""
    if not runs:
        return {"runs": 0}
    on = [x for r in runs for x in r["on_ms"]]
    slots = runs[0]["slots"]
    on_mean = statistics.fmean(on) if on else 0.0
    nights = [(x - (slots - 2) * on_mean) / (slots - 1) for r in runs for x in r["off_ms"]]
    return {"runs": len(runs), "day_configured": runs[0]["day_configured"],
            "night_configured": runs[0]["night_configured"], "day_ms": _stats(on), "night_ms": _stats(nights),
            "ocs_day_ms": _stats([x for r in runs for x in r.get("ocs_day_ms", [])]),
            "ocs_night_ms": _stats([x for r in runs for x in r.get("ocs_night_ms", [])])}


def schedule_plots(data: dict[str, dict[str, Any]], out: Path, name: str) -> list[Path]:
    """CDFs of measured day and night lengths per variant, configured values marked."""
    # imported here, not at the top: matplotlib is an optional heavy dependency
    from scripts.analysis.plots import cdf

    files = []
    for key, label in (("on_ms", "day"), ("night", "night")):
        vals = {}
        for v, d in data.items():
            if key == "on_ms":
                vals[v] = [x for r in d["runs"] for x in r["on_ms"]]
            else:
                s = schedule_summary(d["runs"])
                on_mean = s.get("day_ms", {}).get("mean", 0.0)
                vals[v] = [(x - (r["slots"] - 2) * on_mean) / (r["slots"] - 1) for r in d["runs"] for x in r["off_ms"]]
        files.append(cdf(vals, f"measured {label} length (ms)", out / f"{label}_cdf.png", name))
    return files
