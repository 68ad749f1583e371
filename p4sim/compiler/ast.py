"""Syntax tree of P4_16 programs. Expression nodes carry the type found by the checker."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from p4sim.compiler.errors import Loc


@dataclass(slots=True, eq=False)
class Annotation:
    """`@name(args)`; args are literal values (str or int) or raw token texts."""

    name: str
    args: list[Any]
    loc: Loc


def anno(annos: list[Annotation], name: str) -> Annotation | None:
    """The annotation called name, if present."""
    for a in annos:
        if a.name == name:
            return a
    return None


# ---- syntactic types -------------------------------------------------------------------

@dataclass(slots=True, eq=False)
class TypeSyn:
    """Base of type syntax."""

    loc: Loc


@dataclass(slots=True, eq=False)
class BitT(TypeSyn):
    width: Expr | None  # None: `bit` alone, which is bit<1>
    signed: bool = False


@dataclass(slots=True, eq=False)
class VarbitT(TypeSyn):
    width: Expr


@dataclass(slots=True, eq=False)
class NamedT(TypeSyn):
    name: str  # also bool, error, string, void, match_kind, packet_in...
    args: list[TypeSyn] = field(default_factory=list)


@dataclass(slots=True, eq=False)
class StackT(TypeSyn):
    elem: TypeSyn
    size: Expr


@dataclass(slots=True, eq=False)
class TupleT(TypeSyn):
    args: list[TypeSyn]


# ---- expressions -----------------------------------------------------------------------

@dataclass(slots=True, eq=False)
class Expr:
    """Base of expressions; `type` is filled in by the checker."""

    loc: Loc
    type: Any = field(default=None, kw_only=True)


@dataclass(slots=True, eq=False)
class IntLit(Expr):
    value: int
    width: int | None = None
    signed: bool = False
    base: int = 10


@dataclass(slots=True, eq=False)
class BoolLit(Expr):
    value: bool


@dataclass(slots=True, eq=False)
class StrLit(Expr):
    value: str


@dataclass(slots=True, eq=False)
class Name(Expr):
    name: str


@dataclass(slots=True, eq=False)
class Member(Expr):
    expr: Expr
    name: str


@dataclass(slots=True, eq=False)
class Index(Expr):
    expr: Expr
    index: Expr


@dataclass(slots=True, eq=False)
class Slice(Expr):
    expr: Expr
    hi: Expr
    lo: Expr


@dataclass(slots=True, eq=False)
class Unary(Expr):
    op: str  # '!', '~', '-', '+'
    expr: Expr


@dataclass(slots=True, eq=False)
class Binary(Expr):
    op: str
    left: Expr
    right: Expr


@dataclass(slots=True, eq=False)
class Ternary(Expr):
    cond: Expr
    then: Expr
    other: Expr


@dataclass(slots=True, eq=False)
class Cast(Expr):
    to: TypeSyn
    expr: Expr


@dataclass(slots=True, eq=False)
class Arg:
    """A call argument, possibly named; `_` (don't care) is a Name('_')."""

    name: str | None
    expr: Expr


@dataclass(slots=True, eq=False)
class Call(Expr):
    func: Expr
    args: list[Arg]
    type_args: list[TypeSyn] = field(default_factory=list)


@dataclass(slots=True, eq=False)
class ListExpr(Expr):
    items: list[Expr]


@dataclass(slots=True, eq=False)
class Mask(Expr):
    value: Expr
    mask: Expr


@dataclass(slots=True, eq=False)
class Range(Expr):
    lo: Expr
    hi: Expr


@dataclass(slots=True, eq=False)
class Default(Expr):
    """`default` or `_` in a keyset."""


# ---- statements ------------------------------------------------------------------------

@dataclass(slots=True, eq=False)
class Stmt:
    loc: Loc


@dataclass(slots=True, eq=False)
class Assign(Stmt):
    lhs: Expr
    rhs: Expr


@dataclass(slots=True, eq=False)
class CallStmt(Stmt):
    call: Call


@dataclass(slots=True, eq=False)
class If(Stmt):
    cond: Expr
    then: Stmt
    other: Stmt | None


@dataclass(slots=True, eq=False)
class Block(Stmt):
    stmts: list[Stmt]


@dataclass(slots=True, eq=False)
class SwitchCase:
    labels: list[Expr]  # Name of an action, or Default; empty means fallthrough group member
    body: Block | None
    loc: Loc


@dataclass(slots=True, eq=False)
class Switch(Stmt):
    expr: Expr
    cases: list[SwitchCase]


@dataclass(slots=True, eq=False)
class Exit(Stmt):
    pass


@dataclass(slots=True, eq=False)
class Return(Stmt):
    expr: Expr | None


@dataclass(slots=True, eq=False)
class Empty(Stmt):
    pass


@dataclass(slots=True, eq=False)
class VarDecl(Stmt):
    typ: TypeSyn
    name: str
    init: Expr | None
    annos: list[Annotation] = field(default_factory=list)


@dataclass(slots=True, eq=False)
class ConstDecl(Stmt):
    typ: TypeSyn
    name: str
    init: Expr
    annos: list[Annotation] = field(default_factory=list)


# ---- declarations ----------------------------------------------------------------------

@dataclass(slots=True, eq=False)
class Param:
    direction: str  # '', 'in', 'out', 'inout'
    typ: TypeSyn
    name: str
    annos: list[Annotation]
    loc: Loc
    default: Expr | None = None


@dataclass(slots=True, eq=False)
class Decl:
    loc: Loc
    name: str
    annos: list[Annotation]


@dataclass(slots=True, eq=False)
class Typedef(Decl):
    typ: TypeSyn
    new_type: bool  # `type` rather than `typedef`


@dataclass(slots=True, eq=False)
class FieldDecl:
    typ: TypeSyn
    name: str
    annos: list[Annotation]
    loc: Loc


@dataclass(slots=True, eq=False)
class StructLike(Decl):
    kind: str  # 'header', 'struct', 'header_union'
    fields: list[FieldDecl]
    type_params: list[str] = field(default_factory=list)


@dataclass(slots=True, eq=False)
class EnumDecl(Decl):
    members: list[str]
    underlying: TypeSyn | None = None
    values: list[Expr] = field(default_factory=list)


@dataclass(slots=True, eq=False)
class ErrorDecl(Decl):
    members: list[str]


@dataclass(slots=True, eq=False)
class MatchKindDecl(Decl):
    members: list[str]


@dataclass(slots=True, eq=False)
class MethodDecl(Decl):
    ret: TypeSyn | None  # None for constructors
    type_params: list[str]
    params: list[Param]
    abstract: bool = False


@dataclass(slots=True, eq=False)
class ExternDecl(Decl):
    type_params: list[str]
    methods: list[MethodDecl]


@dataclass(slots=True, eq=False)
class FunctionDecl(Decl):
    """An extern function prototype, or a function with a body."""

    ret: TypeSyn
    type_params: list[str]
    params: list[Param]
    body: Block | None = None


@dataclass(slots=True, eq=False)
class BlockTypeDecl(Decl):
    """`parser P<H>(...);`, `control C<H>(...);` or `package Pkg<H>(...);` prototypes."""

    kind: str
    type_params: list[str]
    params: list[Param]


@dataclass(slots=True, eq=False)
class Instance(Decl):
    typ: TypeSyn
    args: list[Arg]


@dataclass(slots=True, eq=False)
class ActionDecl(Decl):
    params: list[Param]
    body: Block


@dataclass(slots=True, eq=False)
class KeyElem:
    expr: Expr
    match_kind: str
    annos: list[Annotation]
    loc: Loc


@dataclass(slots=True, eq=False)
class ActionRef:
    name: str
    args: list[Arg]
    annos: list[Annotation]
    loc: Loc


@dataclass(slots=True, eq=False)
class Entry:
    keys: list[Expr]
    action: ActionRef
    annos: list[Annotation]
    loc: Loc
    priority: Expr | None = None


@dataclass(slots=True, eq=False)
class TableDecl(Decl):
    keys: list[KeyElem] = field(default_factory=list)
    actions: list[ActionRef] = field(default_factory=list)
    default_action: ActionRef | None = None
    default_const: bool = False
    entries: list[Entry] | None = None
    entries_const: bool = True
    props: dict[str, Expr] = field(default_factory=dict)  # size, implementation, counters, ...


@dataclass(slots=True, eq=False)
class SelectCase:
    keyset: Expr  # ListExpr for several keys
    state: str
    loc: Loc


@dataclass(slots=True, eq=False)
class State(Decl):
    stmts: list[Stmt]
    next: str | None = None              # direct transition
    select: list[Expr] | None = None
    cases: list[SelectCase] = field(default_factory=list)
    trans_loc: Loc | None = None


@dataclass(slots=True, eq=False)
class ParserDecl(Decl):
    type_params: list[str]
    params: list[Param]
    ctor_params: list[Param]
    locals: list[Any]
    states: list[State]


@dataclass(slots=True, eq=False)
class ControlDecl(Decl):
    type_params: list[str]
    params: list[Param]
    ctor_params: list[Param]
    locals: list[Any]
    body: Block


@dataclass(slots=True, eq=False)
class Program:
    decls: list[Any]
