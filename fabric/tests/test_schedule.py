"""fabric/schedule.py: the clock's arithmetic as the v1model programs compute it, and phase ranges
that classify every microsecond of the cycle as the schedule says."""

from __future__ import annotations

import pytest

from fabric.schedule import PHASE_MASK, TimeSchedule


def switch_phase(t: int, scale: int) -> int:
    """SCHEDULE_PHASE of include/v1model/glue.p4, literally: bit<64> product, >> 32, bit<32>, mask."""
    prod = (t * scale) & ((1 << 64) - 1)
    return ((prod >> 32) & 0xFFFFFFFF) & PHASE_MASK


def lookup(ranges: list[tuple[int, int, int, bool]], phase: int) -> tuple[int, bool]:
    hits = [(s, n) for lo, hi, s, n in ranges if lo <= phase <= hi]
    assert len(hits) == 1, f"phase {phase}: {len(hits)} ranges"
    return hits[0]


@pytest.mark.parametrize("sched", [TimeSchedule(3, 10_000, 1_000), TimeSchedule(2, 400_000, 100_000),
                                   TimeSchedule(7, 100, 10, epoch_us=12_345), TimeSchedule(1, 5, 0)])
def test_ranges_classify_every_microsecond_as_the_schedule(sched: TimeSchedule) -> None:
    ranges = sched.phase_ranges()
    assert ranges[0][0] == 0 and ranges[-1][1] == PHASE_MASK
    assert all(a[1] + 1 == b[0] for a, b in zip(ranges, ranges[1:], strict=False)), "contiguous, no overlap"
    step = max(1, sched.cycle_us // 20_000)
    for t in range(sched.epoch_us, sched.epoch_us + 2 * sched.cycle_us, step):
        assert sched.phase(t) == switch_phase(t - sched.epoch_us, sched.scale)
        assert lookup(ranges, sched.phase(t)) == sched.slot_at(t), f"t={t}"


def test_boundaries_exact_after_an_hour_of_cycles() -> None:
    sched = TimeSchedule(3, 10_000, 1_000)
    ranges = sched.phase_ranges()
    cycles = 3_600_000_000 // sched.cycle_us  # one hour of 33 ms cycles
    base = cycles * sched.cycle_us
    for t in (base, base + 999, base + 1_000, base + 10_999, base + 11_000, base + 32_999):
        assert lookup(ranges, sched.phase(t)) == sched.slot_at(t), f"t={t}"


def test_guards_widen_the_nights() -> None:
    sched = TimeSchedule(2, 10_000, 1_000)
    ranges = sched.phase_ranges(before_us=500, after_us=200)
    night = {t: lookup(ranges, sched.phase(t)) for t in (0, 1_199, 1_200, 10_499, 10_500, 11_000, 12_199, 12_200,
                                                         21_499, 21_500, 21_999)}
    assert night == {0: (0, True), 1_199: (0, True), 1_200: (0, False), 10_499: (0, False), 10_500: (1, True),
                     11_000: (1, True), 12_199: (1, True), 12_200: (1, False), 21_499: (1, False),
                     21_500: (0, True), 21_999: (0, True)}


def test_before_the_epoch_the_schedule_has_not_started() -> None:
    sched = TimeSchedule(2, 100, 10, epoch_us=1_000)
    assert sched.phase(999) is None and sched.slot_at(999) is None
    assert sched.slot_at(1_000) == (0, True)


@pytest.mark.parametrize("kwargs, word", [({"slots": 0, "day_us": 1, "night_us": 0}, "slots=0"),
                                          ({"slots": 2, "day_us": 0, "night_us": 0}, "day_us=0"),
                                          ({"slots": 2, "day_us": 5, "night_us": -1}, "night_us=-1"),
                                          ({"slots": 513, "day_us": 5, "night_us": 1}, "slots=513"),
                                          ({"slots": 2, "day_us": 1.5, "night_us": 1}, "day_us=1.5")])
def test_bad_schedules_are_refused(kwargs: dict, word: str) -> None:
    with pytest.raises(ValueError, match=word):
        TimeSchedule(**kwargs)


def test_guards_must_leave_part_of_the_day() -> None:
    with pytest.raises(ValueError, match="guards 600/500 us"):
        TimeSchedule(2, 1_000, 100).phase_ranges(600, 500)


def test_cycles_over_a_second_are_exact_to_one_phase_unit() -> None:
    sched = TimeSchedule(2, 450_000, 150_000)  # 1.2 s: a phase unit is 1.14 us
    ranges = sched.phase_ranges()
    edges = [i * 600_000 + d for i in range(5) for d in (0, 150_000)]
    for t in range(0, 2 * sched.cycle_us, 997):
        for t2 in (t, *(e + k for e in edges for k in (-2, -1, 0, 1, 2) if e + k >= 0)):
            got, want = lookup(ranges, sched.phase(t2)), sched.slot_at(t2)
            assert got == want or min(abs(t2 - e) for e in edges) <= 2, f"t={t2}"
