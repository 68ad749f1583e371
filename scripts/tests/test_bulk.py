"""scripts.bulk and scripts.strategies_report: seed 003's workload and its figures."""

import pytest

from scripts.bulk import Bulk, class_summary, elephant_hosts, main, paper_change, transfers
from scripts.strategies_report import variant_summary, with_changes

PAIRS = [("leaf1", "leaf4"), ("leaf2", "leaf5"), ("leaf3", "leaf6")]
HOSTS = {f"leaf{i}": [f"h{i}_1", f"h{i}_2"] for i in range(1, 7)}


@pytest.mark.parametrize("n", [24, 48, 72])
def test_paper_counts(n):
    ts = transfers(Bulk(transfers=n), PAIRS, HOSTS)
    assert len(ts) == n
    assert sum(t.cls == "elephant" for t in ts) == n // 8
    per_tor = {a: sum(t.size for t in ts if t.src.startswith(f"h{a[-1]}_")) for a, _ in PAIRS}
    # seed 003 R10: per sender ToR 40.45 / 80.90 / 121.35 Gbit at full scale; here x0.01
    expected = n // 24 * (7 * 250 * 2**20 + 3 * 2**30) // 100
    assert all(abs(v - expected) <= n for v in per_tor.values())
    # elephants and mice each between their own pair of hosts (the tables classify by address)
    assert {(t.src, t.dst) for t in ts if t.cls == "elephant"} == {("h1_1", "h4_1"), ("h2_1", "h5_1"), ("h3_1", "h6_1")}
    assert {(t.src, t.dst) for t in ts if t.cls == "mouse"} == {("h1_2", "h4_2"), ("h2_2", "h5_2"), ("h3_2", "h6_2")}
    ports = [(t.dst, t.port) for t in ts]
    assert len(set(ports)) == len(ports)
    assert elephant_hosts(ts) == ["h1_1", "h2_1", "h3_1", "h4_1", "h5_1", "h6_1"]


def test_bad_input():
    with pytest.raises(ValueError, match="bulk.transfers 20: expected a multiple of 8"):
        transfers(Bulk(transfers=20), PAIRS, HOSTS)
    with pytest.raises(ValueError, match="bulk.sse_s 0"):
        Bulk(sse_s=0).check()
    with pytest.raises(ValueError, match="ToR 'leaf4': 1 hosts"):
        transfers(Bulk(), PAIRS, {**HOSTS, "leaf4": ["h4_1"]})
    assert main(["serve", "--ports", "1,2", "--sizes", "5"]) == 2


def test_paper_change():
    assert paper_change("elephant", "tput", "on-demand", 24) == pytest.approx(54.6, abs=0.1)
    assert paper_change("elephant", "ct", "ut", 48) == pytest.approx(13.6, abs=0.1)
    assert paper_change("elephant", "tput", "ut", 30) is None


def _run(strategy, e_fct, m_fct):
    flows = [{"cls": "elephant", "bytes": 1_000_000, "fct_s": f} for f in e_fct] + \
            [{"cls": "mouse", "bytes": 125_000, "fct_s": f} for f in m_fct]
    return {"strategy": strategy, "procedure": "bbm", "flows": flows, "classes": class_summary(flows),
            "changes": [{"total_ms": 600.0}] if strategy == "ut" else [], "retrans_segs": 3, "timeouts": 1,
            "makespan_s": max(e_fct), "loadavg_start": [1.0, 1, 1], "loadavg_end": [2.0, 1, 1]}


def test_summary_and_changes():
    base = variant_summary([_run("none", [1.0, 1.0], [0.5]), _run("none", [1.0, 1.0], [0.5])])
    assert base["elephant"]["tput_mean"] == pytest.approx(8.0) and base["mouse"]["ct_mean"] == 0.5
    ut = variant_summary([_run("ut", [2.0, 2.0], [0.5])])
    out = with_changes({"no-link": base, "ut": ut}, 24)
    assert out["ut"]["elephant"]["tput_change_pct"] == pytest.approx(-50.0)
    assert out["ut"]["elephant"]["ct_change_pct"] == pytest.approx(100.0)
    assert out["ut"]["elephant"]["tput_paper_change_pct"] == pytest.approx(-10.8, abs=0.1)
    assert out["ut"]["changes_per_run"] == 1 and out["ut"]["loadavg_1min"] == (1.0, 2.0)
    assert variant_summary([]) == {"runs": 0}
