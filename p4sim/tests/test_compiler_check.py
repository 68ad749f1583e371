"""p4sim compiler: name resolution, types, width inference and the errors they raise."""

from __future__ import annotations

from pathlib import Path

import pytest

from p4sim.compiler.compile import compile_file
from p4sim.compiler.errors import CompileError
from p4sim.tests.corpus import BODY_LINE, build, error_of, source


def prims(res, action: str | None = None) -> list[dict]:
    acts = [a for a in res.json["actions"] if action is None or a["name"] == action]
    return [p for a in acts for p in a["primitives"]]


def test_widths_inferred_and_arithmetic_masked(tmp_path: Path) -> None:
    res = build(tmp_path, "m.x = hdr.h.a + 1; m.y = hdr.h.a ++ hdr.h.c; m.f = hdr.h.b[3:0] == 4w2;")
    ps = prims(res)
    add = ps[0]["parameters"][1]["value"]["value"]  # a parameter of type expression wraps an expression
    assert add["op"] == "&" and add["right"]["value"] == "0xff" and add["left"]["value"]["op"] == "+"
    assert add["left"]["value"]["right"] == {"type": "hexstr", "value": "0x01"}
    assert ps[2]["parameters"][1]["value"]["value"]["op"] == "b2d"


def test_constant_folding_and_casts(tmp_path: Path) -> None:
    res = build(tmp_path, "m.x = (bit<8>)(W * 2 + 1); m.y = (bit<16>)hdr.h.a; m.x = (bit<8>)hdr.h.b;"
                "m.f = (bool)(bit<1>)1; m.y = 16w0xffff + 2;", top="const bit<8> W = 0x21;")
    ps = prims(res)
    assert ps[0]["parameters"][1] == {"type": "hexstr", "value": "0x43"}
    assert ps[1]["parameters"][1] == {"type": "field", "value": ["h", "a"]}  # widening: no mask
    assert ps[2]["parameters"][1]["value"]["value"]["op"] == "&"            # narrowing: masked
    assert ps[4]["parameters"][1] == {"type": "hexstr", "value": "0x0001"}  # wraps modulo 2^16


def test_enums_errors_and_serializable_enums(tmp_path: Path) -> None:
    top = "enum bit<8> Ek { A = 1, B = 7 }\nenum Col { RED, GREEN }\nerror { Oops }"
    res = build(tmp_path, "m.x = (bit<8>)Ek.B; if (sm.parser_error == error.Oops) { m.x = 1; }"
                " if (Col.GREEN == Col.GREEN) { m.y = 2; }", top=top)
    assert {"type": "hexstr", "value": "0x07"} in [p["parameters"][1] for p in prims(res)]
    conds = res.json["pipelines"][0]["conditionals"]
    assert len(conds) == 1  # Col.GREEN == Col.GREEN folds to true: no conditional
    errors = dict(res.json["errors"])
    assert errors["NoError"] == 0 and errors["Oops"] == len(errors) - 1
    assert res.json["enums"] == [{"name": "Ek", "entries": [["A", 1], ["B", 7]]}]


