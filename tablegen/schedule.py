"""Table entries of a time-sliced optical schedule (p4src/README.md, "Time-flow tables").

Pure functions: a topology whose OCS has circuit maps, the maps' order in the cycle and a
TimeSchedule in; the entries the controller writes once (no write per slot) out, as table entries
a switch's desired state takes (`SwitchState.with_tables`, fabric.contract's time-flow tables):
- the OCS: `schedule_config` (epoch and cycle) and `schedule_phase` (the OCS's nights and days) in
  the program's clock encoding (fabric/schedule_clock.py: v1model's by default, or TNA's), and
  `slot_circuit` (each slot's cross-connect by day; by night only the circuits that do not change);
- each ToR on the OCS: the same clock with nights widened by guard bands, `slot_policy` (hold or
  electrical) for every path to another ToR on the OCS, and `slot_path` (the uplink that reaches
  that ToR in each slot).
"""

from __future__ import annotations

import ipaddress
import logging
import math

from fabric.contract import (
    ROUTE,
    SCHEDULE_CONFIG,
    SCHEDULE_PHASE,
    SET_PATH,
    SET_SCHEDULE,
    SET_SLOT,
    SLOT_CIRCUIT,
    SLOT_CROSS_CONNECT,
    SLOT_ELECTRICAL,
    SLOT_HOLD,
    SLOT_PATH,
    SLOT_POLICY,
    SLOT_PORT,
)
from fabric.schedule import NS_PER_US, TimeSchedule
from fabric.schedule_clock import V1MODEL, ClockEncoding, EncodedClock
from p4rt.entities import TableEntry
from p4rt.schema import short_name
from p4rt.state import SwitchState
from topo.model import Ocs, Topology

log = logging.getLogger(__name__)
POLICIES = ("hold", "electrical")


def clock_entries(sched: TimeSchedule, before_us: int = 0, after_us: int = 0,
                  clock: ClockEncoding = V1MODEL) -> list[TableEntry]:
    """`schedule_config` and `schedule_phase` of one switch in the program's clock encoding
    (fabric/schedule_clock.py: `clock_for` reads it from the P4Info); guards widen the nights (ToRs).
    A rounding the encoding made is logged as a warning."""
    enc = clock.encode(sched, before_us, after_us)
    if enc.rounding:
        log.warning("%s", enc.rounding)
    entries = [TableEntry(SCHEDULE_CONFIG, action=SET_SCHEDULE, params=enc.params, default=True)]
    cycle = enc.ranges[-1][1] + 1
    days = _days(enc)
    for low, high, slot, night in enc.ranges:
        # a day's end is its own; a night's is where its slot's day begins (a cycle on when that
        # day is the cycle's first and the night the last slot's guard): SlotRoute counts a
        # window lit through the night from there
        day = days[slot][0] if slot in days else high + 1
        end = high + 1 if not night else day if day > high else day + cycle
        entries.append(TableEntry(SCHEDULE_PHASE, {"phase": {"low": low, "high": high}}, SET_SLOT,
                                  {"slot": slot, "night": int(night), "end": end}, priority=1))
    return entries


def _days(enc: EncodedClock) -> dict[int, tuple[int, int]]:
    """Each slot's day in an encoded clock: (first phase, one past its last)."""
    return {slot: (low, high + 1) for low, high, slot, night in enc.ranges if not night}


def light_spans(sched: TimeSchedule, before_us: int = 0, after_us: int = 0,
                clock: ClockEncoding = V1MODEL) -> tuple[list[tuple[int, int]], int]:
    """Where each slot's guarded day begins and ends at a ToR (phase units of `clock`, end
    exclusive), and the cycle in those units."""
    enc = clock.encode(sched, before_us, after_us)
    days = _days(enc)
    missing = [s for s in range(sched.slots) if s not in days]
    if missing:
        raise ValueError(f"slots {missing}: no day left between the guards ({before_us}/{after_us} us)")
    return [days[s] for s in range(sched.slots)], enc.ranges[-1][1] + 1


