"""How a program encodes a TimeSchedule's clock: `set_schedule`'s parameters and `schedule_phase`'s
ranges, for the two glues of p4src/include (SCHEDULE_PHASE), and which one a loaded program wants.

- v1model (bmv2, p4sim): `epoch_us` in us (48 bits), `cycle_scale` = ceil(2^52 / cycle_us) (64
  bits), phases in 2^-20 cycles (fabric/schedule.py). Any cycle of whole microseconds.
- TNA (Tofino): the switch's time is `global_tstamp[41:10]`, units of 1024 ns in 32 bits;
  `epoch_us` is the epoch in those units, negated (mod 2^32: Tofino's ALU adds action data to a
  field but cannot subtract it from one), and `cycle_scale` the mask cycle - 1, so the cycle must be
  a power of two of units (2^k x 1.024 us: no whole number of us is one), at most 2^20 (the phase
  key's 20 bits, the widest range match Tofino takes), and phases are units into the cycle. Any
  other cycle is refused, or, when the caller asks, rounded to the nearest power of two with every
  slot edge scaled with it (and reported).

The encoding is read from the program's P4Info: the widths of `set_schedule`'s parameters (48/64
on v1model, 32/32 on TNA; fabric/tests/test_tna_contract.py lists this as a target difference).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Protocol

from fabric.contract import SET_SCHEDULE
from fabric.schedule import NS_PER_US, SCHEDULE_PHASE_BITS, Range, TimeSchedule, cycle_ranges
from p4rt.schema import P4Schema

TNA_UNIT_NS = 1024  # include/tna/glue.p4: global_tstamp (ns) >> 10
TNA_TIME_BITS = 32  # time_t and the epoch parameter
TNA_MAX_CYCLE_LOG2 = SCHEDULE_PHASE_BITS  # the phase key: 20 bits, Tofino's widest range match


@dataclass(frozen=True, slots=True)
class EncodedClock:
    """One switch's clock entries: set_schedule's parameters, schedule_phase's ranges, and what was
    rounded to fit the target (one line; None when nothing was)."""

    params: dict[str, int]
    ranges: list[Range]
    rounding: str | None = None


class ClockEncoding(Protocol):
    """A target's encoding of the schedule clock."""

    name: ClassVar[str]
    PARAM_WIDTHS: ClassVar[dict[str, int]]
    TICK_NS: ClassVar[int]

    def encode(self, sched: TimeSchedule, before_us: int = 0, after_us: int = 0) -> EncodedClock:
        """The clock of `sched`, nights widened by the guards (ToRs)."""
        ...


@dataclass(frozen=True, slots=True)
class V1modelClock:
    """include/v1model/glue.p4: the epoch in us, a multiply-and-shift scale (fabric/schedule.py)."""

    name: ClassVar[str] = "v1model"
    PARAM_WIDTHS: ClassVar[dict[str, int]] = {"epoch_us": 48, "cycle_scale": 64}
    TICK_NS: ClassVar[int] = NS_PER_US  # the switch's timestamps (and a packet-in's) count us

    def encode(self, sched: TimeSchedule, before_us: int = 0, after_us: int = 0) -> EncodedClock:
        """The clock of `sched` as v1model computes it (lengths and epoch in whole us)."""
        _ = (sched.day_us, sched.night_us)  # ValueError unless whole microseconds
        return EncodedClock({"epoch_us": sched.epoch_us, "cycle_scale": sched.scale},
                            sched.phase_ranges(before_us, after_us))


def _tna_us(units: float) -> str:
    return f"{units * TNA_UNIT_NS / NS_PER_US:.3f} us"


def _span(values: list[int]) -> str:
    lo, hi = min(values), max(values)
    return f"{lo} units ({_tna_us(lo)})" if lo == hi else f"{lo}-{hi} units ({_tna_us(lo)}-{_tna_us(hi)})"


