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
    quoted: dict[int, bool] = field(default_factory=dict)  # which args were string literals
    parens: bool = False  # written with an argument list (`@a()`)


def p4info_annotations(annos: list[Annotation]) -> list[str]:
    """Annotations as P4Info carries them (p4c's addAnnotations): `@noWarn("unused")`, without @name, @id,
    @brief and @description (held elsewhere in P4Info)."""
    out = []
    for a in annos:
        if a.name in ("name", "id", "brief", "description"):
            continue
        args = ", ".join(f'"{x}"' if isinstance(x, str) and a.quoted.get(i) else str(x) for i, x in enumerate(a.args))
        out.append(f"@{a.name}({args})" if a.args or a.parens else f"@{a.name}")
    return out


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
    """bit<W> or int<W>."""

    width: Expr | None  # None: `bit` alone, which is bit<1>
    signed: bool = False


@dataclass(slots=True, eq=False)
class VarbitT(TypeSyn):
    """varbit<W>."""

    width: Expr


@dataclass(slots=True, eq=False)
class ResolvedT(TypeSyn):
    """A type the compiler already knows (a semantic type), for temporaries it introduces."""

    t: Any


@dataclass(slots=True, eq=False)
class NamedT(TypeSyn):
    """A named type, possibly with type arguments."""

    name: str  # also bool, error, string, void, match_kind, packet_in...
    args: list[TypeSyn] = field(default_factory=list)


@dataclass(slots=True, eq=False)
class StackT(TypeSyn):
    """A header stack type T[n]."""

    elem: TypeSyn
    size: Expr


@dataclass(slots=True, eq=False)
class TupleT(TypeSyn):
    """tuple<...>."""

    args: list[TypeSyn]


# ---- expressions -----------------------------------------------------------------------

@dataclass(slots=True, eq=False)
class Expr:
    """Base of expressions; `type` is filled in by the checker."""

    loc: Loc
    type: Any = field(default=None, kw_only=True)


@dataclass(slots=True, eq=False)
class IntLit(Expr):
    """An integer literal (width set for 8w5)."""

    value: int
    width: int | None = None
    signed: bool = False
    base: int = 10


@dataclass(slots=True, eq=False)
class BoolLit(Expr):
    """true or false."""

    value: bool


@dataclass(slots=True, eq=False)
class StrLit(Expr):
    """A string literal."""

    value: str


@dataclass(slots=True, eq=False)
class Name(Expr):
    """A name."""

    name: str


@dataclass(slots=True, eq=False)
class Member(Expr):
    """`expr.name`."""

    expr: Expr
    name: str


@dataclass(slots=True, eq=False)
class Index(Expr):
    """`expr[index]`."""

    expr: Expr
    index: Expr


@dataclass(slots=True, eq=False)
class Slice(Expr):
    """`expr[hi:lo]`."""

    expr: Expr
    hi: Expr
    lo: Expr


@dataclass(slots=True, eq=False)
class Unary(Expr):
    """A prefix operator."""

    op: str  # '!', '~', '-', '+'
    expr: Expr


@dataclass(slots=True, eq=False)
class Binary(Expr):
    """A binary operator."""

    op: str
    left: Expr
    right: Expr


@dataclass(slots=True, eq=False)
class Ternary(Expr):
    """`cond ? then : other`."""

    cond: Expr
    then: Expr
    other: Expr


@dataclass(slots=True, eq=False)
class Cast(Expr):
    """`(T) expr`."""

    to: TypeSyn
    expr: Expr


@dataclass(slots=True, eq=False)
class Arg:
    """A call argument, possibly named; `_` (don't care) is a Name('_')."""

    name: str | None
    expr: Expr


@dataclass(slots=True, eq=False)
class Call(Expr):
    """A function, method or action call."""

    func: Expr
    args: list[Arg]
    type_args: list[TypeSyn] = field(default_factory=list)


@dataclass(slots=True, eq=False)
class ListExpr(Expr):
    """`{a, b, ...}`, or a struct initializer `{x = a, y = b}` (names given)."""

    items: list[Expr]
    names: list[str] | None = None


@dataclass(slots=True, eq=False)
class Mask(Expr):
    """`value &&& mask` in keysets."""

    value: Expr
    mask: Expr


@dataclass(slots=True, eq=False)
class Range(Expr):
    """`lo .. hi` in keysets."""

    lo: Expr
    hi: Expr


@dataclass(slots=True, eq=False)
class Default(Expr):
    """`default` or `_` in a keyset."""


# ---- statements ------------------------------------------------------------------------

@dataclass(slots=True, eq=False)
class Stmt:
    """Base of statements."""

    loc: Loc


@dataclass(slots=True, eq=False)
class Assign(Stmt):
    """`lhs = rhs;`, or with op (`+`, `<<`, `|+|`...) `lhs op= rhs;` (lhs evaluated once)."""

    lhs: Expr
    rhs: Expr
    op: str = ""


@dataclass(slots=True, eq=False)
class CallStmt(Stmt):
    """A call used as a statement."""

    call: Call


@dataclass(slots=True, eq=False)
class If(Stmt):
    """`if (cond) then else other`."""

    cond: Expr
    then: Stmt
    other: Stmt | None


@dataclass(slots=True, eq=False)
class Block(Stmt):
    """`{ stmts }`."""

    stmts: list[Stmt]


@dataclass(slots=True, eq=False)
class SwitchCase:
    """One case of a switch statement."""

    labels: list[Expr]  # Name of an action, or Default; empty means fallthrough group member
    body: Block | None
    loc: Loc


