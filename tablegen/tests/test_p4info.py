"""Contract: every generated name and value resolves against the P4Info of p4src/fabric.p4 and ocs.p4,
compiled with $P4C (p4c-bm2-ss or p4sim-compile, the same command shape)."""

import ipaddress
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from google.protobuf import text_format
from p4.config.v1 import p4info_pb2

from topo.generators import fattree, hybrid, leafspine, ucd4

from .conftest import docs_of

ROOT = Path(__file__).resolve().parents[2]


def _compiler() -> list[str]:
    p4c = os.environ.get("P4C") or shutil.which("p4c-bm2-ss")
    return [p4c] if p4c else [sys.executable, "-m", "p4sim.compiler.cli"]


@pytest.fixture(scope="module")
def p4infos(tmp_path_factory):
    out = tmp_path_factory.mktemp("p4")
    infos = {}
    for prog in ("fabric", "ocs"):
        info = out / f"{prog}.p4info.txtpb"
        subprocess.run([*_compiler(), str(ROOT / "p4src" / f"{prog}.p4"), "-I", str(ROOT / "p4src"),
                        "-o", str(out / f"{prog}.json"), "--p4runtime-files", str(info)],
                       check=True, capture_output=True, timeout=120)
        infos[prog] = text_format.Parse(info.read_text(), p4info_pb2.P4Info())
    return infos


def _find(items, name, what):
    hits = [x for x in items if x.preamble.name == name or x.preamble.name.endswith("." + name)]
    assert len(hits) == 1, f"{what} {name!r}: {len(hits)} matches"
    return hits[0]


def _value_bits(value) -> int:
    if isinstance(value, int):
        return value.bit_length()
    if ":" in value:
        return int(value.replace(":", ""), 16).bit_length()
    return int(ipaddress.IPv4Address(value)).bit_length()


def _check_action(info, name, params, allowed_ids):
    action = _find(info.actions, name, "action")
    assert action.preamble.id in allowed_ids, f"action {name} not allowed here"
    assert sorted(p.name for p in action.params) == sorted(params), name
    for p in action.params:
        assert _value_bits(params[p.name]) <= p.bitwidth, (name, p.name, params[p.name])


def _check_doc(info, doc):
    profiles = {}
    for m in doc["action_profile_members"]:
        prof = _find(info.action_profiles, m["profile"], "action profile")
        profiles[m["profile"]] = prof
        allowed = {a.id for t in info.tables if t.preamble.id in prof.table_ids for a in t.action_refs}
        _check_action(info, m["action"], m["params"], allowed)
    for g in doc["action_profile_groups"]:
        prof = _find(info.action_profiles, g["profile"], "action profile")
        assert prof.with_selector and (prof.max_group_size == 0 or len(g["members"]) <= prof.max_group_size)
    for e in doc["table_entries"]:
        table = _find(info.tables, e["table"], "table")
        fields = {f.name: f for f in table.match_fields}
        for name, value in e.get("match", {}).items():
            f = fields[name]
            if f.match_type == p4info_pb2.MatchField.LPM:
                net = ipaddress.IPv4Network(value)
                assert net.max_prefixlen == f.bitwidth
            else:
                assert f.match_type == p4info_pb2.MatchField.EXACT
                assert _value_bits(value) <= f.bitwidth, (e, name)
        if "group_id" in e:
            assert table.implementation_id, e
            prof = next(p for p in info.action_profiles if p.preamble.id == table.implementation_id)
            assert prof.preamble.alias in {g["profile"] for g in doc["action_profile_groups"]}
        else:
            _check_action(info, e["action"], e["params"], {a.id for a in table.action_refs})


@pytest.mark.parametrize("make,circuits", [(lambda: fattree(4), None), (lambda: leafspine(3, 2, 2), None),
                                           (ucd4, "initial"), (ucd4, "reconfigured"),
                                           (lambda: hybrid(fattree(4)), None)])
@pytest.mark.parametrize("mode", ["static", "ecmp", "spray"])
def test_entries_match_p4info(p4infos, make, circuits, mode):
    docs = docs_of(make(), mode, circuits, spray="rr" if mode == "spray" else "random")
    for doc in docs.values():
        _check_doc(p4infos[doc["program"]], doc)
