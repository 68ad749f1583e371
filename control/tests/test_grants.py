"""Reservations on a slot calendar (control/grants.py): two-way never overlaps a port, one-way
loses what collides at the destination, windows are whole slots within one cycle."""

import pytest

from control.grants import Burst, Calendar, OneWay, SlotGrant, TwoWay
from control.reservation import Timing

MS = 1e-3
# the experiment's scale: the paper's us as ms, 10 Gbit/s as 10 Mbit/s (50 KB = 40 ms)
T = Timing(switch_s=1 * MS, proc_s=1 * MS, overhead_s=1 * MS, guard_s=0.0, rate_bps=10e6)
CAL = Calendar(epoch_s=100.0, slot_s=5 * MS, night_s=1 * MS, slots=300)


def windows(grants: list[SlotGrant]) -> dict[str, list[set[int]]]:
    out: dict[str, list[set[int]]] = {}
    for g in grants:
        w = set(range(g.first, g.first + g.count))
        out.setdefault(f"in{g.src}", []).append(w)
        out.setdefault(f"out{g.dst}", []).append(w)
    return out


def test_calendar_arithmetic():
    assert CAL.day_s == pytest.approx(4 * MS)
    assert CAL.start(3) == pytest.approx(100.015)
    assert CAL.slot_at(100.0149) == 2 and CAL.slot_at(100.015) == 3
    assert CAL.first_at_or_after(100.015) == 3 and CAL.first_at_or_after(100.0151) == 4
    # a window is one stretch of light: its first slot's day (4 ms), then 5 ms a slot (the inner
    # nights are lit: the OCS keeps the circuit); 40 ms of burst in 9 slots (4 + 8 x 5 = 44 ms)
    assert CAL.slots_for(T.transmit_s(50_000)) == 9
    assert CAL.slots_for(T.transmit_s(55_000)) == 9  # 44 ms
    assert CAL.slots_for(T.transmit_s(55_100)) == 10
    assert CAL.slots_for(0.0) == 1 and CAL.slots_for(0.004) == 1 and CAL.slots_for(0.0041) == 2
    # the ToR's guards leave 2.5 ms of the first day; what the hold loop costs, once a window
    guarded = Calendar(epoch_s=100.0, slot_s=5 * MS, night_s=1 * MS, slots=300, send_s=2.5 * MS)
    assert guarded.slots_for(T.transmit_s(50_000)) == 9  # 2.5 + 8 x 5 = 42.5 ms
    assert guarded.slots_for(T.transmit_s(50_000), lost_s=2.5 * MS) == 9
    assert guarded.slots_for(T.transmit_s(50_000), lost_s=2.6 * MS) == 10
    assert SlotGrant(0, 1, 10, 298, 4, 0.0).indexes(300) == [298, 299, 0, 1]


@pytest.mark.parametrize("kwargs", [dict(epoch_s=0, slot_s=0.005, night_s=0.005, slots=10),
                                    dict(epoch_s=0, slot_s=0, night_s=0, slots=10),
                                    dict(epoch_s=0, slot_s=0.005, night_s=0.001, slots=1),
                                    dict(epoch_s=0, slot_s=0.005, night_s=0.001, slots=10, send_s=0.0041)])
def test_calendar_refuses_bad_shapes(kwargs):
    with pytest.raises(ValueError, match="calendar"):
        Calendar(**kwargs)


def test_two_way_idle_channel_is_the_papers_offset():
    """Request at t: Algorithm 1 starts the burst at t + T_sw + T_proc + T_oh; the window begins at
    the first slot whose night (the switching) starts at or after start - T_sw."""
    tw = TwoWay(4, CAL, T)
    now = CAL.start(10) + 0.5 * MS
    g = tw.request(0, 1, 1500, now)
    assert g.first == CAL.first_at_or_after(now + 2 * MS) == 11
    assert g.count == 1 and not g.lost and g.nbytes == 1500  # 1.2 ms of burst: one day
    assert tw.horizon.h_in[0][0] == tw.horizon.h_out[0][1] == pytest.approx(CAL.start(12))
    # a measured trip of 12 ms (the lead) replaces T_proc + T_oh: the window's night starts 12 ms on
    assert tw.request(2, 3, 1500, now, control_s=12 * MS).first == CAL.first_at_or_after(now + 12 * MS)
    assert OneWay(4, CAL, T).request(2, 3, 1500, now, control_s=12 * MS).first == CAL.first_at_or_after(now + 12 * MS)


