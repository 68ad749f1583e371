"""bmv2's load-time checks of the typed operands in a JSON program (what `simple_switch` rejects).

bmv2 (`P4Objects::build_expression`, `process_single_param`, `init_parsers`) knows two shapes:
an *expression* `{"type": T, "value": V}` with T one of `EXPR_TYPES` (an operator node is
`{"type": "expression", "value": {"op", "left", "right"}}`), and a *parameter* of a primitive, parser
`set`/`advance`/`extract_VL`, whose type `expression` wraps a whole expression:
`{"type": "expression", "value": {"type": "expression", "value": {"op": ...}}}`. Action data is
`runtime_data` as a parameter but `local` inside an expression. bmv2 exits on a violation; so does
`check_operands`, with the place and bmv2's own message.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

EXPR_TYPES = frozenset({"expression", "header", "field", "bool", "hexstr", "local", "register", "header_stack",
                        "stack_field", "header_union", "header_union_stack"})
PARAM_TYPES = frozenset({"hexstr", "parameters_vector", "runtime_data", "header", "field", "calculation",
                         "meter_array", "counter_array", "register_array", "header_stack", "expression",
                         "register", "extern", "string", "stack_field", "header_union", "header_union_stack"})
_SET_SOURCES = ("field", "hexstr", "lookahead", "expression")
_ADVANCE_TYPES = ("field", "hexstr", "expression")
_EXTRACT_TYPES = ("regular", "stack", "union_stack")
_KEY_TYPES = ("field", "stack_field", "union_stack_field", "lookahead")
_CALC_INPUTS = ("field", "hexstr", "header", "payload")


class _Checker:
    """Walks one document; `where` names the object being checked for the error message."""

    def __init__(self) -> None:
        self.where = ""
        self.n_data = 0  # runtime_data entries of the action being checked

    def fail(self, message: str) -> None:
        raise ValueError(f"bmv2 JSON: {self.where}: {message}")

    def expr(self, e: Any) -> None:
        """An expression operand (null is an absent operand, as for unary operators)."""
        if e is None:
            return
        t = e.get("type", "") if isinstance(e, dict) else ""
        if t not in EXPR_TYPES:
            self.fail(f"Invalid 'type' in expression: '{t}'")
        v = e.get("value")
        if t == "expression":
            if not isinstance(v, dict) or not isinstance(v.get("op"), str):
                self.fail("an expression node needs an 'op'")
            if v["op"] == "?":
                self.expr(v.get("cond"))
            if v["op"] == "access_field":
                self.expr(v.get("left"))
                if not isinstance(v.get("right"), int):
                    self.fail("access_field needs an integer field offset")
                return
            self.expr(v.get("left"))
            self.expr(v.get("right"))
        elif t == "register":
            if not isinstance(v, list) or len(v) != 2:
                self.fail("a register operand is [register_array, index expression]")
            self.expr(v[1])

    def param(self, p: Any) -> None:
        """A primitive's parameter."""
        t = p.get("type", "") if isinstance(p, dict) else ""
        if t not in PARAM_TYPES:
            self.fail(f"Parameter type '{t}' not supported")
        v = p.get("value")
        if t == "expression":
            self.expr(v)
        elif t == "parameters_vector":
            for x in v or []:
                self.param(x)
        elif t == "register":
            if not isinstance(v, list) or len(v) != 2:
                self.fail("a register parameter is [register_array, index expression]")
            self.expr(v[1])
        elif t == "runtime_data" and not (isinstance(v, int) and 0 <= v < self.n_data):
            self.fail(f"Invalid 'runtime_data' parameter reference: {v!r}, the action has {self.n_data} parameter(s)")

    def primitives(self, prims: Iterable[Any]) -> None:
        """A list of primitive calls."""
        for i, pr in enumerate(prims):
            base = self.where
            self.where = f"{base} primitive {i} ({pr.get('op')})"
            params = pr.get("parameters")
            if not isinstance(params, list):
                self.fail("'parameters' must be a list")
            for p in params:
                self.param(p)
            self.where = base

    def parser_op(self, op: dict[str, Any]) -> None:
        """One parser operation."""
        kind, ps = op.get("op"), op.get("parameters")
        if not isinstance(ps, list):
            self.fail("'parameters' must be a list")
        want = {"extract": 1, "extract_VL": 2, "set": 2, "verify": 2, "primitive": 1, "shift": 1, "advance": 1}
        if kind not in want:
            self.fail(f"Parser op '{kind}' not supported")
        if len(ps) != want[kind]:
            self.fail(f"parser op {kind} takes {want[kind]} parameter(s), found {len(ps)}")
        if kind in ("extract", "extract_VL") and _type(ps[0]) not in _EXTRACT_TYPES:
            self.fail(f"Extract type '{_type(ps[0])}' not supported")
        if kind == "extract_VL":
            if _type(ps[1]) != "expression":
                self.fail("extract_VL's length must be a parameter of type 'expression'")
            self.expr(ps[1]["value"])
        elif kind == "set":
            if _type(ps[0]) != "field":
                self.fail(f"Parser 'set' operation has invalid destination type '{_type(ps[0])}', expected 'field'")
            if _type(ps[1]) not in _SET_SOURCES:
                self.fail(f"Parser 'set' operation has unsupported source type '{_type(ps[1])}'")
            if _type(ps[1]) == "expression":
                self.expr(ps[1]["value"])
        elif kind == "verify":
            self.expr(ps[0])
            if not isinstance(ps[1], int):
                self.expr(ps[1])
        elif kind == "advance":
            if _type(ps[0]) not in _ADVANCE_TYPES:
                self.fail(f"Parser 'advance' operation has unsupported parameter type '{_type(ps[0])}'")
            if _type(ps[0]) == "expression":
                self.expr(ps[0]["value"])
        elif kind == "primitive":
            self.primitives(ps)


