"""The time-sliced optical schedule (p4src/include/schedule/clock.p4), and v1model's clock for it.

A schedule is a cycle of `slots` equal slots, each a night then a day, starting at an epoch in a
switch's own time. Lengths are kept in ns: given in us (the v1model programs' clock) or in ns
(finer: a Tofino cycle is a power of two of 1.024 us units, never a whole number of us). How a
program encodes the clock is in fabric/schedule_clock.py; this module also holds v1model's
arithmetic, used by that encoding and the tests: a packet's phase is a fraction of the cycle in
SCHEDULE_PHASE_BITS bits, bits 32.. of (t x scale) with scale = round(2^(32 + PHASE_BITS) / cycle_us),
a multiplication (p4c refuses % and / by a run-time value for bmv2). The `schedule_phase` table maps
ranges of phase to (slot, night); `phase_ranges` gives those ranges, exact to the microsecond for
cycles up to 2^PHASE_BITS us (about 1 s) and to one phase unit (cycle / 2^PHASE_BITS) beyond.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

SCHEDULE_PHASE_BITS = 20
PHASE_MASK = (1 << SCHEDULE_PHASE_BITS) - 1
SCALE_SHIFT = 32
MAX_SLOTS = 512  # schedule_phase holds 1024 ranges (SCHEDULE_PHASE_SIZE): a night and a day per slot
NS_PER_US = 1000
MAX_CYCLE_US = 1 << 40

Range = tuple[int, int, int, bool]  # schedule_phase: (low, high, slot, night)


def _length(name: str, us: object, ns: object, lo: int, default: int | None) -> int:
    """One length of a schedule in ns, from exactly one of its us and ns forms."""
    if us is not None and ns is not None:
        raise ValueError(f"schedule {name}_us={us!r} and {name}_ns={ns!r}: expected one of the two")
    if us is None and ns is None:
        if default is None:
            raise ValueError(f"schedule {name}: expected {name}_us or {name}_ns")
        return default
    unit, value, scale = ("us", us, NS_PER_US) if us is not None else ("ns", ns, 1)
    if isinstance(value, bool) or not isinstance(value, int) or value < lo:
        raise ValueError(f"schedule {name}_{unit}={value!r}: expected an integer >= {lo}")
    return value * scale


@dataclass(frozen=True, slots=True, init=False)
class TimeSchedule:
    """`slots` slots of a night then a day, from an epoch (switch time); lengths kept in ns."""

    slots: int
    day_ns: int
    night_ns: int
    epoch_ns: int

    def __init__(self, slots: int, day_us: int | None = None, night_us: int | None = None,
                 epoch_us: int | None = None, *, day_ns: int | None = None, night_ns: int | None = None,
                 epoch_ns: int | None = None) -> None:
        """Lengths and epoch in us (positional, as before) or in ns (keywords), not both."""
        if isinstance(slots, bool) or not isinstance(slots, int) or slots < 1:
            raise ValueError(f"schedule slots={slots!r}: expected an integer >= 1")
        if slots > MAX_SLOTS:
            raise ValueError(f"schedule slots={slots}: expected at most {MAX_SLOTS}")
        object.__setattr__(self, "slots", slots)
        object.__setattr__(self, "day_ns", _length("day", day_us, day_ns, 1, None))
        object.__setattr__(self, "night_ns", _length("night", night_us, night_ns, 0, None))
        object.__setattr__(self, "epoch_ns", _length("epoch", epoch_us, epoch_ns, 0, 0))
        if self.cycle_ns >= MAX_CYCLE_US * NS_PER_US:
            raise ValueError(f"schedule cycle {self.cycle_ns / NS_PER_US:g} us: expected under 2^40 us")

    @property
    def slot_ns(self) -> int:
        """One night and one day, in ns."""
        return self.night_ns + self.day_ns

    @property
    def cycle_ns(self) -> int:
        """Every slot once, in ns."""
        return self.slots * self.slot_ns

    def _us(self, name: str, ns: int) -> int:
        if ns % NS_PER_US:
            raise ValueError(f"schedule {name} {ns} ns: expected whole microseconds (v1model's clock counts us)")
        return ns // NS_PER_US

    @property
    def day_us(self) -> int:
        """The day in us (ValueError unless whole)."""
        return self._us("day", self.day_ns)

    @property
    def night_us(self) -> int:
        """The night in us (ValueError unless whole)."""
        return self._us("night", self.night_ns)

    @property
    def epoch_us(self) -> int:
        """The epoch in us (ValueError unless whole)."""
        return self._us("epoch", self.epoch_ns)

    @property
    def slot_us(self) -> int:
        """One night and one day, in us (ValueError unless whole)."""
        return self._us("slot", self.slot_ns)

    @property
    def cycle_us(self) -> int:
        """Every slot once, in us (ValueError unless whole)."""
        return self._us("cycle", self.cycle_ns)

    @property
    def scale(self) -> int:
        """The `set_schedule` cycle_scale: 2^(32 + PHASE_BITS) / cycle, rounded up, so the phase never
        runs behind (rounded down, the last microsecond of a cycle would still read as the cycle's
        end); it runs ahead by under cycle/2^32 of a cycle per cycle (0.6 us a day at 33 ms)."""
        return -(-(1 << (SCALE_SHIFT + SCHEDULE_PHASE_BITS)) // self.cycle_us)

    def phase(self, now_us: int) -> int | None:
        """The phase a packet arriving at switch time `now_us` gets on v1model (None: before the epoch)."""
        if now_us < self.epoch_us:
            return None
        return (((now_us - self.epoch_us) * self.scale) % (1 << 64) >> SCALE_SHIFT) & PHASE_MASK

    def slot_at(self, now_us: int) -> tuple[int, bool] | None:
        """(slot, night) at switch time `now_us` by the schedule's own arithmetic (None: not started)."""
        return self.slot_at_ns(now_us * NS_PER_US)

    def slot_at_ns(self, now_ns: int) -> tuple[int, bool] | None:
        """(slot, night) at switch time `now_ns` by the schedule's own arithmetic (None: not started)."""
        if now_ns < self.epoch_ns:
            return None
        into = (now_ns - self.epoch_ns) % self.cycle_ns
        slot, within = divmod(into, self.slot_ns)
        return slot, within < self.night_ns

    def boundary(self, t_us: int) -> int:
        """The first v1model phase of the packets arriving `t_us` into the cycle (0 <= t_us <= cycle)."""
        if t_us >= self.cycle_us:
            return PHASE_MASK + 1
        return (t_us * self.scale) >> SCALE_SHIFT

    def phase_ranges(self, before_us: int = 0, after_us: int = 0) -> list[Range]:
        """v1model's (low, high, slot, night) covering phases 0..2^PHASE_BITS-1, in order.

        A ToR widens each night by `before_us` (its last optical packet leaves that long before the
        OCS's night) and `after_us` (its first that long after): guard bands for the time a packet
        takes from the ToR's pipeline to the OCS's and the switches' clock offset.
        """
        if before_us < 0 or after_us < 0 or before_us + after_us + self.night_us >= self.slot_us:
            raise ValueError(f"guards {before_us}/{after_us} us: expected >= 0 and leaving part of the "
                             f"{self.day_us} us day")
        starts = [s * self.slot_us for s in range(self.slots)]
        return cycle_ranges(starts, [s + self.night_us for s in starts], self.cycle_us, before_us, after_us,
                            self.boundary)


def cycle_ranges(starts: list[int], night_ends: list[int], cycle: int, before: int, after: int,
                 to_phase: Callable[[int], int]) -> list[Range]:
    """The ranges of a cycle whose slot s starts (dark) at starts[s] and lights at night_ends[s], in
    one time unit: each night widened by `before` and `after`, then every edge mapped to its first
    phase by `to_phase` (to_phase(cycle): one past the last phase). Empty ranges are left out."""
    slots = len(starts)
    edges: list[tuple[int, int, bool]] = []  # (start into the cycle, slot, night)
    for s in range(slots):
        edges.append((starts[s], s, True))
        edges.append((night_ends[s] + after, s, False))
        if before:
            edges.append(((starts[s + 1] if s + 1 < slots else cycle) - before, (s + 1) % slots, True))
    ranges = []
    for i, (start, slot, night) in enumerate(edges):
        end = edges[i + 1][0] if i + 1 < len(edges) else cycle
        low, high = to_phase(start), to_phase(end) - 1
        if high >= low:
            ranges.append((low, high, slot, night))
    return ranges