def run_mores(spans: list[tuple[int, int]], cycle: int, run: list[int]) -> list[tuple[int, int]]:
    """slot_port's (more_after_day, more_after_night) for each slot of a run of consecutive slots
    on one circuit (a window): the light goes on to the end of the run's last day, through every
    night but the first (the OCS does not switch inside the run). Modulo the cycle: a run wraps
    round it but is shorter than it."""
    last = spans[run[-1]][1]
    return [((last - spans[k][1]) % cycle, (last - spans[k][0]) % cycle if i else 0) for i, k in enumerate(run)]


def cycle_maps(ocs: Ocs, names: list[str] | None = None) -> list[list[tuple[int, int]]]:
    """The circuit maps of the cycle, in slot order: `names`, or every map of the OCS by name order
    with numeric suffixes in number order (slot0, slot1, ..., slot10)."""
    if names is None:
        names = sorted(ocs.circuit_maps, key=lambda n: (n.rstrip("0123456789"), len(n), n))
    missing = [n for n in names if n not in ocs.circuit_maps]
    if not names or missing:
        raise ValueError(f"cycle maps {names!r} of OCS {ocs.name!r}: expected names among {sorted(ocs.circuit_maps)}")
    return [list(ocs.circuit_maps[n]) for n in names]


def _peers(pairs: list[tuple[int, int]]) -> dict[int, int]:
    out: dict[int, int] = {}
    for a, b in pairs:
        out[a], out[b] = b, a
    return out


def duplex(maps: list[list[tuple[int, int]]]) -> list[dict[int, int]]:
    """Duplex circuit maps (a <-> b) as directed maps (input port -> output port)."""
    return [_peers(pairs) for pairs in maps]


def ocs_schedule_entries(maps: list[dict[int, int]], sched: TimeSchedule,
                         clock: ClockEncoding = V1MODEL) -> list[TableEntry]:
    """The OCS's time-flow entries for directed maps (input -> output port, one map per slot):
    clock, then `slot_circuit` by day, and by night for the inputs whose output does not change."""
    if len(maps) != sched.slots:
        raise ValueError(f"{len(maps)} circuit maps for a schedule of {sched.slots} slots: expected one per slot")
    entries = clock_entries(sched, clock=clock)
    for s, now in enumerate(maps):
        before = maps[s - 1]
        for port, peer in sorted(now.items()):
            for night in (0, 1) if before.get(port) == peer and sched.night_ns else (0,):
                entries.append(slot_circuit_entry(s, night, port, peer))
    return entries


def scheduled_paths(topo: Topology, ocs: Ocs, switch: str, routes: dict[str, int]) -> dict[int, str]:
    """The switch's paths to another ToR of the OCS (path id -> that ToR): routes whose prefix holds
    hosts of exactly one other switch attached to the OCS."""
    tors = {p.switch for p in ocs.ports}
    if switch not in tors:
        raise ValueError(f"switch {switch!r}: not attached to OCS {ocs.name!r}")
    links = {(lk.a, lk.b) for lk in topo.links} | {(lk.b, lk.a) for lk in topo.links}
    hosts_of: dict[str, list[ipaddress.IPv4Address]] = {}
    for h in topo.hosts:
        for sw in tors:
            if (h.name, sw) in links:
                hosts_of.setdefault(sw, []).append(ipaddress.IPv4Address(h.address))
    out = {}
    for prefix, path_id in sorted(routes.items(), key=lambda kv: kv[1]):
        net = ipaddress.IPv4Network(prefix, strict=False)
        behind = sorted(sw for sw, ips in hosts_of.items() if sw != switch and any(ip in net for ip in ips))
        if len(behind) == 1:
            out[path_id] = behind[0]
    return out