def _type(x: Any) -> str:
    return x.get("type", "") if isinstance(x, dict) else ""


def check_operands(doc: dict[str, Any]) -> None:
    """Raise ValueError (one line: where, and bmv2's message) if bmv2 would reject an operand of doc."""
    c = _Checker()
    for ht in doc.get("header_types", []):
        if "length_exp" in ht:
            c.where = f"header type {ht.get('name')} length_exp"
            c.expr(ht["length_exp"])
    for a in doc.get("actions", []):
        c.where, c.n_data = f"action {a.get('name')}", len(a.get("runtime_data", []))
        c.primitives(a.get("primitives", []))
    c.n_data = 0
    for p in doc.get("parsers", []):
        for s in p.get("parse_states", []):
            for i, op in enumerate(s.get("parser_ops", [])):
                c.where = f"parser {p.get('name')} state {s.get('name')} op {i} ({op.get('op')})"
                c.parser_op(op)
            for k in s.get("transition_key", []):
                c.where = f"parser {p.get('name')} state {s.get('name')} transition_key"
                if _type(k) not in _KEY_TYPES:
                    c.fail(f"Invalid entry in parse state key: type '{_type(k)}'")
    for d in doc.get("deparsers", []):
        c.where = f"deparser {d.get('name')}"
        c.primitives(d.get("primitives", []))
    for pl in doc.get("pipelines", []):
        for cond in pl.get("conditionals", []):
            c.where = f"conditional {cond.get('name')}"
            c.expr(cond.get("expression"))
    for cs in doc.get("checksums", []):
        c.where = f"checksum {cs.get('name')} if_cond"
        c.expr(cs.get("if_cond"))
    for calc in doc.get("calculations", []):
        c.where = f"calculation {calc.get('name')}"
        for x in calc.get("input", []):
            if _type(x) not in _CALC_INPUTS:
                c.fail(f"Unsupported input type '{_type(x)}'")
    for ext in doc.get("extern_instances", []):
        for attr in ext.get("attribute_values", []):
            if attr.get("type") == "expression":
                c.where = f"extern {ext.get('name')} attribute {attr.get('name')}"
                c.expr(attr.get("value"))
