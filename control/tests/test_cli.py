"""The controller's command line without switches: entry and circuit files, one-line errors."""

import json

import pytest

from control.__main__ import main
from control.cli import load_states, parse_circuits
from tablegen.files import write
from tablegen.graph import Fabric
from topo.generators import ucd4
from topo.model import save


@pytest.fixture
def entries(tmp_path):
    topo = ucd4()
    save(topo, tmp_path / "ucd4.json")
    write(Fabric(topo, None), "ecmp", tmp_path / "entries")
    return tmp_path


def test_entry_files_load(entries):
    states = load_states(str(entries / "entries"))
    assert sorted(states) == ["s1", "s2", "s3", "s4"] and states["s1"].entries


def test_broken_entry_file_is_named_in_one_line(entries, capsys):
    bad = entries / "entries" / "s2.json"
    bad.write_text('{"switch": ')
    assert main(["install", "--topo", str(entries / "ucd4.json"), "--entries", str(entries / "entries"),
                 "--build", str(entries / "no-build")]) == 2
    assert capsys.readouterr().err == f"error: entry file {str(bad)!r}: not JSON (Expecting value at line 1)\n"


def test_entry_document_with_a_bad_entity_is_named(entries):
    f = entries / "entries" / "s3.json"
    doc = json.loads(f.read_text())
    doc["table_entries"][0] = {"table": "route"}  # no action, group or member
    f.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match=rf"^entry file {str(f)!r}: ") as exc:
        load_states(str(entries / "entries"))
    assert "\n" not in str(exc.value)


def test_circuits_file_errors_are_named(tmp_path):
    topo = ucd4()
    f = tmp_path / "map.json"
    f.write_text("[[3, 4], [2,")
    with pytest.raises(ValueError, match=rf"circuits file {str(f)!r}: not JSON"):
        parse_circuits(topo, None, str(f))
    f.write_text(json.dumps({"ocs": [[3, 4], ["2", 5]]}))
    with pytest.raises(ValueError, match=rf"circuits file {str(f)!r} OCS 'ocs' circuit \['2', 5\]: expected \[a, b\]"):
        parse_circuits(topo, None, str(f))
    f.write_text(json.dumps({"ocs": [[3, 4], [2, 5]]}))
    assert parse_circuits(topo, None, str(f)) == [(3, 4), (2, 5)]
