"""Seed 002's all-to-all over a time-sliced OCS: UDP loss with and without gating at the ToRs, and TCP
goodput on the schedule against the same hosts on an electrical fabric. Kind `alltoall` of the
experiment runner:

    sudo .venv/bin/python -m scripts run scripts/experiments/e10-seed002-alltoall.yaml [--out DIR]

A variant is what the ToRs do (`gating`, below); the spec's `alltoall:` section holds the workload
and the schedule (spec.Alltoall), `duration_s` how long the senders send. Every run starts an
emulation of its own.

ocscore (N ToRs, one host each, one uplink each, 20 Mbit/s) in Mininet; the OCS runs the directed
round robin of its ports from its time-flow tables (`--schedule-mode dataplane`). UDP: every host sends
a sequence-numbered stream of `pps` datagrams/s to every other host. TCP: every host runs an unlimited
iperf3 transfer to every other host. Gatings:
- blind: each ToR sends everything up its uplink whatever the slot (no schedule at the ToR);
- ungated: each ToR sends by its slot (slot_path) and holds what is unlit (slot_hold), no guard bands;
- gated: the same with guard bands (nights widened by --before-us / --after-us at the ToR; the
  after guard defaults to the sum of the ToR's and the OCS's clock error bounds, so that no ToR starts
  a day before the OCS has; a lit decision older than half the before guard when the packet reaches the
  ToR's egress goes round the hold loop again, `hold_stale`);
- electrical: the same hosts and rates on a one-spine leaf-spine (no OCS), the baseline (the
  variant's own `topology`).
The schedule: the OCS emulator's round robin, or `largest-first` (control/demand.py): from the UDP
workload's demand (each ToR pair's bytes a second; `hot_pps` skews it: ToR 1's and ToR 2's hosts
send each other that many datagrams a second), slots of one day's bytes each go to the largest
pending demand first, and the controller writes that cycle over the emulator's (the OCS's time-flow
tables and the ToRs', once). The ToRs' epochs are the OCS's, moved into each switch's clock by clock
probes (control/clock.py).
Reported: UDP loss or TCP goodput (per flow and total) and retransmissions, the OCS's drops in the dark
(night_drops + unlit_drops), the ToRs' hold counters (overflow and expiry apart), held packets their
hold loops' queues dropped, each switch process's CPU share over the traffic, and the load average.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from control.clock import ClockOffset, measure_client
from control.demand import largest_first
from control.switch import Pipeline, SwitchSession
from emulation.ocs.schedule import Schedule, dataplane_maps, round_robin
from fabric.contract import (
    HOLD_COUNTERS,
    NIGHT_DROPS,
    OCS_TIME_FLOW_TABLES,
    SCHEDULE_DROP_COUNTERS,
    SLOT_ELECTRICAL,
    SLOT_POLICY,
    TOR_TIME_FLOW_TABLES,
    UNLIT_DROPS,
)
from fabric.schedule import TimeSchedule
from p4rt.entities import TableEntry
from p4rt.state import SwitchState
from scripts.analysis.metrics import parse_arrivals
from scripts.experiments.spec import Alltoall
from scripts.hosts.hostproc import HostProcs, wait_listening
from tablegen.entries import network_states
from tablegen.graph import Fabric
from tablegen.schedule import (
    clock_entries,
    ocs_schedule_entries,
    route_paths,
    scheduled_paths,
    slot_path_entry,
    tor_schedule_entries,
)
from topo.circuits import resolve_circuits

BASE_PORT = 5400
FRAME_OVERHEAD = 42  # Ethernet, IPv4 and UDP headers around a datagram's payload


def epoch_in(offset: ClockOffset, epoch_mono: float, cycle_us: int) -> int:
    """The OCS's cycle start as a time of this switch's clock, moved on by whole cycles to be >= 0."""
    e = offset.to_switch(epoch_mono)
    if e < 0:
        e += (-e // cycle_us + 1) * cycle_us
    return e


def tor_entries(variant: str, topo: Any, ocs: Any, name: str, routes: dict[str, int], maps: list[dict[int, int]],
                sched: TimeSchedule, a: Alltoall, after_us: int) -> list[TableEntry]:
    """The ToR's schedule entries for a variant; `after_us` is its guard after each night (gated)."""
    if variant == "blind":
        # one slot, always a day: every path up the ToR's (first) uplink, whoever is at the other end
        always = TimeSchedule(slots=1, day_us=sched.cycle_us, night_us=0)
        uplink = min(p.switch_port for p in ocs.ports if p.switch == name)
        entries = clock_entries(always)
        for path_id, dst in scheduled_paths(topo, ocs, name, routes).items():
            far = min(p.switch_port for p in ocs.ports if p.switch == dst)
            entries += [TableEntry(SLOT_POLICY, {"path_id": path_id}, SLOT_ELECTRICAL),
                        slot_path_entry(path_id, 0, uplink, topo.switch_map()[dst].ports[far], 0, 0, 0)]
        return entries
    before, after = (a.before_us, after_us) if variant == "gated" else (0, 0)
    return tor_schedule_entries(topo, ocs, name, routes, maps, sched, "hold", max_hold_us=2 * sched.cycle_us,
                                depth=a.depth, before_us=before, after_us=after)


