"""scripts.experiments.runner: which variants share one emulation (pure; the runs themselves are test_runner's)."""

from pathlib import Path

from scripts.experiments.runner import emulation_key, share_groups
from scripts.experiments.spec import load, parse

EXPERIMENTS = Path(__file__).resolve().parents[1] / "experiments"


def _names(groups):
    return [[v.name for v, _todo in g] for g in groups]


def test_strategies_share_one_emulation_when_nothing_of_it_differs():
    spec = load(EXPERIMENTS / "e6-strategies.yaml")
    pending = [(v, [0]) for v in spec.variants]
    assert _names(share_groups(spec, pending)) == [[v.name for v in spec.variants]]
    # a variant with OCS options of its own starts its own emulation, and splits the run of variants
    spec.variants[2].ocs_args = ["--instant"]
    assert _names(share_groups(spec, pending)) == [["no-link", "ut"], ["dt"], ["on-demand", "ut-mbb", "dt-mbb"]]
    assert emulation_key(spec.variants[0]) != emulation_key(spec.variants[2])
    # the runs still to do travel with their variant
    assert [todo for _v, todo in share_groups(spec, [(spec.variants[0], [1, 2])])[0]] == [[1, 2]]


def test_other_kinds_start_one_emulation_per_variant():
    spec = parse({"name": "x", "kind": "reconfiguration", "streams": [{"src": "h2", "dst": "h3"}],
                  "variants": ["bbm", "mbb"]})
    assert _names(share_groups(spec, [(v, [0]) for v in spec.variants])) == [["bbm"], ["mbb"]]