@dataclass(slots=True, eq=False)
class Switch(Stmt):
    """`switch (expr) { cases }`."""

    expr: Expr
    cases: list[SwitchCase]


@dataclass(slots=True, eq=False)
class For(Stmt):
    """`for (init; cond; update) body` (P4_16 1.2.5); init and update are simple statements."""

    init: list[Stmt]
    cond: Expr | None
    update: list[Stmt]
    body: Stmt


@dataclass(slots=True, eq=False)
class Break(Stmt):
    """`break;` (in a for loop)."""


@dataclass(slots=True, eq=False)
class Continue(Stmt):
    """`continue;` (in a for loop)."""


@dataclass(slots=True, eq=False)
class Exit(Stmt):
    """`exit;`."""


@dataclass(slots=True, eq=False)
class Return(Stmt):
    """`return;`."""

    expr: Expr | None


@dataclass(slots=True, eq=False)
class Empty(Stmt):
    """`;`."""


@dataclass(slots=True, eq=False)
class VarDecl(Stmt):
    """A local variable declaration."""

    typ: TypeSyn
    name: str
    init: Expr | None
    annos: list[Annotation] = field(default_factory=list)


@dataclass(slots=True, eq=False)
class ConstDecl(Stmt):
    """A constant declaration."""

    typ: TypeSyn
    name: str
    init: Expr
    annos: list[Annotation] = field(default_factory=list)


# ---- declarations ----------------------------------------------------------------------

@dataclass(slots=True, eq=False)
class Param:
    """A parameter."""

    direction: str  # '', 'in', 'out', 'inout'
    typ: TypeSyn
    name: str
    annos: list[Annotation]
    loc: Loc
    default: Expr | None = None


@dataclass(slots=True, eq=False)
class Decl:
    """Base of named declarations."""

    loc: Loc
    name: str
    annos: list[Annotation]


@dataclass(slots=True, eq=False)
class Typedef(Decl):
    """`typedef` or `type`."""

    typ: TypeSyn
    new_type: bool  # `type` rather than `typedef`


@dataclass(slots=True, eq=False)
class FieldDecl:
    """A struct or header field."""

    typ: TypeSyn
    name: str
    annos: list[Annotation]
    loc: Loc


@dataclass(slots=True, eq=False)
class StructLike(Decl):
    """A struct, header or header_union declaration."""

    kind: str  # 'header', 'struct', 'header_union'
    fields: list[FieldDecl]
    type_params: list[str] = field(default_factory=list)


@dataclass(slots=True, eq=False)
class EnumDecl(Decl):
    """An enum (serializable when underlying is set)."""

    members: list[str]
    underlying: TypeSyn | None = None
    values: list[Expr] = field(default_factory=list)


@dataclass(slots=True, eq=False)
class ErrorDecl(Decl):
    """`error { ... }`."""

    members: list[str]


@dataclass(slots=True, eq=False)
class MatchKindDecl(Decl):
    """`match_kind { ... }`."""

    members: list[str]


@dataclass(slots=True, eq=False)
class MethodDecl(Decl):
    """A method or constructor of an extern."""

    ret: TypeSyn | None  # None for constructors
    type_params: list[str]
    params: list[Param]
    abstract: bool = False


@dataclass(slots=True, eq=False)
class ExternDecl(Decl):
    """An extern object type."""

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
    """An instantiation `T(args) name;`."""

    typ: TypeSyn
    args: list[Arg]


@dataclass(slots=True, eq=False)
class ActionDecl(Decl):
    """An action."""

    params: list[Param]
    body: Block


@dataclass(slots=True, eq=False)
class KeyElem:
    """One table key element."""

    expr: Expr
    match_kind: str
    annos: list[Annotation]
    loc: Loc


@dataclass(slots=True, eq=False)
class ActionRef:
    """An action named in a table."""

    name: str
    args: list[Arg]
    annos: list[Annotation]
    loc: Loc


@dataclass(slots=True, eq=False)
class Entry:
    """A const table entry."""

    keys: list[Expr]
    action: ActionRef
    annos: list[Annotation]
    loc: Loc
    priority: Expr | None = None


@dataclass(slots=True, eq=False)
class TableDecl(Decl):
    """A table and its properties."""

    keys: list[KeyElem] = field(default_factory=list)
    actions: list[ActionRef] = field(default_factory=list)
    default_action: ActionRef | None = None
    default_const: bool = False
    entries: list[Entry] | None = None
    entries_const: bool = True
    props: dict[str, Expr] = field(default_factory=dict)  # size, implementation, counters, ...


@dataclass(slots=True, eq=False)
class SelectCase:
    """One case of a parser select."""

    keyset: Expr  # ListExpr for several keys
    state: str
    loc: Loc


@dataclass(slots=True, eq=False)
class State(Decl):
    """A parser state."""

    stmts: list[Stmt]
    next: str | None = None              # direct transition
    select: list[Expr] | None = None
    cases: list[SelectCase] = field(default_factory=list)
    trans_loc: Loc | None = None


@dataclass(slots=True, eq=False)
class ParserDecl(Decl):
    """A parser with its states."""

    type_params: list[str]
    params: list[Param]
    ctor_params: list[Param]
    locals: list[Any]
    states: list[State]


@dataclass(slots=True, eq=False)
class ControlDecl(Decl):
    """A control with its locals and apply block."""

    type_params: list[str]
    params: list[Param]
    ctor_params: list[Param]
    locals: list[Any]
    body: Block


@dataclass(slots=True, eq=False)
class Program:
    """A whole program: its top-level declarations, and where its main file ends."""

    decls: list[Any]
    end: Loc | None = None
