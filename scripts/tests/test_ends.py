"""Both-ends measures (scripts/analysis/ends.py) on real e1 captures from bmv2 (scripts/tests/data/README.md),
each figure checked against tshark's own filter engine or against what the run's OCS log says."""

import gzip
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from scripts.analysis import ends
from scripts.analysis.metrics import data_flow, largest_gap, of_connection
from scripts.experiments.reconf import analyze
from scripts.experiments.spec import load
from scripts.hosts.capture import parse_tcpdump_stats, read_tcp, tcpdump_command
from scripts.report.summary import clean_in_window, hitless_run, truly_hitless

DATA = Path(__file__).parent / "data"
SPEC = Path(__file__).resolve().parents[1] / "experiments" / "e1-single-stream.yaml"
needs_tshark = pytest.mark.skipif(shutil.which("tshark") is None, reason="needs tshark (make setup)")


def unpack(name: str, tmp: Path) -> Path:
    """The fixture's run directory with its pcaps unzipped (and its emulation/ beside it)."""
    src = DATA / name
    dst = tmp / name
    shutil.copytree(src, dst)
    for gz in dst.glob("run-000/*.pcap.gz"):
        gz.with_suffix("").write_bytes(gzip.decompress(gz.read_bytes()))
        gz.unlink()
    return dst / "run-000"


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("runs")
    out = {}
    for v in ("bbm", "mbb"):
        d = unpack(f"e1-bmv2-{v}", tmp)
        meta = json.loads((d / "run.json").read_text())
        s, r = read_tcp(d / "sender.pcap"), read_tcp(d / "receiver.pcap")
        out[v] = (d, meta, s, r, data_flow(s))
    return out


def tshark_count(pcap: Path, flt: str) -> int:
    res = subprocess.run(["tshark", "-n", "-r", str(pcap), "-Y", flt], capture_output=True, text=True, check=True)
    return len(res.stdout.splitlines())


@needs_tshark
def test_mbb_hold_is_a_silence_of_data_the_thesis_gap_hides(runs):
    d, meta, s, r, flow = runs["mbb"]
    te, hi = meta["t_event"], meta["t_event_done"] + 2.0
    h = ends.holds(s, flow)
    # tshark's filter engine counts the same zero-window ACKs (RSTs also carry window 0: not holds)
    zw = tshark_count(d / "sender.pcap", f"tcp.srcport=={flow[3]} && tcp.dstport=={flow[1]} && "
                                         "tcp.window_size_value==0 && tcp.flags.reset==0 && tcp.flags.syn==0")
    assert h.zero_window_acks == zw > 0
    assert h.holds >= 1 and h.longest_ms > 0
    sgap = ends.data_gap(s, flow, te, hi)
    thesis = largest_gap([p.t for p in of_connection(s, flow)], te, hi)
    # while held, ACKs keep coming: every packet gives a smaller gap than data alone
    assert sgap.ms > thesis.ms
    assert sgap.ms >= 0.8 * h.longest_ms
    # the drain probe: a segment at the receiver with no twin at the sender
    assert ends.made_up_segments(s, r, flow) >= 1
    assert ends.made_up_segments(s, s, flow) == 0
    assert ends.resent_segments(s, flow) == 0


@needs_tshark
def test_bbm_outage_is_longer_at_the_receiver(runs):
    d, meta, s, r, flow = runs["bbm"]
    te, hi = meta["t_event"], meta["t_event_done"] + 2.0
    sgap = ends.data_gap(s, flow, te, hi)
    new = ends.new_data_gap(r, flow, te, hi)
    dark = ends.ocs_dark(d.parent / "emulation" / "ocs-events.jsonl", te, meta["t_event_done"] + 1.0)
    # the sender's silence is its RTO wait; the receiver waits from the last byte before the dark
    # period to the first new byte after it, which covers the OCS's dark time
    assert 150 < sgap.ms < new.ms
    assert dark.ms is not None and new.ms > dark.ms > 500
    retx = tshark_count(d / "sender.pcap", f"tcp.srcport=={flow[1]} && tcp.analysis.retransmission "
                                           f"&& frame.time_epoch >= {te}")
    assert ends.resent_segments(s, flow, te) == retx > 0
    assert ends.holds(s, flow).zero_window_acks == 0 and ends.made_up_segments(s, r, flow) == 0
    g = ends.goodput_series(r, flow, meta["t_start"], 0.1, meta["t_end"])
    dip, control = ends.dip_with_control(g, te - meta["t_start"])
    assert dip == 100.0 and control is None  # event at 3 s: no room for a control window before it


@needs_tshark
def test_captures_hold_the_close_and_a_cut_tail_does_not(runs):
    for _, meta, s, r, flow in runs.values():
        assert ends.saw_close(s, flow) and ends.saw_close(r, flow)
        # the old captures lost their last second
        assert not ends.saw_close([p for p in r if p.t < meta["t_end"] - 1.0], flow)
    old = parse_tcpdump_stats((DATA / "tail-lost.tcpdump.log").read_text())
    assert (old.captured, old.received, old.unwritten) == (16555, 16987, 432)
    d = runs["mbb"][0]
    assert parse_tcpdump_stats((d / "sender.tcpdump.log").read_text()).unwritten == 0
    assert parse_tcpdump_stats("tcpdump: listening on eth0\n") is None  # killed: no statistics
    assert "--immediate-mode" in tcpdump_command("eth0", "x.pcap")