def tor_schedule_entries(topo: Topology, ocs: Ocs, switch: str, routes: dict[str, int],
                         maps: list[dict[int, int]], sched: TimeSchedule, policy: str = "hold",
                         max_hold_us: int | None = None, depth: int = 64, before_us: int = 0,
                         after_us: int = 0, fresh_us: int | None = None,
                         clock: ClockEncoding = V1MODEL) -> list[TableEntry]:
    """A ToR's time-flow entries: its clock, and per path to another ToR of the OCS its policy and
    its uplink in each slot. `maps` are directed OCS port maps, one per slot (`duplex` for circuit
    maps); `routes` maps the switch's route prefixes to their path ids (its `route` entries);
    max_hold_us defaults to one cycle (in us, rounded up). fresh_us (how old a lit decision may be
    when egress takes the packet) defaults to half the guard before each night: a packet decided lit
    then leaves the day's end at least that much early, the other half left for the way from egress
    to the wire; 0 turns the check off."""
    if policy not in POLICIES:
        raise ValueError(f"policy={policy!r}: expected one of {', '.join(POLICIES)}")
    if depth < 1:
        raise ValueError(f"hold depth={depth}: expected at least 1")
    hold_us = -(-sched.cycle_ns // NS_PER_US) if max_hold_us is None else max_hold_us
    fresh = before_us // 2 if fresh_us is None else fresh_us
    if fresh < 0:
        raise ValueError(f"fresh_us={fresh}: expected >= 0 (0: no freshness check)")
    attach = {p.port: (p.switch, p.switch_port) for p in ocs.ports}
    paths = scheduled_paths(topo, ocs, switch, routes)
    mine = {p.port: p.switch_port for p in ocs.ports if p.switch == switch}
    macs = {s.name: s.ports for s in topo.switches}
    entries = clock_entries(sched, before_us, after_us, clock)
    spans, cycle = light_spans(sched, before_us, after_us, clock)
    for path_id, dst in paths.items():
        if policy == "hold":
            entries.append(TableEntry(SLOT_POLICY, {"path_id": path_id}, SLOT_HOLD,
                                      {"max_hold_us": hold_us, "depth": depth, "fresh_us": fresh}))
        else:
            entries.append(TableEntry(SLOT_POLICY, {"path_id": path_id}, SLOT_ELECTRICAL))
        lit: list[tuple[int, int, str]] = []  # (slot, uplink, dmac) where a circuit reaches dst
        for s, peers in enumerate(maps):
            for oport, sport in sorted(mine.items()):
                far = peers.get(oport)
                if far is not None and attach[far][0] == dst:
                    lit.append((s, sport, macs[dst][attach[far][1]]))
                    break
        # consecutive slots on one uplink are one circuit (the OCS keeps it through their nights):
        # one run, lit through its inner nights (runs do not wrap round the cycle's end)
        runs: list[list[tuple[int, int, str]]] = []
        for item in lit:
            if runs and runs[-1][-1][0] == item[0] - 1 and runs[-1][-1][1:] == item[1:]:
                runs[-1].append(item)
            else:
                runs.append([item])
        for run in runs:
            for (s, sport, dmac), (day, night) in zip(run, run_mores(spans, cycle, [r[0] for r in run]), strict=True):
                entries.append(slot_path_entry(path_id, s, sport, dmac, uplink_byte_ns(ocs), day, night))
    return entries


def slot_circuit_entry(slot: int, night: int, in_port: int, out_port: int) -> TableEntry:
    """The OCS's `slot_circuit` entry lighting in_port to out_port in a slot's day (night 0) or night."""
    return TableEntry(SLOT_CIRCUIT, {"slot": slot, "night": night, "ingress_port": in_port}, SLOT_CROSS_CONNECT,
                      {"port": out_port})


def slot_path_entry(path_id: int, slot: int, port: int, dmac: str, byte_ns: int, more_after_day: int,
                    more_after_night: int) -> TableEntry:
    """A ToR's `slot_path` entry: the path's uplink and next hop in a slot, the uplink's budget, and how
    long the light lasts after the slot's day and night (run_mores)."""
    return TableEntry(SLOT_PATH, {"path_id": path_id, "slot": slot}, SLOT_PORT,
                      {"port": port, "dmac": dmac, "byte_ns": byte_ns, "more_after_day": more_after_day,
                       "more_after_night": more_after_night})


def uplink_byte_ns(ocs: Ocs) -> int:
    """ns a byte takes on a ToR's fibre to the OCS, rounded up: slot_port's day budget (UplinkClock)."""
    return math.ceil(8000 / ocs.rate_mbit)


def route_paths(state: SwitchState) -> dict[str, int]:
    """A fabric switch's `route` prefixes that set a path, with their path ids."""
    return {e.match["ipv4_dst"]: e.params["path_id"] for e in state.entries
            if short_name(e.table) == ROUTE and e.action is not None and short_name(e.action) == SET_PATH}