@dataclass(frozen=True, slots=True)
class TnaClock:
    """include/tna/glue.p4: the negated epoch in 1.024 us units, the cycle a power of two of them (a mask).
    `round_cycle`: round another cycle to the nearest power of two (and an epoch between two units
    to the nearer) instead of refusing it; the rounding is reported in EncodedClock.rounding."""

    round_cycle: bool = False
    name: ClassVar[str] = "tna"
    PARAM_WIDTHS: ClassVar[dict[str, int]] = {"epoch_us": TNA_TIME_BITS, "cycle_scale": TNA_TIME_BITS}
    TICK_NS: ClassVar[int] = TNA_UNIT_NS  # timestamps count 1.024 us units

    def cycle_units(self, sched: TimeSchedule) -> tuple[int, str | None]:
        """The cycle in units (a power of two), and the rounding that made it one (None: exact)."""
        cycle_ns = sched.cycle_ns
        whole = cycle_ns // TNA_UNIT_NS
        if cycle_ns % TNA_UNIT_NS == 0 and whole & (whole - 1) == 0:
            units, note = whole, None
        else:
            lo = 1 << (whole.bit_length() - 1) if whole else 0
            hi = lo * 2 if lo else 1
            exact = f"{cycle_ns / TNA_UNIT_NS:g} units"
            near = " or ".join(f"2^{n.bit_length() - 1} units = {_tna_us(n)}" for n in (lo, hi) if n)
            if not self.round_cycle:
                raise ValueError(f"TNA schedule cycle {cycle_ns / NS_PER_US:g} us ({sched.slots} slots) is {exact} of "
                                 f"1.024 us: expected a power of two of units, nearest {near} (or round_cycle)")
            units = lo if lo and cycle_ns - lo * TNA_UNIT_NS < hi * TNA_UNIT_NS - cycle_ns else hi
            note = f"cycle {cycle_ns / NS_PER_US:g} us ({exact}) rounded to 2^{units.bit_length() - 1} units = {_tna_us(units)}"
        if units.bit_length() - 1 > TNA_MAX_CYCLE_LOG2:
            raise ValueError(f"TNA schedule cycle {cycle_ns / NS_PER_US:g} us: expected at most 2^{TNA_MAX_CYCLE_LOG2} "
                             f"units ({_tna_us(1 << TNA_MAX_CYCLE_LOG2)}: the phase key's {SCHEDULE_PHASE_BITS} bits)")
        return units, note

    def encode(self, sched: TimeSchedule, before_us: int = 0, after_us: int = 0) -> EncodedClock:
        """The clock of `sched` in units: every slot edge at the unit it falls in (scaled with the
        cycle when rounded), the guards rounded up to whole units (nights only widen)."""
        if before_us < 0 or after_us < 0:
            raise ValueError(f"guards {before_us}/{after_us} us: expected >= 0")
        units, note = self.cycle_units(sched)
        epoch, epoch_rest = divmod(sched.epoch_ns, TNA_UNIT_NS)
        if epoch_rest:
            if not self.round_cycle:
                raise ValueError(f"TNA schedule epoch {sched.epoch_ns} ns: expected a whole number of 1.024 us units "
                                 "(the switch's clock), or round_cycle")
            epoch += int(epoch_rest * 2 >= TNA_UNIT_NS)
            note = f"{note + '; ' if note else ''}epoch {sched.epoch_ns} ns rounded to unit {epoch}"

        def at(ns: int) -> int:  # the unit an instant into the cycle falls in
            return ns * units // sched.cycle_ns

        starts = [at(s * sched.slot_ns) for s in range(sched.slots)]
        night_ends = [at(s * sched.slot_ns + sched.night_ns) for s in range(sched.slots)]
        before, after = (-(-g * NS_PER_US // TNA_UNIT_NS) for g in (before_us, after_us))
        ends = [*starts[1:], units]
        days = [e - before - (n + after) for n, e in zip(night_ends, ends, strict=True)]
        if min(days) < 1:
            raise ValueError(f"TNA schedule of {sched.slots} slots in 2^{units.bit_length() - 1} units, guards "
                             f"{before_us}/{after_us} us: expected every slot's day to keep a unit (shortest {min(days)})")
        nights = [n - s for s, n in zip(starts, night_ends, strict=True)]
        if sched.night_ns and min(nights) < 1:
            raise ValueError(f"TNA schedule night {sched.night_ns} ns: under one 1.024 us unit in a slot of "
                             f"2^{units.bit_length() - 1} units; expected a night of at least one unit")
        if note is not None:
            note = (f"TNA clock: {note}; slots {_span([e - s for s, e in zip(starts, ends, strict=True)])}, "
                    f"nights {_span(nights)}, days {_span([e - n for n, e in zip(night_ends, ends, strict=True)])}")
        return EncodedClock({"epoch_us": -epoch % (1 << TNA_TIME_BITS), "cycle_scale": units - 1},
                            cycle_ranges(starts, night_ends, units, before, after, lambda u: u), note)


V1MODEL = V1modelClock()
ENCODINGS = (V1modelClock, TnaClock)


def clock_for_widths(widths: dict[str, int], round_cycle: bool = False) -> ClockEncoding:
    """The encoding whose `set_schedule` has these parameter widths (name -> bits)."""
    if widths == V1modelClock.PARAM_WIDTHS:
        return V1MODEL
    if widths == TnaClock.PARAM_WIDTHS:
        return TnaClock(round_cycle)
    raise ValueError(f"set_schedule parameters {widths}: expected "
                     + " or ".join(f"{e.PARAM_WIDTHS} ({e.name})" for e in ENCODINGS))


def timestamp_tick_ns(schema: P4Schema | None) -> int:
    """ns per tick of the program's timestamps (a packet-in's too): its clock encoding's, or v1model's
    for a program without a schedule clock."""
    if schema is None or SET_SCHEDULE not in schema.actions:
        return V1MODEL.TICK_NS
    return clock_for(schema).TICK_NS


def clock_for(schema: P4Schema, round_cycle: bool = False) -> ClockEncoding:
    """The encoding the loaded program wants, from its P4Info's `set_schedule` (round_cycle: TNA only)."""
    action = schema.actions[SET_SCHEDULE]
    return clock_for_widths({p.name: p.bitwidth for p in action.params}, round_cycle)