@needs_tshark
def test_analyze_real_runs_and_the_verdict(runs):
    spec = load(SPEC)
    mbb = analyze(runs["mbb"][0], spec)
    bbm = analyze(runs["bbm"][0], spec)
    assert mbb["max_gap_ms"] == max(mbb["sender_data_gap_ms"], mbb["receiver_data_gap_ms"])
    assert mbb["thesis_gap_ms"] < mbb["sender_data_gap_ms"]
    assert mbb["zero_window_acks"] > 0 and mbb["hold_total_ms"] > 0 and mbb["drain_probes"] >= 1
    assert mbb["sender_closed"] and mbb["receiver_closed"] and mbb["sender_capture_unwritten"] == 0
    assert mbb["ocs_dark_ms"] > 500
    assert hitless_run(mbb) is True
    assert bbm["receiver_new_data_gap_ms"] > bbm["sender_data_gap_ms"]
    assert bbm["retx_per_outage_s"] == pytest.approx(bbm["retransmissions_after_event"]
                                                      / (bbm["receiver_new_data_gap_ms"] / 1000))
    assert hitless_run(bbm) is False
    # the verdict looks at both ends: the same mbb run with a longer silence at the receiver fails
    assert hitless_run(dict(mbb, receiver_data_gap_ms=60.0)) is False
    assert hitless_run(dict(mbb, reordered_after_event=1)) is False
    assert hitless_run(dict(mbb, resent_after_event=1)) is False
    assert hitless_run(dict(mbb, lost_after_event=1)) is False
    assert hitless_run(dict(mbb, lost_packets=1)) is True  # a drop before the event is the emulation's
    assert mbb["lost_after_event"] == mbb["lost_in_window"] == 0 and bbm["lost_in_window"] > 0
    assert bbm["retransmissions_in_window"] == bbm["resent_in_window"] > 0
    assert clean_in_window(mbb) is True and clean_in_window(bbm) is False
    # a drop long after the procedure fails the run but not its window
    late = dict(mbb, lost_after_event=3, retransmissions_after_event=3, resent_after_event=3)
    assert hitless_run(late) is False and clean_in_window(late) is True


def test_dip_floor_is_the_deepest_bin_of_the_quiet_window():
    # 10 Mbit/s bins for 8 s with a 30% dip at 2.0 s and a 20% one at 6.0 s: the floor is the deeper
    series = [(i / 10, 10.0) for i in range(80)]
    series[20], series[60] = (2.0, 7.0), (6.0, 8.0)
    assert ends.dip_floor(series, (1.0, 8.0)) == pytest.approx(30.0)
    assert ends.dip_floor(series, (2.5, 8.0)) == pytest.approx(20.0)  # the first dip is outside the window
    assert ends.dip_floor(series, (9.0, 10.0)) is None


def test_truly_hitless_is_the_whole_run_against_its_own_baselines():
    run = {"lost_packets": 0, "retransmissions": 0, "resent_segments": 0, "nstat_retrans_segs": 0, "rto_count": 0,
           "nstat_timeouts": 0, "sender_data_gap_ms": 30.0, "baseline_sender_data_gap_ms": 20.0,
           "receiver_data_gap_ms": 18.0, "baseline_receiver_data_gap_ms": 15.0, "rx_dip_pct": 12.0,
           "rx_dip_floor_pct": 12.0}
    assert truly_hitless(run) is True
    for key, value in (("lost_packets", 1), ("nstat_retrans_segs", 1), ("nstat_timeouts", 1),
                       ("sender_data_gap_ms", 30.1), ("receiver_data_gap_ms", 23.0), ("rx_dip_pct", 12.5),
                       ("rx_dip_floor_pct", None)):
        assert truly_hitless(dict(run, **{key: value})) is False, key


def test_dip_control_window_and_bad_input(tmp_path):
    # 10 s of 10 Mbit/s bins, one 40% dip 1.5 s before the event and 100% at it
    series = [(i / 10, 10.0) for i in range(100)]
    series[65] = (6.5, 6.0)
    series[80] = (8.0, 0.0)
    dip, control = ends.dip_with_control(series, 8.0)
    assert (dip, control) == (100.0, pytest.approx(40.0))
    with pytest.raises(ValueError, match="not a file"):
        ends.ocs_dark(tmp_path / "none.jsonl", 0, 1)
    (tmp_path / "bad.jsonl").write_text("{\n")
    with pytest.raises(ValueError, match="line 1: not JSON"):
        ends.ocs_dark(tmp_path / "bad.jsonl", 0, 1)
    with pytest.raises(ValueError, match="bin 0"):
        ends.goodput_series([], ("a", 1, "b", 2), 0.0, 0)
