"""control/clock.py: the offset of the shortest round trip, probe frames and their nonce, timeouts."""

from __future__ import annotations

import pytest

from control.clock import ClockOffset, estimate, measure, probe_frame, probe_nonce


def test_the_shortest_round_trip_sets_the_offset() -> None:
    # switch time = host time (us) + 5_000_000, probes of 4 ms and 1 ms round trip
    samples = [(10.0, 10.004, 15_002_500), (20.0, 20.001, 25_000_400)]
    got = estimate(samples)
    assert got == ClockOffset(offset_us=5_000_000 - 100, error_us=500)
    assert got.to_switch(20.0005) == 25_000_400 and got.to_host(25_000_400) == pytest.approx(20.0005)


def test_probe_frames_carry_their_nonce() -> None:
    frame = probe_frame(0x1234)
    assert len(frame) == 60 and probe_nonce(frame) == 0x1234
    assert probe_nonce(b"\xff" * 60) is None


def test_measure_pairs_probes_with_their_packet_ins() -> None:
    sent: list[bytes] = []
    inbox: list[tuple[bytes, int]] = []

    def send(frame: bytes) -> None:
        sent.append(frame)
        inbox.append((b"\xff" * 60, 1))  # something else first: ignored
        inbox.append((frame, 7_000_000))

    got = measure(send, lambda left: inbox.pop(0) if inbox else None, probes=3, timeout=0.2)
    assert len(sent) == 3 and got.error_us >= 1


def test_no_answer_times_out_and_bad_samples_are_refused() -> None:
    with pytest.raises(TimeoutError, match="none of 2 probes"):
        measure(lambda f: None, lambda left: None, probes=2, timeout=0.01)
    with pytest.raises(ValueError, match="expected at least one"):
        estimate([])
    with pytest.raises(ValueError, match="expected received after sent"):
        estimate([(2.0, 1.0, 5)])


def test_timestamps_in_ticks_of_another_length_give_the_offset_in_us() -> None:
    # a TNA switch stamps packet-ins in 1.024 us units: the same instant is 1024 units per 1048.576 us
    import time

    def answer(tick_ns: int):
        inbox: list[tuple[bytes, int]] = []

        def send(frame: bytes) -> None:
            inbox.append((frame, round((time.monotonic() * 1e6 + 3_000_000) * 1000 / tick_ns)))

        return measure(send, lambda left: inbox.pop(0) if inbox else None, probes=4, timeout=0.2, tick_ns=tick_ns)

    for tick_ns in (1000, 1024):
        got = answer(tick_ns)
        assert abs(got.offset_us - 3_000_000) <= got.error_us + 2, (tick_ns, got)


def test_after_guard_defaults_to_both_clocks_error_bounds():
    tor = ClockOffset(offset_us=1000, error_us=430)
    assert tor.after_guard_us(480) == 910  # no ToR starts a day before the OCS has
    assert tor.after_guard_us(480, given=300) == 300
