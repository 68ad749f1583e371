"""Type checking and bmv2 JSON lowering of P4 expressions (spec section 8), with constant folding."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from p4sim.compiler import ast as A
from p4sim.compiler.env import (
    ConstE,
    DeclE,
    DynFieldE,
    DynHeaderE,
    Ent,
    FieldE,
    HeaderE,
    RuntimeE,
    Scope,
    StackE,
    StructE,
    TypeE,
    ValueE,
)
from p4sim.compiler.errors import CompileError, Loc
from p4sim.compiler.types import (
    MAX_CONST_BITS,
    MAX_WIDTH,
    BitsT,
    BoolT,
    DontCareT,
    EnumT,
    ErrorT,
    InfIntT,
    ListT,
    StringT,
    StructT,
    Type,
    VarbitT,
    bit_width,
    same,
    strip,
)


@dataclass(slots=True)
class V:
    """A checked expression: bmv2 JSON (scalars), type, entity (lvalues, aggregates), constant."""

    j: dict | None
    t: Type
    ent: Ent | None = None
    const: Any = None


def hexstr(value: int, width: int | None = None) -> dict:
    """A bmv2 hexstr operand."""
    if value < 0:
        return {"type": "hexstr", "value": "-0x%x" % -value}
    w = 2 * max(1, ((width or value.bit_length() or 1) + 7) // 8)  # whole bytes, as p4c writes them
    return {"type": "hexstr", "value": f"0x{value:0{w}x}"}


def jexpr(op: str, left: dict | None, right: dict | None) -> dict:
    """A bmv2 expression node."""
    return {"type": "expression", "value": {"op": op, "left": left, "right": right}}


def operand(j: dict) -> dict:
    """A type-value object as a parameter of a primitive or parser op. bmv2 (JSON_format.md, actions)
    reads a parameter of type `expression` as a whole expression, so an operator node is wrapped once
    more; action data inside an expression is `local`, not `runtime_data`."""
    if j.get("type") == "expression":
        return {"type": "expression", "value": _local_data(j)}
    return j


def _local_data(j: dict) -> dict:
    t = j.get("type")
    if t == "runtime_data":
        return {"type": "local", "value": j["value"]}
    if t != "expression":
        return j
    node = dict(j["value"])
    for side in ("left", "right", "cond"):
        if isinstance(node.get(side), dict):
            node[side] = _local_data(node[side])
    return {"type": "expression", "value": node}


def mask_of(width: int) -> int:
    """All-ones of width bits."""
    return (1 << width) - 1


def wrap(value: int, t: Type) -> int:
    """value reduced to the range of bit<W>/int<W>."""
    t = strip(t)
    if isinstance(t, BitsT):
        value &= mask_of(t.width)
        if t.signed and value >> (t.width - 1):
            value -= 1 << t.width
    return value


_ARITH = {"+", "-", "*", "/", "%", "&", "|", "^", "|+|", "|-|"}
_CMP = {"==", "!=", "<", ">", "<=", ">="}


class ExprLowerer:
    """Checks and lowers expressions against a scope; contexts override the hooks."""

    def __init__(self, scope: Scope, types: Any) -> None:
        self.scope = scope
        self.types = types  # the Program: resolves type syntax, error codes

    # ---- hooks ---------------------------------------------------------------------
    def call_value(self, e: A.Call) -> V:
        """Value of a call in an expression (contexts add lookahead, ...)."""
        if isinstance(e.func, A.Name):
            ent = self.scope.get(e.func.name, e.func.loc)  # undefined names first
            if isinstance(ent, DeclE) and ent.kind == "userfunc":
                return self.call_function(ent.decl, e)
        if isinstance(e.func, A.Member) and e.func.name in ("minSizeInBits", "minSizeInBytes", "maxSizeInBits",
                                                            "maxSizeInBytes") and not e.args:
            v = self.expr(e.func.expr)
            st = strip(v.t)
            if isinstance(st, StructT) and st.kind == "header":  # P4_16 8.17: varbit fields count 0 (min)
                bits = sum((0 if e.func.name.startswith("min") else strip(t).max_width) if isinstance(strip(t), VarbitT)
                           else bit_width(strip(t)) for _, t in st.fields)
                val = bits if e.func.name.endswith("Bits") else (bits + 7) // 8
                return V(hexstr(val), InfIntT(), None, val)
        if isinstance(e.func, A.Member) and e.func.name == "isValid" and not e.args:
            v = self.expr(e.func.expr)
            if isinstance(v.ent, HeaderE) and not v.ent.metadata:
                return V(jexpr("d2b", None, {"type": "field", "value": [v.ent.inst, "$valid$"]}), BoolT())
            if isinstance(v.ent, StructE) and v.ent.type.kind == "header_union":
                name = next(iter(v.ent.members.values())).inst.rpartition(".")[0]  # type: ignore[attr-defined]
                return V(jexpr("valid_union", None, {"type": "header_union", "value": name}), BoolT())
        raise CompileError(e.loc, f"{describe(e.func)}: this call cannot be used as a value here")

    def call_function(self, d: A.FunctionDecl, e: A.Call) -> V:
        """A call of a P4 function whose body is `return expr;`, inlined as an expression."""
        body = [st for st in d.body.stmts if not isinstance(st, A.Empty)]
        if len(body) != 1 or not isinstance(body[0], A.Return) or body[0].expr is None:
            raise CompileError(d.loc, f"function {d.name}: only functions whose body is one `return expr;` can be "
                               "used in expressions")
        if len(e.args) != len(d.params):
            raise CompileError(e.loc, f"function {d.name} takes {len(d.params)} arguments, found {len(e.args)}")
        scope = self.types.scope.child()
        for p, a in zip(d.params, e.args, strict=True):
            if p.direction not in ("", "in"):
                raise CompileError(p.loc, f"function {d.name}: out/inout parameters are not supported in expressions")
            pt = self.types.resolve(p.typ, self.types.scope)
            scope.add(p.name, ValueE(self.coerce(self.expr(a.expr, strip(pt)), pt, a.expr.loc, f"argument {p.name}")))
        ret = self.types.resolve(d.ret, self.types.scope)
        saved, self.scope = self.scope, scope  # the body sees only globals and the parameters
        try:
            v = self.expr(body[0].expr, strip(ret))
        finally:
            self.scope = saved
        return self.coerce(v, ret, body[0].loc, f"result of {d.name}")

    # ---- conversions ---------------------------------------------------------------
    def data(self, v: V, loc: Loc) -> dict:
        """JSON of a scalar as bmv2 Data (bools as 0/1)."""
        if v.j is None:
            raise CompileError(loc, f"a value of type {v.t} cannot be used here")
        if isinstance(strip(v.t), BoolT) and not isinstance(v.ent, FieldE):
            if v.const is not None:
                return hexstr(int(v.const), 1)
            return jexpr("b2d", None, v.j)
        return v.j

    def cond(self, v: V, loc: Loc) -> dict:
        """JSON of a boolean (fields holding bools are converted with d2b)."""
        if not isinstance(strip(v.t), BoolT):
            raise CompileError(loc, f"expected a bool condition, found {v.t}")
        if isinstance(v.ent, FieldE):
            return jexpr("d2b", None, v.j)
        return v.j  # type: ignore[return-value]

    def const_int(self, e: A.Expr, what: str = "a constant") -> int:
        """Evaluate a compile-time integer."""
        v = self.expr(e)
        if not isinstance(v.const, int) or isinstance(v.const, bool):
            raise CompileError(e.loc, f"expected {what}, found a non-constant expression")
        return v.const

    def coerce(self, v: V, t: Type, loc: Loc, what: str = "value") -> V:
        """Convert an untyped literal to t, or check that v has type t."""
        ts, vs = strip(t), strip(v.t)
        if isinstance(vs, InfIntT) and isinstance(ts, BitsT):
            if not isinstance(v.const, int):
                raise CompileError(loc, f"cannot infer the width of this {what}")
            val = wrap(v.const, ts)
            if val != v.const and not (ts.signed is False and v.const < 0):
                raise CompileError(loc, f"{what} {v.const} does not fit in {ts}")
            return V(hexstr(val, ts.width), ts, None, val)
        if isinstance(vs, InfIntT) and isinstance(ts, EnumT) and ts.underlying:
            return self.coerce(v, ts.underlying, loc, what)
        if isinstance(ts, EnumT) and ts.underlying and isinstance(vs, BitsT) and vs == ts.underlying:
            return v
        if isinstance(vs, EnumT) and vs.underlying and isinstance(ts, BitsT) and ts == vs.underlying:
            return v
        if isinstance(ts, ListT) and isinstance(vs, ListT):
            return v
        if isinstance(ts, StructT) and isinstance(vs, ListT):
            return v
        if isinstance(ts, DontCareT) or isinstance(vs, DontCareT):
            return v
        if not same(vs, ts):
            if isinstance(vs, BitsT) and isinstance(ts, BitsT):
                raise CompileError(loc, f"width mismatch: {what} has type {vs}, expected {ts}")
            raise CompileError(loc, f"type mismatch: {what} has type {v.t}, expected {t}")
        return v

    # ---- expressions ---------------------------------------------------------------
    def expr(self, e: A.Expr, expected: Type | None = None) -> V:
        """Check and lower e (expected only guides literal widths)."""
        v = self._expr(e, expected)
        e.type = v.t
        return v

    def _expr(self, e: A.Expr, expected: Type | None) -> V:
        if isinstance(e, A.IntLit):
            if e.width is not None:
                if not 0 < e.width <= MAX_WIDTH:
                    raise CompileError(e.loc, f"integer width {e.width}: expected 1..{MAX_WIDTH}")
                t = BitsT(e.width, e.signed)
                val = wrap(e.value, t)
                if val != e.value:
                    raise CompileError(e.loc, f"literal {e.value} does not fit in {t}")
                return V(hexstr(val, e.width), t, None, val)
            return V(hexstr(e.value), InfIntT(), None, e.value)
        if isinstance(e, A.BoolLit):
            return V({"type": "bool", "value": e.value}, BoolT(), None, e.value)
        if isinstance(e, A.StrLit):
            return V({"type": "string", "value": e.value}, StringT(), None, e.value)
        if isinstance(e, A.Name):
            if e.name == "_":
                return V(None, DontCareT())
            return self.entity_value(self.scope.get(e.name, e.loc), e)
        if isinstance(e, A.Member):
            return self.member(e)
        if isinstance(e, A.Index):
            return self.index(e)
        if isinstance(e, A.Slice):
            return self.slice(e)
        if isinstance(e, A.Unary):
            return self.unary(e, expected)
        if isinstance(e, A.Binary):
            return self.binary(e, expected)
        if isinstance(e, A.Ternary):
            return self.ternary(e, expected)
        if isinstance(e, A.Cast):
            return self.cast(e)
        if isinstance(e, A.Call):
            return self.call_value(e)
        if isinstance(e, A.ListExpr):
            items = [self.expr(x) for x in e.items]
            return V(None, ListT([x.t for x in items]), None, items)
        raise CompileError(e.loc, f"unsupported expression {describe(e)}")

    def entity_value(self, ent: Ent, e: A.Expr) -> V:
        """The value of a name bound to ent."""
        if isinstance(ent, ConstE):
            if isinstance(ent.value, bool):
                return V({"type": "bool", "value": ent.value}, ent.type, None, ent.value)
            if isinstance(ent.value, int):
                t = strip(ent.type)
                w = bit_width(t) if not isinstance(t, InfIntT) else None
                return V(hexstr(ent.value, w), ent.type, None, ent.value)
            if isinstance(ent.value, list):
                return V(None, ent.type, None, ent.value)
            return V({"type": "string", "value": str(ent.value)}, ent.type, None, ent.value)
        if isinstance(ent, FieldE):
            return V({"type": "field", "value": list(ent.ref)}, ent.type, ent)
        if isinstance(ent, RuntimeE):
            return V({"type": "runtime_data", "value": ent.index}, ent.type, ent)
        if isinstance(ent, HeaderE):
            return V({"type": "header", "value": ent.inst}, ent.type, ent)
        if isinstance(ent, (StructE, StackE)):
            return V(None, ent.type, ent)
        if isinstance(ent, TypeE):
            return V(None, ent.type, ent)
        if isinstance(ent, DeclE):
            return V(None, DontCareT(), ent)
        if isinstance(ent, ValueE):
            return ent.value
        raise CompileError(e.loc, f"{describe(e)} is not a value")

    def member(self, e: A.Member) -> V:
        """`a.b`: fields, enum members, error constants, stack sizes."""
        if isinstance(e.expr, A.Name) and e.expr.name == "error":
            code = self.types.error_code(e.name, e.loc)
            return V(hexstr(code, 32), ErrorT(), None, code)
        if isinstance(e.expr, A.Member) and e.expr.name == "last":
            st = self.expr(e.expr.expr)
            if isinstance(st.ent, StackE):
                ft = st.ent.type.elem.field_type(e.name)
                if ft is None:
                    raise CompileError(e.loc, f"{describe(e)}: {st.ent.type.elem} has no field {e.name!r}")
                return V({"type": "stack_field", "value": [st.ent.name, e.name]}, ft)
        base = self.expr(e.expr)
        ent = base.ent
        if isinstance(ent, TypeE):
            t = strip(ent.type)
            if isinstance(t, EnumT):
                if e.name not in t.members:
                    raise CompileError(e.loc, f"{t.name}.{e.name}: no such enum member (members: {', '.join(t.members)})")
                val = t.values[e.name] if t.underlying else t.members.index(e.name)
                return V(hexstr(val, bit_width(t)), t, None, val)
            raise CompileError(e.loc, f"{describe(e)}: a type has no member {e.name!r}")
        if isinstance(ent, DynHeaderE):
            st = ent.stack
            names = [n for n, _t in st.type.elem.fields]
            if e.name not in names:
                raise CompileError(e.loc, f"{describe(e)}: {st.type.elem} has no field {e.name!r}")
            ft = st.type.elem.field_type(e.name)
            if not isinstance(strip(ft), (BitsT, BoolT)):
                raise CompileError(e.loc, f"{describe(e)}: only bit<W> fields of a run-time indexed element")
            deref = jexpr("dereference_header_stack", {"type": "header_stack", "value": st.name}, ent.index)
            j = {"type": "expression", "value": {"op": "access_field", "left": deref, "right": names.index(e.name)}}
            return V(j, ft, DynFieldE(st.elems[0].inst and [st.elems[0].inst, e.name], ft, j))
        if isinstance(ent, HeaderE):
            ft = ent.type.field_type(e.name)
            if ft is None:
                raise CompileError(e.loc, f"{describe(e)}: {ent.type} has no field {e.name!r}")
            if isinstance(ft, StructT):
                raise CompileError(e.loc, f"{describe(e)}: nested structs in headers are not supported")
            # a varbit field: a value of type varbit<N> (assignable to another, in checksum and hash data)
            return self.entity_value(FieldE([ent.inst, e.name], ft), e)
        if isinstance(ent, StructE):
            m = ent.members.get(e.name)
            if m is None:
                raise CompileError(e.loc, f"{describe(e)}: {ent.type} has no field {e.name!r}")
            return self.entity_value(m, e)
        if isinstance(ent, StackE):
            if e.name == "size":
                return V(hexstr(ent.type.size, 32), BitsT(32), None, ent.type.size)
            raise CompileError(e.loc, f"{describe(e)}: header stack member {e.name!r} is not supported here")
        raise CompileError(e.loc, f"{describe(e)}: {base.t} has no member {e.name!r}")

    def index(self, e: A.Index) -> V:
        """`stack[i]`: an element, or with an index known only at run time, an element whose fields are
        bmv2's access_field of dereference_header_stack (as p4c writes them)."""
        base = self.expr(e.expr)
        if isinstance(strip(base.t), StructT) and strip(base.t).kind == "tuple":
            i = self.const_int(e.index, "a constant tuple index")
            if not 0 <= i < len(strip(base.t).fields):
                raise CompileError(e.index.loc, f"index {i} out of bounds for {describe(e.expr)}")
            return self.member(A.Member(e.loc, e.expr, f"f{i}"))
        if not isinstance(base.ent, StackE):
            raise CompileError(e.loc, f"{describe(e.expr)} is not a header stack")
        iv = self.expr(e.index, BitsT(32))
        if iv.const is None:
            if not isinstance(strip(iv.t), BitsT) or strip(iv.t).signed:
                raise CompileError(e.index.loc, f"a header stack index must be an unsigned bit<W>, found {iv.t}")
            return V(None, base.ent.type.elem, DynHeaderE(base.ent, self.data(iv, e.index.loc)))
        i = self.const_int(e.index, "a constant header stack index")
        if not 0 <= i < base.ent.type.size:
            raise CompileError(e.index.loc, f"index {i} out of bounds for {describe(e.expr)}[{base.ent.type.size}]")
        return self.entity_value(base.ent.elems[i], e)

    def slice(self, e: A.Slice) -> V:
        """`x[h:l]` as a shift and mask."""
        base = self.expr(e.expr)
        t = strip(base.t)
        if not isinstance(t, BitsT):
            raise CompileError(e.loc, f"cannot slice a value of type {base.t}")
        hi, lo = self.const_int(e.hi, "a constant slice bound"), self.const_int(e.lo, "a constant slice bound")
        if not (0 <= lo <= hi < t.width):
            raise CompileError(e.loc, f"slice [{hi}:{lo}] out of range for {t}")
        rt = BitsT(hi - lo + 1)
        if isinstance(base.const, int):
            val = (wrap(base.const, BitsT(t.width)) >> lo) & mask_of(rt.width)
            return V(hexstr(val, rt.width), rt, None, val)
        j = base.j
        if lo:
            j = jexpr(">>", j, hexstr(lo))
        return V(jexpr("&", j, hexstr(mask_of(rt.width), rt.width)), rt)

    def unary(self, e: A.Unary, expected: Type | None) -> V:
        """`!`, `~`, `-` and `+`."""
        v = self.expr(e.expr, expected)
        t = strip(v.t)
        if e.op == "!":
            if not isinstance(t, BoolT):
                raise CompileError(e.loc, f"operator ! expects bool, found {v.t}")
            if v.const is not None:
                return V({"type": "bool", "value": not v.const}, BoolT(), None, not v.const)
            return V(jexpr("not", None, self.cond(v, e.loc)), BoolT())
        if not isinstance(t, (BitsT, InfIntT)):
            raise CompileError(e.loc, f"operator {e.op} expects an integer, found {v.t}")
        if e.op == "+":
            return v
        if v.const is not None:
            val = ~v.const if e.op == "~" else -v.const
            if isinstance(t, InfIntT):
                if e.op == "~":
                    raise CompileError(e.loc, "operator ~ needs a width: cast the literal first")
                return V(hexstr(val), t, None, val)
            val = wrap(val, t)
            return V(hexstr(val, t.width), t, None, val)
        if isinstance(t, InfIntT):
            raise CompileError(e.loc, "cannot infer a width here")
        if e.op == "~":
            return V(jexpr("&", jexpr("~", None, v.j), hexstr(mask_of(t.width), t.width)), t)
        return V(jexpr("&", jexpr("-", hexstr(0), v.j), hexstr(mask_of(t.width), t.width)), t)

    def _unify(self, a: V, b: V, e: A.Binary) -> tuple[V, V, Type]:
        ta, tb = strip(a.t), strip(b.t)
        if isinstance(ta, InfIntT) and not isinstance(tb, InfIntT):
            a = self.coerce(a, tb, e.left.loc, "operand")
            return a, b, tb
        if isinstance(tb, InfIntT) and not isinstance(ta, InfIntT):
            b = self.coerce(b, ta, e.right.loc, "operand")
            return a, b, ta
        if isinstance(ta, BitsT) and isinstance(tb, BitsT) and ta != tb:
            raise CompileError(e.loc, f"width mismatch: operator {e.op} applied to {ta} and {tb}")
        if not same(ta, tb):
            raise CompileError(e.loc, f"type mismatch: operator {e.op} applied to {a.t} and {b.t}")
        return a, b, ta

    def binary(self, e: A.Binary, expected: Type | None) -> V:
        """Binary operators with width unification and constant folding."""
        op = e.op
        if op in ("&&", "||"):
            a, b = self.expr(e.left), self.expr(e.right)
            ja, jb = self.cond(a, e.left.loc), self.cond(b, e.right.loc)
            if a.const is not None and b.const is not None:
                val = (a.const and b.const) if op == "&&" else (a.const or b.const)
                return V({"type": "bool", "value": bool(val)}, BoolT(), None, bool(val))
            return V(jexpr("and" if op == "&&" else "or", ja, jb), BoolT())
        if op in ("==", "!=") and isinstance(e.left, A.ListExpr) and isinstance(e.right, A.ListExpr):
            return self._list_eq(e)
        a = self.expr(e.left, expected if op not in _CMP else None)
        b = self.expr(e.right, expected if op not in _CMP and op not in ("<<", ">>") else None)
        if op in ("<<", ">>"):
            return self.shift(e, a, b)
        if op == "++":
            return self.concat(e, a, b)
        if op in _ARITH:
            for side in (a, b):
                if not isinstance(strip(side.t), (BitsT, InfIntT)):
                    raise CompileError(e.loc, f"operator {op} expects integers, found {side.t}")
        if op in _CMP and isinstance(strip(a.t), InfIntT) and isinstance(strip(b.t), InfIntT) and a.const is None:
            raise CompileError(e.loc, "cannot infer widths of the operands")
        a, b, t = self._unify(a, b, e)
        if op in _CMP:
            if op not in ("==", "!=") and not isinstance(t, (BitsT, InfIntT)):
                raise CompileError(e.loc, f"operator {op} expects integers, found {t}")
            if a.j is None or b.j is None:
                raise CompileError(e.loc, f"comparison of {t} values is not supported")
            if a.const is not None and b.const is not None:
                val = _fold_cmp(op, a.const, b.const)
                return V({"type": "bool", "value": val}, BoolT(), None, val)
            if isinstance(t, BoolT):
                return V(jexpr(op, self.data(a, e.loc), self.data(b, e.loc)), BoolT())
            return V(jexpr(op, a.j, b.j), BoolT())
        if op not in _ARITH:
            raise CompileError(e.loc, f"unsupported operator {op}")
        if not isinstance(t, (BitsT, InfIntT)):
            raise CompileError(e.loc, f"operator {op} expects integers, found {t}")
        if a.const is not None and b.const is not None:
            val = _fold_arith(op, a.const, b.const, t, e.loc)
            return V(hexstr(val, t.width if isinstance(t, BitsT) else None), t, None, val)
        if isinstance(t, InfIntT):
            raise CompileError(e.loc, "cannot infer a width here")
        if op in ("/", "%"):
            # p4c's StrengthReduction: an unsigned division or remainder by a power of two is a shift or a mask
            if t.signed or not isinstance(b.const, int) or b.const <= 0 or b.const & (b.const - 1):
                raise CompileError(e.loc, f"operator {op} on non-constant values is not supported by bmv2 (only an "
                                   "unsigned value by a constant power of two)")
            if op == "/":
                return V(jexpr("&", jexpr(">>", a.j, hexstr(b.const.bit_length() - 1)),
                               hexstr(mask_of(t.width), t.width)), t)
            return V(jexpr("&", a.j, hexstr(b.const - 1, t.width)), t)
        if op in ("|+|", "|-|"):
            # bmv2's usat_cast/sat_cast clamp the exact result to the width (as p4c writes them)
            return V(jexpr("sat_cast" if t.signed else "usat_cast", jexpr(op[1], a.j, b.j), hexstr(t.width)), t)
        if t.signed and op in ("+", "-", "*"):
            return V(jexpr("two_comp_mod", jexpr(op, a.j, b.j), hexstr(t.width)), t)
        j = jexpr(op, a.j, b.j)
        if op in ("+", "-", "*"):
            j = jexpr("&", j, hexstr(mask_of(t.width), t.width))
        return V(j, t)

    def _list_eq(self, e: A.Binary) -> V:
        # {a, b} == {c, d} is a == c && b == d (spec section 8.11)
        left, right = e.left, e.right
        assert isinstance(left, A.ListExpr) and isinstance(right, A.ListExpr)
        if len(left.items) != len(right.items):
            raise CompileError(e.loc, f"cannot compare lists of {len(left.items)} and {len(right.items)} items")
        join = "&&" if e.op == "==" else "||"
        terms = [A.Binary(e.loc, e.op, x, y) for x, y in zip(left.items, right.items, strict=True)]
        acc: A.Expr = terms[0] if terms else A.BoolLit(e.loc, e.op == "==")
        for t in terms[1:]:
            acc = A.Binary(e.loc, join, acc, t)
        return self.expr(acc)

    def shift(self, e: A.Binary, a: V, b: V) -> V:
        """`<<` and `>>` (the result has the left operand's type)."""
        ta, tb = strip(a.t), strip(b.t)
        if not isinstance(ta, (BitsT, InfIntT)) or not isinstance(tb, (BitsT, InfIntT)):
            raise CompileError(e.loc, f"operator {e.op} expects integers, found {a.t} and {b.t}")
        if isinstance(tb, BitsT) and tb.signed or isinstance(b.const, int) and b.const < 0:
            raise CompileError(e.right.loc, "shift amount must be unsigned")
        if a.const is not None and b.const is not None:
            amount = b.const
            if isinstance(ta, BitsT):  # past the width every bit is shifted out: no need to make them
                amount = min(amount, ta.width)
            elif e.op == "<<" and a.const and a.const.bit_length() + amount > MAX_CONST_BITS:
                raise CompileError(e.loc, f"{a.const.bit_length()}-bit value << {amount}: expected a result of at "
                                          f"most {MAX_CONST_BITS} bits")
            val = a.const << amount if e.op == "<<" else a.const >> amount
            if isinstance(ta, BitsT):
                val = wrap(val, ta)
            return V(hexstr(val, ta.width if isinstance(ta, BitsT) else None), ta, None, val)
        if isinstance(ta, InfIntT):
            raise CompileError(e.left.loc, "cannot infer the width of the shifted value")
        j = jexpr(e.op, a.j, b.j)
        if e.op == "<<":
            j = jexpr("&", j, hexstr(mask_of(ta.width), ta.width))
        return V(j, ta)

    def concat(self, e: A.Binary, a: V, b: V) -> V:
        """`a ++ b`."""
        ta, tb = strip(a.t), strip(b.t)
        if not isinstance(ta, BitsT) or not isinstance(tb, BitsT):
            raise CompileError(e.loc, f"operator ++ expects bit<W> operands, found {a.t} and {b.t}")
        t = BitsT(ta.width + tb.width, ta.signed)
        if a.const is not None and b.const is not None:
            val = (wrap(a.const, BitsT(ta.width)) << tb.width) | wrap(b.const, BitsT(tb.width))
            return V(hexstr(val, t.width), t, None, val)
        j = jexpr("|", jexpr("<<", a.j, hexstr(tb.width)), jexpr("&", b.j, hexstr(mask_of(tb.width), tb.width)))
        return V(jexpr("&", j, hexstr(mask_of(t.width), t.width)), t)

    def ternary(self, e: A.Ternary, expected: Type | None) -> V:
        """`c ? a : b` (bmv2's `?` operator)."""
        c = self.expr(e.cond)
        jc = self.cond(c, e.cond.loc)
        a, b = self.expr(e.then, expected), self.expr(e.other, expected)
        fake = A.Binary(e.loc, "?:", e.then, e.other)
        a, b, t = self._unify(a, b, fake)
        if c.const is not None:
            return a if c.const else b
        if isinstance(t, InfIntT):
            raise CompileError(e.loc, "cannot infer the width of a conditional expression")
        if a.j is None or b.j is None:
            raise CompileError(e.loc, f"conditional expressions of type {t} are not supported")
        val = {"op": "?", "left": self.data(a, e.loc), "right": self.data(b, e.loc), "cond": jc}
        res = V({"type": "expression", "value": val}, t)
        if isinstance(t, BoolT):
            res = V(jexpr("d2b", None, res.j), t)
        return res

    def cast(self, e: A.Cast) -> V:
        """`(T) e` between bit<W>, int<W>, bool and serializable enums."""
        to = self.types.resolve(e.to, self.scope)
        ts = strip(to)
        v = self.expr(e.expr, ts if isinstance(ts, BitsT) else None)
        vs = strip(v.t)
        if isinstance(ts, BitsT):
            if isinstance(vs, BoolT):
                if v.const is not None:
                    return V(hexstr(int(v.const), ts.width), to, None, int(v.const))
                return V(self.data(v, e.loc) if ts.width == 1 else jexpr("b2d", None, self.cond(v, e.loc)), to)
            if isinstance(vs, EnumT) and vs.underlying:
                vs = vs.underlying
            if not isinstance(vs, (BitsT, InfIntT)):
                raise CompileError(e.loc, f"cannot cast {v.t} to {to}")
            if v.const is not None:
                val = wrap(v.const, ts)
                return V(hexstr(val, ts.width), to, None, val)
            if vs.signed and not ts.signed:
                return V(jexpr("&", v.j, hexstr(mask_of(ts.width), ts.width)), to)
            if ts.signed:
                return V(jexpr("two_comp_mod", v.j, hexstr(ts.width)), to)
            if ts.width < vs.width:
                return V(jexpr("&", v.j, hexstr(mask_of(ts.width), ts.width)), to)
            return V(v.j, to, v.ent if ts.width == vs.width else None)
        if isinstance(ts, BoolT):
            if isinstance(vs, BoolT):
                return v
            if isinstance(vs, BitsT) and vs.width == 1:
                if v.const is not None:
                    return V({"type": "bool", "value": bool(v.const)}, to, None, bool(v.const))
                return V(jexpr("d2b", None, v.j), to)
            raise CompileError(e.loc, f"cannot cast {v.t} to bool (only bit<1> converts to bool)")
        if isinstance(ts, EnumT) and ts.underlying:
            return self.coerce(v, ts.underlying, e.loc, "cast operand")
        return self.coerce(v, to, e.loc, "cast operand")


