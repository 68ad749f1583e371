"""varbit fields: extract with a size (bmv2 extract_VL), emit, parser errors; compiled and run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from p4sim.compiler.errors import CompileError
from p4sim.switch import engine
from p4sim.switch.device import Device
from p4sim.tests.corpus import build

PARSER = "state start { p.extract(hdr.h); p.extract(hdr.o, (bit<32>)hdr.h.a * 8); transition accept; }"
BODY = ("sm.egress_spec = 2; hdr.h.c = hdr.o.len;"
        " if (sm.parser_error == error.HeaderTooShort) { hdr.h.b = 1; }"
        " if (sm.parser_error == error.PacketTooShort) { hdr.h.b = 2; }")


def _compile(tmp_path: Path, body: str = BODY) -> dict:
    return build(tmp_path, body, parser=PARSER, types="header opt_t { bit<8> len; varbit<32> data; }\n",
                 headers=("opt_t o",)).json


def test_varbit_json_as_p4c(tmp_path: Path) -> None:
    doc = _compile(tmp_path)
    (ht,) = [h for h in doc["header_types"] if h["name"] == "opt_t"]
    assert ht["fields"] == [["len", 8, False], ["data", "*"]] and ht["max_length"] == 5
    op = doc["parsers"][0]["parse_states"][0]["parser_ops"][1]
    assert op["op"] == "extract_VL" and op["parameters"][0] == {"type": "regular", "value": "o"}
    length = op["parameters"][1]
    assert length["type"] == "expression" and length["value"]["type"] == "expression"  # a whole expression


@pytest.mark.parametrize("fused", ["1", "0"])
def test_varbit_extract_and_emit_on_the_switch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fused: str) -> None:
    monkeypatch.setattr(engine, "USE_FUSED", fused == "1")  # engine reads P4SIM_FUSED once, at import
    d = Device(ports={1: "b1", 2: "b2"})
    d.commit_pipeline(d.load_pipeline(json.dumps(_compile(tmp_path))))
    # a = 2: two option bytes, emitted again unchanged before the payload
    assert d.process(1, bytes([2, 0, 0, 0, 7, 0xAA, 0xBB, 0x99])) == [(2, bytes([2, 0, 0, 7, 7, 0xAA, 0xBB, 0x99]))]
    assert d.process(1, bytes([0, 0, 0, 0, 7, 0x99])) == [(2, bytes([0, 0, 0, 7, 7, 0x99]))]  # empty varbit
    # 40 bits > varbit<32>: HeaderTooShort; 24 bits with one byte left: PacketTooShort (header invalid)
    assert d.process(1, bytes([5, 0, 0, 0, 7, 0x99])) == [(2, bytes([5, 0, 1, 0, 7, 0x99]))]
    assert d.process(1, bytes([3, 0, 0, 0, 7, 0x99])) == [(2, bytes([3, 0, 2, 0, 7, 0x99]))]


def test_varbit_errors(tmp_path: Path) -> None:
    with pytest.raises(CompileError, match="cannot cast varbit<32> to bit<8>"):
        _compile(tmp_path, "hdr.h.a = (bit<8>)hdr.o.data;")
