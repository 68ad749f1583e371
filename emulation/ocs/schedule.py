"""Schedule mode (OCSEMU / Mordia / RotorNet): a cycle of circuit maps with day and night durations.

During a night every port whose connection changes is dark; during a day the map is stable. The
round-robin generator gives, for N slots, N-1 maps where map k sends slot i to slot (i+k) mod N:
every ordered pair (i, j), i != j, gets light exactly once per cycle (OCSEMU paper Fig. 1).

Two ways to run it: `ScheduleRunner`, a thread that sets each map through the emulator (P4Runtime
writes and link changes per slot), and `write_dataplane_schedule`, which writes the whole cycle once
into the `ocs` program's time-flow tables (p4src/README.md): the switch then picks each frame's
circuit from its own timestamp, with no write per slot.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from decimal import Decimal

from control.ocs.driver import Pair
from emulation.ocs.dataplane import P4RuntimeCircuits
from emulation.ocs.delay import DelayModel, check_ms
from emulation.ocs.emulator import EmulatedOcs
from fabric.contract import OCS_TIME_FLOW_TABLES
from fabric.schedule import TimeSchedule
from fabric.schedule_clock import clock_for
from tablegen.schedule import ocs_schedule_entries

log = logging.getLogger(__name__)


def round_robin(size: int, slots: list[int] | None = None) -> list[list[Pair]]:
    """N-1 maps of (input, output) connections covering every ordered slot pair once."""
    slots = list(slots or range(1, size + 1))
    n = len(slots)
    if n < 2:
        raise ValueError(f"round robin over {n} slots: expected at least 2")
    if any(not 1 <= s <= size for s in slots) or len(set(slots)) != n:
        raise ValueError(f"slots {slots}: expected distinct slots in 1..{size}")
    maps = []
    for k in range(1, n):
        maps.append([(slots[i], size + slots[(i + k) % n]) for i in range(n)])
    return maps


@dataclass(slots=True)
class Schedule:
    """A cyclic list of maps, each held for `day_ms` after a dark `night_ms`."""

    maps: list[list[Pair]]
    day_ms: float
    night_ms: float

    def __post_init__(self) -> None:
        if not self.maps:
            raise ValueError("schedule maps []: expected at least one map")
        check_ms("day", self.day_ms, low_open=True)
        check_ms("night", self.night_ms)


# A thread that sets each map cannot keep a shorter slot: it would run slot after slot without sleeping,
# each one a map change and its events (the time-flow tables of write_dataplane_schedule can).
MIN_THREAD_SLOT_MS = 1.0


def check_thread_slot(day_ms: float, night_ms: float) -> None:
    """ValueError unless a day and a night make a slot a thread can keep (MIN_THREAD_SLOT_MS)."""
    if not day_ms + night_ms >= MIN_THREAD_SLOT_MS:
        raise ValueError(f"day {day_ms:g} ms + night {night_ms:g} ms: expected a slot of at least "
                         f"{MIN_THREAD_SLOT_MS:g} ms when a thread sets each map (shorter: the dataplane "
                         "schedule mode)")


class ScheduleRunner:
    """Drives an EmulatedOcs through a Schedule in a thread, on an absolute time grid (no drift)."""

    def __init__(self, ocs: EmulatedOcs, schedule: Schedule) -> None:
        check_thread_slot(schedule.day_ms, schedule.night_ms)
        self.ocs = ocs
        self.schedule = schedule
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.slots_run = 0
        # a night is a pure dark period: light is back when it ends, the port is up with it
        self._night = DelayModel(mirror_ms=schedule.night_ms, lock_ms=0, lock_jitter_ms=0,
                                 poll_period_ms=0, missed_poll_prob=0, missed_poll_jitter_ms=0)

    def start(self) -> None:
        """Start cycling."""
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="ocs-schedule", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop after the current slot."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _run(self) -> None:
        sched = self.schedule
        slot_s = (sched.day_ms + sched.night_ms) / 1000
        t0 = time.monotonic()
        k = 0
        while not self._stop.is_set():
            pairs = sched.maps[k % len(sched.maps)]
            self.ocs.set_map(pairs, delay=self._night)
            self.slots_run += 1
            k += 1
            wait = t0 + k * slot_s - time.monotonic()
            if wait < 0:
                log.warning("schedule slot %d overran by %.1f ms", k, -wait * 1000)
            if self._stop.wait(max(0.0, wait)):
                return


def dataplane_maps(schedule: Schedule, size: int, port_map: dict[int, int] | None = None) -> list[dict[int, int]]:
    """The schedule's maps as directed data-plane port maps (SCPI input i, output size + o: i -> o)."""
    pm = port_map or {p: p for p in range(1, size + 1)}
    return [{pm[i]: pm[o - size] for i, o in pairs} for pairs in schedule.maps]


def _ns(ms: float, what: str) -> int:
    """A length in ms (as given: 7.340032 is 7340032 ns) as whole ns."""
    ns = Decimal(repr(ms)) * 1_000_000
    if ns != ns.to_integral_value():
        raise ValueError(f"{what} {ms} ms: expected whole nanoseconds")
    return int(ns)


def write_dataplane_schedule(circuits: P4RuntimeCircuits, schedule: Schedule, size: int,
                             port_map: dict[int, int] | None = None, epoch_us: int = 0,
                             round_cycle: bool = False) -> TimeSchedule:
    """Make the whole cycle the `ocs` switch's time-flow tables, once (what they held before is
    replaced): a part of its desired state, so a restarted switch gets it back. The cycle starts at
    switch time `epoch_us`. The clock is encoded as the switch's program wants it (fabric/schedule_clock.py,
    from its P4Info): v1model's needs whole microseconds, TNA's a cycle of 2^k x 1.024 us unless
    `round_cycle` (the rounding is logged). Returns what was written."""
    clock = clock_for(circuits.session.schema, round_cycle)
    sched = TimeSchedule(slots=len(schedule.maps), day_ns=_ns(schedule.day_ms, "day"),
                         night_ns=_ns(schedule.night_ms, "night"), epoch_us=epoch_us)
    entries = ocs_schedule_entries(dataplane_maps(schedule, size, port_map), sched, clock)
    circuits.set_tables(OCS_TIME_FLOW_TABLES, entries)  # schedule_config's default last: the schedule starts complete
    log.info("time-flow schedule written (%s clock): %d slots, day %g us, night %g us, %d entries", clock.name,
             sched.slots, sched.day_ns / 1000, sched.night_ns / 1000, len(entries))
    return sched
