"""Configuration of seed 001's reservation loop in the data plane (p4src/README.md, "Reservation
loop"; include/v1model/reservation_tor.p4 and reservation_ocs.p4): written once, never per burst.

- each ToR: `reservation_config` (the mode, the burst's size and timer, the request's timeout, the
  schedule's slots and their length, one-way's offset), `grant_path` for every path to another ToR of
  the OCS (its uplink, the next hop's MAC, the uplink's ns a byte, the OCS port of the destination's
  uplink, the clone session that copies a request to the uplink), `window_more` (the light after
  each slot of a window, from the ToR's guarded ranges: `run_mores`), `window_length` (one-way: the
  ToR sizes its own windows), and the clone session;
- the OCS: `reservation_config` (slots, their length, the grant's trip in slots) and `window_length`;
  on Tofino (`tna_ocs_loop_entries`) the times its scheduler adds instead of multiplying: each slot's
  earliest window and latest end, n slots' length, the slot at each boundary.
A ToR's holds and clock are tablegen.reservation's `tor_base_entries`, the OCS's clock `clock_entries`.
Pure functions: entries and clone sessions, which join the switches' desired states.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from fabric.contract import (
    GRANT_PATH,
    GRANT_UPLINK,
    LOOP_MODES,
    RESERVATION_CONFIG,
    RESERVATION_SESSION_BASE,
    RESV_SLOT_PHASE,
    RESV_SLOT_TIMES,
    RESV_SPAN,
    RESV_START_SLOT,
    SET_MORE,
    SET_RESERVATION,
    SET_SLOT_PHASE,
    SET_SLOT_TIMES,
    SET_SPAN,
    SET_START_SLOT,
    SET_WINDOW,
    WINDOW_LENGTH,
    WINDOW_MORE,
)
from p4rt.entities import TableEntry
from p4rt.resources import CloneSession, Replica
from tablegen.reservation import attachment, grant_paths
from tablegen.schedule import run_mores, uplink_byte_ns
from topo.model import Ocs, Topology

MAX_BYTES = (1 << 32) - 1


@dataclass(frozen=True, slots=True)
class Loop:
    """The loop's settings. slots: the schedule's slots a cycle (a window ends within one; at most
    RESV_SLOTS, 512); slot_us: a slot's length; send_us: what a window's first slot can send (the
    ToR's guarded day); rate_mbit: the uplink's rate; burst_bytes and assembly_us: a queue asks once
    it holds that many bytes or a held packet has waited that long; retry_us: a request unanswered
    this long is asked again; trip_slots: slots a grant's trip adds beyond the next boundary (two-way);
    offset: one-way's least slots between a burst and its window; max_slots: the longest window;
    pace: the share of the uplink's rate the hold loop feeds a window (a window stretches by 1/pace);
    lost_us: what a window allows for its first packet's way round the hold loop."""

    mode: Literal["two-way", "one-way"]
    slots: int
    slot_us: int
    send_us: int
    rate_mbit: float
    burst_bytes: int = 50_000
    assembly_us: int = 0
    retry_us: int = 50_000
    trip_slots: int = 0
    offset: int = 1
    max_slots: int = 16
    pace: float = 1.0
    lost_us: int = 0

    def __post_init__(self) -> None:
        if self.mode not in LOOP_MODES:
            raise ValueError(f"loop mode {self.mode!r}: expected one of {', '.join(LOOP_MODES)}")
        if not 3 <= self.slots <= 512:
            raise ValueError(f"loop slots={self.slots}: expected 3..512 (RESV_SLOTS)")
        if not 0 < self.send_us <= self.slot_us:
            raise ValueError(f"loop send_us={self.send_us}, slot_us={self.slot_us}: expected 0 < send <= slot")
        if not 1 <= self.max_slots <= min(127, self.slots - 2 - self.trip_slots):
            raise ValueError(f"loop max_slots={self.max_slots}: expected 1..{min(127, self.slots - 2 - self.trip_slots)} "
                             f"(a window ends within the cycle of {self.slots} slots)")
        if not self.rate_mbit > 0 or not 0 < self.pace <= 1:
            raise ValueError(f"loop rate {self.rate_mbit!r} Mbit/s, pace {self.pace!r}: expected > 0 and 0 < pace <= 1")
        if self.offset < 1 or self.trip_slots < 0 or self.retry_us < 1 or self.burst_bytes < 1:
            raise ValueError(f"loop offset {self.offset}, trip {self.trip_slots}, retry {self.retry_us} us, burst "
                             f"{self.burst_bytes} B: expected >= 1, >= 0, >= 1, >= 1")

    def slots_for(self, nbytes: int) -> int:
        """A window's slots for a burst (control.grants.Calendar.slots_for's rule: the first slot
        sends `send_us`, each further one a whole slot), at most `max_slots`."""
        need_us = nbytes * 8 / self.rate_mbit / self.pace + self.lost_us
        n = 1 if need_us <= self.send_us else 1 + math.ceil((need_us - self.send_us) / self.slot_us - 1e-9)
        return min(n, self.max_slots)


def window_length_entries(loop: Loop, unit_bits: int = 0) -> list[TableEntry]:
    """`window_length`: the bytes each window length carries, as ranges (the last to 2^32 - 1).
    unit_bits: the key counts 2^unit_bits bytes (Tofino: TNA_WINDOW_UNIT_BITS); a unit that two
    lengths share matches both, and the longer wins (its priority is its length)."""
    entries, low = [], 0
    for n in range(1, loop.max_slots + 1):
        # the most bytes n slots carry: the first slot's send_us and n - 1 whole slots, less the loop's wait
        high = MAX_BYTES if n == loop.max_slots else math.floor(
            (loop.send_us + (n - 1) * loop.slot_us - loop.lost_us) * loop.pace * loop.rate_mbit / 8)
        if high >= low:
            key = {"low": low >> unit_bits, "high": high >> unit_bits}
            entries.append(TableEntry(WINDOW_LENGTH, {"bytes": key}, SET_WINDOW, {"length": n},
                                      priority=n if unit_bits else 1))
            low = high + 1
    return entries


def window_more_entries(loop: Loop, light: tuple[list[tuple[int, int]], int]) -> list[TableEntry]:
    """`window_more`: for each slot inside a window with `left` slots after it, the light after its day
    and after its night (run_mores on the ToR's guarded ranges, `light`; the ToR zeroes the latter in a
    window's first slot, whose night the OCS switches in)."""
    spans, cycle = light
    entries = []
    for slot in range(loop.slots):
        for left in range(loop.max_slots):
            run = [(slot + i) % loop.slots for i in range(-1, left + 1)]  # from the slot before
            day, night = run_mores(spans, cycle, run)[1]
            entries.append(TableEntry(WINDOW_MORE, {"slot": slot, "left": left}, SET_MORE,
                                      {"more_after_day": day, "more_after_night": night}))
    return entries


def tor_config_entry(loop: Loop) -> TableEntry:
    """A ToR's `reservation_config` default."""
    return TableEntry(RESERVATION_CONFIG, action=SET_RESERVATION, default=True,
                      params={"loop_mode": LOOP_MODES.index(loop.mode) + 1, "burst_bytes": loop.burst_bytes,
                              "assembly": loop.assembly_us, "retry": loop.retry_us, "slots": loop.slots,
                              "slot_len_us": loop.slot_us, "one_way_offset": loop.offset})


def grant_path_entry(path_id: int, port: int, dmac: str, byte_ns: int, ocs_port: int) -> TableEntry:
    """A reserved path at its ToR: its uplink (`port`, whose clone session copies the requests), the
    next hop's MAC, the uplink's ns a byte, the OCS port of the destination ToR's uplink."""
    return TableEntry(GRANT_PATH, {"path_id": path_id}, GRANT_UPLINK,
                      {"port": port, "dmac": dmac, "byte_ns": byte_ns, "ocs_port": ocs_port,
                       "session": RESERVATION_SESSION_BASE + port})


def request_session(port: int) -> CloneSession:
    """The clone session that copies a ToR's requests to its uplink `port`."""
    return CloneSession(RESERVATION_SESSION_BASE + port, [Replica(port)])


def tor_loop_entries(topo: Topology, ocs: Ocs, switch: str, routes: dict[str, int], loop: Loop,
                     light: tuple[list[tuple[int, int]], int]) -> tuple[list[TableEntry], list[CloneSession]]:
    """A ToR's loop: its config, a `grant_path` per path to another ToR of the OCS, `window_more`
    for every slot and window remainder (`light`: its `light_spans`), `window_length`; and the clone
    session to its uplink."""
    _, up = attachment(ocs, switch)
    macs = {s.name: s.ports for s in topo.switches}
    entries = [tor_config_entry(loop)]
    for dst, path_id in sorted(grant_paths(topo, ocs, switch, routes).items()):
        far_oport, far = attachment(ocs, dst)
        entries.append(grant_path_entry(path_id, up, macs[dst][far], uplink_byte_ns(ocs), far_oport))
    return entries + window_more_entries(loop, light) + window_length_entries(loop), [request_session(up)]


def ocs_loop_entries(loop: Loop) -> list[TableEntry]:
    """The OCS's loop: its config and `window_length`."""
    return [TableEntry(RESERVATION_CONFIG, action=SET_RESERVATION, default=True,
                       params={"slots": loop.slots, "slot_len_us": loop.slot_us, "trip": loop.trip_slots}),
            *window_length_entries(loop)]


TNA_SLOTS = 64  # include/tna/reservation_ocs.p4: RESV_TNA_SLOTS, the calendar's slots a cycle
TNA_WINDOW_UNIT_BITS = 12  # include/schedule/window_length.p4: Tofino's key counts 4 KiB (a range takes 20 bits)


def tna_ocs_loop_entries(loop: Loop, cycle_units: int) -> list[TableEntry]:
    """The OCS's loop on Tofino (include/tna/reservation_ocs.p4) for a schedule whose cycle is
    `cycle_units` 1.024 us units (fabric.schedule_clock.TnaClock.cycle_units): every length in units,
    slot edges at multiples of one slot's units, so the slots must divide the cycle evenly."""
    if loop.slots > TNA_SLOTS:
        raise ValueError(f"TNA loop slots={loop.slots}: expected at most {TNA_SLOTS} (RESV_TNA_SLOTS)")
    unit, rest = divmod(cycle_units, loop.slots)
    if rest or unit < 1:
        raise ValueError(f"TNA loop: {loop.slots} slots in a cycle of {cycle_units} units: expected slots that "
                         "divide the cycle (its slot edges are multiples of one slot's units)")
    return [TableEntry(RESERVATION_CONFIG, action=SET_RESERVATION, default=True,
                       params={"slots": loop.slots, "slot_len": unit, "cycle_len": cycle_units}),
            *window_length_entries(loop, TNA_WINDOW_UNIT_BITS),
            *(TableEntry(RESV_SLOT_TIMES, {"slot": s}, SET_SLOT_TIMES,
                         {"earliest": (s + 1 + loop.trip_slots) * unit, "limit": s * unit + cycle_units})
              for s in range(loop.slots)),
            *(TableEntry(RESV_SPAN, {"slots": n}, SET_SPAN, {"length": n * unit}) for n in range(1, loop.max_slots + 1)),
            *(TableEntry(RESV_START_SLOT, {"phase": e * unit}, SET_START_SLOT, {"slot": e % loop.slots})
              for e in range(2 * loop.slots)),
            *(TableEntry(RESV_SLOT_PHASE, {"slot": s}, SET_SLOT_PHASE, {"phase": s * unit, "next": s * unit + cycle_units})
              for s in range(loop.slots))]
