"""The pure parts of seed 001's experiment and report: workloads, ss parsing, goodput, the table."""

import pytest

from scripts.experiments.seed001 import (
    bijective,
    flow_name,
    parse_samples,
    sampler,
    server_completion,
)
from scripts.report.seed001 import cells, row, throughput


def test_bijective_workloads_are_permutations():
    flows = bijective(5, 4)
    assert len(flows) == 20 and len(set(flows)) == 20
    for k in range(4):
        shift = flows[5 * k:5 * k + 5]
        assert sorted(d for _, d in shift) == list(range(5)) and all(s != d for s, d in shift)
    with pytest.raises(ValueError, match="tdc=5"):
        bijective(5, 5)


SS = """@@ 100.0
0      0      10.0.1.2:5600 10.0.2.2:40000
\t cubic wscale:7,7 rto:204 rtt:12.5/3 cwnd:10 bytes_acked:1000 retrans:0/2
0      0      10.0.1.2:40001 10.0.3.2:5601
\t reno rtt:1/1 bytes_acked:5
@@ 100.5
ESTAB 0      0      10.0.1.2:5600 10.0.2.2:40000
\t reno rtt:20/3 cwnd:10 bytes_acked:3000 retrans:0/3
@@ 101.0
FIN-WAIT-1 0      80000      10.0.1.2:5600 10.0.2.2:40000
\t reno rtt:30/3 cwnd:12 bytes_acked:5000 retrans:0/4
"""


def test_parse_samples_keeps_the_senders_sockets():
    got = parse_samples(SS, {5600})
    # a server that closed with its flow still sending is in FIN-WAIT-1: still the sender
    assert got == {5600: [(100.0, 1000, 12.5, 2), (100.5, 3000, 20.0, 3), (101.0, 5000, 30.0, 4)]}


def test_throughput_and_row():
    r = {"tdc": 1, "variant": "one-way", "timeout_s": 40, "load_avg": [[3.0], [4.0]], "grants": 5,
         "bursts_lost": 2, "ocs_drops": 7, "night_drops": 1, "unlit_drops": 6, "hold_overflow": 0,
         "hold_expired": 1,
         "flows": {"0->1": {"fct_s": 0.6, "bytes": 4000, "retransmits": 3, "mean_rtt_ms": 20.0,
                            "acked": [(0.1, 1000), (0.3, 3000)]},
                   "1->0": {"fct_s": None, "bytes": None, "retransmits": 1, "mean_rtt_ms": None, "acked": []}}}
    t, mbit = throughput(r, bin_s=0.25)
    assert t == [0.0, 0.25, 0.5]
    assert mbit == pytest.approx([8 * 1000 / 0.25 / 1e6, 8 * 2000 / 0.25 / 1e6, 8 * 1000 / 0.25 / 1e6])
    assert row(r) == ("| 1 | one-way | 0.60 / 0.60 (1 of 2 unfinished at 40 s) | 4 | 20 | 5 / 2 | "
                      "7 (night 1, unlit 6) | 0 / 1 | - | 3.0-4.0 |")


def test_cells_average_runs_and_name_the_spines_oversubscription():
    def run(variant, fcts, spine=10, lost=None):
        r = {"tdc": 4, "variant": variant, "timeout_s": 40, "rate_mbit": 10, "electrical_mbit": spine,
             "flows": {str(i): {"fct_s": f} for i, f in enumerate(fcts)}}
        if lost is not None:
            r["bursts_lost"] = lost
        return r

    rs = [run("two-way", [1.0, 3.0], lost=0), run("two-way", [2.0, 4.0], lost=0),
          run("electrical", [5.0, None], spine=2.5)]
    rs[0]["servers"], rs[1]["servers"] = {"0": 3.0, "1": 2.0}, {"0": 4.0, "1": None}
    assert cells(rs).splitlines()[2:] == [
        "| 4 | two-way | 2 | 2.50 (2.00-3.00) | 12.25 (2.50-22.00) | 0 |",
        "| 4 | electrical 1:4 | 1 | 22.50 (22.50-22.50) | - | - |"]  # unfinished: the timeout


def test_sampler_keeps_its_path_out_of_the_shell_text(tmp_path):
    out = tmp_path / "x; touch $HOME/pwned"
    argv = sampler(0.2, out)
    assert argv[:2] == ["sh", "-c"] and str(out) not in argv[2] and argv[-2:] == [str(out), "0.2"]


def test_server_completion_is_its_last_flow_or_none():
    flows = {flow_name(0, 1, 0): {"fct_s": 2.0}, flow_name(0, 1, 1): {"fct_s": 3.5}, flow_name(1, 2, 0): {"fct_s": 1.0},
             flow_name(1, 2, 1): {"fct_s": None}, flow_name(1, 2, 2): {"fct_s": 4.0}}
    assert list(flows)[:2] == ["0->1", "0->1#1"]
    assert server_completion(flows) == {"0": 3.5, "1": None}
    flows[flow_name(0, 1, 0)]["late_s"] = 2.5  # its process started 2.5 s after the common start
    assert server_completion(flows)["0"] == 4.5
