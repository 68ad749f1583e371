"""The spec loader's abuse suite: hostile or careless experiment specs give one line naming the bad value,
never a traceback, and a spec's names never lead a runner outside results/.

Once, eight inputs ended in a traceback, `duration_s: -10`, `hold_s: -5` and `.nan` were accepted, and
`name: /abs/path` or `../../x` made `scripts report` (and `run`, as root) write outside results/.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from scripts.__main__ import main
from scripts.experiments.spec import load, parse, shorten


def base(**kw):
    d = {"name": "x", "kind": "reconfiguration", "streams": [{"src": "h2", "dst": "h3"}]}
    d.update(kw)
    return d


@pytest.mark.parametrize(("data", "msg"), [
    (base(runs="3"), "runs '3': expected a valid integer"),
    (base(name=5), "name 5: expected a valid string"),
    (base(event_at_s="5"), "event_at_s '5': expected a valid number"),
    (base(defaults=[1]), "defaults [1]: expected a mapping"),
    (base(variants=5), "variants 5: expected a list"),
    (base(topology=[1]), "topology [1]: expected a valid dictionary"),
    (base(runs=float("inf")), "runs inf: expected a valid integer"),
    (base(variants=[7]), "variants[0] 7: expected a name or a mapping"),
    (base(duration_s=-10, event_at_s=1), "duration_s -10: expected a value greater than 0"),
    (base(duration_s=float("nan")), "duration_s nan: expected a finite number"),
    (base(runs=True), "runs True: expected a valid integer"),
    (base(variants=[{"name": "a", "hold_s": -5}]), "variants[0].hold_s -5: expected a value greater than or equal"),
    (base(variants=[{"name": "a", "hold_s": float("nan")}]), "variants[0].hold_s nan: expected a finite number"),
    (base(variants=[{"name": "a", "hold_s": float("inf")}]), "variants[0].hold_s inf: expected a finite number"),
    (base(variants=[{"name": "a", "failover": "no"}]), "variants[0].failover 'no': expected a valid boolean"),
    (base(streams=[{"src": "h2", "dst": "h9"}]), "streams[0] host 'h9': expected one of the topology's"),
    (base(streams=[{"src": "h2", "dst": "h3", "rate_mbit": float("inf")}]), "streams[0].rate_mbit inf"),
    (base(topology={"generator": "fattree", "k": "4"}), "topology: k '4': expected a valid integer"),
    (base(topology={"generator": "ucd4", "colour": 1}), "topology: unknown key 'colour'"),
    (base(topology={"generator": "leafspine", "hybrid": [1]}), "topology.hybrid [1]: expected a mapping"),
    (base(variants=[{"name": "a", "target_map": "nope"}]), "variants[0] target_map 'nope'"),
    (base(kind="schedule", schedule={"day_ms": float("nan")}), "schedule.day_ms nan: expected a finite number"),
    (base(kind="schedule", schedule={"day_ms": 10**9}), "ocs_args: --day-ms 1000000000.0: expected milliseconds above 0"),
    (base(kind="schedule", schedule={"pps": "fast"}), "schedule.pps 'fast': expected a valid number"),
    (base(workload={"classes": {"q": -1}}), "workload.classes.q -1: expected a value greater than or equal to 1"),
    (base(bulk={"sse_s": float("nan")}), "bulk.sse_s nan: expected a finite number"),
])
def test_bad_specs_give_one_line(data: dict, msg: str) -> None:
    with pytest.raises(ValueError) as e:
        parse(data)
    assert msg in str(e.value) and "\n" not in str(e.value), str(e.value)


@pytest.mark.parametrize("name", ["/abs/path", "../../x", "..", ".", "a/b", "", "x" * 65, ".hidden", "a b", "é"])
@pytest.mark.parametrize("where", ["spec", "variant"])
def test_names_are_single_path_components(name: str, where: str) -> None:
    data = base(name=name) if where == "spec" else base(variants=[{"name": name, "procedure": "mbb"}])
    with pytest.raises(ValueError, match="expected a single path component") as e:
        parse(data)
    assert "\n" not in str(e.value)


def test_shortened_timelines_are_checked_too() -> None:
    spec = parse(base())
    for kw in ({"duration_s": -10}, {"duration_s": float("nan")}, {"event_at_s": 30}, {"runs": -1}):
        with pytest.raises(ValueError) as e:
            shorten(spec, **kw)
        assert "\n" not in str(e.value)
    assert shorten(spec, runs=2, duration_s=5, event_at_s=2).runs == 2


def test_deeply_nested_or_huge_yaml_gives_one_line(tmp_path: Path) -> None:
    deep = tmp_path / "deep.yaml"
    deep.write_text("name: " + "[" * 200_000 + "]" * 200_000 + "\n")
    with pytest.raises(ValueError, match="nested too deep"):
        load(deep)
    big = tmp_path / "big.yaml"
    big.write_text("description: " + "x" * (2 << 20) + "\n")
    with pytest.raises(ValueError, match="larger than 1048576 bytes"):
        load(big)


def test_report_refuses_a_name_that_leaves_results(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """`scripts report` once wrote its summary into any existing directory a spec's name pointed at."""
    outside = tmp_path / "outside"
    outside.mkdir()
    for name in (str(outside), f"../../../../../../../..{outside}"):
        spec = tmp_path / "spec.yaml"
        spec.write_text(f"name: {name}\nkind: reconfiguration\nstreams: [{{src: h2, dst: h3}}]\n")
        assert main(["report", str(spec)]) != 0
        err = capsys.readouterr().err
        assert "expected a single path component" in err and err.count("\n") == 1, err
        assert list(outside.iterdir()) == []
