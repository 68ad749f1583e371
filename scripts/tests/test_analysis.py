"""Pure parts of the runs: UDP metrics, schedule bursts, utilisation, pairs, no-failover states, summaries."""

import pytest

from scripts.analysis.metrics import parse_arrivals, percentile, udp_metrics
from scripts.experiments.lb import pairs_for, utilisation
from scripts.experiments.reconf import queue_drops, queue_loss
from scripts.experiments.schedule import bursts
from scripts.experiments.spec import parse
from scripts.report.summary import hitless_run, lb_summary, markdown, reconf_summary
from topo.generators import fattree


def test_udp_metrics():
    arr = parse_arrivals("0,10.000\n1,10.001\n3,10.050\n2,10.051\n4,10.052\n")
    m = udp_metrics(arr, sent=6)
    assert (m.received, m.lost, m.reordered) == (5, 1, 1)
    assert m.max_gap_ms == pytest.approx(49, abs=0.01)
    with pytest.raises(ValueError, match="arrivals line 1"):
        parse_arrivals("x\n")


def test_bursts():
    # 0.5 ms spacing; on 100 ms, off 120 ms, four cycles
    times = []
    for c in range(4):
        start = c * 0.220
        times += [start + i * 0.0005 for i in range(201)]
    on, off = bursts(times, 0.002)
    assert len(on) == 2 and all(x == pytest.approx(100, abs=0.01) for x in on)
    assert len(off) == 1 and off[0] == pytest.approx(120, abs=0.01)


def test_utilisation():
    assert utilisation([100, 0, 0, 0]) == {"mean_over_max": 0.25, "jain": 0.25, "paths_used": 0.25}
    assert utilisation([5, 5, 5, 5])["jain"] == pytest.approx(1.0)
    assert utilisation([])["mean_over_max"] == 0.0


def test_pairs_cross_pods():
    ps = pairs_for(fattree(4), 8)
    assert len({c for c, _ in ps} | {s for _, s in ps}) == 16
    assert all(c.split("_")[0] != s.split("_")[0] for c, s in ps)
    with pytest.raises(ValueError, match="pairs 9"):
        pairs_for(fattree(4), 9)


def test_reconf_summary_verdict():
    runs = [{"retransmissions": 0, "rto_count": 0, "max_gap_ms": 12.0, "lost_packets": 0, "throughput_dip_pct": 5,
             "loss_pct": 0.0},
            {"retransmissions": 3, "rto_count": 0, "max_gap_ms": 30.0, "lost_packets": 2, "throughput_dip_pct": 20,
             "loss_pct": 0.1}]
    s = reconf_summary(runs)
    assert (s["hitless_runs"], s["hitless_all"], s["retransmissions"], s["max_gap_ms"]) == (1, False, 1.5, 21.0)
    # a retransmission before the event is the emulation's: the run is still hitless
    before = dict(runs[0], retransmissions=1, retransmissions_before_event=1)
    assert reconf_summary([before])["hitless_all"] is True
    spec = parse({"name": "x", "kind": "reconfiguration", "streams": [{"src": "h2", "dst": "h3"}],
                  "variants": ["mbb"]})
    md = markdown(spec, {"scale": None, "link_rate_mbit": 20, "reference_rate_mbit": None, "variants": {"mbb": s}})
    assert "NOT hitless: 1 of 2 runs" in md
    assert "Cores busy" not in md  # runs that did not read the cores say nothing of them
    runs = [dict(r, cpu_busy_quiet_pct=b) for r, b in zip(runs, (45.0, 97.5), strict=True)]
    md = markdown(spec, {"scale": None, "link_rate_mbit": 20, "reference_rate_mbit": None,
                         "variants": {"mbb": reconf_summary(runs)}})
    assert "mbb mean 71, max 98, 1 of 2 runs above" in md
    assert percentile([1, 2, 3, 4], 50) == 2 and percentile([1, 2, 3, 4], 99) == 4