@pytest.mark.parametrize(("body", "locals_", "message"), [
    ("m.x = nope;", "", "nope: undefined name"),
    ("m.x = hdr.h.b;", "", "width mismatch: right side of m.x = has type bit<16>, expected bit<8>"),
    ("m.x = hdr.h.a + hdr.h.b;", "", "width mismatch: operator + applied to bit<8> and bit<16>"),
    ("m.y = hdr.h.a ++ 1;", "", "operator ++ expects bit<W> operands"),
    ("m.x = 300;", "", "300 does not fit in bit<8>"),
    ("m.x = 8w256;", "", "literal 256 does not fit in bit<8>"),
    ("if (m.x) { }", "", "expected a bool condition, found bit<8>"),
    ("m.f = m.x == true;", "", "type mismatch: operator == applied to bit<8> and bool"),
    ("m.x = hdr.h.b[20:3];", "", "slice [20:3] out of range for bit<16>"),
    ("hdr.h.zz = 1;", "", "has no field 'zz'"),
    ("m.x = m.x / m.x;", "", "operator / on non-constant values is not supported"),
    ("m.x = 1 / 0;", "", "division by zero"),
    ("a(1);", "action a(bit<8> v) { v = 2; }", "v is read-only"),
    ("a();", "action a(bit<8> v) { }", "action a takes 1 arguments, found 0"),
    ("t.apply(); t.apply();", "table t { key = { m.x: exact; } actions = { NoAction; } }", "applied more than once"),
    ("t.apply();", "table t { key = { m.x: fuzzy; } actions = { NoAction; } }", "match kind 'fuzzy'"),
    ("t.apply();", "table t { key = { m.x: exact; } actions = { a; } default_action = NoAction(); }"
     " action a() { }", "default action NoAction is not in the actions of table t"),
    ("t.apply();", "table t { key = { m.x: lpm; m.y: lpm; } actions = { NoAction; } }", "at most one lpm key"),
    ("t.apply();", "table t { key = { m.x: exact; } actions = { NoAction; } idle = true; }",
     "table property 'idle' is not supported"),
    ("switch (m.f) { true: { } }", "", "switch expects `table.apply().action_run` or a bit<W>, enum or error"),
    ("r.read(m.x, 0);", "register<bit<16>>(4) r;", "register I.r holds bit<16>"),
    ("m.x = hash_me();", "", "hash_me: undefined name"),
    ("m.f = m.f + 1;", "", "operator + expects integers, found bool"),
    ("t.apply();", "action a(m_t s) { } table t { key = { m.x: exact; } actions = { a; } }",
     "action a: parameter s has type struct m_t; control-plane parameters must be"),
    ("if ((m.f ? t.apply().hit : t.apply().miss)) { }", "table t { key = { m.x: exact; } actions = { NoAction; } }",
     "a conditional expression whose branches both call functions with more than a return or apply tables"),
    ("m.x = m.x << -1;", "", "shift amount must be unsigned"),
    ("digest(1, m.x);", "", "digest data must be a struct or a list"),
    ("if ({m.x, m.y} == {1}) { }", "", "cannot compare lists of 2 and 1 items"),
])
def test_type_and_name_errors(tmp_path: Path, body: str, locals_: str, message: str) -> None:
    assert message in error_of(tmp_path, body, locals_)


@pytest.mark.parametrize(("top", "locals_", "parser", "message"), [
    ("header v_t { varbit<12> v; }", "", "", "varbit<12>: expected a positive multiple of 8 bits"),
    ("struct s_t { varbit<8> v; }", "", "", "s_t.v: varbit fields may only be in headers, one per header"),
    ("header odd_t { bit<7> v; }", "", "", "header odd_t: its fields total 7 bits"),
    ("", "", "value_set<bit<16>>(4) vs; state start { p.extract(hdr.h); transition select(hdr.h.a) "
     "{ vs: accept; default: accept; } }", "value set P.vs holds 16-bit values, the select key has 8 bits"),
    ("", "", "state start { transition nowhere; }", "transition to undefined state 'nowhere'"),
    ("", "", "state begin { transition accept; }", "parser P has no start state"),
    ("", "", "state start { p.extract(hdr); transition accept; }", "extract expects a header"),
    ("", "", "state start { transition select(hdr.h.a) { m.x: accept; } }",
     "select cases must be compile-time constants"),
    ("bit<8> f(inout bit<8> x) { x = 1; return x; }", "m.x = f(m.x) + 1;", "",
     "f: a call with out or inout arguments inside a larger expression is not supported"),
    ("T g<T>(in T x) { return x; }", "m.x = g(1);", "", "g: cannot infer type T from this argument"),
    ("", "m.x = f(0); for (bit<8> i in 0 .. 3) { m.x = i; }", "", "for-in loops are not supported"),
    ("", "m.x = f(0); for (bit<8> i = 0; i < 3; i = i + 1) { t.apply(); }", "",
     "a for loop that applies tables or controls is not supported"),
    ("", "C2({1, 2, true}) c;", "", "constructor parameter k of type struct m_t is not supported"),
    ("extern Foo { Foo(); }", "Foo() f;", "", "extern Foo is not supported by p4sim"),
])
def test_unsupported_constructs_and_bad_programs(tmp_path: Path, top: str, locals_: str, parser: str,
                                                 message: str) -> None:
    if "C2" in locals_:
        top = "control C2(inout m_t m)(m_t k) { apply { } }"
    body = ""
    if "m.x = f(" in locals_ or "m.x = g(" in locals_:
        body, locals_ = locals_, ""
        if "f(0)" in body:  # f: a function with more than a return; t: a table to apply
            top = "bit<8> f(in bit<8> x) { if (x == 0) { return 1; } return x; }"
            locals_ = "table t { key = { m.x: exact; } actions = { NoAction; } }"
    assert message in error_of(tmp_path, body, locals_, top, parser)


