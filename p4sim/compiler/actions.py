"""Lowering of statements to bmv2 primitives: action bodies and straight-line control code.

bmv2 actions cannot branch, so `if` inside an action is predicated (as p4c's Predication pass
does): the condition is saved in a temporary and each assignment becomes `x = c ? v : x`.
"""

from __future__ import annotations

from typing import Any

from p4sim.compiler import ast as A
from p4sim.compiler.builder import Bmv2Json
from p4sim.compiler.env import (
    ConstE,
    DeclE,
    Ent,
    FieldE,
    HeaderE,
    RuntimeE,
    Scope,
    StackE,
    StructE,
    aliased_params,
)
from p4sim.compiler.errors import CompileError
from p4sim.compiler.exprs import ExprLowerer
from p4sim.compiler.externs import Lowering, extern_function, instance_method, is_instance, prim
from p4sim.compiler.inline import Inliner, op_assigned
from p4sim.compiler.jsonexpr import V, describe, hexstr, jexpr, mask_of
from p4sim.compiler.returns import action_body
from p4sim.compiler.rewrite import any_expr, call_args
from p4sim.compiler.types import BitsT, BoolT, ListT, StructT, Type, VarbitT, is_scalar, strip


class NeedsJumps(CompileError):
    """A statement predication cannot guard (a whole header, stack or varbit assignment)."""


EXITED = "$hasExited"  # the exit flag's name in scopes (not a P4 identifier: no program can clash)


