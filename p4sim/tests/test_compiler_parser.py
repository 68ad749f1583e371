"""p4sim compiler: the typedef-aware P4_16 parser."""

from __future__ import annotations

import pytest

from p4sim.compiler import ast as A
from p4sim.compiler.errors import CompileError
from p4sim.compiler.lexer import tokenize
from p4sim.compiler.parser import parse
from p4sim.compiler.preprocess import SourceLine


def prog(text: str) -> A.Program:
    return parse(tokenize([SourceLine(line, "t.p4", i) for i, line in enumerate(text.split("\n"), 1)]))


def test_casts_need_known_type_names() -> None:
    p = prog("typedef bit<8> T;\nconst T a = (T) 1;\nconst bit<8> b = (a) + 1;")
    assert isinstance(p.decls[1].init, A.Cast)
    assert isinstance(p.decls[2].init, A.Binary) and isinstance(p.decls[2].init.left, A.Name)


def test_nested_generics_and_shifts() -> None:
    p = prog("extern register<T> { register(bit<32> n); }\ncontrol C() { register<bit<32>>(4) r;"
             " apply { bit<8> x = 8w1 >> 1; x = x << 2 >> 1; } }")
    ctrl = p.decls[1]
    assert isinstance(ctrl.locals[0], A.Instance) and ctrl.locals[0].typ.args[0].width.value == 32
    init = ctrl.body.stmts[0].init
    assert isinstance(init, A.Binary) and init.op == ">>"
    rhs = ctrl.body.stmts[1].rhs
    assert rhs.op == ">>" and rhs.left.op == "<<"  # left associative, same precedence


def test_operator_precedence_follows_the_spec() -> None:
    e = prog("const bool x = 1 + 2 * 3 == 7 && 4 & 5 != 0 || false;").decls[0].init
    assert e.op == "||" and e.left.op == "&&"
    assert e.left.left.op == "==" and e.left.left.left.op == "+" and e.left.left.left.right.op == "*"
    assert e.left.right.op == "!=" and e.left.right.left.op == "&"  # & binds tighter than != in P4


def test_table_properties_and_entries() -> None:
    p = prog("control C() {\n table t {\n key = { a.b: exact @name(\"ab\"); c: lpm; }\n"
             " actions = { @defaultonly x; y; }\n const default_action = x(1);\n size = 16;\n"
             " const entries = { (1, 0x0a000000 &&& 0xff000000): y(); priority = 5: (2, _): x(3); }\n"
             " implementation = sel;\n }\n apply { } }")
    t = p.decls[0].locals[0]
    assert [k.match_kind for k in t.keys] == ["exact", "lpm"] and A.anno(t.keys[0].annos, "name").args == ["ab"]
    assert A.anno(t.actions[0].annos, "defaultonly") and t.default_const and t.default_action.name == "x"
    assert set(t.props) == {"size", "implementation"}
    assert isinstance(t.entries[0].keys[1], A.Mask) and isinstance(t.entries[1].keys[1], A.Default)
    assert t.entries[1].priority.value == 5


def test_parser_states_and_keysets() -> None:
    p = prog("parser P(packet_in b) { state start { transition select(b.lookahead<bit<8>>(), x) {"
             " (1, 2): s; (0..9, _): s; (3 &&& 3, default): accept; default: reject; } }"
             " state s { transition accept; } }")
    st = p.decls[0].states[0]
    assert [type(c.keyset).__name__ for c in st.cases] == ["ListExpr", "ListExpr", "ListExpr", "Default"]
    assert isinstance(st.cases[1].keyset.items[0], A.Range) and isinstance(st.cases[2].keyset.items[0], A.Mask)
    assert st.select[0].type_args and st.cases[3].state == "reject"


def test_a_state_without_transition_rejects_with_p4cs_warning(caplog: pytest.LogCaptureFixture) -> None:
    st = prog("parser P() { state start { } }").decls[0].states[0]
    assert st.next == "reject" and "state start: implicit transition to `reject'" in caplog.text


@pytest.mark.parametrize(("text", "message"), [
    ("const bit<8> x = ;", "t.p4:1:18: error: expected an expression, found ';'"),
    ("control C() { apply { x = 1 } }", "expected ';', found '}'"),
    ("struct S { bit<8> a }", "expected ';', found '}'"),
    ("control C() { table t { } }", "control 'C' has no apply block"),
])
def test_syntax_errors(text: str, message: str) -> None:
    with pytest.raises(CompileError) as exc:
        prog(text)
    assert message in str(exc.value)
