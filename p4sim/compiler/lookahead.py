"""`packet.lookahead<T>()` of any fixed-size type in a parser state, as p4c's ExpandLookahead
(midend/expandLookahead.cpp) and SideEffectOrdering leave it for bmv2, which looks ahead at bits only:

- a lookahead inside a larger expression (`4 * (bit<9>) pkt.lookahead<ipv4_h>().ihl`, a select key
  `pkt.lookahead<eth_h>().type`) is evaluated first into a temporary of its type T;
- `x = pkt.lookahead<T>()` for a header, struct, stack or tuple T reads `bit<W>` (W: T's width) into a
  temporary and assigns each field of x from its slice, in declaration order from the most significant
  bits; a header is made valid first (a bool, a signed field and an enum are cast from their bits).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from p4sim.compiler import ast as A
from p4sim.compiler.errors import CompileError, Loc
from p4sim.compiler.rewrite import map_expr
from p4sim.compiler.types import BitsT, BoolT, EnumT, ListT, StackT, StructT, Type, strip


class LookaheadExpander:
    """Rewrites a parser state's statements so that every lookahead reads bits into a field."""

    def __init__(self, is_lookahead: Callable[[A.Expr], bool], resolve: Callable[[A.TypeSyn], Type],
                 fresh: Callable[[str], str]) -> None:
        self.is_lookahead = is_lookahead
        self.resolve = resolve
        self.fresh = fresh

    def stmts(self, stmts: list[A.Stmt]) -> list[A.Stmt]:
        """The statements with their lookaheads expanded."""
        out: list[A.Stmt] = []
        for s in stmts:
            out += self.stmt(s)
        return out

    def exprs(self, exprs: list[A.Expr]) -> tuple[list[A.Stmt], list[A.Expr]]:
        """(statements to run first, the expressions with their lookaheads of non-scalar types read
        into temporaries); a lookahead of bits may stay whole (bmv2 selects on one)."""
        pre: list[A.Stmt] = []
        out = [e if self._whole_bits(e) else self._hoist(e, pre) for e in exprs]
        return self.stmts(pre), out

    def stmt(self, s: A.Stmt) -> list[A.Stmt]:
        """One statement as a list (temporaries first)."""
        pre: list[A.Stmt] = []
        if isinstance(s, A.Assign):
            lhs = self._hoist(s.lhs, pre)
            if self.is_lookahead(s.rhs):
                return self.stmts(pre) + self._assign(lhs, s.rhs, s.loc)
            rhs = self._hoist(s.rhs, pre)
            return self.stmts(pre) + [dataclasses.replace(s, lhs=lhs, rhs=rhs)]
        if isinstance(s, A.VarDecl) and s.init is not None and self.is_lookahead(s.init):
            decl = A.VarDecl(s.loc, s.typ, s.name, None, s.annos)
            return [decl] + self._assign(A.Name(s.loc, s.name), s.init, s.loc)
        if isinstance(s, A.CallStmt) and self.is_lookahead(s.call):  # still a read: PacketTooShort
            return self.stmts([A.VarDecl(s.loc, A.ResolvedT(s.loc, self._type(s.call)), self.fresh("tmp"), s.call)])
        if isinstance(s, (A.VarDecl, A.CallStmt)):
            init = s.init if isinstance(s, A.VarDecl) else s.call
            new = self._hoist(init, pre)
            if new is init:
                return [s]
            rebuilt = A.VarDecl(s.loc, s.typ, s.name, new, s.annos) if isinstance(s, A.VarDecl) else \
                A.CallStmt(s.loc, new)  # type: ignore[arg-type]
            return self.stmts(pre) + [rebuilt]
        return [s]

    def _whole_bits(self, e: A.Expr) -> bool:
        return self.is_lookahead(e) and isinstance(strip(self._type(e)), (BitsT, BoolT))

    def _type(self, call: A.Expr) -> Type:
        assert isinstance(call, A.Call)
        if len(call.type_args) != 1:
            raise CompileError(call.loc, "lookahead needs a type argument: lookahead<T>()")
        return self.resolve(call.type_args[0])

    def _hoist(self, e: A.Expr | None, pre: list[A.Stmt]) -> A.Expr | None:
        """e with each lookahead in it replaced by a temporary declared (and read) in pre."""
        if e is None:
            return None

        def temp(x: A.Expr) -> A.Expr | None:
            if not self.is_lookahead(x):
                return None
            assert isinstance(x, A.Call)
            name = self.fresh("tmp")
            pre.append(A.VarDecl(x.loc, A.ResolvedT(x.loc, self._type(x)), name, x))
            return A.Name(x.loc, name)
        return map_expr(e, temp)

    def _assign(self, lhs: A.Expr, call: A.Expr, loc: Loc) -> list[A.Stmt]:
        t = strip(self._type(call))
        if isinstance(t, (BitsT, BoolT)):
            return [A.Assign(loc, lhs, call)]
        width = _width(t, loc)
        bits = self.fresh("tmp")
        read = A.Call(loc, call.func, [], [A.ResolvedT(loc, BitsT(width))])  # type: ignore[attr-defined]
        out: list[A.Stmt] = [A.VarDecl(loc, A.ResolvedT(loc, BitsT(width)), bits, read)]
        _fill(A.Name(loc, bits), t, width, lhs, out, loc)
        return out


def _width(t: Type, loc: Loc) -> int:
    """Bits a lookahead of t reads."""
    t = strip(t)
    if isinstance(t, EnumT) and t.underlying is not None:
        t = t.underlying
    if isinstance(t, (BitsT, BoolT)):
        return t.width if isinstance(t, BitsT) else 1
    if isinstance(t, StructT) and t.kind in ("header", "struct", "tuple"):
        return sum(_width(ft, loc) for _, ft in t.fields)
    if isinstance(t, ListT):
        return sum(_width(it, loc) for it in t.items)
    if isinstance(t, StackT):
        return t.size * _width(t.elem, loc)
    raise CompileError(loc, f"lookahead of {t}: expected fixed-size bits, headers, structs, stacks or tuples")


def _fill(bits: A.Expr, t: Type, top: int, dest: A.Expr, out: list[A.Stmt], loc: Loc) -> int:
    """Assignments of dest (of type t) from bits[top-1 : ...]; returns the next top."""
    t = strip(t)
    if isinstance(t, StructT):
        if t.kind == "header":
            out.append(A.CallStmt(loc, A.Call(loc, A.Member(loc, dest, "setValid"), [])))
        for name, ft in t.fields:
            top = _fill(bits, ft, top, A.Member(loc, dest, name), out, loc)
        return top
    if isinstance(t, ListT):
        for i, it in enumerate(t.items):
            top = _fill(bits, it, top, A.Index(loc, dest, A.IntLit(loc, i)), out, loc)
        return top
    if isinstance(t, StackT):
        for i in range(t.size):
            top = _fill(bits, t.elem, top, A.Index(loc, dest, A.IntLit(loc, i)), out, loc)
        return top
    w = _width(t, loc)
    value: A.Expr = A.Slice(loc, bits, A.IntLit(loc, top - 1), A.IntLit(loc, top - w))
    if not (isinstance(t, BitsT) and not t.signed):
        value = A.Cast(loc, A.ResolvedT(loc, t), value)
    out.append(A.Assign(loc, dest, value))
    return top - w
