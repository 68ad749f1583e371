"""The experiment specs' schema types (pydantic) and their errors as one line.

A spec is data a user writes: every field is checked for its type (strictly: "3" is not a number,
true is not 1), its range (finite: .nan and .inf are refused), and names that become directories
are single path components. `checked(adapter, data, where)` validates and turns pydantic's error
into one line naming the first bad value.
"""

from __future__ import annotations

import reprlib
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

from pydantic import AfterValidator, ConfigDict, Field, Strict, TypeAdapter, ValidationError, validate_call

T = TypeVar("T")

# what a dataclass of the schema allows: no key it does not name
FORBID_EXTRA = ConfigDict(extra="forbid")

Int = Annotated[int, Strict()]
Bool = Annotated[bool, Strict()]
Str = Annotated[str, Strict()]
Float = Annotated[float, Strict(), Field(allow_inf_nan=False)]  # an int is a float too
Count = Annotated[int, Strict(), Field(ge=1)]
Positive = Annotated[float, Strict(), Field(gt=0, allow_inf_nan=False)]
NonNegative = Annotated[float, Strict(), Field(ge=0, allow_inf_nan=False)]

MAX_NAME = 64


def _component(name: str) -> str:
    if not (0 < len(name) <= MAX_NAME and name.isascii() and name[0].isalnum()
            and all(c.isalnum() or c in "._+-" for c in name)):
        raise ValueError(f"expected a single path component of 1..{MAX_NAME} letters, digits, '.', '_', '+' "
                         "or '-', starting with a letter or digit (it names a results directory)")
    return name


# a spec's or a variant's name: results/<spec>/<variant>/ must stay inside results/
Name = Annotated[str, Strict(), AfterValidator(_component)]

_short = reprlib.Repr()
_short.maxstring, _short.maxother, _short.maxlevel = 60, 60, 3  # bounded even for deep or huge input


def one_line(exc: ValidationError, where: str) -> str:
    """pydantic's first error as '<where>: <field> <value>: expected ...'."""
    e = exc.errors(include_url=False)[0]
    loc = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in e["loc"]).lstrip(".")
    msg = str(e["msg"]).removeprefix("Value error, ")
    if e["type"] == "unexpected_keyword_argument":
        parent, _, key = loc.rpartition(".")
        return f"{where}: {parent + ': ' if parent else ''}unknown key {key!r}"
    if e["type"] == "missing":
        return f"{where}: {loc}: missing; expected a value"
    msg = msg.replace("Input should be ", "expected ").replace("input should be ", "expected ")
    for bound in ("greater", "less"):  # "expected greater than 0": a value greater than 0
        msg = msg.replace(f"expected {bound} ", f"expected a value {bound} ")
    return f"{where}: {loc}{' ' if loc else ''}{_short.repr(e.get('input'))}: {msg}"


def checked(adapter: TypeAdapter[T], data: Any, where: str) -> T:
    """`data` validated by `adapter`; ValueError of one line naming the first bad value otherwise."""
    try:
        return adapter.validate_python(data)
    except ValidationError as exc:
        raise ValueError(one_line(exc, where)) from None


def call_checked(fn: Callable[..., T], kwargs: dict[str, Any], where: str) -> T:
    """`fn(**kwargs)` with every argument checked against `fn`'s type hints first (strictly)."""
    try:
        checked_fn = validate_call(config=ConfigDict(strict=True, arbitrary_types_allowed=True))(fn)
        return checked_fn(**kwargs)
    except ValidationError as exc:
        raise ValueError(one_line(exc, where)) from None
