"""Type checking and bmv2 JSON lowering of P4 expressions (spec section 8), with constant folding:
names, members, indices, slices, calls and casts of values here; the operators in operators.py, the
values and JSON nodes in jsonexpr.py."""

from __future__ import annotations

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
from p4sim.compiler.jsonexpr import V, describe, hexstr, jexpr, mask_of, overflow, wrap
from p4sim.compiler.operators import OperatorLowering
from p4sim.compiler.types import (
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
    header_layout,
    same,
    strip,
)


class ExprLowerer(OperatorLowering):
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
            if isinstance(ent, DeclE) and ent.kind == "function" and e.func.name == "static_assert":
                return self.static_assert(e)
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

    def static_assert(self, e: A.Call) -> V:
        """core.p4's `static_assert(check[, message])`: true, or the message as a compile error."""
        if len(e.args) not in (1, 2):
            raise CompileError(e.loc, f"static_assert takes 1 or 2 arguments, found {len(e.args)}")
        check = self.expr(e.args[0].expr)
        if not isinstance(check.const, bool):
            raise CompileError(e.args[0].expr.loc, "static_assert: expected a compile-time bool condition")
        if not check.const:
            message = e.args[1].expr if len(e.args) == 2 else None
            raise CompileError(e.loc, f"static assertion failed: {message.value if isinstance(message, A.StrLit) else ''}")
        return V({"type": "bool", "value": True}, BoolT(), None, True)

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
                overflow(loc, f"{'s' if ts.signed else 'w'}{v.const}", ts.width)
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
                    overflow(e.loc, f"{'s' if e.signed else 'w'}{e.value}", e.width)
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
            paths = [path for path, _n, _t in header_layout(st.type.elem)]
            ft = st.type.elem.field_type(e.name)
            if ft is None:
                raise CompileError(e.loc, f"{describe(e)}: {st.type.elem} has no field {e.name!r}")
            if not (isinstance(strip(ft), (BitsT, BoolT)) or isinstance(strip(ft), EnumT) and strip(ft).underlying):
                raise CompileError(e.loc, f"{describe(e)}: only bit<W> fields of a run-time indexed element")
            deref = jexpr("dereference_header_stack", {"type": "header_stack", "value": st.name}, ent.index)
            offset = paths.index((e.name,))
            j = {"type": "expression", "value": {"op": "access_field", "left": deref, "right": offset}}
            name = header_layout(st.type.elem)[offset][1]
            return V(j, ft, DynFieldE(st.elems[0].inst and [st.elems[0].inst, name], ft, j))
        if isinstance(ent, HeaderE):
            ft = ent.type.field_type(e.name)
            if ft is None:
                raise CompileError(e.loc, f"{describe(e)}: {ent.type} has no field {e.name!r}")
            # a struct in a header: its fields (flattened, header_layout); a varbit field: a value of type
            # varbit<N> (assignable to another, in checksum and hash data)
            return self.entity_value(_header_part(ent, (e.name,), ft), e)
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
        if iv.const is None:  # bit<W>, int<W> or a serializable enum (p4c gives bmv2 any; a negative one is
            it = strip(iv.t)   # out of bounds)
            if not (isinstance(it, BitsT) or isinstance(it, EnumT) and it.underlying is not None):
                raise CompileError(e.index.loc, f"a header stack index must be a bit<W> or int<W>, found {iv.t}")
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


def _header_part(h: HeaderE, path: tuple[str, ...], t: Type) -> Ent:
    """The field of header h at path (P4 field names): a field, or a struct of the fields it flattens to."""
    st = strip(t)
    if isinstance(st, StructT):
        return StructE({n: _header_part(h, path + (n,), ft) for n, ft in st.fields}, st)
    name = next(n for p, n, _t in header_layout(h.type) if p == path)
    return FieldE([h.inst, name], t)
