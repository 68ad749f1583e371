"""Source-level lowering of calls with side effects, as p4c's front and mid end do it: function
inlining (frontends/p4/functionsInlining.cpp: copy-in, the body with its returns removed (returns.py),
copy-out; generic functions specialized first) and side-effect ordering (SideEffectOrdering: a call
in an expression is evaluated into a temporary before the statement, `&&`, `||` and `?:` keep their
short circuit by becoming an `if`).

The passes rewrite statement lists into statements the lowering already knows (declarations,
assignments, `if`, blocks); names they introduce are fresh (`f_x_0`, `hasReturned_1`, `tmp_2`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from p4sim.compiler import ast as A
from p4sim.compiler.env import DeclE, Ent
from p4sim.compiler.errors import CompileError, Loc
from p4sim.compiler.returns import needs_flag, remove_returns
from p4sim.compiler.rewrite import any_expr, call_args, map_expr, rename, stmt_exprs, subst_stmts, subst_type

Lookup = Callable[[str], Ent | None]


def _bool(loc: Loc) -> A.TypeSyn:
    return A.NamedT(loc, "bool")


def trivial_function(d: A.FunctionDecl) -> bool:
    """A function whose body is one `return expr;` (lowered as an expression, no inlining needed)."""
    body = [s for s in d.body.stmts if not isinstance(s, A.Empty)]
    return len(body) == 1 and isinstance(body[0], A.Return) and body[0].expr is not None \
        and all(p.direction in ("", "in") for p in d.params) and not d.type_params


# ---- side-effect ordering and inlining ---------------------------------------------------------

class Inliner:
    """Rewrites statements so that no user function with more than `return expr;` is called in an
    expression and, in apply blocks (tables=True), no table is applied inside a larger condition."""

    def __init__(self, lookup: Lookup, fresh: Callable[[str], str], tables: bool,
                 scalar: Callable[[A.TypeSyn], bool], type_of: Callable[[A.Expr], object]) -> None:
        self.lookup = lookup
        self.scalar = scalar  # is a parameter type one bmv2 field (bit, int, bool, enum, error)?
        self.type_of = type_of  # the (semantic) type of an expression without calls to inline
        self.fresh = fresh
        self.tables = tables
        self.depth = 0

    # ---- what needs hoisting ----
    def _function(self, e: A.Expr) -> A.FunctionDecl | None:
        if isinstance(e, A.Call) and isinstance(e.func, A.Name):
            ent = self.lookup(e.func.name)
            if isinstance(ent, DeclE) and ent.kind == "userfunc":
                return ent.decl
        return None

    def _table_test(self, e: A.Expr) -> bool:
        """`t.apply().hit` / `.miss`."""
        if not (self.tables and isinstance(e, A.Member) and e.name in ("hit", "miss")):
            return False
        c = e.expr
        if isinstance(c, A.Call) and isinstance(c.func, A.Member) and c.func.name == "apply" \
                and isinstance(c.func.expr, A.Name):
            ent = self.lookup(c.func.expr.name)
            return isinstance(ent, DeclE) and ent.kind == "table"
        return False

    def effectful(self, e: A.Expr | None) -> bool:
        """Does evaluating e run a function body or a table?"""
        return any_expr(e, self._effect)

    def _effect_or_call(self, e: A.Expr) -> bool:
        """Does e run a function body (also a void function called as a statement) or a table test?"""
        return any_expr(e, self._call_or_test)

    def _call_or_test(self, x: A.Expr) -> bool:
        if isinstance(x, A.Call):
            return self._function(x) is not None
        return isinstance(x, A.Member) and x.name in ("hit", "miss") and self._table_test(x)

    def _effect(self, x: A.Expr) -> bool:
        if isinstance(x, A.Call):
            d = self._function(x)
            return d is not None and not self._expression(d)
        return self._table_test(x)

    def _expression(self, d: A.FunctionDecl) -> bool:
        """Is a call of d lowered as an expression (`return expr;` of scalars, calling no other function),
        not inlined?"""
        if not (trivial_function(d) and self.scalar(d.ret) and all(self.scalar(p.typ) for p in d.params)):
            return False
        ret = next(s for s in d.body.stmts if isinstance(s, A.Return))
        return not any_expr(ret.expr, lambda x: isinstance(x, A.Call) and self._function(x) is not None)

    # ---- statements ----
    def stmts(self, stmts: list[A.Stmt]) -> list[A.Stmt]:
        """The statement list with calls hoisted out of expressions."""
        if not any(self._effect_or_call(e) for s in stmts for e in stmt_exprs(s)):
            return stmts
        out: list[A.Stmt] = []
        for s in stmts:
            out += self.stmt(s)
        return out

    def _one(self, s: A.Stmt | None) -> A.Stmt | None:
        if s is None:
            return None
        got = self.stmt(s)
        return got[0] if len(got) == 1 else A.Block(s.loc, got)

    def stmt(self, s: A.Stmt) -> list[A.Stmt]:
        """One statement as a list (the hoisted statements first)."""
        if isinstance(s, A.Assign):
            # as p4c's SideEffectOrdering: a left side with a call in it (any function, also one p4sim
            # evaluates as an expression) is evaluated first, its indices read into temporaries; the
            # index of one without calls is read when the value is stored, after the right side ran
            pre_l, lhs = self.expr(s.lhs)
            if any_expr(s.lhs, lambda x: isinstance(x, A.Call) and not (
                    isinstance(x.func, A.Member) and x.func.name == "isValid")):
                lhs = self.fixed_lvalue(lhs, pre_l)
            pre_r, rhs = self.expr(op_assigned(s.op, lhs, s.rhs))
            return pre_l + pre_r + [A.Assign(s.loc, lhs, rhs)]
        if isinstance(s, A.CallStmt):
            d = self._function(s.call)
            if d is not None:
                pre, _ = self.inline(d, s.call, want_result=False)
                return [A.Block(s.loc, pre)]
            pre, call = self.expr(s.call)
            return pre + [A.CallStmt(s.loc, call)]  # type: ignore[arg-type]
        if isinstance(s, A.VarDecl) and s.init is not None:
            pre, init = self.expr(s.init)
            return pre + [dataclasses.replace(s, init=init)]
        if isinstance(s, A.If):
            cond, pre = s.cond, []
            if not self._whole_table_test(cond):
                pre, cond = self.expr(s.cond)
            return pre + [A.If(s.loc, cond, self._one(s.then), self._one(s.other))]  # type: ignore[arg-type]
        if isinstance(s, A.Block):
            return [A.Block(s.loc, self.stmts(s.stmts))]
        if isinstance(s, A.Switch):
            pre, e = [], s.expr
            if not (isinstance(e, A.Member) and e.name == "action_run"):
                pre, e = self.expr(s.expr)
            cases = [A.SwitchCase(c.labels, self._one(c.body), c.loc) for c in s.cases]  # type: ignore[arg-type]
            return pre + [A.Switch(s.loc, e, cases)]
        if isinstance(s, A.Return) and s.expr is not None:
            pre, e = self.expr(s.expr)
            return pre + [A.Return(s.loc, e)]
        if isinstance(s, A.For):
            if self.effectful(s.cond) or any(self.effectful(getattr(x, "rhs", None)) for x in s.init + s.update):
                raise CompileError(s.loc, "a for loop whose header calls functions or applies tables is not supported")
            return [A.For(s.loc, s.init, s.cond, s.update, self._one(s.body))]  # type: ignore[arg-type]
        return [s]

    def _whole_table_test(self, e: A.Expr) -> bool:
        while isinstance(e, A.Unary) and e.op == "!":
            e = e.expr
        return self._table_test(e)

    # ---- expressions ----
    def expr(self, e: A.Expr) -> tuple[list[A.Stmt], A.Expr]:
        """(statements to run first, the expression with its effectful calls replaced by temporaries)."""
        if not self.effectful(e):
            return [], e
        d = self._function(e)
        if d is not None and not self._expression(d):
            assert isinstance(e, A.Call)
            e = call_args(d.params, e, f"function {d.name}")
            pre, xs = self._operands([a.expr for a in e.args], [p.direction in ("out", "inout") for p in d.params])
            body, res = self.inline(d, A.Call(e.loc, e.func, [A.Arg(a.name, x) for a, x in zip(e.args, xs, strict=True)],
                                              e.type_args), want_result=True)
            return pre + body, res  # type: ignore[return-value]
        if self._table_test(e):
            tmp = self.fresh("tmp")
            loc = e.loc
            return [A.VarDecl(loc, _bool(loc), tmp, None),
                    A.If(loc, e, A.Assign(loc, A.Name(loc, tmp), A.BoolLit(loc, True)),
                         A.Assign(loc, A.Name(loc, tmp), A.BoolLit(loc, False)))], A.Name(loc, tmp)
        if isinstance(e, A.Binary) and e.op in ("&&", "||"):
            pre_a, a = self.expr(e.left)
            pre_b, b = self.expr(e.right)
            if not pre_b:
                return pre_a, A.Binary(e.loc, e.op, a, b)
            tmp, loc = self.fresh("tmp"), e.loc
            test: A.Expr = A.Name(loc, tmp) if e.op == "&&" else A.Unary(loc, "!", A.Name(loc, tmp))
            return pre_a + [A.VarDecl(loc, _bool(loc), tmp, a),
                            A.If(loc, test, A.Block(loc, pre_b + [A.Assign(loc, A.Name(loc, tmp), b)]), None)], \
                A.Name(loc, tmp)
        if isinstance(e, A.Ternary):
            pre, c = self.expr(e.cond)
            if not (self.effectful(e.then) or self.effectful(e.other)):
                return pre, A.Ternary(e.loc, c, e.then, e.other)
            # only the branch taken runs: `T tmp; if (c) { ...; tmp = a; } else { ...; tmp = b; }`
            typ = self._type_syn(e.then) or self._type_syn(e.other)
            if typ is None:
                raise CompileError(e.loc, "a conditional expression whose branches both call functions with "
                                   "more than a return or apply tables is not supported (use an if statement)")
            tmp, loc = self.fresh("tmp"), e.loc
            pre_a, a = self.expr(e.then)
            pre_b, b = self.expr(e.other)
            return pre + [A.VarDecl(loc, typ, tmp, None),
                          A.If(loc, c, A.Block(loc, pre_a + [A.Assign(loc, A.Name(loc, tmp), a)]),
                               A.Block(loc, pre_b + [A.Assign(loc, A.Name(loc, tmp), b)]))], A.Name(loc, tmp)
        # any other expression: its operands left to right (of a call, its arguments)
        slots: list[tuple[str, int | None, A.Expr]] = []  # (field, index in a list or None, operand)
        for f in dataclasses.fields(e):
            v = getattr(e, f.name)
            if isinstance(e, A.Call) and f.name == "func" and not self.effectful(v):
                continue  # what is called (an extern, a method) is no value to save
            if isinstance(v, A.Expr):
                slots.append((f.name, None, v))
            elif isinstance(v, list) and v and isinstance(v[0], (A.Expr, A.Arg)):
                slots += [(f.name, i, x.expr if isinstance(x, A.Arg) else x) for i, x in enumerate(v)]
        # the base of `s[i]`, `h.f`, `x[h:l]` is a place, not a value to save (`h.h[f(x)].a = 1`)
        places = [name == "expr" and isinstance(e, (A.Index, A.Member, A.Slice)) for name, _i, _x in slots]
        pre_all, done = self._operands([x for _n, _i, x in slots], places)
        changes: dict[str, object] = {}
        for (name, i, _x), x in zip(slots, done, strict=True):
            if i is None:
                changes[name] = x
            else:
                items = list(changes.get(name) or getattr(e, name))  # type: ignore[call-overload]
                items[i] = A.Arg(items[i].name, x) if isinstance(items[i], A.Arg) else x
                changes[name] = items
        return pre_all, dataclasses.replace(e, **changes)

    def _operands(self, exprs: list[A.Expr], lvalues: list[bool]) -> tuple[list[A.Stmt], list[A.Expr]]:
        """Operands evaluated left to right (p4c's SideEffectOrdering): when a later one changes state (it
        applies a table, or a call writes an out/inout argument), each earlier one is read into a
        temporary first, so that it keeps the value it had then; an earlier l-value (an out/inout
        argument) keeps the element it named (its run-time indices are read into temporaries)."""
        done = [self.expr(x) for x in exprs]
        pre_all: list[A.Stmt] = []
        out: list[A.Expr] = []
        for k, ((p, x), lvalue) in enumerate(zip(done, lvalues, strict=True)):
            later = any(self._writes(q) for q, _ in done[k + 1:])
            if later and lvalue:
                x = self.fixed_lvalue(x, p)
            elif later and not p and not isinstance(x, (A.IntLit, A.BoolLit)):
                typ = self._type_syn(x)
                if typ is None:
                    raise CompileError(x.loc, "an operand before a call that changes state here has no type a "
                                       "temporary can hold (evaluate the call into a variable first)")
                tmp = self.fresh("tmp")
                p, x = [A.VarDecl(x.loc, typ, tmp, x)], A.Name(x.loc, tmp)
            pre_all += p
            out.append(x)
        return pre_all, out

    def fixed_lvalue(self, e: A.Expr, pre: list[A.Stmt]) -> A.Expr:
        """The l-value e with each run-time index read into a temporary declared in pre (appended): it
        names the same element however the statements after pre change the index."""
        def fix(x: A.Expr) -> A.Expr | None:
            if not isinstance(x, A.Index) or isinstance(x.index, A.IntLit):
                return None
            typ = self._type_syn(x.index)
            if typ is None:
                return None
            tmp = self.fresh("index")
            pre.append(A.VarDecl(x.index.loc, typ, tmp, x.index))
            return A.Index(x.loc, map_expr(x.expr, fix), A.Name(x.index.loc, tmp))
        return map_expr(e, fix)

    def _type_syn(self, e: A.Expr) -> A.TypeSyn | None:
        """A type for a temporary holding e: its own (e without calls to inline), the declared result of
        a function it is a call of, else None."""
        d = self._function(e)
        if d is not None and not d.type_params:
            return d.ret
        if self.effectful(e):
            return None
        try:
            t = self.type_of(e)
        except CompileError:
            return None
        return A.ResolvedT(e.loc, t) if t is not None and type(t).__name__ not in ("InfIntT", "DontCareT") else None

    def _writes(self, pre: list[A.Stmt]) -> bool:
        """Do hoisted statements change state outside the temporaries they declare (apply a table, make
        a call, or assign anything else: a call's copy-out, a header bound to its argument)?"""
        declared: set[str] = set()

        def walk(stmts: list[A.Stmt | None]) -> bool:
            for x in stmts:
                if isinstance(x, A.VarDecl):
                    declared.add(x.name)
                elif isinstance(x, A.Assign):
                    if _base(x.lhs) not in declared:
                        return True
                elif isinstance(x, A.CallStmt):
                    return True
                elif isinstance(x, A.If):
                    if self._table_test(x.cond) or walk([x.then, x.other]):
                        return True
                elif isinstance(x, A.Block):
                    if walk(list(x.stmts)):
                        return True
                elif x is not None and not isinstance(x, A.Empty):
                    return True  # loops, switches: whatever they do
            return False
        return walk(list(pre))

    def _specialize(self, d: A.FunctionDecl, c: A.Call) -> A.FunctionDecl:
        """A generic function with its type parameters replaced by the call's type arguments, or by the
        types of the arguments of parameters typed by them (p4c's SpecializeGenericFunctions)."""
        binding: dict[str, A.TypeSyn] = {}
        if c.type_args:
            if len(c.type_args) != len(d.type_params):
                raise CompileError(c.loc, f"{d.name} takes {len(d.type_params)} type arguments, "
                                   f"found {len(c.type_args)}")
            binding = dict(zip(d.type_params, c.type_args, strict=True))
        else:
            for p, a in zip(d.params, c.args, strict=True):
                if isinstance(p.typ, A.NamedT) and p.typ.name in d.type_params and p.typ.name not in binding:
                    typ = self._type_syn(a.expr)
                    if typ is None:
                        raise CompileError(a.expr.loc, f"{d.name}: cannot infer type {p.typ.name} from this argument "
                                           "(give the type arguments)")
                    binding[p.typ.name] = typ
        missing = [t for t in d.type_params if t not in binding]
        if missing:
            raise CompileError(c.loc, f"{d.name}: cannot infer type parameter {missing[0]} (give the type arguments)")
        sub = lambda t: subst_type(t, binding)  # noqa: E731
        return A.FunctionDecl(d.loc, d.name, d.annos, sub(d.ret), [],
                              [dataclasses.replace(p, typ=sub(p.typ)) for p in d.params],
                              A.Block(d.body.loc, subst_stmts(d.body.stmts, sub)))

    def inline(self, d: A.FunctionDecl, c: A.Call, want_result: bool) -> tuple[list[A.Stmt], A.Expr | None]:
        """A call of function d: copy-in, the body (returns removed), copy-out; and its result."""
        c = call_args(d.params, c, f"function {d.name}")
        self.depth += 1
        if self.depth > 32:
            raise CompileError(c.loc, f"{d.name}: functions calling each other more than 32 deep (recursion?)")
        try:
            loc = c.loc
            if d.type_params:
                d = self._specialize(d, c)
            names: dict[str, A.Expr] = {}
            copied: dict[str, str] = {}
            out: list[A.Stmt] = []
            args = {p.name: a for p, a in zip(d.params, c.args, strict=True)}
            for p in d.params:
                arg = args[p.name]
                if not self.scalar(p.typ) and _path(arg.expr) and (p.direction in ("out", "inout")
                                                                  or not _assigns(d.body.stmts, p.name)):
                    # headers, structs, stacks: bound to the argument (p4c's copies of them are removed
                    # by its mid end; a function cannot alias two of them in a way copies would show)
                    names[p.name] = arg.expr
                    continue
                if p.direction in ("out", "inout"):  # copied out to the element it named (p4c: an index in
                    arg = A.Arg(arg.name, self.fixed_lvalue(arg.expr, out))  # an argument is a temporary)
                    args[p.name] = arg
                copied[p.name] = self.fresh(f"{d.name}_{p.name}")
                names[p.name] = A.Name(loc, copied[p.name])
                init = arg.expr if p.direction in ("", "in", "inout") else None
                out.append(A.VarDecl(loc, p.typ, copied[p.name], init))
            is_void = isinstance(d.ret, A.NamedT) and d.ret.name == "void"
            result = None if is_void else self.fresh(f"{d.name}_retval")
            if result is not None:
                out.append(A.VarDecl(loc, d.ret, result, None))
            body = rename(d.body.stmts, names, self.fresh)
            flag = None
            if needs_flag(body):
                flag = self.fresh("hasReturned")
                out.append(A.VarDecl(loc, _bool(loc), flag, A.BoolLit(loc, False)))
            out += self.stmts(remove_returns(body, result, flag, loc))
            for p in d.params:  # copy-out, in parameter order
                if p.direction in ("out", "inout") and p.name in copied:
                    out.append(A.Assign(loc, args[p.name].expr, A.Name(loc, copied[p.name])))
            if want_result and result is None:
                raise CompileError(loc, f"{d.name} returns no value")
            return out, (A.Name(loc, result) if result is not None else None)
        finally:
            self.depth -= 1


def op_assigned(op: str, lhs: A.Expr, rhs: A.Expr) -> A.Expr:
    """The value `lhs op= rhs` assigns (p4c's RemoveOpAssign, once the lhs has no side effects)."""
    return A.Binary(rhs.loc, op, lhs, rhs) if op else rhs


def _path(e: A.Expr) -> bool:
    """A name, member or constant index path (an lvalue that evaluates the same each time)."""
    if isinstance(e, A.Name):
        return True
    if isinstance(e, A.Member):
        return _path(e.expr)
    if isinstance(e, A.Index):
        return isinstance(e.index, A.IntLit) and _path(e.expr)
    return False


def _base(e: A.Expr) -> str | None:
    """The variable an l-value is part of."""
    while isinstance(e, (A.Member, A.Index, A.Slice)):
        e = e.expr
    return e.name if isinstance(e, A.Name) else None


def _assigns(stmts: list[A.Stmt], name: str) -> bool:
    """Is `name` (or a part of it) assigned, or passed to a call that may write it, in stmts?"""
    base = _base

    def walk(s: A.Stmt | None) -> bool:
        if s is None:
            return False
        if isinstance(s, A.Assign):
            return base(s.lhs) == name
        if isinstance(s, A.CallStmt):
            return any(base(a.expr) == name for a in s.call.args) or (
                isinstance(s.call.func, A.Member) and base(s.call.func.expr) == name)
        if isinstance(s, A.If):
            return walk(s.then) or walk(s.other)
        if isinstance(s, A.Block):
            return any(walk(x) for x in s.stmts)
        if isinstance(s, A.Switch):
            return any(walk(c.body) for c in s.cases)
        if isinstance(s, A.For):
            return any(walk(x) for x in s.init + s.update) or walk(s.body)
        return False
    return any(walk(s) for s in stmts)


