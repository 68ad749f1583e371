"""Switch code generation corner cases: table misses without a default entry (bmv2 semantics)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from p4sim.compiler.compile import compile_file
from p4sim.switch.codegen import control as codegen_control
from p4sim.switch.codegen.flow import Unstructured
from p4sim.switch.device import Device
from p4sim.tests.corpus import build, source

# An indirect table has no default entry in p4c's output: a miss runs no action and takes __MISS__
LOCALS = """action_profile(4) ap;
    action fwd() { sm.egress_spec = 2; }
    table t { key = { hdr.h.a: exact; } actions = { fwd; } implementation = ap; }
    table u { key = { hdr.h.a: exact; } actions = { fwd; } implementation = ap; }"""
HIT_MISS = "if (t.apply().hit) { hdr.h.c = 1; } else { hdr.h.c = 2; sm.egress_spec = 3; }"
BY_ACTION = "switch (u.apply().action_run) { fwd: { hdr.h.c = 4; } } hdr.h.b = 9; sm.egress_spec = 3;"


def _device(tmp_path: Path, body: str, structured: bool, monkeypatch: pytest.MonkeyPatch) -> Device:
    if not structured:
        def unstructured(*_a: object, **_k: object) -> list[str]:
            raise Unstructured("forced")
        monkeypatch.setattr(codegen_control.FlowGen, "function", unstructured)
    res = build(tmp_path, body, LOCALS)
    doc = res.json
    for pl in doc["pipelines"]:
        for t in pl["tables"]:
            if t["name"] in ("I.t", "I.u"):
                assert "default_entry" not in t
    d = Device(ports={1: "k1", 2: "k2", 3: "k3"})
    d.commit_pipeline(d.load_pipeline(json.dumps(doc)))
    return d


@pytest.mark.parametrize("structured", [True, False])
def test_miss_without_default_entry_follows_miss(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 structured: bool) -> None:
    d = _device(tmp_path, HIT_MISS, structured, monkeypatch)
    assert d.process(1, bytes([7, 0, 0, 0])) == [(3, bytes([7, 0, 0, 2]))]


@pytest.mark.parametrize("structured", [True, False])
def test_miss_without_default_entry_by_action_goes_to_base_next(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                structured: bool) -> None:
    d = _device(tmp_path, BY_ACTION, structured, monkeypatch)
    assert d.process(1, bytes([7, 0, 0, 0])) == [(3, bytes([7, 0, 9, 0]))]


def _resubmit_doc(tmp_path: Path) -> dict:
    body = ("if (sm.instance_type == 0) { m.x = hdr.h.a + 1; resubmit_preserving_field_list(1); }"
            " else { hdr.h.c = m.x; sm.egress_spec = 2; }")
    src = tmp_path / "rs.p4"
    src.write_text(source(body).replace("struct m_t { bit<8> x;", "struct m_t { @field_list(1) bit<8> x;"))
    return compile_file(src).json


@pytest.mark.parametrize("shape", ["current", "older"])
def test_resubmit_field_lists_current_and_older_p4c(tmp_path: Path, shape: str) -> None:
    doc = _resubmit_doc(tmp_path)
    if shape == "older":
        # older p4c: resubmit(data) lists named after the call, ids wherever the counter was
        (fl,) = doc["field_lists"]
        fl.update(id=5, name="resubmit")
        for a in doc["actions"]:
            for p in a["primitives"]:
                if p["op"] == "resubmit":
                    p["parameters"] = [{"type": "hexstr", "value": "0x05"}]
    d = Device(ports={1: "k1", 2: "k2"})
    d.commit_pipeline(d.load_pipeline(json.dumps(doc)))
    assert d.process(1, bytes([7, 0, 0, 0])) == [(2, bytes([7, 0, 0, 8]))]