def flow_pps(a: Alltoall, src: str, dst: str) -> float:
    """Datagrams a second of one host's stream to another: `hot_pps` between ToR 1's and ToR 2's
    hosts (h1_1, h2_1), `pps` for the rest."""
    hot = {"h1_1", "h2_1"}  # ocscore's names: host 1 of ToR 1 and of ToR 2
    return a.hot_pps if a.hot_pps is not None and {src, dst} == hot else a.pps


def demand_maps(topo: Any, a: Alltoall, rate_mbit: float, day_us: int) -> list[dict[int, int]]:
    """The largest-first cycle for the UDP workload's demand, as directed OCS port maps (one per
    slot; a pair's circuit is duplex): each pair gets slots in proportion to its demand, the least
    demanding one slot (a slot carries one day at the line rate per circuit)."""
    o = topo.ocs[0]
    port = {p.switch: p.port for p in o.ports}
    tors = sorted(port, key=lambda n: int(n.removeprefix("leaf")))
    tor_of = topo.attachments()  # host -> (its ToR, port, MAC)
    demand: dict[tuple[int, int], int] = {}
    for s_, d in all_pairs(topo)[1]:
        key = (tors.index(tor_of[s_][0]), tors.index(tor_of[d][0]))
        demand[key] = demand.get(key, 0) + round(flow_pps(a, s_, d) * (a.size + FRAME_OVERHEAD))
    # a cycle in proportion to the demand, the smallest pair's being one slot's bytes (a cycle of the
    # demand per second could be seconds long); largest first fills it
    slot_bytes = max(1, int(rate_mbit * 1e6 / 8 * day_us / 1e6))
    least = min(n for n in demand.values() if n > 0)
    demand = {k: -(-n * slot_bytes // least) for k, n in demand.items()}
    maps = []
    for matching in largest_first(demand, slot_bytes, max_slots=8 * len(tors)):
        m = {}
        for a, b in matching:
            m[port[tors[a]]], m[port[tors[b]]] = port[tors[b]], port[tors[a]]
        maps.append(m)
    return maps


def alltoall_ocs_args(a: Alltoall) -> list[str]:
    """The OCS emulator's options: its round robin, kept in its data plane's time-flow tables."""
    return ["--schedule", "round-robin", "--schedule-mode", "dataplane", "--day-ms", f"{a.day_ms:g}",
            "--night-ms", f"{a.night_ms:g}"]


class AlltoallRun:
    """Kind alltoall: one run of a variant (what the ToRs do) on the runner's emulation."""

    def __init__(self, emu: Any, spec: Any, variant: Any) -> None:
        self.emu, self.spec, self.variant = emu, spec, variant

    def close(self) -> None:
        """Nothing outlives a run."""

    def run(self, vdir: Path) -> dict[str, Any]:
        """The schedule at the ToRs (and the OCS's, largest first), the traffic, the counters; returns
        the metrics (also metrics.json)."""
        emu, a, gating = self.emu, self.spec.alltoall, self.variant.gating
        seconds, rate = self.spec.duration_s, self.spec.link_rate_mbit
        topo = emu.topo
        vdir.mkdir(parents=True, exist_ok=True)
        procs = HostProcs(emu.record_process)
        ocs = None
        try:
            states = {st.name: st for st in network_states(Fabric(topo, resolve_circuits(topo, "none")), "ecmp")}
            tors = len({tor for tor, _port, _mac in topo.attachments().values()})
            result: dict[str, Any] = {"name": self.variant.name, "variant": gating, "gating": gating,
                                      "proto": a.proto, "tors": tors, "rate_mbit": rate, "seconds": seconds,
                                      "schedule": a.schedule}
            if topo.ocs:
                ocs_pid = emu.switches[topo.ocs[0].name].pid_started
                result["ocs_scheduler"] = {os.SCHED_FIFO: "fifo", os.SCHED_OTHER: "other"}.get(
                    os.sched_getscheduler(ocs_pid), "other") if ocs_pid else None
                ocs, clocks = install_schedule(emu, topo, gating, states, a, rate)
                ports = sorted(p.port for p in topo.ocs[0].ports)
                drops0 = ocs.counter_packets(SCHEDULE_DROP_COUNTERS, ports)
                result.update(day_ms=a.day_ms, night_ms=a.night_ms, clocks=clocks,
                              before_us=a.before_us if gating == "gated" else 0,
                              after_us=({k: c["after_us"] for k, c in clocks.items()} if gating == "gated" else 0))
            load0, cpu0, t0 = os.getloadavg()[0], emu.switch_cpu_seconds(), time.monotonic()
            # after the senders: time for held packets to leave (two cycles) before the receivers stop
            drain_s = 2 * (a.day_ms + a.night_ms) * tors / 1000 + 0.5 if topo.ocs else 0.5
            traffic = udp_all_to_all if a.proto == "udp" else tcp_all_to_all
            result.update(traffic(procs, emu.hosts, topo, a, seconds, vdir, drain_s))
            result["load_avg_1min"] = [load0, os.getloadavg()[0]]
            # each switch process's share of one CPU over the traffic (senders and drain)
            elapsed = time.monotonic() - t0
            cpu = {k: round(100 * (v - cpu0[k]) / elapsed, 1) for k, v in emu.switch_cpu_seconds().items()
                   if k in cpu0}
            result["tor_cpu_pct"] = {s.name: cpu.get(s.name) for s in topo.switches}
            result["ocs_cpu_pct"] = {o.name: cpu.get(o.name) for o in topo.ocs}
            result["hold_loop_drops"] = sum(emu.hold_loop_drops().values())
            if ocs is not None:
                drops = {k: v - drops0[k] for k, v in ocs.counter_packets(SCHEDULE_DROP_COUNTERS, ports).items()}
                holds = dict.fromkeys(HOLD_COUNTERS, 0)
                for sw in topo.switches:
                    paths = sorted(route_paths(states[sw.name]).values())
                    for k, v in emu.controller.counter_packets(sw.name, HOLD_COUNTERS, paths).items():
                        holds[k] += v
                dark = drops[NIGHT_DROPS] + drops[UNLIT_DROPS]
                sent = result.get("sent")
                result.update(dark_drops=dark, dark_share=dark / sent if sent else None, **drops, **holds)
            (vdir / "metrics.json").write_text(json.dumps(result, indent=1))
            return result
        finally:
            if ocs is not None:
                ocs.close()
            procs.stop_all()


def install_schedule(emu: Any, topo: Any, variant: str, states: dict[str, SwitchState], a: Alltoall,
                     rate_mbit: float) -> tuple[SwitchSession, dict[str, Any]]:
    """The ToRs' schedule entries of the variant, each in its switch's clock (clock probes), as part of
    their desired states; returns a session to the OCS (primary over the emulator's: the largest-first
    cycle replaces the emulator's round robin in its desired state) and the clock offsets."""
    o = topo.ocs[0]
    size = max(p.port for p in o.ports)
    ev = [json.loads(line) for line in (emu.log_dir / "ocs-events.jsonl").read_text().splitlines()]
    info = next(e for e in ev if e.get("event") == "timeflow-schedule")
    ocs = SwitchSession(o.name, f"127.0.0.1:{o.grpc_port}", o.device_id, Pipeline.from_build("ocs", emu.build_dir),
                        election_id=(0, 5))
    ocs.connect()
    if a.schedule == "largest-first":
        # the demand's cycle over the emulator's round robin: the OCS's tables first, on its epoch
        maps = demand_maps(topo, a, rate_mbit, info["day_us"])
        cycle_us = len(maps) * (info["day_us"] + info["night_us"])
        ocs_sched = TimeSchedule(len(maps), info["day_us"], info["night_us"],
                                 epoch_in(measure_client(ocs.client), info["epoch_mono"], cycle_us))
        ocs.sync(ocs.adopt().with_tables(OCS_TIME_FLOW_TABLES, ocs_schedule_entries(maps, ocs_sched)), trust_cache=True)
        info = {**info, "slots": len(maps)}
    else:
        maps = dataplane_maps(Schedule(round_robin(size), a.day_ms, a.night_ms), size)
    clocks, want = {}, {}
    for sw in topo.switches:
        off = emu.controller.clock(sw.name)
        after_us = off.after_guard_us(info["clock_error_us"], a.after_us)
        clocks[sw.name] = {"offset_us": off.offset_us, "error_us": off.error_us, "after_us": after_us}
        sched = TimeSchedule(info["slots"], info["day_us"], info["night_us"], 0)
        sched = TimeSchedule(sched.slots, sched.day_us, sched.night_us,
                             epoch_in(off, info["epoch_mono"], sched.cycle_us))
        entries = tor_entries(variant, topo, o, sw.name, route_paths(states[sw.name]), maps, sched, a, after_us)
        want[sw.name] = emu.controller.desired()[sw.name].with_tables(TOR_TIME_FLOW_TABLES, entries)
    emu.controller.sync(want, step="schedule", trust_cache=True)
    return ocs, clocks


def all_pairs(topo: Any) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """Every host's address, and every (source, destination) pair of distinct hosts."""
    addr = {h.name: h.address for h in topo.hosts}
    names = sorted(addr)
    return addr, [(s, d) for s in names for d in names if s != d]


def udp_all_to_all(procs: HostProcs, hosts: dict[str, Any], topo: Any, a: Alltoall, seconds: float, vdir: Path,
                   drain_s: float) -> dict[str, Any]:
    """A sequence-numbered UDP stream of `pps` datagrams/s from every host to every other: sent,
    received (the receivers write their arrivals when stopped, `drain_s` after the senders), loss."""
    addr, flows = all_pairs(topo)
    files = {}
    for i, (s, d) in enumerate(flows):
        files[(s, d)] = vdir / f"arrivals-{s}-{d}.csv"
        procs.start(hosts[d], [sys.executable, "-m", "scripts.hosts.udp", "recv", "--port", str(BASE_PORT + i),
                               "--out", str(files[(s, d)]), "--seconds", str(seconds + 3)], f"recv {s}->{d}")
    for i, (_s, d) in enumerate(flows):
        wait_listening(hosts[d], BASE_PORT + i, "u")
    senders = [procs.start(hosts[s], [sys.executable, "-m", "scripts.hosts.udp", "send", "--dst", addr[d], "--port",
                                      str(BASE_PORT + i), "--pps", str(flow_pps(a, s, d)), "--size",
                                      str(a.size), "--seconds", str(seconds)],
                           f"send {s}->{d}", vdir / f"sent-{s}-{d}.txt") for i, (s, d) in enumerate(flows)]
    for p in senders:
        p.wait(timeout=seconds + 60)
    time.sleep(drain_s)
    procs.stop_all()
    sent = {f: int((vdir / f"sent-{f[0]}-{f[1]}.txt").read_text().split()[-1]) for f in flows}
    got = {f: len(parse_arrivals(files[f].read_text())) if files[f].exists() else 0 for f in flows}
    hot = [f for f in flows if flow_pps(a, *f) != a.pps]
    out = {"pps_per_flow": a.pps, "hot_pps": a.hot_pps, "size": a.size, "flows": len(flows),
           "sent": sum(sent.values()), "received": sum(got.values()),
           "loss": 1 - sum(got.values()) / sum(sent.values()) if sum(sent.values()) else None}
    if hot:  # the skewed pair's streams apart from the rest
        hs, hg = sum(sent[f] for f in hot), sum(got[f] for f in hot)
        out.update(hot_sent=hs, hot_received=hg, hot_loss=1 - hg / hs if hs else None,
                   rest_loss=1 - (out["received"] - hg) / (out["sent"] - hs) if out["sent"] > hs else None)
    return out


def tcp_all_to_all(procs: HostProcs, hosts: dict[str, Any], topo: Any, a: Alltoall, seconds: float, vdir: Path,
                   drain_s: float) -> dict[str, Any]:
    """An unlimited iperf3 TCP transfer from every host to every other for `seconds`: the goodput each
    receiver counted (Mbit/s), its total, and the senders' retransmissions."""
    addr, flows = all_pairs(topo)
    for i, (_s, d) in enumerate(flows):
        procs.start(hosts[d], ["iperf3", "-s", "-1", "-p", str(BASE_PORT + i)], f"iperf3 -s {d}")
    for i, (_s, d) in enumerate(flows):
        wait_listening(hosts[d], BASE_PORT + i)
    clients = [procs.start(hosts[s], ["iperf3", "-c", addr[d], "-p", str(BASE_PORT + i), "-t", str(seconds),
                                      "-J"], f"iperf3 -c {s}->{d}", vdir / f"iperf3-{s}-{d}.json")
               for i, (s, d) in enumerate(flows)]
    for p in clients:
        p.wait(timeout=seconds + 60)
    time.sleep(drain_s)
    procs.stop_all()
    per_flow, retx, failed = {}, 0, []
    for s, d in flows:
        try:
            end = json.loads((vdir / f"iperf3-{s}-{d}.json").read_text())["end"]
            per_flow[f"{s}->{d}"] = end["sum_received"]["bits_per_second"] / 1e6
            retx += end["sum_sent"].get("retransmits", 0)
        except (OSError, ValueError, KeyError):
            failed.append(f"{s}->{d}")
    return {"flows": len(flows), "goodput_mbps": sum(per_flow.values()), "goodput_mbps_per_flow": per_flow,
            "retransmits": retx, "failed_flows": failed}


def summary_line(r: dict[str, Any]) -> str:
    """One line of a variant's result."""
    if r["proto"] == "tcp":
        line = (f"{r['variant']}: TCP goodput {r['goodput_mbps']:.1f} Mbit/s over {r['flows']} flows, "
                f"{r['retransmits']} retransmits" + (f", failed {r['failed_flows']}" if r["failed_flows"] else ""))
    else:
        line = f"{r['variant']}: sent {r['sent']}, received {r['received']} (loss {100 * (r['loss'] or 0):.2f}%)"
        if r.get("hot_sent"):
            line += (f" [hot pair {100 * (r['hot_loss'] or 0):.2f}%, the rest {100 * (r['rest_loss'] or 0):.2f}%; "
                     f"schedule {r.get('schedule')}]")
    if "dark_drops" in r:
        line += (f", dark drops {r['dark_drops']} (night {r['night_drops']}, unlit {r['unlit_drops']}), held "
                 f"{r['hold_entered']}, released {r['hold_released']}, overflow {r['hold_overflow']}, expired "
                 f"{r['hold_expired']}, stale {r['hold_stale']}, over budget {r['slot_over_budget']}")
    tors = [v for v in r.get("tor_cpu_pct", {}).values() if v is not None]
    if tors:
        line += f"; ToR CPU {min(tors):.0f}-{max(tors):.0f}%"
    if r.get("hold_loop_drops"):
        line += f", hold loop drops {r['hold_loop_drops']}"
    return line + f"; load {r['load_avg_1min'][0]:.1f}-{r['load_avg_1min'][1]:.1f}"
