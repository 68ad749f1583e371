"""Seed 001's reservation loop in the data plane: what variants `two-way` and `one-way` of kind
reservation run (scripts/experiments/seed001.py; the controller-driven loop is `two-way-controller` and
`one-way-controller`). The controller writes the calendar, the holds and the loop's configuration once
(tablegen/reservation_loop.py: the OCS first, so no request meets an unconfigured scheduler), then
stays out of the loop: each ToR's queues ask the OCS's scheduler with request frames and send into the
windows its grants give (p4src/README.md, "Reservation loop"). At the end it reads the counters: the
requests, grants, refusals and late grants of every path, the loop's time (request sent to grant
received, on each ToR's clock, in 32 us buckets), the OCS's bookings and one-way collisions (the
bursts one-way loses), its dark drops, the holds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from control.switch import SwitchSession
from fabric.contract import (
    HOLD_COUNTERS,
    LOOP_OCS_COUNTERS,
    LOOP_TOR_COUNTERS,
    OCS_LOOP_TABLES,
    PORT_DEQ,
    PORT_ENQ,
    RESV_LOOP_BUCKET_US,
    RESV_LOOP_BUCKETS,
    RESV_LOOP_TIME,
    TOR_LOOP_TABLES,
)
from p4rt.resources import CounterEntry
from scripts.experiments.seed001_core import OCS_DROPS, slotted, tor_holds
from scripts.experiments.spec import Reservation
from tablegen.reservation import grant_paths
from tablegen.reservation_loop import Loop, ocs_loop_entries, tor_loop_entries
from tablegen.schedule import light_spans, route_paths
from topo.model import HOLD_OUT_PORT

MTU_FRAME = 1514


@dataclass(slots=True)
class DataPlaneLoop:
    """A run's loop: the ToRs' sessions and reserved path ids, the OCS's session and ports, the clocks."""

    tors: dict[str, SwitchSession]
    paths: dict[str, list[int]]
    ocs: SwitchSession
    ocs_ports: list[int]
    loop: Loop
    clocks: dict[str, Any]
    epoch_s: float  # the calendar's first slot (the controller's clock): the loop runs from there

    def counts(self) -> dict[str, Any]:
        """Every counter the metrics difference: per ToR its loop's and holds' (summed over its paths),
        the loop-time histogram (summed over the ToRs), the OCS's loop counters (over its ports)."""
        tors = {name: self.tors[name].counter_packets((*LOOP_TOR_COUNTERS, *HOLD_COUNTERS), ids)
                for name, ids in self.paths.items()}
        hist = [0] * RESV_LOOP_BUCKETS
        for session in self.tors.values():
            for c in session.read([CounterEntry(RESV_LOOP_TIME, i) for i in range(RESV_LOOP_BUCKETS)]):
                if isinstance(c, CounterEntry) and c.index is not None:
                    hist[c.index] += c.packets
        return {"tors": tors, "loop_hist": hist,
                "ocs": self.ocs.counter_packets((*LOOP_OCS_COUNTERS, *OCS_DROPS), self.ocs_ports)}


def loop_settings(s: Reservation, variant: str, slot_us: int, send_us: int, rate_mbit: float, tdc: int) -> Loop:
    """The loop of a run: the schedule's slots; a queue asks at `burst_kb` or after `assembly_ms`
    (default a slot); retry after `loop_retry_ms`; two-way's windows from the next slot, one-way's as
    early (the same trip, so only the collisions differ); windows as long as the hold's depth of full
    frames needs (a window allows for the ToR's hold loop: the `tdc` paths busy at once share its
    passes, so a path's packets come round at hold_passes / tdc a second)."""
    rate_bps = rate_mbit * 1e6
    pace = min(1.0, s.hold_passes / tdc * 8 * MTU_FRAME / rate_bps)
    lost_us = round(1e6 * tdc / s.hold_passes)
    need_us = s.depth * MTU_FRAME * 8 / rate_mbit / pace + lost_us
    longest = 1 if need_us <= send_us else 1 + math.ceil((need_us - send_us) / slot_us)
    return Loop(variant, slots=s.cycle_slots, slot_us=slot_us, send_us=send_us, rate_mbit=rate_mbit,
                burst_bytes=s.burst_kb * 1000,
                assembly_us=round(1000 * (s.slot_ms if s.assembly_ms is None else s.assembly_ms)),
                retry_us=round(1000 * (2 * s.slot_ms if s.loop_retry_ms is None else s.loop_retry_ms)),
                trip_slots=s.loop_trip_slots, offset=1 + s.loop_trip_slots,
                max_slots=min(longest, 127, s.cycle_slots - 2 - s.loop_trip_slots), pace=pace, lost_us=lost_us)


