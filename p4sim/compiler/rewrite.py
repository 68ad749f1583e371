"""Walking and rewriting P4 syntax trees: expression maps and searches, the expressions of a statement,
renaming (with fresh names for declared locals) and type substitution."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from p4sim.compiler import ast as A
from p4sim.compiler.errors import CompileError


def map_expr(e: A.Expr, fn: Callable[[A.Expr], A.Expr | None]) -> A.Expr:
    """A copy of e with every sub-expression for which fn returns a value replaced (outermost first)."""
    r = fn(e)
    if r is not None:
        return r
    changes: dict[str, object] = {}
    for f in dataclasses.fields(e):
        v = getattr(e, f.name)
        if isinstance(v, A.Expr):
            x = map_expr(v, fn)
            if x is not v:
                changes[f.name] = x
        elif isinstance(v, list) and v and isinstance(v[0], A.Expr):
            xs = [map_expr(x, fn) for x in v]
            if any(a is not b for a, b in zip(xs, v, strict=True)):
                changes[f.name] = xs
        elif isinstance(v, list) and v and isinstance(v[0], A.Arg):
            ys = [map_expr(a.expr, fn) for a in v]
            if any(a is not b.expr for a, b in zip(ys, v, strict=True)):
                changes[f.name] = [A.Arg(a.name, y) for a, y in zip(v, ys, strict=True)]
    return dataclasses.replace(e, **changes) if changes else e


_CHILDREN: dict[type, tuple[str, ...]] = {}


def _children(t: type) -> tuple[str, ...]:
    """Names of the fields of an expression class that may hold expressions (cached per class)."""
    names = _CHILDREN.get(t)
    if names is None:
        names = tuple(f.name for f in dataclasses.fields(t) if f.name not in ("loc", "type"))
        _CHILDREN[t] = names
    return names


def any_expr(e: A.Expr | None, pred: Callable[[A.Expr], bool]) -> bool:
    """Does pred hold for e or one of its sub-expressions?"""
    stack = [e]
    while stack:
        x = stack.pop()
        if x is None:
            continue
        if pred(x):
            return True
        for n in _children(type(x)):
            v = getattr(x, n)
            if isinstance(v, A.Expr):
                stack.append(v)
            elif isinstance(v, list):
                for y in v:
                    if isinstance(y, A.Expr):
                        stack.append(y)
                    elif isinstance(y, A.Arg):
                        stack.append(y.expr)
    return False


def stmt_exprs(s: A.Stmt | None) -> list[A.Expr]:
    """Every expression of a statement and the statements nested in it."""
    if s is None:
        return []
    if isinstance(s, A.Assign):
        return [s.lhs, s.rhs]
    if isinstance(s, A.CallStmt):
        return [s.call]
    if isinstance(s, (A.VarDecl, A.ConstDecl)):
        return [s.init] if s.init is not None else []
    if isinstance(s, A.If):
        return [s.cond] + stmt_exprs(s.then) + stmt_exprs(s.other)
    if isinstance(s, A.Block):
        return [e for x in s.stmts for e in stmt_exprs(x)]
    if isinstance(s, A.Switch):
        return [s.expr] + [e for c in s.cases for e in stmt_exprs(c.body)]
    if isinstance(s, A.Return):
        return [s.expr] if s.expr is not None else []
    if isinstance(s, A.For):
        return ([e for x in s.init + s.update for e in stmt_exprs(x)] + ([s.cond] if s.cond is not None else [])
                + stmt_exprs(s.body))
    return []


def call_args(params: list[A.Param], c: A.Call, what: str) -> A.Call:
    """The call with one positional argument per parameter: named ones put in place, a missing one its
    parameter's default value (P4_16 6.8.2: `action a(in bit<8> y = 5)` called as `a()`)."""
    given = {a.name: a for a in c.args if a.name is not None}
    positional = [a for a in c.args if a.name is None]
    if given and positional:
        raise CompileError(c.loc, f"{what}: arguments are either all named or all positional")
    if len(c.args) > len(params) or set(given) - {p.name for p in params}:
        raise CompileError(c.loc, f"{what} takes {len(params)} arguments, found {len(c.args)}")
    args = []
    for i, p in enumerate(params):
        a = given.get(p.name) if given else (positional[i] if i < len(positional) else None)
        if a is None and p.default is None:
            raise CompileError(c.loc, f"{what} takes {len(params)} arguments, found {len(c.args)}")
        args.append(A.Arg(None, a.expr if a is not None else p.default))
    return dataclasses.replace(c, args=args)


def used_names(stmts: list[A.Stmt]) -> set[str]:
    """The names statements use (in expressions, also what they call), less those they declare."""
    names: set[str] = set()
    declared: set[str] = set()

    def expr(e: A.Expr | None) -> None:
        any_expr(e, lambda x: isinstance(x, A.Name) and names.add(x.name) is None and False)

    def walk(s: A.Stmt | None) -> None:
        if isinstance(s, (A.VarDecl, A.ConstDecl)):
            declared.add(s.name)
            expr(s.init)
        elif isinstance(s, (A.Block, A.If, A.Switch, A.For)):
            expr(getattr(s, "cond", None) or getattr(s, "expr", None))
            for child in (s.stmts if isinstance(s, A.Block) else [s.then, s.other] if isinstance(s, A.If)
                          else [c.body for c in s.cases] if isinstance(s, A.Switch) else [*s.init, *s.update, s.body]):
                walk(child)
        else:
            for e in stmt_exprs(s):
                expr(e)

    for s in stmts:
        walk(s)
    return names - declared


