"""The time-sliced optical schedule as the programs compute it (p4src/include/schedule/clock.p4).

A schedule is a cycle of `slots` equal slots, each a night then a day, starting at `epoch_us` in a
switch's own time (us since it started). A packet's phase is a fraction of the cycle in
SCHEDULE_PHASE_BITS bits, computed as the v1model programs do: bits 32.. of (t x scale) with
scale = round(2^(32 + PHASE_BITS) / cycle_us), a multiplication (p4c refuses % and / by a run-time
value for bmv2). The `schedule_phase` table maps ranges of phase to (slot, night); `phase_ranges`
gives those ranges, exact to the microsecond for cycles up to 2^PHASE_BITS us (about 1 s) and
to one phase unit (cycle / 2^PHASE_BITS) beyond.
"""

from __future__ import annotations

from dataclasses import dataclass

SCHEDULE_PHASE_BITS = 20
PHASE_MASK = (1 << SCHEDULE_PHASE_BITS) - 1
SCALE_SHIFT = 32
MAX_SLOTS = 512  # schedule_phase holds 1024 ranges (SCHEDULE_PHASE_SIZE): a night and a day per slot


@dataclass(frozen=True, slots=True)
class TimeSchedule:
    """`slots` slots of `night_us` dark then `day_us` lit, from `epoch_us` (switch time)."""

    slots: int
    day_us: int
    night_us: int
    epoch_us: int = 0

    def __post_init__(self) -> None:
        for name, value, lo in (("slots", self.slots, 1), ("day_us", self.day_us, 1),
                                ("night_us", self.night_us, 0), ("epoch_us", self.epoch_us, 0)):
            if isinstance(value, bool) or not isinstance(value, int) or value < lo:
                raise ValueError(f"schedule {name}={value!r}: expected an integer >= {lo}")
        if self.slots > MAX_SLOTS:
            raise ValueError(f"schedule slots={self.slots}: expected at most {MAX_SLOTS}")
        if self.cycle_us >= 1 << 40:
            raise ValueError(f"schedule cycle {self.cycle_us} us: expected under 2^40 us")

    @property
    def slot_us(self) -> int:
        """One night and one day."""
        return self.night_us + self.day_us

    @property
    def cycle_us(self) -> int:
        """Every slot once."""
        return self.slots * self.slot_us

    @property
    def scale(self) -> int:
        """The `set_schedule` cycle_scale: 2^(32 + PHASE_BITS) / cycle, rounded up, so the phase never
        runs behind (rounded down, the last microsecond of a cycle would still read as the cycle's
        end); it runs ahead by under cycle/2^32 of a cycle per cycle (0.6 us a day at 33 ms)."""
        return -(-(1 << (SCALE_SHIFT + SCHEDULE_PHASE_BITS)) // self.cycle_us)

    def phase(self, now_us: int) -> int | None:
        """The phase a packet arriving at switch time `now_us` gets (None: before the epoch)."""
        if now_us < self.epoch_us:
            return None
        return (((now_us - self.epoch_us) * self.scale) % (1 << 64) >> SCALE_SHIFT) & PHASE_MASK

    def slot_at(self, now_us: int) -> tuple[int, bool] | None:
        """(slot, night) at switch time `now_us` by the schedule's own arithmetic (None: not started)."""
        if now_us < self.epoch_us:
            return None
        into = (now_us - self.epoch_us) % self.cycle_us
        slot, within = divmod(into, self.slot_us)
        return slot, within < self.night_us

    def boundary(self, t_us: int) -> int:
        """The first phase of the packets arriving `t_us` into the cycle (0 <= t_us <= cycle)."""
        if t_us >= self.cycle_us:
            return PHASE_MASK + 1
        return (t_us * self.scale) >> SCALE_SHIFT

    def phase_ranges(self, before_us: int = 0, after_us: int = 0) -> list[tuple[int, int, int, bool]]:
        """(low, high, slot, night) covering phases 0..2^PHASE_BITS-1, in order.

        A ToR widens each night by `before_us` (its last optical packet leaves that long before the
        OCS's night) and `after_us` (its first that long after): guard bands for the time a packet
        takes from the ToR's pipeline to the OCS's and the switches' clock offset.
        """
        if before_us < 0 or after_us < 0 or before_us + after_us + self.night_us >= self.slot_us:
            raise ValueError(f"guards {before_us}/{after_us} us: expected >= 0 and leaving part of the "
                             f"{self.day_us} us day")
        edges: list[tuple[int, int, bool]] = []  # (start us into the cycle, slot, night)
        for s in range(self.slots):
            start = s * self.slot_us
            edges.append((start, s, True))
            edges.append((start + self.night_us + after_us, s, False))
            if before_us:
                edges.append((start + self.slot_us - before_us, (s + 1) % self.slots, True))
        ranges = []
        for i, (start, slot, night) in enumerate(edges):
            end = edges[i + 1][0] if i + 1 < len(edges) else self.cycle_us
            low, high = self.boundary(start), self.boundary(end) - 1
            if high >= low:
                ranges.append((low, high, slot, night))
        return ranges
