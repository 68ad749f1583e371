"""scripts.experiments.bulk and scripts.report.strategies: seed 003's workload and its figures."""

import json
from pathlib import Path

import pytest

from scripts.experiments.bulk import (
    Bulk,
    class_summary,
    elephant_hosts,
    main,
    paper_change,
    paper_value,
    time_factor,
    transfers,
)
from scripts.experiments.spec import load
from scripts.report.strategies import run_bulk, summarize_strategies, variant_summary, with_changes

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
    # the slowest elephant of each run, averaged over the runs
    assert variant_summary([_run("ut", [1.0, 3.0], [0.5]), _run("ut", [2.0, 2.0], [0.5])])["elephant"][
        "last_ct_mean"] == pytest.approx(2.5)
    assert variant_summary([]) == {"runs": 0}


def test_time_factor_and_paper_values():
    # 3 GiB x0.002 at 4 Mbit/s (scale 0.004): half the paper's completion times
    assert time_factor(6442451, 0.004) == pytest.approx(0.5, rel=1e-6)
    assert time_factor(12884902, 0.004) == pytest.approx(1.0, rel=1e-6)
    assert time_factor(12884902, None) is None
    assert paper_value("elephant", "ct", "none", 72) == 120.5 and paper_value("mouse", "ct", "dt", 48) == 28.6
    assert paper_value("elephant", "ct", "none", 30) is None


def test_run_bulk_from_the_runs():
    spec = load(Path(__file__).resolve().parents[1] / "experiments" / "e6-strategies.yaml")
    runs = [{"bulk": {"transfers": 48, "mouse_bytes": 5, "elephant_bytes": 40, "sse_s": 5.0, "cc": "cubic"}}] * 2
    assert run_bulk(runs, spec) == {"transfers": 48, "mouse_bytes": 5, "elephant_bytes": 40, "sse_s": 5.0}
    assert run_bulk([], spec)["transfers"] == spec.bulk.transfers
    other = {"bulk": {**runs[0]["bulk"], "sse_s": 10.0}}
    with pytest.raises(ValueError, match="runs with different workloads"):
        run_bulk([*runs, other], spec)


def test_summary_files_state_the_time_scale(tmp_path):
    spec = load(Path(__file__).resolve().parents[1] / "experiments" / "e6-strategies.yaml")
    bulk = {"transfers": 24, "mouse_bytes": 524288, "elephant_bytes": 6442451, "sse_s": 5.0}
    for v, fct in (("no-link", 20.0), ("on-demand", 15.0)):
        d = tmp_path / v / "run-000"
        d.mkdir(parents=True)
        d.joinpath("metrics.json").write_text(json.dumps({**_run("none" if v == "no-link" else v, [fct], [8.0]),
                                                           "bulk": bulk}))
    s = summarize_strategies(tmp_path, spec)
    assert s["time_factor"] == pytest.approx(0.5, rel=1e-6) and s["bulk"] == bulk
    assert s["variants"]["on-demand"]["elephant"]["ct_change_pct"] == pytest.approx(-25.0)
    assert s["variants"]["on-demand"]["elephant"]["ct_paper_change_pct"] == pytest.approx(-35.4, abs=0.1)
    md = (tmp_path / "summary.md").read_text()
    assert "the paper's x0.5; its elephant CT means at this time scale: none 20.9 s, ut 24.4 s" in md
    assert s["variants"]["ut"]["runs"] == 0 and "| ut | 0 |" in md
