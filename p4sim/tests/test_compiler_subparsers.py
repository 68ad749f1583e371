"""Sub-parsers: a parser instance applied inside a parser state is inlined (as p4c's Inline pass)."""

from __future__ import annotations

import json
from pathlib import Path

from p4sim.compiler.compile import compile_file
from p4sim.switch.device import Device
from p4sim.tests.corpus import error_of, source

TOP = """
parser Inner(packet_in b, inout h_t hh, out bit<8> seen)(bit<8> magic) {
    state start {
        b.extract(hh);
        seen = magic;
        transition select(hh.a) { 0xff: reject; default: accept; }
    }
}"""
STATES = ("state start { sub.apply(p, hdr.h, m.x); m.y = 16w7; transition select(m.x) { 5: two; default: accept; } }"
          " state two { m.f = true; transition accept; }")
BODY = "hdr.h.c = m.x; if (m.f) { hdr.h.b = m.y; } sm.egress_spec = 2;"


def _program(tmp_path: Path) -> dict:
    text = source(BODY, "", TOP, STATES).replace(
        "parser P(packet_in p, out hs_t hdr, inout m_t m, inout standard_metadata_t sm) {",
        "parser P(packet_in p, out hs_t hdr, inout m_t m, inout standard_metadata_t sm) {\n    Inner(8w5) sub;")
    src = tmp_path / "sub.p4"
    src.write_text(text)
    return compile_file(src).json


def test_subparser_states_are_inlined(tmp_path: Path) -> None:
    doc = _program(tmp_path)
    states = {s["name"]: ([o["op"] for o in s["parser_ops"]], [t["next_state"] for t in s["transitions"]])
              for s in doc["parsers"][0]["parse_states"]}
    assert states == {"start": ([], ["sub.start"]),
                      "sub.start": (["extract", "set"], [None, "start_cont"]),  # reject ends the parser, as p4c
                      "start_cont": (["set"], ["two", None]),
                      "two": (["set"], [None])}


def test_subparser_runs_on_the_switch(tmp_path: Path) -> None:
    d = Device(ports={1: "s1", 2: "s2"})
    d.commit_pipeline(d.load_pipeline(json.dumps(_program(tmp_path))))
    # the constructor argument 5 comes back through the out parameter, then select(m.x) takes `two`
    assert d.process(1, bytes([1, 0, 0, 0, 9])) == [(2, bytes([1, 0, 7, 5, 9]))]
    # the sub-parser rejects: parsing ends there (p4c's bmv2 back end treats reject as accept)
    assert d.process(1, bytes([0xFF, 0, 0, 0, 9])) == [(2, bytes([0xFF, 0, 0, 5, 9]))]


def test_parser_instance_in_a_control_is_an_error(tmp_path: Path) -> None:
    assert "a parser instance in a control" in error_of(tmp_path, "", "Inner(1) sub;", TOP)