def rename(stmts: list[A.Stmt], names: dict[str, A.Expr], fresh: Callable[[str], str]) -> list[A.Stmt]:
    """Statements with the names in `names` replaced (by a fresh name or an argument bound by reference),
    and every local they declare given a fresh name."""
    names = dict(names)
    out: list[A.Stmt] = []
    for s in stmts:
        out.append(_rename_stmt(s, names, fresh))
    return out


def _rename_expr(e: A.Expr | None, names: dict[str, A.Expr]) -> A.Expr | None:
    if e is None:
        return None
    return map_expr(e, lambda x: names[x.name] if isinstance(x, A.Name) and x.name in names else None)


def _rename_stmt(s: A.Stmt, names: dict[str, A.Expr], fresh: Callable[[str], str]) -> A.Stmt:
    rx = lambda e: _rename_expr(e, names)  # noqa: E731
    if isinstance(s, (A.VarDecl, A.ConstDecl)):
        init = rx(s.init)
        new = fresh(s.name)
        names[s.name] = A.Name(s.loc, new)  # visible from here to the end of the enclosing block
        return dataclasses.replace(s, name=new, init=init)
    if isinstance(s, A.Assign):
        return dataclasses.replace(s, lhs=rx(s.lhs), rhs=rx(s.rhs))
    if isinstance(s, A.CallStmt):
        return A.CallStmt(s.loc, rx(s.call))
    if isinstance(s, A.If):
        return A.If(s.loc, rx(s.cond), _rename_stmt(s.then, dict(names), fresh),
                    _rename_stmt(s.other, dict(names), fresh) if s.other is not None else None)
    if isinstance(s, A.Block):
        return A.Block(s.loc, rename(s.stmts, names, fresh))
    if isinstance(s, A.Return):
        return A.Return(s.loc, rx(s.expr))
    if isinstance(s, A.Switch):
        return A.Switch(s.loc, rx(s.expr), [A.SwitchCase(c.labels, _rename_stmt(c.body, dict(names), fresh)
                                                         if c.body is not None else None, c.loc) for c in s.cases])
    if isinstance(s, A.For):
        inner = dict(names)
        init = [_rename_stmt(x, inner, fresh) for x in s.init]
        return A.For(s.loc, init, _rename_expr(s.cond, inner), [_rename_stmt(x, inner, fresh) for x in s.update],
                     _rename_stmt(s.body, dict(inner), fresh))
    return s


def subst_type(t: A.TypeSyn, binding: dict[str, A.TypeSyn]) -> A.TypeSyn:
    """Type syntax with type parameters replaced."""
    if isinstance(t, A.NamedT):
        if t.name in binding and not t.args:
            return binding[t.name]
        return dataclasses.replace(t, args=[subst_type(a, binding) for a in t.args]) if t.args else t
    if isinstance(t, A.StackT):
        return dataclasses.replace(t, elem=subst_type(t.elem, binding))
    if isinstance(t, A.TupleT):
        return dataclasses.replace(t, args=[subst_type(a, binding) for a in t.args])
    return t


def subst_stmts(stmts: list[A.Stmt], sub: Callable[[A.TypeSyn], A.TypeSyn]) -> list[A.Stmt]:
    """Statements with the types of their declarations (and casts) substituted."""
    def sx(e: A.Expr | None) -> A.Expr | None:
        if e is None:
            return None
        return map_expr(e, lambda x: A.Cast(x.loc, sub(x.to), sx(x.expr)) if isinstance(x, A.Cast) else None)

    def st(s: A.Stmt | None) -> A.Stmt | None:
        if s is None:
            return None
        if isinstance(s, (A.VarDecl, A.ConstDecl)):
            return dataclasses.replace(s, typ=sub(s.typ), init=sx(s.init))
        if isinstance(s, A.Assign):
            return dataclasses.replace(s, lhs=sx(s.lhs), rhs=sx(s.rhs))
        if isinstance(s, A.Return):
            return A.Return(s.loc, sx(s.expr))
        if isinstance(s, A.CallStmt):
            return A.CallStmt(s.loc, sx(s.call))
        if isinstance(s, A.If):
            return A.If(s.loc, sx(s.cond), st(s.then), st(s.other))
        if isinstance(s, A.Block):
            return A.Block(s.loc, [st(x) for x in s.stmts])
        if isinstance(s, A.For):
            return A.For(s.loc, [st(x) for x in s.init], sx(s.cond), [st(x) for x in s.update], st(s.body))
        if isinstance(s, A.Switch):
            return A.Switch(s.loc, sx(s.expr), [A.SwitchCase(c.labels, st(c.body), c.loc) for c in s.cases])
        return s
    return [st(x) for x in stmts]  # type: ignore[misc]