def test_congested_verdict_counts_spurious_retransmissions_only():
    # a saturating stream: its drops at the full bottleneck are congestion's, repaired by retransmissions
    drops = {"retransmissions": 40, "spurious_retransmissions": 0, "rto_count": 0, "max_gap_ms": 12.0,
             "congested": True}
    assert hitless_run(drops) is True
    assert hitless_run(dict(drops, congested=False)) is False  # a paced stream: every retransmission counts
    assert hitless_run(dict(drops, spurious_retransmissions=1)) is False  # a late original: reordering
    assert hitless_run(dict(drops, rto_count=1)) is False
    assert hitless_run(dict(drops, rto_count=1, rtos_before_event=1)) is True  # congestion's, before the procedure
    assert hitless_run(dict(drops, max_gap_ms=50.0)) is False
    assert hitless_run({"congested": True}) is False  # nothing measured is not hitless
    spec = parse({"name": "x", "kind": "reconfiguration", "streams": [{"src": "h2", "dst": "h3", "rate_mbit": 0}],
                  "variants": ["mbb"]})
    md = markdown(spec, {"scale": None, "link_rate_mbit": 20, "reference_rate_mbit": None,
                         "variants": {"mbb": reconf_summary([dict(drops, spurious_retransmissions=2), drops])}})
    assert "target: 0 spurious retransmissions" in md and "NOT hitless: 1 of 2 runs had a spurious" in md


def test_lb_summary_per_flow_mnu_and_its_line():
    def run(mnus, util):
        flows = [{"fct_s": 0.1, "throughput_mbps": 9.0, "goodput_mbps": 8.0, "mnu": m} for m in mnus]
        return {"classes": {"query": {"flows": flows, "utilisation": util, "max_link_mbps": 10.0,
                                      "rate_check_ok": True}}}

    one_path = utilisation([100, 0, 0, 0])
    modes = {"static": lb_summary([run([0.25, 0.25], one_path)]), "ecmp": lb_summary([run([0.25, 0.25], one_path)]),
             "spray": lb_summary([run([0.9, 1.0], utilisation([9, 10, 10, 10]))])}
    assert modes["spray"]["flow_mnu"] == pytest.approx(0.95) and modes["static"]["flow_mnu"] == 0.25
    assert lb_summary([run([None], one_path)])["flow_mnu"] is None  # flows that ran concurrently
    spec = parse({"name": "x", "kind": "load-balancing", "variants": ["static", "ecmp", "spray"],
                  "workload": {"classes": {"query": 1000}, "pairs": 2}})
    md = markdown(spec, {"scale": 1, "link_rate_mbit": 20, "reference_rate_mbit": 20, "variants": modes})
    assert "Per-flow utilisation (each flow alone, the paper's MNU; 0.25 = one core of four): " \
           "static 0.25 / ecmp 0.25 / spray 0.95" in md


def test_mptcp_endpoints_noisy_pairs_and_their_spec_checks():
    from scripts.experiments.lb import MPTCP_PORT, mptcp_commands, noisy_pairs
    from topo.generators import fattree

    cmds = mptcp_commands("10.0.0.2", 4)
    assert cmds[1] == ["ip", "mptcp", "limits", "set", "subflows", "3", "add_addr_accepted", "3"]
    assert [c[6] for c in cmds[2:]] == [str(MPTCP_PORT + i) for i in (1, 2, 3)]
    assert all(c[-1] == "signal" and c[4] == "10.0.0.2" for c in cmds[2:])
    with pytest.raises(ValueError, match="subflows 0"):
        mptcp_commands("10.0.0.2", 0)
    ps = noisy_pairs(fattree(4), 2, 7)
    assert len(ps) == 14 and len({c for c, _ in ps}) == 2 and len({s for _, s in ps}) == 14
    assert not {c for c, _ in ps} & {s for _, s in ps}
    with pytest.raises(ValueError, match="noisy 3 clients x 7 servers"):
        noisy_pairs(fattree(4), 3, 7)
    base = {"name": "x", "kind": "load-balancing", "workload": {"pattern": "noisy"}}
    spec = parse(dict(base, variants=[{"name": "e", "mode": "ecmp", "mptcp_subflows": 4}]))
    assert spec.variants[0].mptcp_subflows == 4 and spec.workload.fan_in == 7
    with pytest.raises(ValueError, match="mptcp_subflows 9"):
        parse(dict(base, variants=[{"name": "e", "mode": "ecmp", "mptcp_subflows": 9}]))
    with pytest.raises(ValueError, match="workload.pattern 'ring'"):
        parse(dict(base, workload={"pattern": "ring"}))
    with pytest.raises(ValueError, match="mptcp_subflows with kind 'reconfiguration'"):
        parse({"name": "x", "kind": "reconfiguration", "variants": [{"name": "m", "mptcp_subflows": 2}]})