def _fold_cmp(op: str, a: Any, b: Any) -> bool:
    return {"==": a == b, "!=": a != b, "<": a < b, ">": a > b, "<=": a <= b, ">=": a >= b}[op]


def _fold_arith(op: str, a: int, b: int, t: Type, loc: Loc) -> int:
    if op in ("/", "%") and b == 0:
        raise CompileError(loc, "division by zero")
    val = {"+": a + b, "-": a - b, "*": a * b, "/": a // b if b else 0, "%": a % b if b else 0,
           "&": a & b, "|": a | b, "^": a ^ b, "|+|": a + b, "|-|": a - b}[op]
    if isinstance(t, BitsT):
        if op == "|+|":
            val = min(val, mask_of(t.width) if not t.signed else mask_of(t.width - 1))
        elif op == "|-|":
            val = max(val, 0 if not t.signed else -(1 << (t.width - 1)))
        val = wrap(val, t)
    return val


def describe(e: A.Expr) -> str:
    """Source-like text of an expression (also p4c's key names, e.g. `hdr.ipv4.dstAddr`)."""
    if isinstance(e, A.Name):
        return e.name
    if isinstance(e, A.Member):
        return f"{describe(e.expr)}.{e.name}"
    if isinstance(e, A.Index):
        return f"{describe(e.expr)}[{describe(e.index)}]"
    if isinstance(e, A.Slice):
        return f"{describe(e.expr)}[{describe(e.hi)}:{describe(e.lo)}]"
    if isinstance(e, A.IntLit):
        if e.width is not None:
            return f"{e.width}{'s' if e.signed else 'w'}{e.value}"
        return str(e.value)
    if isinstance(e, A.BoolLit):
        return "true" if e.value else "false"
    if isinstance(e, A.Call):
        return f"{describe(e.func)}({', '.join(describe(a.expr) for a in e.args)})"
    if isinstance(e, A.Binary):
        return f"{describe(e.left)} {e.op} {describe(e.right)}"
    if isinstance(e, A.Unary):
        return f"{e.op}{describe(e.expr)}"
    if isinstance(e, A.Cast):
        return f"({type(e.to).__name__}){describe(e.expr)}"
    return type(e).__name__
