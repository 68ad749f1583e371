"""Return removal (p4c's RemoveReturns): a `return` that is not the last statement sets a flag that
guards what follows it."""

from __future__ import annotations

from collections.abc import Callable

from p4sim.compiler import ast as A
from p4sim.compiler.errors import CompileError, Loc


def _bool(loc: Loc) -> A.TypeSyn:
    return A.NamedT(loc, "bool")


def has_return(s: A.Stmt | None) -> bool:
    """Does s contain a `return` (outside nested functions, which statements cannot hold)?"""
    if isinstance(s, A.Return):
        return True
    if isinstance(s, A.Block):
        return any(has_return(x) for x in s.stmts)
    if isinstance(s, A.If):
        return has_return(s.then) or has_return(s.other)
    if isinstance(s, A.Switch):
        return any(has_return(c.body) for c in s.cases)
    if isinstance(s, A.For):
        return has_return(s.body)
    return False


def needs_flag(stmts: list[A.Stmt]) -> bool:
    """True unless every return is the last statement of the list (then no flag is needed)."""
    for i, s in enumerate(stmts):
        last = i == len(stmts) - 1
        if isinstance(s, A.Return):
            if not last:
                return True
        elif has_return(s):
            return True
    return False


def remove_returns(stmts: list[A.Stmt], result: str | None, flag: str | None, loc: Loc) -> list[A.Stmt]:
    """stmts without `return`: `result = e;` (if it returns a value), `flag = true;`, and what follows a
    statement that may return guarded by `if (!flag)` (p4c's RemoveReturns)."""
    out: list[A.Stmt] = []
    for i, s in enumerate(stmts):
        out.append(_no_return(s, result, flag, loc))
        rest = stmts[i + 1:]
        if isinstance(s, A.Return):
            return out
        if has_return(s) and rest and flag is not None:
            guard = A.Unary(s.loc, "!", A.Name(s.loc, flag))
            out.append(A.If(s.loc, guard, A.Block(s.loc, remove_returns(rest, result, flag, loc)), None))
            return out
    return out


def _no_return(s: A.Stmt, result: str | None, flag: str | None, loc: Loc) -> A.Stmt:
    if isinstance(s, A.Return):
        body: list[A.Stmt] = []
        if s.expr is not None:
            if result is None:
                raise CompileError(s.loc, "return with a value in a function or action without a result")
            body.append(A.Assign(s.loc, A.Name(s.loc, result), s.expr))
        if flag is not None:
            body.append(A.Assign(s.loc, A.Name(s.loc, flag), A.BoolLit(s.loc, True)))
        return A.Block(s.loc, body)
    if isinstance(s, A.Block):
        return A.Block(s.loc, remove_returns(s.stmts, result, flag, loc))
    if isinstance(s, A.If):
        return A.If(s.loc, s.cond, _no_return(s.then, result, flag, loc),
                    _no_return(s.other, result, flag, loc) if s.other is not None else None)
    if isinstance(s, A.Switch):
        return A.Switch(s.loc, s.expr, [A.SwitchCase(c.labels, _no_return(c.body, result, flag, loc)  # type: ignore[arg-type]
                                                     if c.body is not None else None, c.loc) for c in s.cases])
    if isinstance(s, A.For) and has_return(s.body):
        raise CompileError(s.loc, "return inside a for loop is not supported")
    return s


def action_body(stmts: list[A.Stmt], fresh: Callable[[str], str]) -> list[A.Stmt]:
    """An action's body without returns in the middle (a final `return;` stays: the lowering drops it)."""
    if not needs_flag(stmts):
        return stmts
    loc = stmts[0].loc
    flag = fresh("hasReturned")
    return [A.VarDecl(loc, _bool(loc), flag, A.BoolLit(loc, False))] + remove_returns(stmts, None, flag, loc)