def test_thesis_points_and_shares():
    runs = [{"thesis_gap_ms": g, "rto_count": n, "loss_pct": 0.5, "max_gap_ms": g} for g, n in ((10, 0), (30, 0), (250, 1))]
    s = reconf_summary(runs)
    assert s["thesis_gap_share_below_200"] == pytest.approx(2 / 3) and s["thesis_gap_share_below_20"] == pytest.approx(1 / 3)
    spec = parse({"name": "x", "kind": "reconfiguration", "streams": [{"src": "h2", "dst": "h3"}],
                  "variants": ["bbm", "mbb-timed"]})
    md = markdown(spec, {"scale": None, "link_rate_mbit": 20, "reference_rate_mbit": None,
                         "variants": {"bbm": s, "mbb-timed": s}})
    assert "| runs with unavailability < 200 ms | - (2-3 x RTO_min) | 67% | 75% | 67% |" in md
    assert "| link unavailability, mean ms (sender sniffer gap) | 598 | 97 | 121 | 97 |" in md


def test_lb_summary_noisy_flows_have_client_figures_only():
    flows = [{"fct_s": 2.0, "goodput_mbps": 2.0, "client_goodput_mbps": 14.0, "client_throughput_mbps": 15.0,
              "max_direction_mbps": 14.5, "subflows": n} for n in (2, 4)]
    run = {"classes": {"long": {"flows": flows, "utilisation": utilisation([5, 5, 5, 4]), "max_link_mbps": 15.0,
                                "rate_check_ok": True}}, "mptcp_subflows": 4}
    s = lb_summary([run])
    assert s["throughput_mbps"] is None and s["subflows_seen"] == 3 and s["client_throughput_mbps_by_class"]["long"] == 15
    spec = parse({"name": "x", "kind": "load-balancing", "variants": ["ecmp"], "workload": {"classes": {"long": 1}}})
    md = markdown(spec, {"scale": 1, "link_rate_mbit": 20, "reference_rate_mbit": 20, "variants": {"ecmp": s}})
    assert "| ecmp | MPTCP 4 subflows (seen 3.0) | - / 2.00 / 15.00 / 14.00 / 6.7 |" in md


def test_queue_loss_counts_what_the_queues_dropped_and_the_loss_beyond():
    # JSON keys: ports are strings once a run.json has been read back
    counts = {"s1": {"port_rx": {"2": 100}, "port_enq": {"3": 100}, "port_deq": {"3": 60}, "port_tx": {"3": 60}},
              "s2": {"port_enq": {"1": 50, "2": 7}, "port_deq": {"1": 50, "2": 7}},
              "ocs": {"port_enq": {"1": 9}, "port_deq": {"1": 4}}}
    assert queue_drops(counts) == {"s1": 40, "s2": 0, "ocs": 5}
    got = queue_loss(counts, lost=52)
    assert got == {"queue_drops": 45, "queue_drops_by_switch": {"s1": 40, "ocs": 5}, "lost_beyond_queue_drops": 7}
    assert queue_loss(counts, lost=3)["lost_beyond_queue_drops"] == 0
    assert queue_loss(None, lost=3)["lost_beyond_queue_drops"] is None  # a run without counters: unknown