def test_error_positions(tmp_path: Path) -> None:
    msg = error_of(tmp_path, "m.x = nope;")
    assert msg.startswith(f"{tmp_path / 'prog.p4'}:{BODY_LINE}:7: error: ")


def test_sub_controls_are_inlined_with_qualified_names(tmp_path: Path) -> None:
    top = """control Sub(inout m_t mm, in bit<8> k) {
        counter(8, CounterType.packets) hits;
        action set(bit<8> v) { mm.x = v + k; }
        table t { key = { mm.x: exact; } actions = { set; } }
        apply { hits.count(0); if (k == 3) { return; } t.apply(); }
    }"""
    res = build(tmp_path, "sub.apply(m, 3);", "Sub() sub;", top=top)
    names = {t.preamble.name for t in res.p4info.tables}
    assert names == {"I.sub.t"}
    assert {c.preamble.name for c in res.p4info.counters} == {"I.sub.hits"}
    assert {a.preamble.name for a in res.p4info.actions} == {"I.sub.set", "NoAction"}  # t's implicit default, as p4c


def test_list_equality_and_tuple_digests(tmp_path: Path) -> None:
    res = build(tmp_path, "if ({m.x, m.y} == {1, 2}) { digest(1, {m.x, m.y}); }")
    cond = res.json["pipelines"][0]["conditionals"][0]["expression"]["value"]
    assert cond["op"] == "and" and cond["left"]["value"]["op"] == "=="
    d = res.p4info.digests[0]
    assert [m.bitstring.bit.bitwidth for m in d.type_spec.tuple.members] == [8, 16]
    assert res.json["learn_lists"][0]["name"] == d.preamble.name


def test_switch_on_values_becomes_conditionals(tmp_path: Path) -> None:
    res = build(tmp_path, "switch (hdr.h.a) { 1: 2: { m.x = 1; } 7: { m.x = 2; } default: { m.x = 3; } }")
    conds = res.json["pipelines"][0]["conditionals"]
    assert len(conds) == 2 and conds[0]["expression"]["value"]["op"] == "or"
    assert sorted(p["parameters"][1]["value"] for p in prims(res)) == ["0x01", "0x02", "0x03"]


def test_branching_actions_called_from_apply_become_control_flow(tmp_path: Path) -> None:
    res = build(tmp_path, "a(3);", "action a(bit<8> v) { m.x = v; if (m.f) { mark_to_drop(sm); exit; } }")
    ing = res.json["pipelines"][0]
    first = next(t for t in ing["tables"] if t["name"] == ing["init_table"])
    cond = ing["conditionals"][0]
    assert first["base_default_next"] == cond["name"] and cond["false_next"] is None
    ops = [p["op"] for a in res.json["actions"] if a["name"] == cond["true_next"][4:] for p in a["primitives"]]
    assert ops == ["mark_to_drop", "exit"]
    assert {a.preamble.name for a in res.p4info.actions} == {"I.a"}


def test_v1model_index_type_parameters(tmp_path: Path) -> None:
    res = build(tmp_path, "c.count(sm.ingress_port); r.write(hdr.h.a[3:0], m.x); c2.count((bit<32>)m.x);",
                "counter<bit<9>>(512, CounterType.packets) c; register<bit<8>, bit<4>>(16) r;"
                " counter(4, CounterType.bytes) c2;")
    ops = [(p["op"], p["parameters"][1]) for p in prims(res)]
    assert ops[0] == ("count", {"type": "field", "value": ["standard_metadata", "ingress_port"]})
    assert ops[1][0] == "register_write" and ops[2][0] == "count"
    assert [r.size for r in res.p4info.registers] == [16] and len(res.p4info.counters) == 2


