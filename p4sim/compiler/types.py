"""Semantic types of P4_16 (spec section 7) as the checker uses them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


class Type:
    """Base of semantic types."""

    def __str__(self) -> str:
        return type(self).__name__


@dataclass(slots=True, frozen=True)
class BitsT(Type):
    """bit<W> or int<W>."""

    width: int
    signed: bool = False

    def __str__(self) -> str:
        return f"{'int' if self.signed else 'bit'}<{self.width}>"


@dataclass(slots=True, frozen=True)
class VarbitT(Type):
    """varbit<N>: a header field of 0..N bits whose length the parser gives (extract with a size)."""

    max_width: int

    def __str__(self) -> str:
        return f"varbit<{self.max_width}>"


@dataclass(slots=True, frozen=True)
class InfIntT(Type):
    """The type of integer literals without a width (arbitrary precision)."""

    def __str__(self) -> str:
        return "int"


@dataclass(slots=True, frozen=True)
class BoolT(Type):
    """bool."""

    def __str__(self) -> str:
        return "bool"


@dataclass(slots=True, frozen=True)
class StringT(Type):
    """string (only for log_msg)."""

    def __str__(self) -> str:
        return "string"


@dataclass(slots=True, frozen=True)
class VoidT(Type):
    """void."""

    def __str__(self) -> str:
        return "void"


@dataclass(slots=True, frozen=True)
class ErrorT(Type):
    """error."""

    def __str__(self) -> str:
        return "error"


@dataclass(slots=True, frozen=True)
class MatchKindT(Type):
    """match_kind."""

    def __str__(self) -> str:
        return "match_kind"


@dataclass(slots=True, frozen=True)
class DontCareT(Type):
    """The type of `_`."""

    def __str__(self) -> str:
        return "_"


@dataclass(slots=True, eq=False)
class StructT(Type):
    """struct, header or header_union: ordered named fields."""

    kind: str
    name: str
    fields: list[tuple[str, Type]] = field(default_factory=list)
    annos: list[Any] = field(default_factory=list)
    field_annos: dict[str, list[Any]] = field(default_factory=dict)

    def field_type(self, name: str) -> Type | None:
        """Type of the field called name, or None."""
        for n, t in self.fields:
            if n == name:
                return t
        return None

    def width(self) -> int:
        """Total width in bits of a header's fields."""
        return sum(bit_width(t) for _, t in self.fields)

    def __str__(self) -> str:
        return f"{self.kind} {self.name}"


@dataclass(slots=True, eq=False)
class StackT(Type):
    """A header stack: elem[size]."""

    elem: StructT
    size: int

    def __str__(self) -> str:
        return f"{self.elem.name}[{self.size}]"


@dataclass(slots=True, eq=False)
class EnumT(Type):
    """enum; serializable when underlying is set (values then hold the member values)."""

    name: str
    members: list[str]
    underlying: BitsT | None = None
    values: dict[str, int] = field(default_factory=dict)

    def __str__(self) -> str:
        return f"enum {self.name}"


@dataclass(slots=True, eq=False)
class ListT(Type):
    """The type of `{a, b}` list expressions and tuples."""

    items: list[Type]

    def __str__(self) -> str:
        return "tuple<" + ", ".join(map(str, self.items)) + ">"


@dataclass(slots=True, eq=False)
class TypeVarT(Type):
    """An unbound type parameter of a generic declaration."""

    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(slots=True, eq=False)
class NewT(Type):
    """A `type` declaration: a distinct type over bits."""

    name: str
    base: Type

    def __str__(self) -> str:
        return self.name


@dataclass(slots=True, eq=False)
class ObjT(Type):
    """Extern objects, tables, actions, parsers, controls, packages: not values."""

    kind: str
    name: str
    decl: Any = None
    args: dict[str, Type] = field(default_factory=dict)

    def __str__(self) -> str:
        return f"{self.kind} {self.name}"


ERROR_WIDTH = 32  # bmv2 stores error values in 32 bits, like standard_metadata.parser_error
MAX_WIDTH = 2048  # the widest bit<W> and literal width, p4c's ("2049 size too large")
MAX_CONST_BITS = 2 * MAX_WIDTH  # a compile-time integer's bits (a literal has MAX_WIDTH at most)
ENUM_WIDTH = 32   # p4c lowers plain enums to bit<32>


def strip(t: Type) -> Type:
    """Underlying type of a `type` declaration."""
    while isinstance(t, NewT):
        t = t.base
    return t


def bit_width(t: Type) -> int:
    """Width in bits of a type stored in a bmv2 field."""
    t = strip(t)
    if isinstance(t, BitsT):
        return t.width
    if isinstance(t, VarbitT):
        return t.max_width
    if isinstance(t, BoolT):
        return 1
    if isinstance(t, ErrorT):
        return ERROR_WIDTH
    if isinstance(t, EnumT):
        return t.underlying.width if t.underlying else ENUM_WIDTH
    if isinstance(t, StructT):
        return t.width()
    raise ValueError(f"type {t} has no bit width: expected bit<W>, int<W>, bool, error or enum")


def is_scalar(t: Type) -> bool:
    """Stored in one bmv2 field."""
    return isinstance(strip(t), (BitsT, BoolT, ErrorT, EnumT))


def same(a: Type, b: Type) -> bool:
    """Type equality (structural for bits, nominal for named types)."""
    a, b = strip(a), strip(b)
    if isinstance(a, (BitsT, BoolT, InfIntT, StringT, ErrorT, VoidT)):
        return a == b
    if isinstance(a, ListT) and isinstance(b, ListT):
        return len(a.items) == len(b.items) and all(same(x, y) for x, y in zip(a.items, b.items, strict=False))
    return a is b
