"""topo/circuits.py: the one circuit-spec grammar of every CLI and spec file."""

import json

import pytest

from topo.circuits import ocs_circuits, resolve_circuits
from topo.generators import fattree, hybrid, ucd4


def test_every_form(tmp_path):
    t = ucd4()
    assert resolve_circuits(t, None) == {"ocs": [(3, 1), (2, 5), (6, 4)]}  # the default map
    assert resolve_circuits(t, "none") == {"ocs": []}
    assert resolve_circuits(t, "reconfigured") == {"ocs": [(3, 4), (2, 5)]}
    assert resolve_circuits(t, "3-4, 2-5") == {"ocs": [(3, 4), (2, 5)]}
    assert ocs_circuits(t, "1-2") == [(1, 2)] and ocs_circuits(t, "none", "ocs") == []
    f = tmp_path / "c.json"
    f.write_text(json.dumps([[3, 4]]))
    assert resolve_circuits(t, str(f)) == {"ocs": [(3, 4)]}
    f.write_text(json.dumps({"ocs": [[1, 6]]}))
    assert ocs_circuits(t, str(f)) == [(1, 6)]


@pytest.mark.parametrize("spec,msg", [
    ("bogus", "circuits 'bogus': expected none, a map name (initial, reconfigured), pairs a-b,c-d or a JSON file"),
    ("3-", "circuits '3-': expected none, a map name"),
])
def test_bad_specs_are_named(spec, msg):
    with pytest.raises(ValueError, match=msg.replace("(", r"\(").replace(")", r"\)")):
        resolve_circuits(ucd4(), spec)


def test_bad_files_and_topologies(tmp_path):
    t = ucd4()
    f = tmp_path / "c.json"
    f.write_text(json.dumps({"ocs": [[1, 2, 3]]}))
    with pytest.raises(ValueError, match=r"OCS 'ocs' circuit \[1, 2, 3\]: expected \[a, b\] with two integer"):
        resolve_circuits(t, str(f))
    f.write_text(json.dumps({"other": [[1, 2]]}))
    with pytest.raises(ValueError, match="OCS 'other': expected one of ocs"):
        resolve_circuits(t, str(f))
    f.write_text("{")
    with pytest.raises(ValueError, match="not JSON"):
        resolve_circuits(t, str(f))
    with pytest.raises(ValueError, match="has no OCS"):
        resolve_circuits(fattree(4), "initial")
    with pytest.raises(ValueError, match="OCS 'nope': expected one of ocs"):
        resolve_circuits(t, "1-2", "nope")


def test_pairs_need_one_ocs():
    t = hybrid(fattree(4))
    names = [o.name for o in t.ocs]
    if len(names) > 1:
        with pytest.raises(ValueError, match="name one"):
            resolve_circuits(t, "1-2")
    assert resolve_circuits(t, "1-2", names[0])[names[0]] == [(1, 2)]
