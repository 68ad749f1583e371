"""Controls to bmv2 pipelines: actions, tables, and the apply block as a graph of tables and
conditionals (straight-line code becomes hidden one-action tables, as p4c's SynthesizeActions)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from p4sim.compiler import ast as A
from p4sim.compiler.actions import StmtLowerer
from p4sim.compiler.builder import Bmv2Json, P4InfoObj, id_annotation, source_info
from p4sim.compiler.env import ConstE, DeclE, Ent, FieldE, HeaderE, RuntimeE, Scope, StackE, StructE
from p4sim.compiler.errors import CompileError
from p4sim.compiler.externs import make_instance
from p4sim.compiler.jsonexpr import describe
from p4sim.compiler.program import Program, const_value, qualified
from p4sim.compiler.rewrite import any_expr, call_args, stmt_exprs
from p4sim.compiler.storage import make_storage
from p4sim.compiler.tables import TableLowerer
from p4sim.compiler.types import (
    BitsT,
    EnumT,
    ErrorT,
    ObjT,
    StringT,
    StructT,
    Type,
    bit_width,
    is_scalar,
    strip,
)

PREFIX = "$prefix"  # the qualified name of the block being lowered, in scopes (no P4 identifier can clash)
MAX_VALUE_SET_SIZE = 2**31 - 1  # the P4 spec's core.p4 declares value_set(int<32> size)


class BlockContext:
    """State shared by the lowering of one parser or control."""

    def __init__(self, prog: Program, bm: Bmv2Json, decl: A.Decl, shared: Any) -> None:
        self.prog, self.bm, self.decl, self.shared = prog, bm, decl, shared
        self.scope = prog.scope.child()
        self.field_lists: dict[int, list[dict]] = shared.field_lists
        self.prefix = decl.name
        self.scope.add(PREFIX, ConstE(self.prefix, StringT()))

    def new_local(self, name: str, t: Type, loc: Any) -> Ent:
        """Storage for a local variable: a scalar field, a header instance or a struct of those."""
        return make_storage(self.bm, name, t, loc)

    def digest(self, name: str, t: Type, loc: Any) -> None:
        """Record a digest type for P4Info."""
        if not any(o.kind == "digest" and o.name == name for o in self.bm.p4_objs):
            self.bm.p4_objs.append(P4InfoObj("digest", name, extra={"type": t}))

    def special_call(self, sl: StmtLowerer, c: A.Call) -> list[dict] | None:
        """Context-specific calls (packet methods in parsers); None when not special."""
        return None

    def p4info_action(self, ent: DeclE, direct: bool = False) -> None:
        """Record the action for P4Info (once). An action called directly from a control's apply block
        has no runtime parameters there (p4c's RemoveActionParameters makes them locals the call sets),
        unless a table lists it too."""
        known = next((o for o in self.bm.p4_objs if o.kind == "action" and o.name == ent.qname), None)
        if known is not None and (direct or not known.extra.get("direct")):
            return
        if known is not None:
            self.bm.p4_objs.remove(known)
        home = ent.extra if ent.extra is not None else self.prog.scope
        runtime = [p for p in ent.decl.params if not p.direction and not direct]
        for p in runtime:
            if not is_scalar(strip(self.prog.resolve(p.typ, home))):
                raise CompileError(p.loc, f"action {ent.decl.name}: parameter {p.name} needs a direction or a "
                                   "bit<W>, int<W>, bool or serializable enum type")
        types = [self.prog.resolve(p.typ, home) for p in runtime]
        annos = A.p4info_annotations(ent.decl.annos)
        self.bm.p4_objs.append(P4InfoObj("action", ent.qname, params=[(p.name, bit_width(t)) for p, t in
                                                                       zip(runtime, types, strict=True)],
                                         extra={"annos": annos, "decl": ent.decl, "types": types,
                                                "direct": direct},
                                         fixed_id=id_annotation(ent.decl.annos), loc=ent.decl.loc))

    def value_set(self, d: A.Instance, sl: StmtLowerer, qname: str) -> DeclE:
        """`value_set<T>(size) name;` in a parser: bmv2 parse_vsets and P4Info value_sets (T is bit<W>
        or a struct of those, matched exactly on the concatenation)."""
        if not isinstance(self.decl, A.ParserDecl):
            raise CompileError(d.loc, f"{d.name}: value_set is only allowed in parsers")
        if len(d.typ.args) != 1 or len(d.args) != 1:
            raise CompileError(d.loc, f"{d.name}: expected value_set<T>(size)")
        t = strip(self.prog.resolve(d.typ.args[0], sl.scope))
        if isinstance(t, StructT) and t.kind == "struct" and all(is_scalar(strip(ft)) for _, ft in t.fields):
            members = [(n, bit_width(strip(ft))) for n, ft in t.fields]
        elif is_scalar(t) and not isinstance(t, StructT):
            members = [("", bit_width(t))]
        else:
            raise CompileError(d.loc, f"{d.name}: value_set of {t} is not supported (bit<W> or a struct of bit<W>)")
        size = sl.const_int(d.args[0].expr, "a constant value set size")
        if not 0 <= size <= MAX_VALUE_SET_SIZE:  # the P4 spec's core.p4: value_set(int<32> size)
            raise CompileError(d.args[0].expr.loc, f"{d.name}: value set size {size} is not in "
                               f"0..{MAX_VALUE_SET_SIZE} (value_set declares its size int<32>)")
        width = sum(w for _, w in members)
        if not any(v["name"] == qname for v in self.bm.parse_vsets):
            self.bm.parse_vsets.append({"name": qname, "id": len(self.bm.parse_vsets), "compressed_bitwidth": width})
            self.bm.p4_objs.append(P4InfoObj("value_set", qname, params=members, size=size,
                                             fixed_id=id_annotation(d.annos), loc=d.loc))
        return DeclE("value_set", d, qname, (t, width))

    def bind_ctor(self, args: list[A.Arg], loc: Any) -> None:
        """Bind this block's own constructor parameters (`V1Switch(..., Ingress(3), ...)`)."""
        inst = A.Instance(loc, self.decl.name, [], A.NamedT(loc, self.decl.name), args)
        for n, cv in self.ctor_args(inst, self.decl, StmtLowerer(self.scope, self.prog, self)).items():
            self.scope.add(n, cv)

    def ctor_args(self, d: A.Instance, decl: A.Decl, sl: StmtLowerer) -> dict[str, Ent]:
        """Constructor arguments of a control or parser instance by name: compile-time constants, or
        extern instances of the caller's (`Hold(depth) hold;` with `control Hold(...)(register<bit<32>> r)`:
        the body uses the caller's instance, as p4c does)."""
        params = list(getattr(decl, "ctor_params", None) or [])
        if len(d.args) != len(params):
            raise CompileError(d.loc, f"{d.name}: {decl.name} takes {len(params)} constructor arguments, "
                               f"found {len(d.args)}")
        out: dict[str, Ent] = {}
        for p, a in zip(params, d.args, strict=True):
            t = self.prog.resolve(p.typ, self.prog.scope)
            if isinstance(t, ObjT) and t.kind == "extern":
                out[p.name] = self.extern_arg(p, t, a, sl)
                continue
            if isinstance(t, ObjT) and t.kind in ("control_type", "parser_type"):  # an instance of the caller's
                inst = sl.scope.lookup(a.expr.name) if isinstance(a.expr, A.Name) else None
                if not (isinstance(inst, DeclE) and inst.kind == "sub" + t.kind.split("_")[0]):
                    raise CompileError(a.expr.loc, f"constructor argument {p.name} must be a "
                                       f"{t.kind.split('_')[0]} instance ({t.name})")
                out[p.name] = inst
                continue
            if not is_scalar(strip(t)):
                raise CompileError(p.loc, f"{decl.name}: constructor parameter {p.name} of type {t} is not "
                                   "supported (only bit<W>, int<W>, bool and enum constants, and extern instances)")
            v = sl.coerce(sl.expr(a.expr, strip(t)), t, a.expr.loc, f"constructor argument {p.name}")
            if v.const is None:
                raise CompileError(a.expr.loc, f"constructor argument {p.name} must be a compile-time constant")
            out[p.name] = ConstE(v.const, t)
        return out

    def extern_arg(self, p: A.Param, t: ObjT, a: A.Arg, sl: StmtLowerer) -> DeclE:
        """An extern instance given to a constructor parameter of extern type: the same extern, and for
        a generic one (register<T>) the same type arguments."""
        ent = sl.scope.lookup(a.expr.name) if isinstance(a.expr, A.Name) else None
        if not (isinstance(ent, DeclE) and ent.kind == "instance"):
            raise CompileError(a.expr.loc, f"constructor argument {p.name} must be an extern instance ({t})")
        given = self.prog.resolve(ent.decl.typ, sl.scope)

        def shape(o: Type) -> str:  # the extern and its type arguments (register<bit<8>>)
            return f"{o.name}<{', '.join(str(strip(x)) for x in o.args.values())}>" if isinstance(o, ObjT) else str(o)

        if shape(given) != shape(t):
            raise CompileError(a.expr.loc, f"constructor argument {p.name}: expected {shape(t)}, found {shape(given)}")
        return ent

    def instance_applied(self, e: A.Expr, kind: str, scope: Scope) -> DeclE | None:
        """The control (kind "subcontrol") or parser ("subparser") instance `e` names in `e.apply(...)`: an
        instance, or a control or parser type applied directly (`E.apply(x)`), which is an instance of
        its own named after the type (p4c's InstantiateDirectCalls)."""
        ent = scope.lookup(e.name) if isinstance(e, A.Name) else None
        if isinstance(ent, DeclE) and ent.kind == kind:
            return ent
        if isinstance(ent, DeclE) and "sub" + ent.kind == kind:
            if ent.decl.ctor_params:
                raise CompileError(e.loc, f"{ent.decl.name}.apply(): a {ent.kind} with constructor parameters "
                                   "needs an instance")
            prefix = scope.lookup(PREFIX)
            name = qualified(ent.decl, prefix.value if isinstance(prefix, ConstE) else "")
            return DeclE(kind, ent.decl, name, {})
        return None

    def bind_params(self, params: list[A.Param], roles: list[Ent | None]) -> None:
        """Bind the block's parameters to the shared architecture storage."""
        for p, ent in zip(params, roles, strict=False):
            if ent is not None:
                self.scope.add(p.name, ent, p.loc)

    def apply_scope(self, ent: DeclE, c: A.Call, ev: StmtLowerer, copies: list[A.Stmt] | None = None) -> Scope:
        """The scope a sub-parser or sub-control instance is inlined in: its constructor values, then
        each apply parameter bound to its argument, evaluated by `ev` in the caller's scope (a variable
        is aliased, a constant given to a non-out parameter is its value, packet_in is the packet).

        With `copies` (controls), a scalar `in` argument that is not a constant is copied in, as P4's
        copy-in semantics and p4c do: a temporary in the caller's scope and its assignment appended to
        `copies`, which the caller runs before the body. So an expression may be an argument, and a
        field the body overwrites keeps, as the parameter, the value it had at the call."""
        decl = ent.decl
        c = call_args(decl.params, c, f"{decl.name}.apply")
        sc = self.prog.scope.child()
        for n, cv in (ent.extra or {}).items():
            sc.add(n, cv)
        for p, a in zip(decl.params, c.args, strict=True):
            pt = self.prog.resolve(p.typ, sc)
            if isinstance(pt, ObjT) and pt.name == "packet_in":
                caller = ev.scope.lookup(a.expr.name) if isinstance(a.expr, A.Name) else None
                if not (isinstance(caller, DeclE) and caller.kind == "packet"):
                    raise CompileError(a.expr.loc, f"argument {p.name} of {decl.name}.apply must be the packet")
                sc.add(p.name, DeclE("packet", None, "packet_in"))
                continue
            v = ev.expr(a.expr, strip(pt))
            listed = isinstance(v.const, list)  # `{0, 0}` for a struct: a variable initialized by it
            if copies is not None and not p.direction.endswith("out") and (v.const is None or listed) \
                    and not isinstance(v.ent, (HeaderE, StructE, StackE)):
                name = self.bm.fresh(f"{decl.name}_{p.name}")
                ev.scope.add(name, self.new_local(name, pt, a.expr.loc), a.expr.loc)
                copies.append(A.Assign(a.expr.loc, A.Name(a.expr.loc, name), a.expr))
                sc.add(p.name, ev.scope.lookup(name))
            elif isinstance(v.ent, (FieldE, HeaderE, StructE, StackE)):
                ev.coerce(v, pt, a.expr.loc, f"argument {p.name}")
                sc.add(p.name, v.ent)
            elif v.const is not None and not p.direction.endswith("out"):
                sc.add(p.name, ConstE(ev.coerce(v, pt, a.expr.loc, f"argument {p.name}").const, pt))
            else:
                raise CompileError(a.expr.loc, f"argument {p.name} of {decl.name}.apply must be a variable or a "
                                   "constant")
        return sc

    def declare_local(self, d: object, sl: StmtLowerer, init: list[A.Stmt], scope: Scope | None = None,
                      prefix: str | None = None) -> None:
        """A control or parser local declaration (in scope, with names qualified by prefix)."""
        scope = scope if scope is not None else self.scope
        prefix = prefix if prefix is not None else self.prefix
        if isinstance(d, A.ConstDecl):
            scope.add(d.name, const_value(self.prog, scope, d, self.prog.resolve(d.typ, scope)), d.loc)
        elif isinstance(d, A.Instance):
            if isinstance(d.typ, A.NamedT) and d.typ.name == "value_set":
                scope.add(d.name, self.value_set(d, sl, qualified(d, prefix)), d.loc)
                return
            tent = scope.lookup(d.typ.name) if isinstance(d.typ, A.NamedT) else None
            if isinstance(tent, DeclE) and tent.kind in ("control", "parser"):
                if (tent.kind == "parser") != isinstance(self.decl, A.ParserDecl):
                    raise CompileError(d.loc, f"{d.name}: a {tent.kind} instance in a "
                                       f"{'parser' if isinstance(self.decl, A.ParserDecl) else 'control'}")
                ctor = self.ctor_args(d, tent.decl, sl)
                kind = "subparser" if tent.kind == "parser" else "subcontrol"
                scope.add(d.name, DeclE(kind, tent.decl, qualified(d, prefix), ctor), d.loc)
                return
            qname = qualified(d, prefix)
            # a control instance applied twice declares its locals twice: the externs are shared
            info = next((i for i in self.bm.instances if i.name == qname and i.decl is d), None)
            if info is None:
                info = make_instance(sl, self.bm, d, qname)
            scope.add(d.name, DeclE("instance", d, info.name, info), d.loc)
        elif isinstance(d, A.VarDecl):
            ent = self.new_local(d.name, self.prog.resolve(d.typ, scope), d.loc)
            scope.add(d.name, ent, d.loc)
            if d.init is not None:
                init.append(A.Assign(d.loc, A.Name(d.loc, d.name), d.init))
        elif isinstance(d, A.ActionDecl):
            scope.add(d.name, DeclE("action", d, qualified(d, prefix), scope), d.loc)
        elif isinstance(d, A.TableDecl):
            scope.add(d.name, DeclE("table", d, qualified(d, prefix), scope), d.loc)
        else:
            raise CompileError(getattr(d, "loc", None), f"unsupported local declaration {type(d).__name__}")


class ControlLowerer(BlockContext):
    """Lowers one control into a bmv2 pipeline."""

    def __init__(self, prog: Program, bm: Bmv2Json, decl: A.ControlDecl, shared: Any, pipeline: str) -> None:
        super().__init__(prog, bm, decl, shared)
        self.cdecl = decl
        self.pipeline = {"name": pipeline, "id": len(bm.pipelines), "source_info": source_info(decl.loc, decl.name),
                         "init_table": None, "tables": [], "action_profiles": [], "conditionals": []}
        self.applied: set[str] = set()
        self.ret_target: str | None = None
        self.actions_done: dict[str, int] = {}
        self.stem = Path(decl.loc.file).stem.replace("-", "_").replace(".", "_")
        self.tables = TableLowerer(self)

    def run(self, roles: list[Ent | None]) -> dict:
        """Lower the control; returns the pipeline JSON."""
        self.bind_params(self.cdecl.params, roles)
        sl = StmtLowerer(self.scope, self.prog, self)
        init: list[A.Stmt] = []
        for d in self.cdecl.locals:
            self.declare_local(d, sl, init)
        body = init + self.cdecl.body.stmts
        self.pipeline["init_table"] = self.block(body, None, self.scope)
        self.pipeline["tables"].reverse()
        self.pipeline["conditionals"].reverse()
        self.bm.pipelines.append(self.pipeline)
        return self.pipeline

    # ---- actions -------------------------------------------------------------------
    def action_id(self, ent: DeclE, loc: Any, bound: list[A.Arg] | None = None, at: Scope | None = None,
                  called: bool = False, direct: bool = False) -> int:
        """bmv2 id of an action usable in tables: directional parameters bound to the arguments given
        in the table (`my_drop(standard_metadata)`), directionless ones become runtime data. called: the
        action as a direct call keeps it in the JSON (its body is inlined there), where a slice argument
        is bound to a temporary, as p4c binds it (the call copies it in and out). direct: called from an
        apply block and listed by no table, its directionless parameters are locals, not runtime data
        (p4c's RemoveActionParameters)."""
        d: A.ActionDecl = ent.decl
        directional = [p for p in d.params if p.direction]
        if d.params[:len(directional)] != directional:
            raise CompileError(d.loc, f"action {d.name}: directional parameters must come first")
        bound = list(bound or [])[:len(directional)]
        if len(bound) != len(directional):
            raise CompileError(loc, f"action {d.name}: its directional parameters "
                               f"{', '.join(p.name for p in directional)} need arguments in the table")
        key = ent.qname + "(" + ", ".join(describe(a.expr) for a in bound) + ")" + (" direct" if direct else "")
        if key in self.bm.action_memo:
            return self.bm.action_memo[key]
        home = ent.extra if ent.extra is not None else self.prog.scope
        scope = home.child()
        ev = StmtLowerer(at or self.scope, self.prog, self)
        for p, a in zip(directional, bound, strict=True):
            t = self.prog.resolve(p.typ, home)
            v = ev.expr(a.expr, strip(t))
            if isinstance(v.ent, (FieldE, HeaderE, StructE, StackE)):
                ev.coerce(v, t, a.expr.loc, f"argument {p.name}")
                scope.add(p.name, v.ent, p.loc)
            elif v.const is not None and p.direction == "in" and is_scalar(strip(t)):
                scope.add(p.name, ConstE(ev.coerce(v, t, a.expr.loc, f"argument {p.name}").const, t), p.loc)
            elif called:  # a slice, a list for a header...: a temporary, as p4c binds it (the call copies)
                ev.coerce(v, t, a.expr.loc, f"argument {p.name}")
                scope.add(p.name, self.new_local(self.bm.fresh("tmp"), t, a.expr.loc), p.loc)
            else:
                raise CompileError(a.expr.loc, f"argument {p.name} of {d.name} must be a variable or a constant")
        params = []
        for i, p in enumerate(d.params[len(directional):]):
            t = self.prog.resolve(p.typ, home)
            if not is_scalar(strip(t)):
                raise CompileError(p.loc, f"action {d.name}: parameter {p.name} has type {t}; control-plane "
                                   "parameters must be bit<W>, int<W>, bool or serializable enums")
            if direct:
                scope.add(p.name, self.new_local(self.bm.fresh(f"{d.name}_{p.name}"), t, p.loc), p.loc)
                continue
            scope.add(p.name, RuntimeE(i, t), p.loc)
            params.append((p.name, bit_width(t)))
        body = StmtLowerer(scope, self.prog, self)
        body.in_action = True
        prims = body.body(d.body.stmts)
        aid = self.bm.add_action(ent.qname, params, prims, d.loc)
        self.bm.action_memo[key] = aid
        return aid

    # ---- control flow --------------------------------------------------------------
    def block(self, stmts: list[A.Stmt], nxt: str | None, scope: Scope) -> str | None:
        """Entry node of a statement list followed by nxt."""
        stmts = StmtLowerer(scope, self.prog, self).inliner(tables=True).stmts(stmts)
        inner = scope.child()
        for s in stmts:  # declarations are visible to every statement of the block
            if isinstance(s, A.VarDecl):
                inner.add(s.name, self.new_local(s.name, self.prog.resolve(s.typ, inner), s.loc), s.loc)
            elif isinstance(s, A.ConstDecl):
                inner.add(s.name, const_value(self.prog, inner, s, self.prog.resolve(s.typ, inner)), s.loc)
        cur = nxt
        pending: list[A.Stmt] = []
        for k, s in enumerate(stmts):
            if isinstance(s, A.Exit):  # what follows an exit in the same block never runs
                stmts = stmts[:k + 1]
                break
        may_exit = StmtLowerer(inner, self.prog, self).may_exit
        for s in reversed(stmts):
            if self.simple(s, inner):
                # a statement that may exit ends its action: bmv2 stops the pipeline after that table,
                # but would run the rest of the same action
                if pending and not isinstance(s, (A.VarDecl, A.ConstDecl)) and may_exit(s):
                    cur = self.straight(pending, cur, inner)
                    pending = []
                if isinstance(s, A.VarDecl):
                    if s.init is not None:
                        pending.insert(0, A.Assign(s.loc, A.Name(s.loc, s.name), s.init))
                elif not isinstance(s, A.ConstDecl):
                    pending.insert(0, s)
                continue
            cur = self.straight(pending, cur, inner)
            pending = []
            cur = self.complex(s, cur, inner)
        return self.straight(pending, cur, inner)

    def simple(self, s: A.Stmt, scope: Scope) -> bool:
        """Straight-line statement (goes into a synthesized action)?"""
        if isinstance(s, (A.Assign, A.VarDecl, A.ConstDecl, A.Empty, A.Exit)):
            return True
        if isinstance(s, A.For):  # a loop runs inside one action (jumps); it may not apply tables
            if any_expr_in(s, lambda e: isinstance(e, A.Member) and e.name == "apply"):
                raise CompileError(s.loc, "a for loop that applies tables or controls is not supported")
            return True
        if isinstance(s, A.CallStmt):
            return self.table_of_apply(s.call, scope) is None and self.subcontrol_of_apply(s.call, scope) is None \
                and self.branching_action(s.call, scope) is None
        return False

    def branching_action(self, c: A.Call, scope: Scope) -> DeclE | None:
        """An action called from the apply block whose body makes calls under a condition: it is
        inlined as control flow (tables and conditionals), since bmv2 actions cannot branch."""
        if not isinstance(c.func, A.Name):
            return None
        ent = scope.lookup(c.func.name)
        if isinstance(ent, DeclE) and ent.kind == "action" and _calls_under_if(ent.decl.body.stmts, False):
            return ent
        return None

    def inline_action_flow(self, ent: DeclE, c: A.Call, nxt: str | None, scope: Scope) -> str | None:
        """The body of a directly called action as part of the control flow, parameters bound."""
        d: A.ActionDecl = ent.decl
        c = call_args(d.params, c, f"action {d.name}")
        if ent.extra is not None:
            self.p4info_action(ent, direct=c.func.name not in self.prog.table_action_names)
        home = ent.extra if ent.extra is not None else self.prog.scope
        sc = home.child()
        ev = StmtLowerer(scope, self.prog, self)
        for p, a in zip(d.params, c.args, strict=True):
            t = self.prog.resolve(p.typ, home)
            v = ev.expr(a.expr, strip(t))
            if isinstance(v.ent, (FieldE, HeaderE, StructE, StackE, RuntimeE)):
                ev.coerce(v, t, a.expr.loc, f"argument {p.name}")
                sc.add(p.name, v.ent)
            elif v.const is not None and p.direction in ("", "in"):
                sc.add(p.name, ConstE(ev.coerce(v, t, a.expr.loc, f"argument {p.name}").const, t))
            else:
                raise CompileError(a.expr.loc, f"argument {p.name} of {d.name} must be a variable or a constant "
                                   "(the action branches around calls, so it is inlined into the control)")
        saved, self.ret_target = self.ret_target, nxt  # `return` leaves the action, not the control
        try:
            return self.block(d.body.stmts, nxt, sc)
        finally:
            self.ret_target = saved

    def subcontrol_of_apply(self, c: A.Call, scope: Scope) -> DeclE | None:
        """The control instance if c is `inst.apply(...)`."""
        if isinstance(c.func, A.Member) and c.func.name == "apply":
            return self.instance_applied(c.func.expr, "subcontrol", scope)
        return None

    def inline_control(self, ent: DeclE, c: A.Call, nxt: str | None, scope: Scope) -> str | None:
        """Inline a control instance's apply (as p4c's Inline pass), names prefixed by the instance."""
        cd: A.ControlDecl = ent.decl
        copies: list[A.Stmt] = []
        sc = self.apply_scope(ent, c, StmtLowerer(scope, self.prog, self), copies)
        sc.add(PREFIX, ConstE(ent.qname, StringT()))
        init: list[A.Stmt] = []
        sl = StmtLowerer(sc, self.prog, self)
        for d in cd.locals:
            self.declare_local(d, sl, init, sc, ent.qname)
        saved = self.ret_target
        self.ret_target = nxt
        try:
            body = self.block(init + cd.body.stmts, nxt, sc)
        finally:
            self.ret_target = saved
        return self.block(copies, body, scope) if copies else body

    def table_of_apply(self, c: A.Expr, scope: Scope) -> DeclE | None:
        """The table if c is `t.apply()`."""
        if isinstance(c, A.Call) and isinstance(c.func, A.Member) and c.func.name == "apply" \
                and isinstance(c.func.expr, A.Name):
            ent = scope.lookup(c.func.expr.name)
            if isinstance(ent, DeclE) and ent.kind == "table":
                return ent
            if isinstance(ent, DeclE) and ent.kind == "instance":
                raise CompileError(c.loc, f"{c.func.expr.name}.apply(): {c.func.expr.name} is not a table or control")
        return None

    def straight(self, stmts: list[A.Stmt], nxt: str | None, scope: Scope) -> str | None:
        """A hidden table running straight-line statements, then nxt."""
        if not stmts:
            return nxt
        first = stmts[0]
        if len(stmts) == 1 and isinstance(first, A.CallStmt) and isinstance(first.call.func, A.Name) \
                and not first.call.args:
            ent = scope.lookup(first.call.func.name)
            if isinstance(ent, DeclE) and ent.kind == "action" and not ent.decl.params:
                aid = self.action_id(ent, first.loc)
                if ent.extra is not None:  # p4c lists every used control-local action in P4Info
                    self.p4info_action(ent)
                short = ent.qname.split(".")[-1]
                return self.tables.hidden(f"tbl_{short}", ent.qname, aid, nxt, first.loc)
        sl = StmtLowerer(scope.child(), self.prog, self)
        prims: list[dict] = []
        for s in stmts:
            prims += sl.stmt(s)
        if not prims:
            return nxt
        name = self.bm.unique(f"{self.stem}{first.loc.line}")
        aid = self.bm.add_action(name, [], prims, first.loc)
        return self.tables.hidden(f"tbl_{name}", name, aid, nxt, first.loc)

    def complex(self, s: A.Stmt, nxt: str | None, scope: Scope) -> str | None:
        """Entry node of a control-flow statement followed by nxt."""
        if isinstance(s, A.Block):
            return self.block(s.stmts, nxt, scope)
        if isinstance(s, A.Return):
            if s.expr is not None:
                raise CompileError(s.loc, "return with a value in a control")
            return self.ret_target
        if isinstance(s, A.CallStmt):
            act = self.branching_action(s.call, scope)
            if act is not None:
                return self.inline_action_flow(act, s.call, nxt, scope)
            sub = self.subcontrol_of_apply(s.call, scope)
            if sub is not None:
                return self.inline_control(sub, s.call, nxt, scope)
            t = self.table_of_apply(s.call, scope)
            assert t is not None
            return self.tables.apply(t, {}, nxt, s.loc)
        if isinstance(s, A.Switch):
            return self.switch(s, nxt, scope)
        if isinstance(s, A.If):
            return self.if_(s, nxt, scope)
        raise CompileError(s.loc, f"unsupported statement {type(s).__name__} in an apply block")

    def _branch(self, st: A.Stmt | None, nxt: str | None, scope: Scope) -> str | None:
        if st is None:
            return nxt
        return self.block(st.stmts if isinstance(st, A.Block) else [st], nxt, scope)

    def if_(self, s: A.If, nxt: str | None, scope: Scope) -> str | None:
        """A conditional node, or a table with __HIT__/__MISS__ successors."""
        then = self._branch(s.then, nxt, scope)
        other = self._branch(s.other, nxt, scope)
        cond, negate = s.cond, False
        while isinstance(cond, A.Unary) and cond.op == "!":
            cond, negate = cond.expr, not negate
        if isinstance(cond, A.Member) and cond.name in ("hit", "miss"):
            t = self.table_of_apply(cond.expr, scope)
            if t is not None:
                hit_next, miss_next = (then, other) if (cond.name == "hit") != negate else (other, then)
                return self.tables.apply(t, {"__HIT__": hit_next, "__MISS__": miss_next}, nxt, s.loc)
        self._check_pure(s.cond, scope)
        ev = StmtLowerer(scope, self.prog, self)
        v = ev.expr(s.cond)
        j = ev.cond(v, s.cond.loc)
        if v.const is not None:
            return then if v.const else other
        name = self.bm.unique(f"node_{self.bm.node_count}")
        self.bm.node_count += 1
        self.pipeline["conditionals"].append({
            "name": name, "id": self.bm.node_count - 1, "source_info": source_info(s.cond.loc, describe(s.cond)),
            "expression": j, "true_next": then, "false_next": other})
        return name

    def _check_pure(self, e: A.Expr, scope: Scope) -> None:
        """A table application may only be a whole condition (`if (t.apply().hit)`), as in p4c."""
        if isinstance(e, A.Member) and e.name in ("hit", "miss", "action_run") and \
                self.table_of_apply(e.expr, scope) is not None:
            raise CompileError(e.loc, "table application inside a larger condition is not supported "
                               "(use `if (t.apply().hit)` alone)")
        for child in (getattr(e, "left", None), getattr(e, "right", None), getattr(e, "expr", None),
                      getattr(e, "cond", None), getattr(e, "then", None), getattr(e, "other", None)):
            if isinstance(child, A.Expr):
                self._check_pure(child, scope)

    def switch(self, s: A.Switch, nxt: str | None, scope: Scope) -> str | None:
        """A table whose next node depends on the action that ran (or an if-chain on a value)."""
        e = s.expr
        if not (isinstance(e, A.Member) and e.name == "action_run"):
            return self.value_switch(s, nxt, scope)
        t = self.table_of_apply(e.expr, scope)
        if t is None:
            raise CompileError(e.loc, "switch is only supported on `table.apply().action_run`")
        targets: dict[str, str | None] = {}
        default: str | None = nxt
        pend: list[A.Expr] = []
        for case in s.cases:
            pend += case.labels
            if case.body is None:
                continue
            entry = self.block(case.body.stmts, nxt, scope)
            for label in pend:
                if isinstance(label, A.Default):
                    default = entry
                elif isinstance(label, A.Name):
                    targets[label.name] = entry
                else:
                    raise CompileError(label.loc, "switch labels must be action names")
            pend = []
        for label in pend:
            if isinstance(label, A.Name):
                targets[label.name] = nxt
        return self.tables.apply(t, {"__SWITCH__": (targets, default)}, nxt, s.loc)

    def value_switch(self, s: A.Switch, nxt: str | None, scope: Scope) -> str | None:
        """`switch (e) { 1: {..} 2: 3: {..} default: {..} }` on a bit<W>/enum value, as a chain of ifs."""
        self._check_pure(s.expr, scope)
        ev = StmtLowerer(scope, self.prog, self)
        v = ev.expr(s.expr)
        if not isinstance(strip(v.t), (BitsT, EnumT, ErrorT)):
            raise CompileError(s.expr.loc, "switch expects `table.apply().action_run` or a bit<W>, enum or error "
                               f"value, found {v.t}")
        groups: list[tuple[list[A.Expr], A.Block]] = []
        default: A.Block | None = None
        pend: list[A.Expr] = []
        for case in s.cases:
            pend += case.labels
            if case.body is None:
                continue
            if any(isinstance(x, A.Default) for x in pend):
                default = case.body
            else:
                groups.append((pend, case.body))
            pend = []
        other: A.Stmt | None = default
        for labels, body in reversed(groups):
            cond = _or([A.Binary(x.loc, "==", s.expr, x) for x in labels], s.loc)
            other = A.If(s.loc, cond, body, other)
        if other is None:
            return nxt
        return self.complex(other, nxt, scope) if isinstance(other, A.If) else self.block(other.stmts, nxt, scope)


def any_expr_in(s: A.Stmt, pred: Any) -> bool:
    """Does pred hold for an expression (or part of one) of s?"""
    return any(any_expr(e, pred) for e in stmt_exprs(s))


def _calls_under_if(stmts: list[A.Stmt], conditional: bool) -> bool:
    """Does a call (other than a direct action call's assignments) run under a condition?"""
    for st in stmts:
        if isinstance(st, A.If):
            if _calls_under_if([st.then] + ([st.other] if st.other else []), True):
                return True
        elif isinstance(st, A.Block):
            if _calls_under_if(st.stmts, conditional):
                return True
        elif isinstance(st, (A.CallStmt, A.Exit)) and conditional:
            return True
    return False


def _or(terms: list[A.Expr], loc: Any) -> A.Expr:
    acc = terms[0]
    for t in terms[1:]:
        acc = A.Binary(loc, "||", acc, t)
    return acc
