"""Table entries of circuit reservations on a slot calendar (seed 001; control/grants.py).

Written once: every switch's clock (`clock_entries`: the calendar as a schedule of equal slots) and,
at each ToR, `slot_policy` = hold for every path to another ToR of the OCS (its virtual output queue,
SlotHold), with no `slot_path` entry, so everything optical waits. Per grant (the reservation
itself, never per slot): the OCS's `slot_circuit` (src's port -> dst's port, by day in every slot of
the window, and by night in all but the first, whose night is the switching) and the source ToR's
`slot_path` (its uplink in each slot of the window, lit through the window's inner nights, with the
uplink's budget to the window's end). Pure functions: table entries, which join the switches'
desired states (control/reservation_agent.py writes them through their sessions).
"""

from __future__ import annotations

from fabric.schedule import TimeSchedule
from p4rt.entities import TableEntry
from tablegen.schedule import (
    run_mores,
    scheduled_paths,
    slot_circuit_entry,
    slot_path_entry,
    tor_schedule_entries,
    uplink_byte_ns,
)
from topo.model import Ocs, Topology


def attachment(ocs: Ocs, switch: str) -> tuple[int, int]:
    """(OCS port, switch port) of a ToR's one uplink on the OCS."""
    mine = sorted((p.port, p.switch_port) for p in ocs.ports if p.switch == switch)
    if len(mine) != 1:
        raise ValueError(f"switch {switch!r}: {len(mine)} ports on OCS {ocs.name!r}, expected exactly one uplink")
    return mine[0]


def tor_base_entries(topo: Topology, ocs: Ocs, switch: str, routes: dict[str, int], sched: TimeSchedule,
                     max_hold_us: int, depth: int, before_us: int = 0, after_us: int = 0,
                     fresh_us: int | None = None) -> list[TableEntry]:
    """A ToR's entries written once: its clock and a hold policy for every path to another ToR
    (fresh_us: tablegen.schedule.tor_schedule_entries)."""
    return tor_schedule_entries(topo, ocs, switch, routes, [{} for _ in range(sched.slots)], sched, "hold",
                                max_hold_us=max_hold_us, depth=depth, before_us=before_us, after_us=after_us,
                                fresh_us=fresh_us)


def grant_paths(topo: Topology, ocs: Ocs, switch: str, routes: dict[str, int]) -> dict[str, int]:
    """The ToR's path id towards each other ToR of the OCS (that ToR's name -> path id)."""
    return {dst: path_id for path_id, dst in scheduled_paths(topo, ocs, switch, routes).items()}


def grant_tor_entries(topo: Topology, ocs: Ocs, src: str, dst: str, path_id: int, slots: list[int],
                      light: tuple[list[tuple[int, int]], int]) -> list[TableEntry]:
    """The source ToR's `slot_path` for a window: its uplink, to the MAC of dst's uplink port, in
    every slot, lit through the window's inner nights (the OCS keeps the circuit), its sending
    bounded by the uplink's rate until the window's last day ends (the budget, UplinkClock): the
    window carries what it can and the rest stays held (control/grants.py, "The burst"). `light`:
    the ToR's `light_spans` (tablegen.schedule)."""
    _, up = attachment(ocs, src)
    _, far = attachment(ocs, dst)
    dmac = next(s.ports for s in topo.switches if s.name == dst)[far]
    spans, cycle = light
    return [slot_path_entry(path_id, s, up, dmac, uplink_byte_ns(ocs), day, night)
            for s, (day, night) in zip(slots, run_mores(spans, cycle, slots), strict=True)]


def grant_ocs_entries(ocs: Ocs, src: str, dst: str, slots: list[int]) -> list[TableEntry]:
    """The OCS's `slot_circuit` for a window: src's port lit to dst's by day, and by night after the
    first slot (the circuit does not change into the window's later slots)."""
    a, _ = attachment(ocs, src)
    b, _ = attachment(ocs, dst)
    return [slot_circuit_entry(s, night, a, b) for n, s in enumerate(slots) for night in ((0, 1) if n else (0,))]
