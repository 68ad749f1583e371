"""fabric/schedule_clock.py: the TNA clock's entries put every packet, timed by a model of the TNA
glue's arithmetic, in the slot and night the schedule says; cycles that are no power of two of
1.024 us units are refused or rounded (and reported); v1model's encoding is the one it was; the
encoding is chosen from set_schedule's parameter widths."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabric.schedule import Range, TimeSchedule
from fabric.schedule_clock import (
    V1MODEL,
    TnaClock,
    V1modelClock,
    clock_for,
    clock_for_widths,
    timestamp_tick_ns,
)
from p4rt.schema import P4Schema
from tablegen.schedule import clock_entries

GOLDEN = Path(__file__).resolve().parents[2] / "p4sim" / "tests" / "golden"
U = 1024  # ns per unit
MIB = 1 << 20  # 1024 units, in ns


def tna_phase(tstamp_ns: int, minus_epoch: int, mask: int) -> int | None:
    """include/tna/glue.p4 and schedule/clock.p4 literally: now = global_tstamp[41:10] (a bit<48> of
    ns), t = now + the negated epoch (SCHEDULE_SINCE), TIME_NEGATIVE(t) (None: not started), phase =
    t & mask, its 20 low bits the key."""
    now = ((tstamp_ns & ((1 << 48) - 1)) >> 10) & 0xFFFFFFFF
    t = (now + minus_epoch) & 0xFFFFFFFF
    if t >= 1 << 31:
        return None
    return t & mask & 0xFFFFF


def lookup(ranges: list[Range], phase: int) -> tuple[int, bool]:
    hits = [(s, n) for lo, hi, s, n in ranges if lo <= phase <= hi]
    assert len(hits) == 1, f"phase {phase}: {len(hits)} ranges"
    return hits[0]


def switch_says(sched: TimeSchedule, clock: TnaClock, t_ns: int, before_us: int = 0,
                after_us: int = 0) -> tuple[int, bool] | None:
    enc = clock.encode(sched, before_us, after_us)
    phase = tna_phase(t_ns, enc.params["epoch_us"], enc.params["cycle_scale"])
    return None if phase is None else lookup(enc.ranges, phase)


EXACT = [
    TimeSchedule(4, day_ns=7 * MIB, night_ns=MIB),                     # 2^15 units, edges on units
    TimeSchedule(2, day_ns=2 * MIB - 300_000, night_ns=300_000, epoch_ns=5 * U),  # a night off the units
    TimeSchedule(1, day_ns=64 * U, night_ns=0),
    TimeSchedule(8, day_ns=100 * U, night_ns=28 * U, epoch_ns=((1 << 33) - 300) * U),  # wraps 2^32 units
]


@pytest.mark.parametrize("sched", EXACT)
def test_every_unit_of_two_cycles_takes_the_schedules_slot(sched: TimeSchedule) -> None:
    clock = TnaClock()
    enc = clock.encode(sched)
    units = sched.cycle_ns // U
    assert enc.rounding is None and enc.params["cycle_scale"] == units - 1
    assert enc.params["epoch_us"] == -(sched.epoch_ns // U) % (1 << 32)
    assert enc.ranges[0][0] == 0 and enc.ranges[-1][1] == units - 1
    assert all(a[1] + 1 == b[0] for a, b in zip(enc.ranges, enc.ranges[1:], strict=False)), "contiguous"
    for k in range(2 * units):
        first, last = sched.epoch_ns + k * U, sched.epoch_ns + k * U + U - 1
        got = lookup(enc.ranges, tna_phase(first, enc.params["epoch_us"], enc.params["cycle_scale"]))
        # a unit holding an edge goes to what follows the edge: the schedule at the unit's last ns
        assert got == sched.slot_at_ns(last), f"unit {k}"
        if sched.night_ns % U == 0:
            assert got == sched.slot_at_ns(first), f"unit {k}"


def test_edges_to_the_nanosecond() -> None:
    sched = TimeSchedule(4, day_ns=7 * MIB, night_ns=MIB, epoch_ns=1000 * U)
    clock = TnaClock()
    for s in range(1, 9):
        edge = sched.epoch_ns + s * 8 * MIB
        for t, want in ((edge - 1, ((s - 1) % 4, False)), (edge, (s % 4, True)),
                        (edge + MIB - 1, (s % 4, True)), (edge + MIB, (s % 4, False))):
            assert switch_says(sched, clock, t) == want == sched.slot_at_ns(t), f"t={t}"
    assert switch_says(sched, clock, sched.epoch_ns - 1) is None  # before the epoch


def test_guards_widen_the_nights_by_whole_units() -> None:
    sched = TimeSchedule(2, day_ns=7 * MIB, night_ns=MIB)  # slots of 8192 units, nights of 1024
    clock = TnaClock()
    # 3 us before: 2.93 units, rounded up to 3; 1 us after: 1 unit
    said = {u: switch_says(sched, clock, u * U, before_us=3, after_us=1)
            for u in (0, 1024, 1025, 8188, 8189, 8192, 9216, 9217, 16380, 16381)}
    assert said == {0: (0, True), 1024: (0, True), 1025: (0, False), 8188: (0, False), 8189: (1, True),
                    8192: (1, True), 9216: (1, True), 9217: (1, False), 16380: (1, False), 16381: (0, True)}
    with pytest.raises(ValueError, match="guards 7300/100 us: .*shortest -59"):
        clock.encode(sched, before_us=7300, after_us=100)


def test_a_cycle_of_whole_microseconds_is_refused_in_one_line() -> None:
    with pytest.raises(ValueError) as err:
        TnaClock().encode(TimeSchedule(3, 10_000, 1_000))
    msg = str(err.value)
    assert "\n" not in msg
    assert msg == ("TNA schedule cycle 33000 us (3 slots) is 32226.6 units of 1.024 us: expected a power of two "
                   "of units, nearest 2^14 units = 16777.216 us or 2^15 units = 33554.432 us (or round_cycle)")
    with pytest.raises(ValueError, match="epoch 1000000 ns: expected a whole number of 1.024 us units"):
        TnaClock().encode(TimeSchedule(4, day_ns=7 * MIB, night_ns=MIB, epoch_us=1000))
    with pytest.raises(ValueError, match=r"expected at most 2\^20 units \(1073741.824 us: the phase key's 20 bits\)"):
        TnaClock().encode(TimeSchedule(2, day_ns=(1 << 20) * U, night_ns=0))


@pytest.mark.parametrize("sched, log2", [(TimeSchedule(3, 10_000, 1_000, 777), 15),
                                         (TimeSchedule(5, 400, 100), 11),      # 2500 us: 2441 units, 2^11 nearer
                                         (TimeSchedule(7, 100, 10, 12_345), 9)])  # 770 us: 752 units
def test_rounding_scales_every_edge_and_reports_the_lengths(sched: TimeSchedule, log2: int) -> None:
    enc = TnaClock(round_cycle=True).encode(sched)
    units = 1 << log2
    assert enc.params["cycle_scale"] == units - 1
    assert enc.params["epoch_us"] == -round(sched.epoch_ns / U) % (1 << 32)
    # unit p stands for the schedule's [p, p + 1) x cycle / units: it takes the state at that span's
    # last ns (the unit an edge falls in goes to what follows it)
    for p in range(units):
        last = sched.epoch_ns + -(-(p + 1) * sched.cycle_ns // units) - 1
        assert lookup(enc.ranges, p) == sched.slot_at_ns(last), f"unit {p}"
    assert enc.rounding is not None and "\n" not in enc.rounding
    assert f"rounded to 2^{log2} units = {units * 1.024:.3f} us" in enc.rounding
    lengths: dict[tuple[int, bool], int] = {}
    for lo, hi, s, night in enc.ranges:
        lengths[(s, night)] = lengths.get((s, night), 0) + hi - lo + 1
    for word, night in (("nights", True), ("days", False)):
        got = sorted(n for (_, k), n in lengths.items() if k == night)
        span = f"{got[0]} units" if got[0] == got[-1] else f"{got[0]}-{got[-1]} units"
        assert f"{word} {span} (" in enc.rounding
    if sched.epoch_ns % U:
        assert f"epoch {sched.epoch_ns} ns rounded to unit {round(sched.epoch_ns / U)}" in enc.rounding


def test_rounding_never_loses_a_night() -> None:
    with pytest.raises(ValueError, match="night 500 ns: under one 1.024 us unit"):
        TnaClock(round_cycle=True).encode(TimeSchedule(2, day_ns=5_000, night_ns=500))


def test_v1model_encoding_is_the_schedules_own() -> None:
    sched = TimeSchedule(3, 10_000, 1_000, 42)
    enc = V1MODEL.encode(sched, 300, 100)
    assert enc.params == {"epoch_us": 42, "cycle_scale": sched.scale}
    assert enc.ranges == sched.phase_ranges(300, 100) and enc.rounding is None
    assert clock_entries(sched) == clock_entries(sched, clock=V1MODEL)
    with pytest.raises(ValueError, match="day 7340032 ns: expected whole microseconds"):
        V1MODEL.encode(TimeSchedule(4, day_ns=7 * MIB, night_ns=MIB))


def test_tna_clock_entries() -> None:
    sched = TimeSchedule(4, day_ns=7 * MIB, night_ns=MIB, epoch_ns=7 * U)
    entries = [e.to_dict() for e in clock_entries(sched, clock=TnaClock())]
    assert entries[0] == {"table": "schedule_config", "default": True, "action": "set_schedule",
                          "params": {"epoch_us": (1 << 32) - 7, "cycle_scale": (1 << 15) - 1}}
    assert entries[1:3] == [
        {"table": "schedule_phase", "match": {"phase": {"low": 0, "high": 1023}}, "priority": 1,
         "action": "set_slot", "params": {"slot": 0, "night": 1, "end": 1024}},
        {"table": "schedule_phase", "match": {"phase": {"low": 1024, "high": 8191}}, "priority": 1,
         "action": "set_slot", "params": {"slot": 0, "night": 0, "end": 8192}}]
    assert len(entries) == 9


def test_encoding_from_set_schedule_widths() -> None:
    assert clock_for_widths({"epoch_us": 48, "cycle_scale": 64}) is V1MODEL
    assert clock_for_widths({"epoch_us": 32, "cycle_scale": 32}, round_cycle=True) == TnaClock(round_cycle=True)
    with pytest.raises(ValueError, match=r"set_schedule parameters \{'epoch_us': 48, 'cycle_scale': 32\}: expected"):
        clock_for_widths({"epoch_us": 48, "cycle_scale": 32})
    for program in ("fabric", "ocs"):
        assert isinstance(clock_for(P4Schema.load(str(GOLDEN / f"{program}.p4info.txtpb"))), V1modelClock)


def test_the_timestamp_tick_comes_from_the_program() -> None:
    assert timestamp_tick_ns(P4Schema.load(str(GOLDEN / "ocs.p4info.txtpb"))) == V1modelClock.TICK_NS == 1000
    assert timestamp_tick_ns(None) == 1000 and TnaClock.TICK_NS == 1024