def test_functions_are_inlined(tmp_path: Path) -> None:
    top = ("bit<8> max8(in bit<8> a, in bit<8> b) { return a > b ? a : b; }\n"
           "void bump(inout bit<8> v) { v = v + 1; }\nconst bit<8> K = max8(3, 9);")
    res = build(tmp_path, "m.x = max8(hdr.h.a, K); bump(m.x);", top=top)
    ps = prims(res)
    assign = next(p for p in ps if p["parameters"][1]["type"] == "expression" and
                  p["parameters"][1]["value"]["value"]["op"] == "?")
    assert assign["parameters"][1]["value"]["value"]["right"] == {"type": "hexstr", "value": "0x09"}
    assert ps[-1]["parameters"][0] == {"type": "field", "value": ["scalars", "m_t.x"]}


def test_control_constructor_arguments(tmp_path: Path) -> None:
    top = """control Sub(inout m_t mm)(bit<8> k, bool twice) {
        apply { mm.x = twice ? k + k : k; }
    }"""
    res = build(tmp_path, "s1.apply(m); s2.apply(m);", "Sub(8w3, true) s1; Sub(5, false) s2;", top=top)
    consts = sorted(p["parameters"][1]["value"] for p in prims(res) if p["parameters"][1]["type"] == "hexstr")
    assert consts == ["0x05", "0x06"]
    assert "Sub takes 2 constructor arguments, found 1" in error_of(tmp_path, "s.apply(m);", "Sub(3) s;", top)
    assert "constructor argument k must be a compile-time constant" in error_of(
        tmp_path, "s.apply(m);", "Sub(hdr.h.a, true) s;", top)


def test_extern_constructor_arguments_are_checked(tmp_path: Path) -> None:
    """An extern parameter takes an extern instance of the same type (what it does: lang.p4's
    extern_constructor_argument probe, on every pairing)."""
    top = """control Keep(inout m_t mm)(register<bit<8>> cell) {
        apply { cell.write(0, mm.x); }
    }"""
    build(tmp_path, "k.apply(m);", "register<bit<8>>(1) r; Keep(r) k;", top=top)
    assert "constructor argument cell: expected register<bit<8>>, found register<bit<16>>" in error_of(
        tmp_path, "k.apply(m);", "register<bit<16>>(1) r; Keep(r) k;", top)
    assert "constructor argument cell must be an extern instance" in error_of(
        tmp_path, "k.apply(m);", "Keep(8w1) k;", top)


def test_v1switch_block_constructor_arguments(tmp_path: Path) -> None:
    text = source("m.x = k;").replace("control I(inout hs_t hdr, inout m_t m, inout standard_metadata_t sm) {",
                                      "control I(inout hs_t hdr, inout m_t m, inout standard_metadata_t sm)(bit<8> k) {")
    src = tmp_path / "top.p4"
    src.write_text(text.replace("V1Switch(P(), V(), I(), E(), C(), D()) main;", "V1Switch(P(), V(), I(8w42), E(), C(), D()) main;"))
    assert [p["parameters"][1]["value"] for p in prims(compile_file(src))] == ["0x2a"]
    src.write_text(text)
    with pytest.raises(CompileError, match="I takes 1 constructor arguments, found 0"):
        compile_file(src)


def test_constant_in_a_calculation_has_its_bitwidth(tmp_path: Path) -> None:
    # bmv2 cannot infer a constant's width from its hex string (4w1 and 8w1 are both "0x01")
    res = build(tmp_path, "hash(m.y, HashAlgorithm.csum16, 16w0, {hdr.h.a, 4w1, 4w0, 8w0}, 32w65536);")
    inputs = res.json["calculations"][0]["input"]
    assert inputs[1:] == [{"type": "hexstr", "value": "0x01", "bitwidth": 4},
                          {"type": "hexstr", "value": "0x00", "bitwidth": 4},
                          {"type": "hexstr", "value": "0x00", "bitwidth": 8}]
