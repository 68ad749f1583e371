"""Seed 002's timing measure (scripts/experiments/schedule_timing.py): runs, days and nights from send or arrival
times, and the arrivals read back from a nanosecond capture."""

from __future__ import annotations

from pathlib import Path

import pytest
from scapy.utils import PcapWriter

from scripts.experiments.schedule_timing import (
    ETHERTYPE,
    FRAME,
    days_and_nights,
    read_arrivals,
    runs,
    summary,
)


def test_runs_split_at_port_changes_and_gaps() -> None:
    assert runs({2: [0, 1, 2, 6, 7], 3: [3, 4]}) == [(2, 0, 2), (3, 3, 4), (2, 6, 7)]


def test_days_and_nights_from_a_mapping_of_arrival_times() -> None:
    # 1 ms per frame, days of 10 frames out of ports 2, 3, 2, 3, each after a night of one lost frame
    interval = 0.001
    got = {2: [*range(0, 10), *range(22, 32)], 3: [*range(11, 21), *range(33, 43)]}
    at = {s: s * interval + (0.0002 if s >= 22 else 0.0) for s in range(43)}  # from 22 on 0.2 ms late
    days, nights = days_and_nights(at, got, interval)
    # the first and last runs are cut off; the inner days 11..20 and 22..31
    assert days == pytest.approx([10.0, 10.0])
    assert nights == pytest.approx([1.2])
    assert days_and_nights([s * interval for s in range(43)], got, interval)[1] == pytest.approx([1.0])


def test_summary_counts_days_within_two_percent() -> None:
    s = summary([10.0, 10.1, 10.3, 9.0], 10.0)
    assert s["n"] == 4 and s["within_2pct"] == 0.5 and summary([], 10.0) == {"n": 0}


def test_read_arrivals_keeps_nanoseconds_and_skips_other_frames(tmp_path: Path) -> None:
    pcap = tmp_path / "rx.pcap"
    writer = PcapWriter(str(pcap), nano=True, linktype=1)
    writer.write_header(None)
    for seq, t in ((7, 1.000000123), (8, 1.000125456)):
        writer.write_packet(FRAME.pack(b"\xff" * 6, b"\x02" * 6, ETHERTYPE, seq) + bytes(46), sec=int(t),
                            usec=round((t - int(t)) * 1e9))
    writer.write_packet(FRAME.pack(b"\xff" * 6, b"\x02" * 6, 0x0800, 9) + bytes(46), sec=2, usec=0)
    writer.close()
    got = read_arrivals(pcap)
    assert sorted(got) == [7, 8]
    assert got[8] - got[7] == pytest.approx(125.333e-6, abs=1e-9)