class StmtLowerer(Lowering):
    """Lowers statements to a list of primitives in the scope of a control (or parser)."""

    def __init__(self, scope: Scope, types: Any, ctx: Any) -> None:
        super().__init__(scope, types)
        self.ctx = ctx
        self.bm: Bmv2Json = ctx.bm
        self.preds: list[dict] = []  # predication conditions (bool JSON), innermost last
        self.allow_jumps = True  # parser states have no jumps
        self.in_jump = 0  # inside a branch lowered to jumps: a `return` there is not the action's end
        # set by `exit` inside an action body, so that what follows it does not run: bmv2's exit primitive
        # only marks the packet, the action runs to its end (p4c guards the rest the same way)
        self.exit_flag: Ent | None = None
        self.loops = 0  # depth of for loops being lowered (break and continue need one)
        self.in_action = False  # lowering an action's body (a call there is not one from an apply block)

    # ---- lvalues -------------------------------------------------------------------
    def lvalue(self, e: A.Expr) -> V:
        """A writable scalar field."""
        v = self.expr(e)
        if not isinstance(v.ent, FieldE):
            if isinstance(v.ent, RuntimeE):
                raise CompileError(e.loc, f"{describe(e)}: action parameters are read-only")
            raise CompileError(e.loc, f"{describe(e)} is not a writable field")
        return v

    # ---- statements ----------------------------------------------------------------
    def inliner(self, tables: bool = False) -> Inliner:
        """The source-level pass that hoists function calls (and, in apply blocks, table tests) out of
        expressions in this scope."""
        prog, home = self.types, self.types.scope
        return Inliner(self.scope.lookup, self.bm.fresh, tables, lambda t: is_scalar(prog.resolve(t, home)),
                       lambda e: self.expr(e).t)

    def body(self, stmts: list[A.Stmt]) -> list[dict]:
        """Primitives of an action's body: returns in the middle removed, and what follows an `exit`
        (also one inside a called action) guarded by a flag."""
        stmts = action_body(stmts, self.bm.fresh)
        out: list[dict] = []
        if any(self.may_exit(s) for s in stmts[:-1]) or (stmts and self.may_exit(stmts[-1])):
            if self.exit_flag is None:
                loc = stmts[0].loc
                self.exit_flag = self.ctx.new_local("hasExited", BoolT(), loc)
                out.append(prim("assign", [{"type": "field", "value": self.exit_flag.ref}, hexstr(0, 1)], loc,
                                "hasExited = false"))
            if self.scope.lookup(EXITED) is None:
                self.scope.add(EXITED, self.exit_flag)
            stmts = self.guard_exits(stmts)
        return out + self.stmts(stmts)

    def may_exit(self, s: A.Stmt | None, depth: int = 0) -> bool:
        """Does s execute `exit` (directly, or in an action it calls)?"""
        if isinstance(s, A.Exit):
            return True
        if isinstance(s, A.Block):
            return any(self.may_exit(x, depth) for x in s.stmts)
        if isinstance(s, A.If):
            return self.may_exit(s.then, depth) or self.may_exit(s.other, depth)
        if isinstance(s, A.For):
            return self.may_exit(s.body, depth)
        if isinstance(s, A.CallStmt) and isinstance(s.call.func, A.Name) and depth < 16:
            ent = self.scope.lookup(s.call.func.name)
            if isinstance(ent, DeclE) and ent.kind == "action":
                return any(self.may_exit(x, depth + 1) for x in ent.decl.body.stmts)
        return False

    def guard_exits(self, stmts: list[A.Stmt]) -> list[A.Stmt]:
        """stmts with what follows a statement that may exit under `if (!hasExited)`."""
        out: list[A.Stmt] = []
        for i, s in enumerate(stmts):
            if isinstance(s, A.Block):
                s = A.Block(s.loc, self.guard_exits(s.stmts))
            elif isinstance(s, A.If):
                s = A.If(s.loc, s.cond, self._guarded(s.then), self._guarded(s.other))  # type: ignore[arg-type]
            out.append(s)
            rest = stmts[i + 1:]
            if rest and self.may_exit(s):
                if isinstance(s, A.Exit):
                    return out  # dead code
                guard = A.Unary(s.loc, "!", A.Name(s.loc, EXITED))
                out.append(A.If(s.loc, guard, A.Block(s.loc, self.guard_exits(rest)), None))
                return out
        return out

    def _guarded(self, s: A.Stmt | None) -> A.Stmt | None:
        if s is None:
            return None
        return A.Block(s.loc, self.guard_exits(s.stmts if isinstance(s, A.Block) else [s]))

    def stmts(self, stmts: list[A.Stmt]) -> list[dict]:
        """Primitives of a statement list."""
        stmts = self.inliner().stmts(stmts)
        out: list[dict] = []
        for i, s in enumerate(stmts):
            if isinstance(s, A.Return) and i == len(stmts) - 1 and not self.preds and not self.in_jump \
                    and s.expr is None:
                break
            out += self.stmt(s)
        return out

    def stmt(self, s: A.Stmt) -> list[dict]:
        """Primitives of one statement."""
        if isinstance(s, A.Assign):
            return self.assign(s)
        if isinstance(s, A.CallStmt):
            if self.preds:
                raise CompileError(s.loc, f"{describe(s.call)}: conditional execution of calls inside actions "
                                   "is not supported (move the condition to the control's apply block)")
            return self.call(s.call)
        if isinstance(s, A.VarDecl):
            ent = self.ctx.new_local(s.name, self.types.resolve(s.typ, self.scope), s.loc)
            self.scope.add(s.name, ent, s.loc)
            if s.init is not None:
                return self.assign(A.Assign(s.loc, A.Name(s.loc, s.name), s.init))
            return []
        if isinstance(s, A.ConstDecl):
            from p4sim.compiler.program import const_value
            self.scope.add(s.name, const_value(self.types, self.scope, s, self.types.resolve(s.typ, self.scope)),
                           s.loc)
            return []
        if isinstance(s, A.Block):
            saved = self.scope
            self.scope = saved.child()
            try:
                return self.stmts(s.stmts)
            finally:
                self.scope = saved
        if isinstance(s, A.If):
            return self.if_(s)
        if isinstance(s, A.For):
            return self.for_(s)
        if isinstance(s, (A.Break, A.Continue)):
            if not self.loops:
                raise CompileError(s.loc, f"{'break' if isinstance(s, A.Break) else 'continue'} outside a for loop")
            if self.preds:
                raise CompileError(s.loc, "break or continue under a predicated condition is not supported")
            j = prim("_jump", [], s.loc, "break" if isinstance(s, A.Break) else "continue")
            j["_loop"] = "break" if isinstance(s, A.Break) else "continue"
            return [j]
        if isinstance(s, A.Exit):
            if self.preds:
                raise CompileError(s.loc, "conditional exit inside an action is not supported")
            out = [prim("exit", [], s.loc, "exit")]
            if self.exit_flag is not None:
                out.append(prim("assign", [{"type": "field", "value": self.exit_flag.ref}, hexstr(1, 1)], s.loc,
                                "hasExited = true"))
            return out
        if isinstance(s, A.Empty):
            return []
        if isinstance(s, A.Return):
            raise CompileError(s.loc, "return in the middle of an action is not supported")
        if isinstance(s, A.Switch):
            raise CompileError(s.loc, "switch statements are not allowed inside actions")
        raise CompileError(s.loc, f"unsupported statement {type(s).__name__}")

    def if_(self, s: A.If) -> list[dict]:
        """Predicated branches: the condition is saved once, then guards each assignment. Branches
        with calls or exit become `_jump_if_zero`/`_jump` primitives, as p4c's bmv2 back end emits."""
        c = self.expr(s.cond)
        jc = self.cond(c, s.cond.loc)
        if c.const is not None:
            branch = s.then if c.const else s.other
            return self.stmt(branch) if branch is not None else []
        if self.allow_jumps and not self.preds and (_has_call(s.then) or _has_call(s.other)):
            return self.jump_if(s, jc)
        depth = len(self.preds)
        try:
            return self._predicated(s, jc)
        except NeedsJumps:
            del self.preds[depth:]
            if self.allow_jumps and not depth:  # what predication cannot guard goes under jumps
                return self.jump_if(s, jc)
            raise

    def _predicated(self, s: A.If, jc: dict) -> list[dict]:
        tmp = self.ctx.new_local("cond", BoolT(), s.loc)
        out = [prim("assign", [{"type": "field", "value": tmp.ref}, jexpr("b2d", None, jc)], s.loc,
                    describe(s.cond))]
        flag = jexpr("d2b", None, {"type": "field", "value": tmp.ref})
        self.preds.append(flag)
        out += self.stmt(s.then)
        self.preds.pop()
        if s.other is not None:
            self.preds.append(jexpr("not", None, flag))
            out += self.stmt(s.other)
            self.preds.pop()
        return out

    def jump_if(self, s: A.If, jc: dict) -> list[dict]:
        """`if` as jumps. Offsets are relative here ("_rel"); Bmv2Json.add_action makes them absolute."""
        self.in_jump += 1
        try:
            then = self.stmt(s.then)
            other = self.stmt(s.other) if s.other is not None else None
        finally:
            self.in_jump -= 1
        skip = 1 + len(then) + (1 if other is not None else 0)
        out = [prim("_jump_if_zero", [jexpr("b2d", None, jc)], s.loc, describe(s.cond))]
        out[0]["_rel"] = skip
        out += then
        if other is not None:
            j = prim("_jump", [], s.loc, describe(s.cond))
            j["_rel"] = 1 + len(other)
            out += [j] + other
        return out

    def for_(self, s: A.For) -> list[dict]:
        """A `for` loop as p4c's bmv2 back end writes it: the condition tested by `_jump_if_zero` past
        the loop, the body and the update, then a backward `_jump` to the test."""
        if not self.allow_jumps:
            raise CompileError(s.loc, "for loops are not allowed in parsers")
        if self.preds:
            raise CompileError(s.loc, "a for loop under a condition inside an action is not supported")
        if s.cond is None:
            raise CompileError(s.loc, "a for loop without a condition never ends")
        saved = self.scope
        self.scope = saved.child()
        try:
            out: list[dict] = []
            for st in s.init:
                out += self.stmt(st)
            jc = self.cond(self.expr(s.cond), s.cond.loc)
            self.in_jump += 1
            self.loops += 1
            try:
                body = self.stmts([s.body])
                update: list[dict] = []
                for st in s.update:
                    update += self.stmt(st)
            finally:
                self.in_jump -= 1
                self.loops -= 1
        finally:
            self.scope = saved
        for i, p in enumerate(body):  # this loop's break (past the backward jump) and continue (the update)
            kind = p.pop("_loop", None)
            if kind is not None:
                p["_rel"] = len(body) - i + (len(update) + 1 if kind == "break" else 0)
        test = prim("_jump_if_zero", [jexpr("b2d", None, jc)], s.loc, describe(s.cond))
        test["_rel"] = 2 + len(body) + len(update)
        back = prim("_jump", [], s.loc, describe(s.cond))
        back["_rel"] = -(1 + len(body) + len(update))
        return out + [test] + body + update + [back]

    def _guard(self) -> dict | None:
        if not self.preds:
            return None
        g = self.preds[0]
        for p in self.preds[1:]:
            g = jexpr("and", g, p)
        return g

    def assign(self, s: A.Assign) -> list[dict]:
        """Primitives of an assignment (fields, headers, structs, lists)."""
        if s.op:  # the lhs has no side effects here: the Inliner hoisted them
            s = A.Assign(s.loc, s.lhs, op_assigned(s.op, s.lhs, s.rhs))
        lhs = s.lhs
        if isinstance(lhs, A.Slice):
            return self.assign_slice(s)
        lv = self.expr(lhs)
        frag = f"{describe(lhs)} = {describe(s.rhs)}"
        if isinstance(lv.ent, FieldE) and isinstance(strip(lv.t), VarbitT):
            rv = self.expr(s.rhs)
            if not isinstance(strip(rv.t), VarbitT) or strip(rv.t).max_width != strip(lv.t).max_width:
                raise CompileError(s.rhs.loc, f"type mismatch: {rv.t} assigned to {lv.t}")
            if self.preds:
                raise NeedsJumps(s.loc, "conditional varbit assignment inside an action is not supported")
            return [prim("assign_VL", [lv.j, rv.j], s.loc, frag)]
        if isinstance(lv.ent, FieldE):
            rv = self.coerce(self.expr(s.rhs, strip(lv.t)), lv.t, s.rhs.loc, f"right side of {describe(lhs)} =")
            val = self.data(rv, s.rhs.loc)
            g = self._guard()
            if g is not None:
                val = {"type": "expression", "value": {"op": "?", "left": val, "right": lv.j, "cond": g}}
            return [prim("assign", [lv.j, val], s.loc, frag)]
        if isinstance(lv.ent, HeaderE):
            rv = self.expr(s.rhs)
            if self.preds:
                raise NeedsJumps(s.loc, "conditional header assignment inside an action is not supported")
            if isinstance(rv.ent, HeaderE):
                if rv.ent.type is not lv.ent.type:
                    raise CompileError(s.loc, f"type mismatch: {rv.t} assigned to {lv.t}")
                return [prim("assign_header", [lv.j, rv.j], s.loc, frag)]
            if isinstance(rv.t, ListT) and isinstance(rv.const, list):
                out = [] if lv.ent.metadata else [prim("add_header", [lv.j], s.loc, frag)]
                return out + self._assign_members(lv.ent.type, lhs, s.rhs, rv, s)
            raise CompileError(s.loc, f"type mismatch: {rv.t} assigned to {lv.t}")
        if isinstance(lv.ent, StructE):
            rv = self.expr(s.rhs)
            if isinstance(rv.ent, StructE):
                if rv.ent.type is not lv.ent.type:
                    raise CompileError(s.loc, f"type mismatch: {rv.t} assigned to {lv.t}")
                out = []
                for n in lv.ent.type.fields:
                    out += self.assign(A.Assign(s.loc, A.Member(lhs.loc, lhs, n[0]), A.Member(s.rhs.loc, s.rhs, n[0])))
                return out
            if isinstance(rv.t, ListT) and isinstance(rv.const, list):
                return self._assign_members(lv.ent.type, lhs, s.rhs, rv, s)
            raise CompileError(s.loc, f"type mismatch: {rv.t} assigned to {lv.t}")
        if isinstance(lv.ent, StackE):
            rv = self.expr(s.rhs)
            if not isinstance(rv.ent, StackE) or rv.ent.type.elem is not lv.ent.type.elem \
                    or rv.ent.type.size != lv.ent.type.size:
                raise CompileError(s.loc, f"type mismatch: {rv.t} assigned to {lv.t}")
            if self.preds:
                raise NeedsJumps(s.loc, "conditional header stack assignment inside an action is not supported")
            if not self.allow_jumps:  # in a parser the next index matters: bmv2's assign_header_stack copies it
                return [prim("assign_header_stack", [{"type": "header_stack", "value": lv.ent.name},
                                                     {"type": "header_stack", "value": rv.ent.name}], s.loc, frag)]
            if lv.ent.type.elem.kind == "header_union":  # element by element, each member by member
                return [p for i in range(lv.ent.type.size) for p in self.assign(A.Assign(
                    s.loc, A.Index(lhs.loc, lhs, A.IntLit(lhs.loc, i)), A.Index(s.rhs.loc, s.rhs, A.IntLit(lhs.loc, i))))]
            return [prim("assign_header", [{"type": "header", "value": d.inst}, {"type": "header", "value": r.inst}],
                         s.loc, frag) for d, r in zip(lv.ent.elems, rv.ent.elems, strict=True)]
        if isinstance(lv.ent, RuntimeE) or lv.const is not None:
            raise CompileError(lhs.loc, f"{describe(lhs)} is read-only (a constant or an action parameter)")
        raise CompileError(lhs.loc, f"{describe(lhs)} cannot be assigned")

    def _assign_members(self, st: StructT, lhs: A.Expr, rhs: A.Expr, rv: V, s: A.Assign) -> list[dict]:
        assert isinstance(rhs, A.ListExpr)
        if rhs.names is not None:  # {x = a, y = b}: every field once, in any order
            given = dict(zip(rhs.names, rhs.items, strict=True))
            fields = [n for n, _t in st.fields]
            extra = [n for n in given if n not in fields]
            if extra or len(given) != len(rhs.names) or len(given) != len(fields):
                raise CompileError(rhs.loc, f"initializer of {st}: expected each of the fields "
                                   f"{', '.join(fields)} once" + (f", found {extra[0]!r}" if extra else ""))
            rhs = A.ListExpr(rhs.loc, [given[n] for n in fields])
        if len(rhs.items) != len(st.fields):
            raise CompileError(s.loc, f"{st} has {len(st.fields)} fields, the list has {len(rhs.items)}")
        out: list[dict] = []
        items = list(rhs.items)
        target = describe(lhs)
        for i, ((_n, ft), item) in enumerate(zip(st.fields, items, strict=False)):
            # the whole list is evaluated before any member is written (`p = {p.b, p.a}` swaps): an item
            # after the first that reads the target is saved first
            if i == 0 or not _reads(item, target):
                continue
            name = self.bm.fresh("tmp")
            tmp = self.ctx.new_local(name, ft, item.loc)
            self.scope.add(name, tmp, item.loc)
            out += self.assign(A.Assign(item.loc, A.Name(item.loc, name), item))
            items[i] = A.Name(item.loc, name)
        for (n, _), item in zip(st.fields, items, strict=False):
            out += self.assign(A.Assign(s.loc, A.Member(lhs.loc, lhs, n), item))
        return out

    def assign_slice(self, s: A.Assign) -> list[dict]:
        """Read-modify-write of a bit slice `x[h:l] = v`."""
        sl = s.lhs
        assert isinstance(sl, A.Slice)
        if isinstance(sl.expr, A.Slice):  # x[h1:l1][h2:l2] is x[l1+h2:l1+l2] (every bound checked first)
            self.expr(sl)
            inner, lo1 = sl.expr, self.const_int(sl.expr.lo)
            flat = A.Slice(sl.loc, inner.expr, A.IntLit(sl.hi.loc, lo1 + self.const_int(sl.hi)),
                           A.IntLit(sl.lo.loc, lo1 + self.const_int(sl.lo)))
            return self.assign_slice(A.Assign(s.loc, flat, s.rhs))
        base = self.lvalue(sl.expr)
        t = strip(base.t)
        if not isinstance(t, BitsT):
            raise CompileError(s.loc, f"cannot slice {base.t}")
        hi, lo = self.const_int(sl.hi), self.const_int(sl.lo)
        if not (0 <= lo <= hi < t.width):
            raise CompileError(sl.loc, f"slice [{hi}:{lo}] out of range for {t}")
        w = hi - lo + 1
        rv = self.coerce(self.expr(s.rhs, BitsT(w)), BitsT(w), s.rhs.loc, "sliced value")
        m = mask_of(w) << lo
        keep = jexpr("&", base.j, hexstr(mask_of(t.width) & ~m, t.width))
        new = jexpr("&", jexpr("<<", rv.j, hexstr(lo)), hexstr(m, t.width))
        val = jexpr("|", keep, new)
        g = self._guard()
        if g is not None:
            val = {"type": "expression", "value": {"op": "?", "left": val, "right": base.j, "cond": g}}
        return [prim("assign", [base.j, val], s.loc, f"{describe(sl)} = {describe(s.rhs)}")]

    # ---- calls ---------------------------------------------------------------------
    def call(self, c: A.Call) -> list[dict]:
        """Primitives of a call statement."""
        f = c.func
        hook = self.ctx.special_call(self, c)
        if hook is not None:
            return hook
        if isinstance(f, A.Name):
            ent = self.scope.get(f.name, f.loc)
            if isinstance(ent, DeclE) and ent.kind == "action":
                if ent.extra is not None:  # p4c lists every used control-local action in P4Info
                    direct = not self.in_action and f.name not in self.ctx.prog.table_action_names
                    self.ctx.p4info_action(ent, direct=direct)
                    # ... and keeps it in the JSON too (a P4Info action must be in the device config),
                    # even when its body is merged here with the statements around the call
                    self.ctx.action_id(ent, c.loc, c.args, self.scope, called=True, direct=direct)
                return self.inline_action(ent.decl, c, ent.extra)
            if isinstance(ent, DeclE) and ent.kind == "function":
                return extern_function(self, f.name, c)
            if isinstance(ent, DeclE) and ent.kind == "userfunc":
                return self.inline_action(ent.decl, c, self.types.scope)  # a void function: like an action
            raise CompileError(c.loc, f"{f.name} cannot be called")
        if isinstance(f, A.Member):
            base = self.expr(f.expr)
            ent = base.ent
            frag = describe(c)
            if isinstance(ent, HeaderE) and not ent.metadata:
                if f.name in ("setValid", "setInvalid") and not c.args:
                    op = "add_header" if f.name == "setValid" else "remove_header"
                    return [prim(op, [base.j], c.loc, frag)]
                if f.name == "isValid":
                    return []
            if isinstance(ent, StackE) and f.name in ("push_front", "pop_front"):
                if len(c.args) != 1:
                    raise CompileError(c.loc, f"{f.name} takes one argument")
                n = self.const_int(c.args[0].expr, "a constant count")
                op = "push" if f.name == "push_front" else "pop"
                kind = "header_union_stack" if ent.type.elem.kind == "header_union" else "header_stack"
                return [prim(op, [{"type": kind, "value": ent.name}, hexstr(n)], c.loc, frag)]
            if is_instance(ent):
                return instance_method(self, ent.extra, f.name, c)
            if isinstance(ent, DeclE) and ent.kind == "table":
                raise CompileError(c.loc, f"{describe(f.expr)}.apply() is not allowed inside actions")
            raise CompileError(c.loc, f"{describe(f)}: no such method")
        raise CompileError(c.loc, "unsupported call")

    def inline_action(self, d: A.ActionDecl, c: A.Call, home: Scope | None = None) -> list[dict]:
        """Primitives of an action called directly, its parameters bound to the arguments. A parameter
        whose argument the body can also reach another way (a control's variable it names, another
        argument) is a copy, as P4's copy-in/copy-out makes it (p4c's inlining copies, its mid end
        removes the copies nothing can tell from the argument): `in`/`inout` copied in first, `out`/
        `inout` copied out after the body in parameter order, also after an `exit`."""
        c = call_args(d.params, c, f"action {d.name}")
        home = home if home is not None else self.types.scope
        scope = home.child()
        out: list[dict] = []
        bound: dict[str, tuple[V, Type]] = {}
        for p, a in zip(d.params, c.args, strict=True):
            pt = self.types.resolve(p.typ, home)
            if p.direction in ("out", "inout"):
                v = self.expr(a.expr)  # a slice is copied in and out
                if not isinstance(v.ent, (FieldE, HeaderE, StructE, StackE)) and not isinstance(a.expr, A.Slice):
                    raise CompileError(a.expr.loc, f"argument for out parameter {p.name} is not writable")
                self.coerce(v, pt, a.expr.loc, f"argument {p.name}")
            else:
                v = self.coerce(self.expr(a.expr, strip(pt)), pt, a.expr.loc, f"argument {p.name}")
            bound[p.name] = (v, pt)
        copied = aliased_params(d, home, {n: v.ent for n, (v, _t) in bound.items()})
        copy_out: list[A.Stmt] = []
        for p, a in zip(d.params, c.args, strict=True):
            v, pt = bound[p.name]
            ent: Ent
            aggregate = isinstance(v.ent, (HeaderE, StructE, StackE))
            if p.name in copied or (not is_scalar(strip(pt)) and not aggregate) or (
                    v.const is None and not aggregate and not isinstance(v.ent, (FieldE, RuntimeE))):
                name = self.bm.fresh(f"{d.name}_{p.name}")
                ent = self.ctx.new_local(name, pt, a.expr.loc)
                self.scope.add(name, ent, a.expr.loc)
                if p.direction != "out":
                    out += self.assign(A.Assign(a.expr.loc, A.Name(a.expr.loc, name), a.expr))
                if p.direction in ("out", "inout"):
                    copy_out.append(A.Assign(a.expr.loc, a.expr, A.Name(a.expr.loc, name)))
            elif v.const is not None and p.direction not in ("out", "inout"):
                ent = ConstE(v.const, pt)
            else:
                ent = v.ent  # type: ignore[assignment]
            scope.add(p.name, ent)
        sub = StmtLowerer(scope, self.types, self.ctx)
        sub.preds = self.preds
        sub.exit_flag = self.exit_flag
        if sub.exit_flag is not None:
            scope.add(EXITED, sub.exit_flag)
        out += sub.body(d.body.stmts)
        for s in copy_out:
            out += self.assign(s)
        return out


def _call_value(self: StmtLowerer, e: A.Call) -> V:
    look = getattr(self.ctx, "lookahead", None)
    if look is not None:
        v = look(self, e)
        if v is not None:
            return v
    return ExprLowerer.call_value(self, e)


StmtLowerer.call_value = _call_value  # type: ignore[method-assign]


def _reads(e: A.Expr, target: str) -> bool:
    """Does e read (a part of) the value `target` names?"""
    return any_expr(e, lambda x: isinstance(x, (A.Name, A.Member)) and (
        describe(x) == target or describe(x).startswith(target + ".")))


def _has_call(s: A.Stmt | None) -> bool:
    """Does the statement make a call, exit or loop (what predication cannot guard)?"""
    if isinstance(s, (A.CallStmt, A.Exit, A.For, A.Break, A.Continue)):
        return True
    if isinstance(s, A.Block):
        return any(_has_call(x) for x in s.stmts)
    if isinstance(s, A.If):
        return _has_call(s.then) or _has_call(s.other)
    return False
