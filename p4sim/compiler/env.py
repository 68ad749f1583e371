"""What names denote: entities (constants, bmv2 fields and headers, objects) in nested scopes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from p4sim.compiler import ast as A
from p4sim.compiler.errors import CompileError, Loc
from p4sim.compiler.rewrite import used_names
from p4sim.compiler.types import StackT, StructT, Type


class Ent:
    """Base of what a name can denote."""


@dataclass(slots=True, eq=False)
class ConstE(Ent):
    """A compile-time constant (int, bool, or a string for string literals)."""

    value: Any
    type: Type


@dataclass(slots=True, eq=False)
class FieldE(Ent):
    """One bmv2 field: [header instance, field name]."""

    ref: list[str]
    type: Type


@dataclass(slots=True, eq=False)
class DynFieldE(FieldE):
    """A field of a header stack element whose index is known at run time: `j` is bmv2's
    access_field(dereference_header_stack(stack, index), offset) expression (ref is the first element's)."""

    j: dict = field(default_factory=dict)


@dataclass(slots=True, eq=False)
class DynHeaderE(Ent):
    """A header stack element at a run-time index (`hs[i]`): only its fields can be used."""

    stack: Any  # StackE
    index: dict  # the index as bmv2 JSON


@dataclass(slots=True, eq=False)
class HeaderE(Ent):
    """A bmv2 header instance (a header, or a struct stored as metadata header)."""

    inst: str
    type: StructT
    metadata: bool = False


@dataclass(slots=True, eq=False)
class StructE(Ent):
    """A struct value spread over several entities."""

    members: dict[str, Ent]
    type: StructT


@dataclass(slots=True, eq=False)
class StackE(Ent):
    """A header stack: bmv2 header_stacks entry and its element instances."""

    name: str
    type: StackT
    elems: list[HeaderE]


@dataclass(slots=True, eq=False)
class RuntimeE(Ent):
    """An action's directionless parameter: bmv2 runtime_data index."""

    index: int
    type: Type


@dataclass(slots=True, eq=False)
class ValueE(Ent):
    """A function parameter bound to an already checked value (p4sim inlines functions)."""

    value: Any


@dataclass(slots=True, eq=False)
class TypeE(Ent):
    """A name that denotes a type."""

    type: Type


@dataclass(slots=True, eq=False)
class DeclE(Ent):
    """A declaration used by name: action, table, extern function, parser/control type..."""

    kind: str  # 'action', 'table', 'function', 'parser', 'control', 'package', 'instance', 'packet'
    decl: Any
    qname: str = ""
    extra: Any = None


@dataclass(slots=True)
class Scope:
    """A dictionary of names with a parent scope."""

    parent: Scope | None = None
    names: dict[str, Ent] = field(default_factory=dict)

    def lookup(self, name: str) -> Ent | None:
        """The innermost entity called name, or None."""
        s: Scope | None = self
        while s is not None:
            e = s.names.get(name)
            if e is not None:
                return e
            s = s.parent
        return None

    def get(self, name: str, loc: Loc) -> Ent:
        """The entity called name, or a compile error."""
        e = self.lookup(name)
        if e is None:
            raise CompileError(loc, f"{name}: undefined name")
        return e

    def add(self, name: str, ent: Ent, loc: Loc | None = None, redefine: bool = False) -> None:
        """Declare name in this scope."""
        if not redefine and name in self.names and loc is not None:
            raise CompileError(loc, f"{name}: duplicate declaration")
        self.names[name] = ent

    def child(self) -> Scope:
        """A new scope nested in this one."""
        return Scope(self)


def storage_of(ents: list[Ent | None]) -> frozenset[str]:
    """The bmv2 storage entities occupy, coarsely: header instances (a stack as a whole), and scalar
    fields by name ("scalars.x")."""
    out: set[str] = set()
    for ent in ents:
        if isinstance(ent, FieldE):  # also DynFieldE: ref is its stack's first element's
            out.add(".".join(ent.ref) if ent.ref[0] == "scalars" else ent.ref[0].split("[")[0])
        elif isinstance(ent, HeaderE):
            out.add(ent.inst.split("[")[0])
        elif isinstance(ent, StructE):
            out |= storage_of(list(ent.members.values()))
        elif isinstance(ent, StackE):
            out.add(ent.name)
        elif isinstance(ent, DynHeaderE):
            out.add(ent.stack.name)
    return frozenset(out)


def aliased_params(d: A.ActionDecl, home: Scope, args: dict[str, Ent | None]) -> set[str]:
    """The parameters of d whose argument shares storage with what the body names outside its parameters
    (in its own body or an action it calls), or with another parameter's argument."""
    reached = storage_of([home.lookup(n) for n in _outer_names(d, home, 0)])
    keys = {n: storage_of([ent]) for n, ent in args.items()}
    out = set()
    for p in d.params:
        others = frozenset().union(*(k for n, k in keys.items() if n != p.name))
        if keys[p.name] & (reached | others):
            out.add(p.name)
    return out


def _outer_names(d: A.ActionDecl, home: Scope, depth: int) -> set[str]:
    """Names the body of d uses that are not its parameters or locals (also in the actions it calls)."""
    names = used_names(d.body.stmts) - {p.name for p in d.params}
    for n in list(names):
        ent = home.lookup(n)
        if isinstance(ent, DeclE) and ent.kind == "action" and depth < 8:
            names |= _outer_names(ent.decl, ent.extra if ent.extra is not None else home, depth + 1)
    return names
