"""Top-level declarations of a program: types, constants, errors, externs and the main package."""

from __future__ import annotations

import functools
from typing import Any

from p4sim.compiler import ast as A
from p4sim.compiler.env import ConstE, DeclE, Scope, TypeE
from p4sim.compiler.errors import CompileError, Loc
from p4sim.compiler.exprs import ExprLowerer
from p4sim.compiler.types import (
    MAX_WIDTH,
    BitsT,
    BoolT,
    DontCareT,
    EnumT,
    ErrorT,
    InfIntT,
    ListT,
    MatchKindT,
    NewT,
    ObjT,
    StackT,
    StringT,
    StructT,
    Type,
    TypeVarT,
    VarbitT,
    VoidT,
    strip,
)

_ARCH_BLOCKS = ("Parser", "VerifyChecksum", "Ingress", "Egress", "ComputeChecksum", "Deparser")


class Program:
    """Global scope of a parsed program and the resolution of type syntax."""

    def __init__(self, prog: A.Program) -> None:
        self.ast = prog
        self.scope = Scope()
        self.errors: list[str] = []
        self.match_kinds: list[str] = []
        self.structs: list[StructT] = []
        self.enums: list[EnumT] = []
        self.main: A.Instance | None = None
        self.top_actions: dict[str, A.ActionDecl] = {}
        for d in prog.decls:
            self.declare(d)
        if self.main is None:
            raise CompileError(prog.end, "no package instance `main` (e.g. V1Switch(...) main;)")

    @functools.cached_property
    def table_action_names(self) -> frozenset[str]:
        """Names of the actions some table lists (as written: a direct call of an action no table lists
        takes no runtime parameters, p4c's RemoveActionParameters)."""
        names: set[str] = set()
        todo: list[object] = list(self.ast.decls)
        while todo:
            d = todo.pop()
            if isinstance(d, A.TableDecl):
                names.update(ar.name for ar in d.actions)
                names.update([d.default_action.name] if d.default_action else [])
            elif isinstance(d, (A.ControlDecl, A.ParserDecl)):
                todo.extend(d.locals)
        return frozenset(names)

    def error_code(self, name: str, loc: Loc) -> int:
        """Numeric code of error.name (declaration order, as in bmv2's errors list)."""
        if name not in self.errors:
            raise CompileError(loc, f"error.{name}: undefined error")
        return self.errors.index(name)

    def declare(self, d: object) -> None:
        """Add one top-level declaration to the global scope."""
        sc = self.scope
        if isinstance(d, A.ConstDecl):
            t = self.resolve(d.typ, sc)
            sc.add(d.name, const_value(self, sc, d, t), d.loc)
        elif isinstance(d, A.Typedef):
            base = self.resolve(d.typ, sc)
            sc.add(d.name, TypeE(NewT(d.name, base) if d.new_type else base), d.loc)
        elif isinstance(d, A.StructLike):
            st = StructT(d.kind, d.name, [], d.annos)
            sc.add(d.name, TypeE(st), d.loc)
            inner = sc.child()
            for tp in d.type_params:
                inner.add(tp, TypeE(TypeVarT(tp)))
            seen = set()
            for f in d.fields:
                if f.name in seen:
                    raise CompileError(f.loc, f"{d.name}.{f.name}: duplicate field")
                seen.add(f.name)
                ft = self.resolve(f.typ, inner)
                fs = strip(ft)
                if isinstance(fs, VarbitT) and (d.kind != "header" or any(
                        isinstance(strip(t), VarbitT) for _, t in st.fields)):
                    raise CompileError(f.loc, f"{d.name}.{f.name}: varbit fields may only be in headers, one per header")
                if d.kind == "header_union" and not (isinstance(fs, StructT) and fs.kind == "header"):
                    raise CompileError(f.loc, f"{d.name}.{f.name}: header union members must be headers, found {ft}")
                if d.kind == "header" and not isinstance(fs, (BitsT, BoolT, EnumT, VarbitT)) and not _bits_struct(fs):
                    raise CompileError(f.loc, f"{d.name}.{f.name}: header fields must be bit<W>, int<W>, bool, "
                                       f"serializable enums or structs of those, found {ft}")
                if isinstance(fs, EnumT) and d.kind == "header" and not fs.underlying:
                    raise CompileError(f.loc, f"{d.name}.{f.name}: only serializable enums may be header fields")
                st.fields.append((f.name, ft))
                st.field_annos[f.name] = f.annos
            if d.kind == "header" and st.width() % 8:
                raise CompileError(d.loc, f"header {d.name}: its fields total {st.width()} bits; bmv2 only supports "
                                   "headers of a whole number of bytes")
            self.structs.append(st)
        elif isinstance(d, A.EnumDecl):
            under = None
            if d.underlying is not None:
                u = strip(self.resolve(d.underlying, sc))
                if not isinstance(u, BitsT):
                    raise CompileError(d.loc, f"enum {d.name}: underlying type must be bit<W> or int<W>")
                under = u
            et = EnumT(d.name, d.members, under)
            if under is not None:
                if len(d.values) != len(d.members):
                    raise CompileError(d.loc, f"enum {d.name}: every member of a serializable enum needs a value")
                ev = ExprLowerer(sc, self)
                for m, e in zip(d.members, d.values, strict=False):
                    et.values[m] = ev.coerce(ev.expr(e, under), under, e.loc, f"value of {d.name}.{m}").const
            sc.add(d.name, TypeE(et), d.loc)
            self.enums.append(et)
        elif isinstance(d, A.ErrorDecl):
            for m in d.members:
                if m not in self.errors:
                    self.errors.append(m)
        elif isinstance(d, A.MatchKindDecl):
            for m in d.members:
                self.match_kinds.append(m)
                sc.add(m, ConstE(m, MatchKindT()), None, redefine=True)
        elif isinstance(d, A.ExternDecl):
            sc.add(d.name, TypeE(ObjT("extern", d.name, d)), d.loc)
        elif isinstance(d, A.FunctionDecl):
            if d.body is not None:
                sc.add(d.name, DeclE("userfunc", d, d.name), d.loc)  # generic ones: specialized when inlined
                return
            prev = sc.names.get(d.name)
            if isinstance(prev, DeclE) and prev.kind == "function":
                prev.extra.append(d)  # overloads (log_msg)
            else:
                sc.add(d.name, DeclE("function", d, d.name, [d]), d.loc)
        elif isinstance(d, A.BlockTypeDecl):
            sc.add(d.name, TypeE(ObjT(d.kind + "_type", d.name, d)), d.loc)
        elif isinstance(d, (A.ParserDecl, A.ControlDecl)):
            kind = "parser" if isinstance(d, A.ParserDecl) else "control"
            sc.add(d.name, DeclE(kind, d, d.name), d.loc)
        elif isinstance(d, A.ActionDecl):
            sc.add(d.name, DeclE("action", d, _qualified(d, "")), d.loc)
            self.top_actions[d.name] = d
        elif isinstance(d, A.Instance):
            if isinstance(d.typ, A.NamedT) and d.typ.name == "V1Switch":
                if d.name != "main":
                    raise CompileError(d.loc, f"the V1Switch instance must be called main, not {d.name!r}")
                self.main = d
            elif isinstance(d.typ, A.NamedT) and isinstance(self.scope.lookup(d.typ.name), TypeE) and \
                    isinstance(strip(self.scope.lookup(d.typ.name).type), ObjT) and \
                    self.scope.lookup(d.typ.name).type.kind == "package_type":
                raise CompileError(d.loc, f"package {d.typ.name}: only the V1Switch architecture is supported")
            else:
                sc.add(d.name, DeclE("instance", d, _qualified(d, "")), d.loc)
        else:
            raise CompileError(getattr(d, "loc", None), f"unsupported declaration {type(d).__name__}")

    def resolve(self, syn: A.TypeSyn, scope: Scope) -> Type:
        """The semantic type denoted by type syntax."""
        if isinstance(syn, A.ResolvedT):
            return syn.t
        if isinstance(syn, A.BitT):
            if syn.width is None:
                return BitsT(1, syn.signed)
            w = ExprLowerer(scope, self).const_int(syn.width, "a constant width")
            if w <= 0 or w > MAX_WIDTH:
                raise CompileError(syn.loc, f"bad width {w}: expected 1..{MAX_WIDTH}")
            return BitsT(w, syn.signed)
        if isinstance(syn, A.VarbitT):
            w = ExprLowerer(scope, self).const_int(syn.width, "a constant width")
            if w <= 0 or w % 8:
                raise CompileError(syn.loc, f"varbit<{w}>: expected a positive multiple of 8 bits (bmv2 extracts bytes)")
            return VarbitT(w)
        if isinstance(syn, A.TupleT):
            return ListT([self.resolve(a, scope) for a in syn.args])
        if isinstance(syn, A.StackT):
            elem = strip(self.resolve(syn.elem, scope))
            if not isinstance(elem, StructT) or elem.kind not in ("header", "header_union"):
                raise CompileError(syn.loc, f"header stacks must hold headers or header unions, found {elem}")
            n = ExprLowerer(scope, self).const_int(syn.size, "a constant stack size")
            if n <= 0:
                raise CompileError(syn.loc, f"header stack size {n} must be positive")
            return StackT(elem, n)
        if isinstance(syn, A.NamedT):
            simple = {"bool": BoolT(), "error": ErrorT(), "string": StringT(), "void": VoidT(),
                      "match_kind": MatchKindT(), "int": InfIntT(), "_": DontCareT()}
            if syn.name in simple:
                return simple[syn.name]
            ent = scope.get(syn.name, syn.loc)
            if not isinstance(ent, TypeE):
                raise CompileError(syn.loc, f"{syn.name} is not a type")
            t = ent.type
            if syn.args and isinstance(t, ObjT):
                return ObjT(t.kind, t.name, t.decl, {p: self.resolve(a, scope)
                                                      for p, a in zip(t.decl.type_params, syn.args, strict=False)})
            return t
        raise CompileError(syn.loc, f"unsupported type {type(syn).__name__}")

    def main_blocks(self) -> dict[str, A.Decl]:
        """The parser and controls given to V1Switch, by architecture role."""
        assert self.main is not None
        if len(self.main.args) != len(_ARCH_BLOCKS):
            raise CompileError(self.main.loc, f"V1Switch expects {len(_ARCH_BLOCKS)} arguments, "
                               f"found {len(self.main.args)}")
        out: dict[str, A.Decl] = {}
        self.main_ctor_args: dict[str, tuple[list[A.Arg], Any]] = {}
        for role, arg in zip(_ARCH_BLOCKS, self.main.args, strict=False):
            e = arg.expr
            if not (isinstance(e, A.Call) and isinstance(e.func, A.Name)):
                raise CompileError(e.loc, f"V1Switch argument for {role} must be an instantiation like Name()")
            ent = self.scope.get(e.func.name, e.loc)
            want = "parser" if role == "Parser" else "control"
            if not isinstance(ent, DeclE) or ent.kind != want:
                raise CompileError(e.loc, f"{e.func.name}: expected a {want} for the {role} of V1Switch")
            self.main_ctor_args[role] = (e.args, e.loc)  # bound by the block's lowerer
            out[role] = ent.decl
        return out