def test_two_way_never_overlaps_a_port():
    """All-to-one and one-to-all at once (the collisions of TDC > 1): windows on a port are disjoint."""
    tw = TwoWay(5, CAL, T, Burst(growth_bps=10e6, cap_bytes=48 * 1514))
    now = CAL.start(0)
    grants = [tw.request(s, 0, 30_000, now) for s in range(1, 5)]
    grants += [tw.request(1, d, 5_000, now + 1 * MS) for d in range(2, 5)]
    for port, ws in windows(grants).items():
        for i, a in enumerate(ws):
            for b in ws[i + 1:]:
                assert not a & b, f"{port}: windows {sorted(a)} and {sorted(b)} overlap"
    assert not any(g.lost for g in grants)


@pytest.mark.parametrize("sched", [TwoWay, OneWay])
def test_a_busy_ports_next_window_follows_its_last(sched):
    """The grant's trip (a measured 25 ms lead here) delays a window from its request, not from its
    port's horizon: a second burst of a busy uplink starts in the slot after the first's window (its
    night is the switching), not 5 slots later (Algorithm 1 as printed adds T_sw + T_proc + T_oh to
    a busy horizon)."""
    s = sched(3, CAL, T)
    now = CAL.start(0)
    a = s.request(1, 0, 20_000, now, control_s=25 * MS)
    b = s.request(1, 2, 20_000, now, control_s=25 * MS)
    assert a.first == CAL.first_at_or_after(now + 25 * MS) and b.first == a.first + a.count


def test_two_way_burst_grows_with_the_wait_and_stops_at_the_cap():
    """With growth, a burst adds what arrives until its window: a later window carries more, never
    above the cap; without (the paper's), a burst is what the queue held when it asked."""
    tw = TwoWay(3, CAL, T, Burst(growth_bps=10e6, cap_bytes=20_000))
    now = CAL.start(0)
    first = tw.request(1, 0, 1000, now)
    second = tw.request(2, 0, 1000, now)  # waits behind the first on ToR 0's downlink
    assert first.nbytes < second.nbytes <= 20_000
    assert second.first >= first.first + first.count
    assert Burst(10e6, 1000).bound(500, 1.0) == 1000
    assert Burst().bound(500, 1.0) == TwoWay(3, CAL, T).request(2, 0, 500, now).nbytes == 500
    with pytest.raises(ValueError, match="burst growth"):
        Burst(-1.0, 10)


def test_one_way_loses_what_collides_at_the_destination():
    """Two sources to one destination at once: the second burst's window overlaps the first's on
    the destination's downlink, so the OCS sets no circuit for it (lost); the source's own uplink
    is serialised; a later burst after the first ends gets through."""
    ow = OneWay(3, CAL, T)
    now = CAL.start(0)
    a = ow.request(1, 0, 20_000, now)
    b = ow.request(2, 0, 20_000, now)
    assert not a.lost and b.lost
    c = ow.request(1, 2, 1500, now)  # same source: after its first window, never on top of it
    assert c.first >= a.first + a.count and not c.lost
    late = ow.request(2, 0, 1500, CAL.start(a.first + a.count) + 0.1 * MS)
    assert not late.lost


def test_one_way_bijective_never_collides():
    """TDC 1 (a permutation): one-way loses nothing, as in the paper."""
    ow = OneWay(4, CAL, T)
    now = CAL.start(0)
    grants = [ow.request(s, (s + 1) % 4, 30_000, now + 0.1 * MS * s) for s in range(4)]
    assert not any(g.lost for g in grants)


@pytest.mark.parametrize("sched", [TwoWay, OneWay])
def test_window_beyond_one_cycle_is_refused(sched):
    cal = Calendar(epoch_s=0.0, slot_s=5 * MS, night_s=1 * MS, slots=10)
    s = sched(3, cal, T)
    with pytest.raises(ValueError, match="within one cycle"):
        s.request(0, 1, 100_000, 0.0)  # 80 ms of burst on a 50 ms cycle


@pytest.mark.parametrize("args", [(0, 0, 10), (0, 3, 10), (0, 1, 0), (-1, 1, 10)])
def test_bad_requests(args):
    for sched in (TwoWay(3, CAL, T), OneWay(3, CAL, T)):
        with pytest.raises(ValueError):
            sched.request(*args, CAL.start(0))
