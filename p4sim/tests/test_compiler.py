"""p4sim compiler: preprocessor, parser, type checker, bmv2 JSON and P4Info emission, errors, CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from p4sim.compiler import cli
from p4sim.compiler.compile import compile_file
from p4sim.compiler.errors import CompileError
from p4sim.compiler.lexer import tokenize
from p4sim.compiler.p4info import jenkins_one_at_a_time
from p4sim.compiler.preprocess import Preprocessor, SourceLine

CORPUS = Path(__file__).resolve().parent / "corpus"

# A minimal v1model skeleton; BODY is spliced into the ingress control.
SKELETON = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<16> b; bit<8> c; }
struct hs_t { h_t h; }
struct m_t { bit<8> x; bit<16> y; bool f; }
parser P(packet_in p, out hs_t hdr, inout m_t m, inout standard_metadata_t sm) {
    state start { p.extract(hdr.h); transition accept; }
}
control V(inout hs_t hdr, inout m_t m) { apply { } }
control I(inout hs_t hdr, inout m_t m, inout standard_metadata_t sm) {
LOCALS
    apply {
BODY
    }
}
control E(inout hs_t hdr, inout m_t m, inout standard_metadata_t sm) { apply { } }
control C(inout hs_t hdr, inout m_t m) { apply { } }
control D(packet_out p, in hs_t hdr) { apply { p.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


def build(tmp_path: Path, body: str = "", locals_: str = "", name: str = "prog.p4"):
    src = tmp_path / name
    src.write_text(SKELETON.replace("LOCALS", locals_).replace("BODY", body))
    return compile_file(src)


def error_of(tmp_path: Path, body: str = "", locals_: str = "") -> str:
    with pytest.raises(CompileError) as exc:
        build(tmp_path, body, locals_)
    return str(exc.value)


# ---- preprocessor and lexer ------------------------------------------------------------

def test_preprocessor_macros_conditionals_and_positions(tmp_path: Path) -> None:
    (tmp_path / "inc.h").write_text("#define W 8\n")
    (tmp_path / "a.p4").write_text(
        '#include "inc.h"\n#if defined(W) && W > 4\nbit<W> x;\n#elif 1\nno;\n#else\nno;\n#endif\n'
        "#ifndef Y\n/* multi\n line */ const bit<W> k = 1; // c\n#endif\n")
    pp = Preprocessor()
    lines = [sl for sl in pp.run(tmp_path / "a.p4") if sl.text.strip()]
    assert [(sl.text.strip(), sl.line) for sl in lines] == [("bit<8> x;", 3), ("const bit<8> k = 1;", 11)]


def test_preprocessor_define_option_and_missing_include(tmp_path: Path) -> None:
    pp = Preprocessor()
    pp.define("SIZE=4")
    (tmp_path / "b.p4").write_text("#if SIZE == 4\nok\n#endif\n#include <nothere.p4>\n")
    with pytest.raises(CompileError, match=r"b.p4:4:1: error: cannot find include file 'nothere.p4'"):
        pp.run(tmp_path / "b.p4")
    with pytest.raises(ValueError, match="expected NAME"):
        pp.define("1BAD")


def test_lexer_literals_and_shift_tokens() -> None:
    toks = tokenize([SourceLine("8w0x1F 16s5 0b101 1_000 x >> 2 &&& ..", "f.p4", 1)])
    ints = [(t.value, t.width, t.signed) for t in toks if t.kind == "int"]
    assert ints == [(31, 8, False), (5, 16, True), (5, None, False), (1000, None, False), (2, None, False)]
    gt = [t for t in toks if t.text == ">"]
    assert len(gt) == 2 and gt[1].adjacent
    assert [t.text for t in toks if t.kind == "op"][-2:] == ["&&&", ".."]


def test_p4c_id_hash() -> None:
    # NoAction is 21257015 (0x01445637) in every p4c-generated P4Info
    assert (0x01 << 24) | (jenkins_one_at_a_time("NoAction") & 0xFFFFFF) == 21257015


# ---- emitted JSON and P4Info -------------------------------------------------------------

def test_l3_program_names_match_p4c() -> None:
    res = compile_file(CORPUS / "l3_basic.p4")
    info = res.p4info
    tables = {t.preamble.name: t for t in info.tables}
    # IDs of p4lang/tutorials basic.p4, as produced by p4c
    assert tables["MyIngress.ipv4_lpm"].preamble.id == 37375156
    actions = {a.preamble.name: a.preamble.id for a in info.actions}
    assert actions["MyIngress.drop"] == 25652968 and actions["MyIngress.ipv4_forward"] == 28792405
    lpm = tables["MyIngress.ipv4_lpm"].match_fields[0]
    assert (lpm.name, lpm.bitwidth, lpm.match_type) == ("hdr.ipv4.dstAddr", 32, 3)  # LPM
    acl = tables["MyIngress.acl"]
    assert [f.name for f in acl.match_fields] == ["ipv4_src", "standard_metadata.ingress_port"]
    assert acl.const_default_action_id == actions["NoAction"]
    assert [c.preamble.name for c in info.counters] == ["MyIngress.port_rx"]
    j = res.json
    assert [p["name"] for p in j["pipelines"]] == ["ingress", "egress"]
    assert j["parsers"][0]["name"] == "parser" and j["deparsers"][0]["order"] == ["ethernet", "ipv4"]
    assert j["headers"][0]["name"] == "scalars" and j["header_types"][0]["name"] == "scalars_0"
    assert [c["verify"] for c in j["checksums"]] == [True, False]
    assert j["calculations"][0]["algo"] == "csum16" and len(j["calculations"][0]["input"]) == 11


def test_features_program_p4info() -> None:
    res = compile_file(CORPUS / "features.p4")
    info = res.p4info
    t = {x.preamble.name: x for x in info.tables}
    assert t["Ing.ecmp"].implementation_id == info.action_profiles[0].preamble.id
    assert info.action_profiles[0].with_selector and info.action_profiles[0].size == 128
    assert [f.name for f in t["Ing.ecmp"].match_fields] == ["hdr.ipv4.dst"]
    assert t["Ing.fwd"].direct_resource_ids[0] == info.direct_counters[0].preamble.id
    assert t["Ing.fwd"].size == 64 and t["Ing.classify"].is_const_table
    assert [f.match_type for f in t["Ing.classify"].match_fields] == [4, 5, 2]  # TERNARY, RANGE, EXACT
    assert t["Ing.classify"].match_fields[2].name == "hdr.vlan[0].isValid()"
    drop_ref = [r for r in t["Ing.fwd"].action_refs if r.scope == 2]
    assert len(drop_ref) == 1  # @defaultonly
    a = {x.preamble.name: x.preamble.id for x in info.actions}
    assert a["Ing.rewrite_tos"] == 0x01000123  # @id honoured
    assert {c.preamble.name for c in info.controller_packet_metadata} == {"packet_in", "packet_out"}
    assert info.registers[0].type_spec.bitstring.bit.bitwidth == 32
    assert info.digests[0].preamble.name == "learn_t"
    assert info.meters[0].size == 16
    j = res.json
    assert j["header_stacks"][0]["size"] == 2 and j["field_lists"][0]["name"] == "field_list1"
    states = {s["name"]: s for s in j["parsers"][0]["parse_states"]}
    eth = states["parse_ethernet"]["transitions"]
    # the range 0x0000..0x05ff became value/mask pairs
    assert {"type": "hexstr", "value": "0x0000", "mask": "0xfc00", "next_state": None} in eth
    assert states["parse_ipv4"]["transition_key"] == [{"type": "lookahead", "value": [0, 4]}]
    ing = j["pipelines"][0]
    fwd = next(x for x in ing["tables"] if x["name"] == "Ing.fwd")
    assert fwd["with_counters"] and set(fwd["next_tables"]) == {"Ing.forward", "Ing.drop"}
    ecmp = next(x for x in ing["tables"] if x["name"] == "Ing.ecmp")
    assert ecmp["type"] == "indirect_ws" and "default_entry" not in ecmp  # as p4c for action profiles
    classify = next(x for x in ing["tables"] if x["name"] == "Ing.classify")
    assert set(classify["next_tables"]) == {"__HIT__", "__MISS__"} and classify["base_default_next"] is None
    assert classify["next_tables"]["__MISS__"] == "Ing.ecmp"
    assert len(classify["entries"]) == 2 and classify["max_size"] == 2  # sized to its const entries


def test_widths_inferred_and_arithmetic_masked(tmp_path: Path) -> None:
    res = build(tmp_path, "m.x = hdr.h.a + 1; m.y = hdr.h.a ++ hdr.h.c; m.f = hdr.h.b[3:0] == 4w2;")
    prims = [p for a in res.json["actions"] for p in a["primitives"]]
    add = prims[0]["parameters"][1]["value"]
    assert add["op"] == "&" and add["right"]["value"] == "0xff" and add["left"]["value"]["op"] == "+"
    assert prims[2]["parameters"][1]["value"]["op"] == "b2d"


def test_if_in_action_is_predicated(tmp_path: Path) -> None:
    res = build(tmp_path, "a();", "action a() { if (hdr.h.a == 1) { m.x = 2; } else { m.x = 3; } }")
    act = next(a for a in res.json["actions"] if a["name"] == "I.a")
    ops = [p["op"] for p in act["primitives"]]
    assert ops == ["assign", "assign", "assign"]
    assert act["primitives"][1]["parameters"][1]["value"]["op"] == "?"


# ---- errors ----------------------------------------------------------------------------

@pytest.mark.parametrize(("body", "locals_", "message"), [
    ("m.x = nope;", "", "nope: undefined name"),
    ("m.x = hdr.h.b;", "", "width mismatch: right side of m.x = has type bit<16>, expected bit<8>"),
    ("m.x = hdr.h.a + hdr.h.b;", "", "width mismatch: operator + applied to bit<8> and bit<16>"),
    ("m.x = 300;", "", "300 does not fit in bit<8>"),
    ("if (m.x) { }", "", "expected a bool condition, found bit<8>"),
    ("t.apply(); t.apply();", "table t { key = { m.x: exact; } actions = { NoAction; } }", "applied more than once"),
    ("t.apply();", "table t { key = { m.x: fuzzy; } actions = { NoAction; } }", "match kind 'fuzzy'"),
    ("hdr.h.zz = 1;", "", "has no field 'zz'"),
    ("m.x = m.x / m.x;", "", "operator / on non-constant values is not supported"),
])
def test_type_and_name_errors(tmp_path: Path, body: str, locals_: str, message: str) -> None:
    assert message in error_of(tmp_path, body, locals_)


def test_error_position_and_unsupported_constructs(tmp_path: Path) -> None:
    msg = error_of(tmp_path, "m.x = nope;")
    assert msg.startswith(f"{tmp_path / 'prog.p4'}:14:")
    assert "varbit fields are not supported" in error_of(tmp_path, "", "varbit<8> v;")
    assert "header unions are not supported" in _compile_text(tmp_path, "header_union u_t { }")


def _compile_text(tmp_path: Path, extra: str) -> str:
    src = tmp_path / "x.p4"
    src.write_text(SKELETON.replace("LOCALS", "").replace("BODY", "").replace("struct hs_t", extra + "\nstruct hs_t"))
    with pytest.raises(CompileError) as exc:
        compile_file(src)
    return str(exc.value)


def test_bad_transition(tmp_path: Path) -> None:
    src = tmp_path / "t.p4"
    src.write_text(SKELETON.replace("LOCALS", "").replace("BODY", "").replace(
        "transition accept; }", "transition nowhere; }"))
    with pytest.raises(CompileError, match="transition to undefined state 'nowhere'"):
        compile_file(src)


def test_cli_writes_both_files_or_none(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out, info = tmp_path / "o.json", tmp_path / "o.p4info.txtpb"
    assert cli.main([str(CORPUS / "l3_basic.p4"), "-o", str(out), "--p4runtime-files", str(info)]) == 0
    assert json.loads(out.read_text())["pipelines"] and 'name: "MyIngress.ipv4_lpm"' in info.read_text()
    bad = tmp_path / "bad.p4"
    bad.write_text(SKELETON.replace("LOCALS", "").replace("BODY", "m.x = q;"))
    out2, info2 = tmp_path / "b.json", tmp_path / "b.txtpb"
    assert cli.main([str(bad), "-o", str(out2), "--p4runtime-files", str(info2)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"{bad}:14:") and ": error: q: undefined name" in err
    assert not out2.exists() and not info2.exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".p4sim-")] == []