def _bits_struct(t: Type) -> bool:
    """A struct whose fields are bit<W>, int<W>, bool, serializable enums or such structs (a header may hold it)."""
    return isinstance(t, StructT) and t.kind == "struct" and all(
        isinstance(strip(ft), (BitsT, BoolT)) or isinstance(strip(ft), EnumT) and strip(ft).underlying is not None
        or _bits_struct(strip(ft)) for _, ft in t.fields)


def _qualified(d: A.Decl, prefix: str) -> str:
    a = A.anno(d.annos, "name")
    if a and a.args and isinstance(a.args[0], str):
        n = a.args[0]
        if n.startswith("."):
            return n[1:]
        return f"{prefix}.{n}" if prefix else n
    return f"{prefix}.{d.name}" if prefix else d.name


def qualified(d: A.Decl, prefix: str) -> str:
    """p4c's fully qualified control-plane name (`Ctrl.name`, honouring @name)."""
    return _qualified(d, prefix)


def const_value(prog: Program, scope: Scope, d: A.ConstDecl, t: Type) -> ConstE:
    """Evaluate a constant declaration."""
    ev = ExprLowerer(scope, prog)
    v = ev.expr(d.init, strip(t))
    if isinstance(strip(t), (BitsT, EnumT)) or isinstance(strip(t), InfIntT):
        v = ev.coerce(v, t, d.init.loc, f"constant {d.name}")
    if v.const is None:
        raise CompileError(d.init.loc, f"constant {d.name}: initializer is not a compile-time constant")
    if not isinstance(strip(t), (BitsT, BoolT, InfIntT, EnumT, ErrorT, StringT)):
        ev.coerce(v, t, d.init.loc, f"constant {d.name}")
    return ConstE(v.const, t)
