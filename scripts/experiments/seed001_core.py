"""Seed 001's slotted core, shared by its two loops (the controller's: scripts/experiments/seed001.py,
the data plane's: seed001_loop.py): every switch's clock measured, the calendar's epoch a second
ahead, the OCS's clock written (its slots empty: nothing is lit but by a reservation), and each ToR's
clock and holds (a virtual output queue per destination ToR).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from control.clock import measure_client
from control.grants import Calendar
from control.switch import Pipeline, SwitchSession
from fabric.contract import DARK_DROPS, OCS_TIME_FLOW_TABLES, SCHEDULE_DROP_COUNTERS, TOR_TIME_FLOW_TABLES
from fabric.schedule import TimeSchedule
from scripts.experiments.spec import Reservation
from tablegen.entries import network_states
from tablegen.graph import Fabric
from tablegen.reservation import tor_base_entries
from tablegen.schedule import clock_entries, route_paths
from topo.circuits import resolve_circuits

OCS_DROPS = (*SCHEDULE_DROP_COUNTERS, DARK_DROPS)  # dark: the schedule was off


@dataclass(slots=True)
class Slotted:
    """The slotted core of a run: the OCS's session (a primary of its own), the ToRs (by number), every
    switch's clock (offset and error from a probe), each ToR's guard after the night, the calendar
    (in the controller's clock) and the ECMP network states whose routes give the ToRs' path ids."""

    ocs: SwitchSession
    tors: list[str]
    offsets: dict[str, Any]
    after: dict[str, int]
    cal: Calendar
    states: dict[str, Any]

    def sched(self, name: str, s: Reservation) -> TimeSchedule:
        """A switch's schedule: the calendar's slots from its epoch in that switch's clock."""
        slot_us, night_us = round(s.slot_ms * 1000), round(s.night_ms * 1000)
        return TimeSchedule(s.cycle_slots, slot_us - night_us, night_us, self.offsets[name].to_switch(self.cal.epoch_s))

    def clocks(self) -> dict[str, Any]:
        """Offset, error and after-guard of each switch (us), for the run's metrics."""
        return {n: (c.offset_us, c.error_us, self.after.get(n)) for n, c in self.offsets.items()}


def slotted(emu: Any, topo: Any, s: Reservation) -> Slotted:
    """Measure every switch's clock, put the calendar's epoch a second ahead and write the OCS's
    clock (which replaces the emulator's round robin, its slots empty: nothing is lit but by a grant)."""
    o = topo.ocs[0]
    net = emu.controller
    ocs = SwitchSession(o.name, f"127.0.0.1:{o.grpc_port}", o.device_id, Pipeline.from_build("ocs", emu.build_dir),
                        election_id=(0, 5))
    ocs.connect()
    fabric = Fabric(topo, resolve_circuits(topo, "none"))
    states = {st.name: st for st in network_states(fabric, "ecmp")}
    slot_us, night_us = round(s.slot_ms * 1000), round(s.night_ms * 1000)
    offsets = {sw.name: net.clock(sw.name) for sw in topo.switches}
    offsets[o.name] = measure_client(ocs.client)
    tors = sorted({p.switch for p in o.ports}, key=lambda n: int(n.removeprefix("leaf")))
    after = {n: offsets[n].after_guard_us(offsets[o.name].error_us, s.after_us) for n in tors}
    send_us = slot_us - night_us - s.before_us - max(after.values())  # a ToR's guarded day
    if send_us < 1:
        raise ValueError(f"--slot-ms {s.slot_ms}: its day less the guards (before {s.before_us} us, after "
                         f"{max(after.values())} us) leaves a ToR no time to send")
    cal = Calendar(time.monotonic() + 1.0, slot_us / 1e6, night_us / 1e6, s.cycle_slots, send_us / 1e6)
    core = Slotted(ocs, tors, offsets, after, cal, states)
    ocs.sync(ocs.adopt().with_tables(OCS_TIME_FLOW_TABLES, clock_entries(core.sched(o.name, s))), trust_cache=True)
    return core


def tor_holds(emu: Any, topo: Any, s: Reservation, core: Slotted) -> dict[str, Any]:
    """Each ToR's desired state with its clock and a hold for every path to another ToR of the OCS."""
    o, net = topo.ocs[0], emu.controller
    return {name: net.desired()[name].with_tables(TOR_TIME_FLOW_TABLES, tor_base_entries(
                topo, o, name, route_paths(core.states[name]), core.sched(name, s), max_hold_us=s.max_hold_ms * 1000,
                depth=s.depth, before_us=s.before_us, after_us=core.after[name], fresh_us=s.fresh_us))
            for name in core.tors}
