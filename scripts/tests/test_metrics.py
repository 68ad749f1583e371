"""Metrics on synthetic captures read back with tshark: every metric against the known outage."""

import shutil

import pytest

from scripts.analysis.metrics import (
    data_flow,
    largest_gap,
    reordering,
    spurious_retransmissions,
    stream_metrics,
    throughput_dip,
    throughput_series,
)
from scripts.hosts.capture import TcpPacket, parse_tshark_fields, read_tcp
from scripts.tests.synth import DPORT, RCV, SND, SPORT, Synth

needs_tshark = pytest.mark.skipif(shutil.which("tshark") is None, reason="needs tshark (make setup)")


@pytest.fixture(scope="module")
def synth(tmp_path_factory):
    s = Synth().build()
    return s, *s.write(tmp_path_factory.mktemp("pcap"))


@needs_tshark
def test_loss_gap_rto_drops(synth):
    s, spcap, rpcap = synth
    sender, receiver = read_tcp(spcap), read_tcp(rpcap)
    assert data_flow(sender) == (SND, SPORT, RCV, DPORT)
    m = stream_metrics(sender, s.t0 + s.down, receiver)
    # 0.2 s then 0.4 s backoff: retransmissions at down+0.2 and down+0.6 (the second gets through)
    assert s.retrans == 2
    assert m.sent == s.sent
    assert m.retransmissions == s.retrans
    assert m.retransmissions_before_event == 0  # both come after the outage starts
    assert stream_metrics(sender, s.t0 + s.down + 1.0, receiver).retransmissions_before_event == 2
    assert m.loss_pct == pytest.approx(100 * s.retrans / s.sent)
    assert m.max_gap_ms == pytest.approx(400, abs=2)
    assert m.rto_estimate == 2 and m.rtos_before_event == 0
    assert stream_metrics(sender, s.t0 + s.down + 1.0, receiver).rtos_before_event == 2
    assert m.lost_packets == 2  # the segment sent into the outage and its first retransmission
    assert m.reordered == 0
    assert m.throughput_dip_pct == pytest.approx(100)
    assert m.throughput_mbps == pytest.approx(4.0, rel=0.02)  # 1000 B per 2 ms
    assert m.rtt_ms_median == pytest.approx(0.4, abs=0.01)


def test_largest_gap_window():
    ts = [0.0, 0.1, 1.0, 1.05, 3.0]
    assert largest_gap(ts).ms == pytest.approx(1950)
    g = largest_gap(ts, 0.0, 1.02)
    assert (round(g.ms), g.start, g.end) == (900, 0.1, 1.0)


def test_throughput_series_and_dip():
    class P:
        def __init__(self, t, n, r=False):
            self.t, self.length, self.retrans = t, n, r

    data = [P(i * 0.01, 1250) for i in range(100)] + [P(0.505, 1250, True)]
    s = throughput_series(data, 0.0, 0.1)
    assert s[0] == (0.0, pytest.approx(1.0))
    assert s[5][1] == pytest.approx(1.1)
    assert throughput_series(data, 0.0, 0.1, goodput=True)[5][1] == pytest.approx(1.0)
    assert throughput_dip([(0.0, 10.0), (0.1, 10.0), (0.2, 2.5), (0.3, 10.0)], 0.2, 1.0)[1] == pytest.approx(75)
    with pytest.raises(ValueError, match="bin 0"):
        throughput_series(data, 0.0, 0)


def test_parse_tshark_fields_bad_line():
    with pytest.raises(ValueError, match="tshark line 1"):
        parse_tshark_fields("x\t10.0.0.1\t1\t10.0.0.2\t2\t0\t1\t0\t\t\t\t\t\t\n")
    assert parse_tshark_fields("1.5\t\t\t\t\t\t\t\t\t\t\t\t\t\n") == []


def test_reordering_counts_late_first_arrivals_only():
    def seg(t, seq):
        return TcpPacket(t, "a", 1, "b", 2, 0, seq, 100)

    flow = ("a", 1, "b", 2)
    sender = [seg(0.0, 1), seg(0.1, 101), seg(0.2, 201), seg(0.3, 301), seg(0.5, 101), seg(0.6, 301)]
    # 101 arrives late (after 201) and again as a spurious retransmission: reordering;
    # 301's first copy is lost and its retransmission arrives after nothing higher: not reordering
    receiver = [seg(0.01, 1), seg(0.21, 201), seg(0.22, 101), seg(0.51, 101), seg(0.61, 301)]
    assert reordering(sender, receiver, flow) == 1


def test_spurious_retransmissions_are_repeats_at_the_receiver():
    def seg(t, seq, flow=("a", 1, "b", 2)):
        return TcpPacket(t, *flow, 0, seq, 100)

    flow = ("a", 1, "b", 2)
    # 101 arrives twice (late original, then its retransmission): spurious; 301 arrives once (its
    # original was lost): a needed retransmission; the other direction and a repeat before 0.3 s don't count
    receiver = [seg(0.01, 1), seg(0.21, 201), seg(0.22, 101), seg(0.25, 1), seg(0.51, 101), seg(0.61, 301),
                seg(0.7, 101, ("b", 2, "a", 1)), seg(0.8, 101, ("b", 2, "a", 1))]
    assert spurious_retransmissions(receiver, flow, 0.3) == 1
    assert spurious_retransmissions(receiver, flow, 0.0) == 2