def loop_setup(emu: Any, topo: Any, s: Reservation, variant: str, tdc: int) -> DataPlaneLoop:
    """Write the calendar, the holds and the loop (the OCS's, then the ToRs'); the loop to read back."""
    o, net = topo.ocs[0], emu.controller
    core = slotted(emu, topo, s)
    lp = loop_settings(s, variant, round(core.cal.slot_s * 1e6), round(core.cal.send_s * 1e6), o.rate_mbit, tdc)
    core.ocs.sync(core.ocs.desired.with_tables(OCS_LOOP_TABLES, ocs_loop_entries(lp)), trust_cache=True)
    want = {}
    paths = {}
    for name, held in tor_holds(emu, topo, s, core).items():
        routes = route_paths(core.states[name])
        light = light_spans(core.sched(name, s), s.before_us, core.after[name])
        entries, clones = tor_loop_entries(topo, o, name, routes, lp, light)
        st = held.with_tables(TOR_LOOP_TABLES, entries)
        st.clones = [*st.clones, *clones]
        want[name] = st
        paths[name] = sorted(grant_paths(topo, o, name, routes).values())
    net.sync(want, step="reservation-loop", trust_cache=True)
    return DataPlaneLoop({n: net.sessions[n] for n in core.tors}, paths, core.ocs, sorted(p.port for p in o.ports), lp,
                         core.clocks(), core.cal.epoch_s)


def quantile(hist: list[int], q: float) -> float | None:
    """The q-quantile of the loop-time histogram, us (a bucket's middle; the last bucket: its start)."""
    total = sum(hist)
    if not total:
        return None
    seen = 0
    for b, n in enumerate(hist):
        seen += n
        if seen >= q * total:
            return b * RESV_LOOP_BUCKET_US + (RESV_LOOP_BUCKET_US / 2 if b < len(hist) - 1 else 0)
    return None


def loop_metrics(lp: DataPlaneLoop, topo: Any, before: dict[str, Any]) -> dict[str, Any]:
    """What the loop and the switches counted over a run (the counts less `before`), in the keys the
    controller's loop reports (scripts.report.seed001) and the loop's own."""
    now = lp.counts()
    by_tor = {}
    for name, counts in now["tors"].items():
        by_tor[name] = {k: v - before["tors"][name][k] for k, v in counts.items()}
        ports = [p for p in topo.switch_map()[name].ports if p < HOLD_OUT_PORT]
        q = lp.tors[name].counter_packets((PORT_ENQ, PORT_DEQ), ports)
        by_tor[name]["queue_drops"] = q[PORT_ENQ] - q[PORT_DEQ]
    total = {k: sum(t[k] for t in by_tor.values()) for k in (*LOOP_TOR_COUNTERS, *HOLD_COUNTERS, "queue_drops")}
    ocs = {k: v - before["ocs"][k] for k, v in now["ocs"].items()}
    hist = [a - b for a, b in zip(now["loop_hist"], before["loop_hist"], strict=True)]
    drops = {k: ocs[k] for k in OCS_DROPS}
    one_way = lp.loop.mode == "one-way"
    return {"clocks": lp.clocks, "loop": "data plane", "slots": lp.loop.slots, "max_slots": lp.loop.max_slots,
            "requests": total["resv_requests"],
            "grants": total["resv_requests"] if one_way else total["resv_grants"],
            "bursts_lost": ocs["resv_collided"], "grants_late": total["resv_late"], "refused": total["resv_refused"],
            "booked": ocs["resv_booked"], "ocs_refused": ocs["resv_refused"],
            "loop_time_us": {"median": quantile(hist, 0.5), "p99": quantile(hist, 0.99), "grants": sum(hist),
                             "slot_us": lp.loop.slot_us, "histogram_32us": hist},
            **drops, "ocs_drops": sum(drops.values()),
            **{k: total[k] for k in (*HOLD_COUNTERS, "queue_drops")}, "holds_by_tor": by_tor}
