"""Header unions: p4c's JSON (member instances `u.m`, header_unions, valid_union) and their run-time
semantics (one member valid at a time: extract or setValid of a member invalidates the others)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from p4sim.switch.device import Device
from p4sim.tests.corpus import build, error_of

PARSER = ("state start { p.extract(hdr.h); transition select(hdr.h.a) { 1: one; 2: two; default: accept; } }"
          " state one { p.extract(hdr.u.v1); transition accept; } state two { p.extract(hdr.u.v2); transition accept; }")
BODY = ("sm.egress_spec = 2; if (hdr.u.isValid()) { hdr.h.c = 1; }"
        " if (hdr.u.v1.isValid() && hdr.h.b == 5) { hdr.u.v2.setValid(); hdr.u.v2.y = 16w0xabcd; }")
TYPES = "header v1_t { bit<8> x; }\nheader v2_t { bit<16> y; }\nheader_union u_t { v1_t v1; v2_t v2; }\n"


def _compile(tmp_path: Path) -> dict:
    return build(tmp_path, BODY, parser=PARSER, types=TYPES, headers=("u_t u",)).json


def test_header_union_json_as_p4c(tmp_path: Path) -> None:
    doc = _compile(tmp_path)
    assert doc["header_union_types"] == [{"name": "u_t", "id": 0, "headers": [["v1", "v1_t"], ["v2", "v2_t"]]}]
    ids = {h["name"]: h["id"] for h in doc["headers"]}
    assert doc["header_unions"] == [{"name": "u", "id": 0, "union_type": "u_t", "header_ids": [ids["u.v1"], ids["u.v2"]]}]
    assert doc["deparsers"][0]["order"] == ["h", "u.v1", "u.v2"]
    cond = doc["pipelines"][0]["conditionals"][0]["expression"]["value"]
    assert cond == {"op": "valid_union", "left": None, "right": {"type": "header_union", "value": "u"}}


@pytest.mark.parametrize("fused", ["1", "0"])
def test_header_union_on_the_switch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fused: str) -> None:
    monkeypatch.setenv("P4SIM_FUSED", fused)
    d = Device(ports={1: "u1", 2: "u2"})
    d.commit_pipeline(d.load_pipeline(json.dumps(_compile(tmp_path))))
    assert d.process(1, bytes([1, 0, 0, 0, 7, 0x99])) == [(2, bytes([1, 0, 0, 1, 7, 0x99]))]       # v1 valid
    assert d.process(1, bytes([2, 0, 0, 0, 7, 8, 0x99])) == [(2, bytes([2, 0, 0, 1, 7, 8, 0x99]))]  # v2 valid
    assert d.process(1, bytes([3, 0, 0, 0, 7])) == [(2, bytes([3, 0, 0, 0, 7]))]                   # neither
    # v1 extracted, then v2.setValid(): v1 becomes invalid, only v2 is emitted
    assert d.process(1, bytes([1, 0, 5, 0, 7, 0x99])) == [(2, bytes([1, 0, 5, 1, 0xAB, 0xCD, 0x99]))]


def test_header_union_members_must_be_headers(tmp_path: Path) -> None:
    assert "u2_t.x: header union members must be headers" in error_of(
        tmp_path, top="header_union u2_t { bit<8> x; }")
