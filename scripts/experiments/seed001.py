"""Seed 001: TCP over a slotted optical core with two-way vs one-way reservation, and the electrical
leaf-spine, on bijective workloads of TDC d (each ToR's host sends to the hosts of the next d ToRs).
Kind `reservation` of the experiment runner:

    sudo .venv/bin/python -m scripts run scripts/experiments/e9-seed001-reservation.yaml [--out results/seed001]

A variant is a reservation (two-way, one-way, electrical) at a TDC; the spec's `reservation:` section
holds the timing (spec.Reservation) and `duration_s` is each run's timeout (unfinished flows are
killed). Every run starts its own emulation (the holds' registers and TCP's state start empty).
Scale: the paper's microseconds are milliseconds here and its 10 Gbit/s is 10 Mbit/s, so bytes per
unit of time (a 50 KB burst lasts 40 ms) and the timing (T_sw = T_proc = T_oh = 1 ms) keep their
ratios; flows are `flow_kb` instead of 25 MB x 40 per server. Topology: ocscore(N ToRs, one host
each, one optical uplink each, one electrical spine). Optical variants hold every ToR-to-ToR packet
in its destination's virtual output queue (SlotHold) until a grant lights its slots
(control/reservation_agent.py); electrical writes no schedule (routes via the spine). TCP: scripts.hosts.flows
Reno (the paper's; the window is Linux's, not 64 KB). Reported per run (metrics.json): completion time of each flow,
retransmissions, mean RTT, throughput over time, grants and lost bursts, the OCS's dark drops, the
ToRs' hold counters, the load average.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

from control.grants import Burst, OneWay, TwoWay
from control.reservation import Timing
from control.reservation_agent import PathState, ReservationAgent
from emulation.priority import emulated_control_thread
from fabric.contract import HOLD_COUNTERS, PORT_DEQ, PORT_ENQ
from scripts.experiments.seed001_core import OCS_DROPS, slotted, tor_holds
from scripts.experiments.seed001_loop import DataPlaneLoop, loop_metrics, loop_setup
from scripts.experiments.spec import Reservation
from scripts.hosts.hostproc import HostProcs, wait_listening
from scripts.hosts.kernel import SS_MARK
from tablegen.reservation import grant_ocs_entries, grant_paths, grant_tor_entries
from tablegen.schedule import light_spans, route_paths
from topo.model import HOLD_OUT_PORT

BASE_PORT = 5600
# every client connects at one wall-clock time (the paper's flows start together): this long after
# the clients are launched, each launch a new Python process in a host's namespace
START_MARGIN_S, START_PER_FLOW_S = 0.5, 0.05
# the controller-driven loop's variants and the scheduler each runs (the data plane's: two-way, one-way)
CONTROLLER_LOOPS = {"two-way-controller": "two-way", "one-way-controller": "one-way"}


def bijective(tors: int, tdc: int) -> list[tuple[int, int]]:
    """(src, dst) ToR pairs of TDC `tdc`: each ToR to the next `tdc` ToRs (each shift a permutation)."""
    if not 1 <= tdc < tors:
        raise ValueError(f"tdc={tdc}: expected 1..{tors - 1} for {tors} ToRs")
    return [(i, (i + k) % tors) for k in range(1, tdc + 1) for i in range(tors)]


SS_LINE = re.compile(r"^(?:[A-Z][A-Z0-9-]*\s+)?\d+\s+\d+\s+(\S+):(\d+)\s+(\S+)")  # state (FIN-WAIT-1) optional


def parse_samples(text: str, ports: set[int]) -> dict[int, list[tuple[float, int, float | None, int]]]:
    """Per server port (a flow's sender): (epoch, bytes acked, RTT ms, retransmissions) from the
    sampler's `@@ <epoch>` marks and `ss -tinH` entries (two lines each)."""
    out: dict[int, list[tuple[float, int, float | None, int]]] = {}
    t, port = 0.0, None
    for line in text.splitlines():
        if line.startswith(SS_MARK):
            t, port = float(line.split()[1]), None
            continue
        m = SS_LINE.match(line)
        if m and not line.startswith((" ", "\t")):
            port = int(m.group(2)) if int(m.group(2)) in ports else None
            continue
        if port is not None and "bytes_acked:" in line:
            acked = re.search(r"bytes_acked:(\d+)", line)
            rtt = re.search(r"\brtt:([\d.]+)", line)
            re_ = re.search(r"\bretrans:\d+/(\d+)", line)
            out.setdefault(port, []).append((t, int(acked.group(1)) if acked else 0,
                                             float(rtt.group(1)) if rtt else None, int(re_.group(1)) if re_ else 0))
    return out


def sampler(period_s: float, out: Path) -> list[str]:
    """A host's loop appending timestamped `ss -tinH` samples of its connected sockets (a server that
    wrote its whole flow and closed is in FIN-WAIT-1 while the flow is still sending)."""
    # the path and the period are the script's arguments ($1, $2), never part of its text
    return ["sh", "-c", f'while :; do echo {SS_MARK} $(date +%s.%N) >> "$1"; '
            'ss -tinH state connected >> "$1" 2>/dev/null; sleep "$2"; done', "sampler", str(out), f"{period_s:g}"]


def optical_setup(emu: Any, topo: Any, s: Reservation, variant: str,
                  rate_mbit: float) -> tuple[ReservationAgent, dict[str, Any]]:
    """The controller-driven loop (variants two-way-controller, one-way-controller): write the
    calendar and the holds, start the reservation controller; the agent and the clocks. Every write
    is a change of a switch's desired state, through its session: the ToRs' the controller's, the
    OCS's one of its own (primary over the emulator's, which wrote the round robin)."""
    o = topo.ocs[0]
    net = emu.controller
    core = slotted(emu, topo, s)
    cal, tors = core.cal, core.tors
    night_us = round(s.night_ms * 1000)
    index = {name: i for i, name in enumerate(tors)}
    paths: dict[str, list[PathState]] = {}
    for name in tors:
        routes = route_paths(core.states[name])
        light = light_spans(core.sched(name, s), s.before_us, core.after[name])
        paths[name] = [PathState(index[name], index[dst], pid,
                                 lambda s, a=name, b=dst, p=pid, lt=light: grant_tor_entries(topo, o, a, b, p, s, lt),
                                 lambda s, a=name, b=dst: grant_ocs_entries(o, a, b, s))
                       for dst, pid in sorted(grant_paths(topo, o, name, routes).items())]
    net.sync(tor_holds(emu, topo, s, core), step="reservation-holds", trust_cache=True)
    timing = Timing(switch_s=night_us / 1e6, proc_s=s.proc_ms / 1000, overhead_s=s.proc_ms / 1000,
                    guard_s=s.guard_ms / 1000, rate_bps=rate_mbit * 1e6)
    burst = Burst(cap_bytes=s.depth * 1514)
    scheduler = (TwoWay if variant == "two-way" else OneWay)(len(tors), cal, timing, burst)
    agent = ReservationAgent(scheduler, {n: net.sessions[n] for n in tors}, core.ocs, paths,
                             poll_s=s.poll_ms / 1000, max_burst=s.burst_kb * 1000,
                             assembly_s=(s.slot_ms if s.assembly_ms is None else s.assembly_ms) / 1000,
                             loop_passes=s.hold_passes, growth=s.burst_growth,
                             lead_floor_s=timing.proc_s + timing.overhead_s,  # the model's trip, when writes are quicker
                             drop_ports=sorted(p.port for p in o.ports), audit_every=s.audit_every,
                             on_thread=emulated_control_thread)  # the paper's scheduler: part of the network
    time.sleep(max(0.0, cal.epoch_s - time.monotonic()))
    agent.start()
    return agent, core.clocks()


class ReservationRun:
    """Kind reservation: one run of a variant (a reservation at a TDC) on the runner's emulation."""

    def __init__(self, emu: Any, spec: Any, variant: Any) -> None:
        self.emu, self.spec, self.variant = emu, spec, variant

    def close(self) -> None:
        """Nothing outlives a run."""

    def run(self, rdir: Path) -> dict[str, Any]:
        """The workload's flows, the reservation controller for an optical variant; returns the metrics
        (also metrics.json)."""
        emu, spec, s = self.emu, self.spec, self.spec.reservation
        variant, tdc, topo = self.variant.reservation, self.variant.tdc, emu.topo
        rdir.mkdir(parents=True, exist_ok=True)
        tors = sorted({p.switch for p in topo.ocs[0].ports}, key=lambda n: int(n.removeprefix("leaf")))
        procs = HostProcs(emu.record_process)
        agent: ReservationAgent | None = None
        dp: DataPlaneLoop | None = None
        try:
            hosts = emu.hosts
            names = [f"h{t}_1" for t in range(1, len(tors) + 1)]
            addr = {h.name: h.address for h in topo.hosts}
            # each pair of the workload carries `flows_per_pair` TCP flows, or its share of a server's
            # `flows_per_server` (the paper: 40 flows a server at every TDC)
            per_pair = s.flows_per_server // tdc if s.flows_per_server else s.flows_per_pair
            flows = [(src, d, k) for src, d in bijective(len(tors), tdc) for k in range(per_pair)]
            ports = {BASE_PORT + i for i in range(len(flows))}
            for i, (src, _d, _k) in enumerate(flows):  # scripts.hosts.flows: the server sends, the client times to FIN
                procs.start(hosts[names[src]], [sys.executable, "-m", "scripts.hosts.flows", "serve", "--port",
                                                str(BASE_PORT + i), "--size", str(s.flow_kb * 1024), "--cc", "reno"],
                            f"serve {i}")
            for i, (src, _d, _k) in enumerate(flows):
                wait_listening(hosts[names[src]], BASE_PORT + i, "t")
            if variant in CONTROLLER_LOOPS:
                agent, clocks = optical_setup(emu, topo, s, CONTROLLER_LOOPS[variant], spec.link_rate_mbit)
                drops0 = agent.ocs.counter_packets(OCS_DROPS, agent.drop_ports)
                holds0 = {name: agent.tors[name].counter_packets(HOLD_COUNTERS, [st.path_id for st in states])
                          for name, states in agent.paths.items()}
            elif variant != "electrical":
                dp = loop_setup(emu, topo, s, variant, tdc)
                counts0 = dp.counts()
                time.sleep(max(0.0, dp.epoch_s - time.monotonic()))
            senders = sorted({f[0] for f in flows})
            for src in senders:
                procs.start(hosts[names[src]], sampler(s.sample_s, rdir / f"ss-{src}.txt"), f"ss {src}")
            load0 = os.getloadavg()
            t0_wall = time.time() + START_MARGIN_S + START_PER_FLOW_S * len(flows)
            t0 = time.monotonic() + (t0_wall - time.time())
            clients = []
            for i, (src, d, k) in enumerate(flows):
                clients.append(procs.start(hosts[names[d]], [sys.executable, "-m", "scripts.hosts.flows", "fetch",
                                                             "--dst", addr[names[src]], "--port", str(BASE_PORT + i),
                                                             "--at", f"{t0_wall:.6f}"],
                                           f"fetch {flow_name(src, d, k)}", rdir / f"fct-{src}-{d}-{k}.json"))
            unfinished = 0
            for p in clients:
                try:
                    p.wait(timeout=max(0.1, t0 + spec.duration_s - time.monotonic()))
                except Exception:
                    unfinished += 1
                    procs.stop(p)
            wall = time.monotonic() - t0
            load1 = os.getloadavg()
            fabric = self.variant.topology if self.variant.topology is not None else spec.topology
            spine = fabric.get("spine_mbit") or spec.link_rate_mbit  # ocscore's default
            result: dict[str, Any] = {"name": self.variant.name, "variant": variant, "tdc": tdc, "tors": len(tors),
                                      "flow_kb": s.flow_kb, "flows_per_pair": per_pair,
                                      "rate_mbit": spec.link_rate_mbit, "electrical_mbit": spine,
                                      "slot_ms": s.slot_ms, "night_ms": s.night_ms, "rto_min": self.variant.rto_min,
                                      "sysctl": dict(self.variant.sysctl),
                                      "wall_s": wall, "timeout_s": spec.duration_s, "unfinished": unfinished,
                                      "load_avg": [load0, load1], "flows": {}}
            samples: dict[int, list[tuple[float, int, float | None, int]]] = {}
            for src in senders:
                f = rdir / f"ss-{src}.txt"
                samples.update(parse_samples(f.read_text() if f.exists() else "", ports))
            for i, (src, d, k) in enumerate(flows):
                try:
                    fct = json.loads((rdir / f"fct-{src}-{d}-{k}.json").read_text())
                except (OSError, ValueError):
                    fct = {}
                ss = samples.get(BASE_PORT + i, [])
                rtts = [x[2] for x in ss if x[2] is not None]
                late = fct["t_start"] - t0_wall if "t_start" in fct else None  # > 0: its process came late
                result["flows"][flow_name(src, d, k)] = {
                    "fct_s": fct.get("fct_s"), "bytes": fct.get("bytes"), "late_s": late,
                    "retransmits": max((x[3] for x in ss), default=0),
                    "mean_rtt_ms": sum(rtts) / len(rtts) if rtts else None,
                    "acked": [(round(x[0] - t0_wall, 3), x[1]) for x in ss]}
            result["servers"] = server_completion(result["flows"])
            if dp is not None:
                result.update(loop_metrics(dp, topo, counts0))
            if agent is not None:
                agent.stop()
                result.update(agent_metrics(agent, topo, drops0, holds0, clocks))
                (rdir / "grants.json").write_text(json.dumps(agent.grants))
                (rdir / "ocs-drops.json").write_text(json.dumps({"epoch_s": agent.scheduler.cal.epoch_s,
                                                                 "log": agent.drop_log}))
                agent.ocs.close()
            (rdir / "metrics.json").write_text(json.dumps(result, indent=1))
            return result
        finally:
            if dp is not None:
                dp.ocs.close()
            if agent is not None:
                agent._stop.set()
            procs.stop_all()


def agent_metrics(agent: ReservationAgent, topo: Any, drops0: dict[str, int], holds0: dict[str, dict[str, int]],
                  clocks: dict[str, Any]) -> dict[str, Any]:
    """What the reservation controller and the switches counted over a run (counters less their
    values at its start `drops0`, `holds0`)."""
    drops = {k: v - drops0[k] for k, v in agent.ocs.counter_packets(OCS_DROPS, agent.drop_ports).items()}
    holds = {k: 0 for k in HOLD_COUNTERS}
    by_tor = {}
    for name, states in agent.paths.items():
        counts = agent.tors[name].counter_packets(HOLD_COUNTERS, [st.path_id for st in states])
        by_tor[name] = {k: v - holds0[name][k] for k, v in counts.items()}
        for k, v in by_tor[name].items():
            holds[k] += v
        # frames the ToR's own port queues dropped (into them minus out of them), every port
        ports = [p for p in topo.switch_map()[name].ports if p < HOLD_OUT_PORT]
        q = agent.tors[name].counter_packets((PORT_ENQ, PORT_DEQ), ports)
        by_tor[name]["queue_drops"] = q[PORT_ENQ] - q[PORT_DEQ]
    holds["queue_drops"] = sum(v["queue_drops"] for v in by_tor.values())
    grants = agent.grants
    return {"clocks": clocks, "grants": len(grants), "bursts_lost": sum(g["lost"] for g in grants),
            "grants_late": sum(g["late"] for g in grants), "write_errors": agent.write_errors,
            "refused": agent.refused, "audits": agent.audits, "audit_conflicts": agent.audit_conflicts[:20],
            "polls": agent.polls, "mean_poll_ms": 1000 * agent.poll_time_s / max(1, agent.polls),
            **drops, "ocs_drops": sum(drops.values()), **holds, "holds_by_tor": by_tor}


def flow_name(src: int, dst: int, k: int) -> str:
    """A flow's key: "src->dst", and "#k" for every flow of a pair but the first."""
    return f"{src}->{dst}" + (f"#{k}" if k else "")


def server_completion(flows: dict[str, dict[str, Any]]) -> dict[str, float | None]:
    """Per sender (the paper's completion time: a server's last byte of its last flow, from the
    common start): the latest of its flows' ends, a flow whose process started late ending that much
    later, None if any did not finish."""
    out: dict[str, float | None] = {}
    for name, f in flows.items():
        src = name.split("->")[0]
        if f["fct_s"] is None or out.get(src, 0.0) is None:
            out[src] = None
        else:
            out[src] = max(out.get(src) or 0.0, f["fct_s"] + max(0.0, f.get("late_s") or 0.0))
    return out


def summary(r: dict[str, Any]) -> str:
    """One line per run."""
    fl = list(r["flows"].values())
    done = [f["fct_s"] for f in fl if f["fct_s"] is not None]
    servers = [v for v in r.get("servers", {}).values() if v is not None]
    rtts = [f["mean_rtt_ms"] for f in fl if f["mean_rtt_ms"]]
    line = (f"tdc {r['tdc']} {r['variant']}: {len(done)}/{len(fl)} flows done, completion max "
            f"{max(done) if done else float('nan'):.2f} s mean {sum(done) / max(1, len(done)):.2f} s, servers done "
            f"{len(servers)}/{len(r.get('servers', {}))} mean {sum(servers) / max(1, len(servers)):.2f} s, retransmits "
            f"{sum(f['retransmits'] or 0 for f in fl)}, mean RTT {sum(rtts) / max(1, len(rtts)):.1f} ms")
    if "grants" in r:
        line += (f"; bursts {r['grants']} lost {r['bursts_lost']} (late {r['grants_late']}), OCS drops "
                 f"{r['ocs_drops']} (night {r['night_drops']} unlit {r['unlit_drops']} dark {r['dark_drops']}), held "
                 f"{r['hold_entered']} overflow {r['hold_overflow']} expired {r['hold_expired']}, ToR queue drops "
                 f"{r['queue_drops']}")
    if "mean_poll_ms" in r:
        line += f", poll {r['mean_poll_ms']:.1f} ms"
    if "loop_time_us" in r and r["loop_time_us"]["grants"]:
        lt = r["loop_time_us"]
        line += f", loop time median {lt['median']:.0f} us p99 {lt['p99']:.0f} us ({lt['grants']} grants)"
    return line + f"; load {r['load_avg'][0][0]:.1f}-{r['load_avg'][1][0]:.1f}"
