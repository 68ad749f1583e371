"""The operators of P4 expressions (spec section 8): unary and binary operators with width
unification and constant folding, comparisons of lists, headers, structs and stacks, shifts, `++`,
`?:` and casts, lowered to bmv2 expressions (p4c masks `+ - * <<` results with `& 0xff..`)."""

from __future__ import annotations

from typing import Any

from p4sim.compiler import ast as A
from p4sim.compiler.errors import CompileError, Loc
from p4sim.compiler.jsonexpr import V, hexstr, jexpr, mask_of, wrap
from p4sim.compiler.types import (
    MAX_CONST_BITS,
    BitsT,
    BoolT,
    EnumT,
    InfIntT,
    StackT,
    StructT,
    Type,
    same,
    strip,
)

_ARITH = {"+", "-", "*", "/", "%", "&", "|", "^", "|+|", "|-|"}
_CMP = {"==", "!=", "<", ">", "<=", ">="}


class OperatorLowering:
    """The operators of ExprLowerer (p4sim.compiler.exprs), which gives expr, coerce, cond, data, types."""

    expr: Any
    coerce: Any
    cond: Any
    data: Any
    types: Any
    scope: Any

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
        # a serializable enum meets its underlying bit<W> as that type (P4_16 8.3, as p4c)
        if isinstance(ta, EnumT) and ta.underlying is not None and isinstance(tb, BitsT) and tb == ta.underlying:
            return a, b, tb
        if isinstance(tb, EnumT) and tb.underlying is not None and isinstance(ta, BitsT) and ta == tb.underlying:
            return a, b, ta
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
        if op in ("==", "!=") and isinstance(strip(a.t), (StructT, StackT)) and same(a.t, b.t):
            return self._aggregate_eq(e, a.t)
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
            # p4c's StrengthReduction: 0 divided is 0 (the divisor evaluated all the same, before), an
            # unsigned division or remainder by a power of two is a shift or a mask
            if a.const == 0:
                return V(hexstr(0, t.width), t, None, 0)
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

    def _aggregate_eq(self, e: A.Binary, t: Type) -> V:
        """`==`/`!=` of headers, structs, header unions and stacks, member by member as p4c expands
        them: two headers are equal when both are invalid, or both are valid with equal fields."""
        loc = e.loc

        def both(terms: list[A.Expr]) -> A.Expr:
            acc: A.Expr = terms[0] if terms else A.BoolLit(loc, True)
            for x in terms[1:]:
                acc = A.Binary(loc, "&&", acc, x)
            return acc

        def eq(x: A.Expr, y: A.Expr, t: Type) -> A.Expr:
            t = strip(t)
            if isinstance(t, StackT):
                return both([eq(A.Index(loc, x, A.IntLit(loc, i)), A.Index(loc, y, A.IntLit(loc, i)), t.elem)
                             for i in range(t.size)])
            if not isinstance(t, StructT):
                return A.Binary(loc, "==", x, y)
            fields = [eq(A.Member(loc, x, n), A.Member(loc, y, n), ft) for n, ft in t.fields]
            if t.kind != "header":
                return both(fields)
            vx, vy = (A.Call(loc, A.Member(loc, h, "isValid"), []) for h in (x, y))
            invalid = A.Binary(loc, "&&", A.Unary(loc, "!", vx), A.Unary(loc, "!", vy))
            return A.Binary(loc, "||", invalid, both([vx, vy, *fields]))

        res = eq(e.left, e.right, t)
        return self.expr(res if e.op == "==" else A.Unary(loc, "!", res))

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
