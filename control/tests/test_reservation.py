"""Horizon scheduling (seed 001, Algorithm 1) against the paper's worked numbers, and the one-way baseline."""

import random

import pytest

from control.reservation import Burst, HorizonScheduler, Timing, one_way

US = 1e-6


def test_idle_channel_matches_the_paper():
    """Grant at t_c + 2 us, the switch starts at t_c + 2 us, the burst at t_c + 3 us (seed-notes/001 2.3)."""
    g = HorizonScheduler(4).request(0, 1, 50_000, now=10 * US)
    assert g.granted_at == pytest.approx(12 * US) and g.configure_at == pytest.approx(12 * US)
    assert g.start == pytest.approx(13 * US)
    assert g.end - g.start == pytest.approx(40 * US)  # T_RL of 50 KB at 10 Gbps


def test_a_measured_control_trip_replaces_t_proc_plus_t_oh():
    """An emulation's grant takes its control path's measured time to reach the ToR (the lead), in
    place of the model's T_proc + T_oh, not on top of it."""
    g = HorizonScheduler(4).request(0, 1, 50_000, now=10 * US, control_s=50 * US)
    assert g.granted_at == pytest.approx(60 * US) and g.start == pytest.approx(61 * US)
    with pytest.raises(ValueError, match="control_s"):
        HorizonScheduler(4).request(0, 1, 50_000, now=0.0, control_s=-1.0)


def test_back_to_back_bursts_on_one_port_are_3us_apart():
    s = HorizonScheduler(4)
    a, b = s.request(0, 1, 50_000, 0.0), s.request(0, 2, 50_000, 0.0)
    assert b.start - a.end == pytest.approx(3 * US)
    assert (a.end - a.start) / (b.start - a.start) == pytest.approx(40 / 43)  # per-port efficiency


def test_a_second_switch_takes_the_next_request_at_once():
    s = HorizonScheduler(4, switches=2)
    a, b = s.request(0, 1, 50_000, 0.0), s.request(0, 1, 50_000, 0.0)
    assert (a.switch, b.switch) == (0, 1) and a.start == b.start
    assert (a.port, b.port) == (0, 1)  # the ToR's transceivers: switch * Q + q


def test_ports_per_switch_index_each_tor_separately():
    """The general (P, Q) indexing: ToR 1's ports on switch 0 are not ToR 0's (the listing's caveat)."""
    s = HorizonScheduler(3, switches=1, ports_per_switch=2)
    grants = [s.request(1, 2, 1000, 0.0) for _ in range(3)]
    assert [g.port for g in grants[:2]] == [0, 1] and grants[2].start > grants[0].end
    assert s.request(0, 2, 1000, 0.0).start > grants[0].start  # ToR 2's downlinks are busy, ToR 0's uplink is not
    assert s.request(0, 1, 1000, 0.0).start == grants[0].start  # both free: no wait


def test_windows_never_overlap_on_any_port():
    rng = random.Random(7)
    s = HorizonScheduler(6, switches=2, ports_per_switch=2, timing=Timing(guard_s=0.5 * US))
    now, grants = 0.0, []
    for _ in range(2000):
        now += rng.expovariate(1 / (5 * US))
        src, dst = rng.sample(range(6), 2)
        grants.append(s.request(src, dst, rng.choice([50_000, 100_000]), now))
    for side in ("src", "dst"):
        by_port: dict[tuple, list] = {}
        for g in grants:
            tor, port = (g.src, g.port) if side == "src" else (g.dst, g.out_port)
            by_port.setdefault((tor, port), []).append((g.start, g.end))
        for windows in by_port.values():
            windows.sort()
            assert all(b[0] >= a[1] for a, b in zip(windows, windows[1:], strict=False))
    assert all(g.start >= g.granted_at + 1 * US - 1e-12 for g in grants)  # the grant always arrives in time


def test_one_way_drops_what_collides():
    bursts = [Burst(0, 2, 50_000, 0, 0.0), Burst(1, 2, 50_000, 0, 10 * US), Burst(1, 3, 50_000, 0, 20 * US),
              Burst(0, 2, 50_000, 0, 45 * US)]
    assert one_way(bursts, tors=4) == [True, False, True, True]


def test_bad_requests_are_refused_with_one_line():
    s = HorizonScheduler(2)
    for args, text in [((0, 0, 10, 0.0), "two different ToRs"), ((0, 5, 10, 0.0), "dst=5"),
                       ((0, 1, 0, 0.0), "nbytes=0")]:
        with pytest.raises(ValueError, match=text):
            s.request(*args)
    with pytest.raises(ValueError, match="tors=0"):
        HorizonScheduler(0)
    with pytest.raises(ValueError, match="rate_bps"):
        Timing(rate_bps=0)
