"""Values of checked expressions and the bmv2 JSON they lower to: typed values (`V`), hexstr and
expression nodes, the parameter form of operands, widths and wrapping, and source-like text."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from p4sim.compiler import ast as A
from p4sim.compiler.env import Ent
from p4sim.compiler.errors import Loc
from p4sim.compiler.types import BitsT, Type, strip

log = logging.getLogger(__name__)


@dataclass(slots=True)
class V:
    """A checked expression: bmv2 JSON (scalars), type, entity (lvalues, aggregates), constant."""

    j: dict | None
    t: Type
    ent: Ent | None = None
    const: Any = None


def hexstr(value: int, width: int | None = None) -> dict:
    """A bmv2 hexstr operand."""
    if value < 0:
        return {"type": "hexstr", "value": "-0x%x" % -value}
    w = 2 * max(1, ((width or value.bit_length() or 1) + 7) // 8)  # whole bytes, as p4c writes them
    return {"type": "hexstr", "value": f"0x{value:0{w}x}"}


def jexpr(op: str, left: dict | None, right: dict | None) -> dict:
    """A bmv2 expression node."""
    return {"type": "expression", "value": {"op": op, "left": left, "right": right}}


def operand(j: dict) -> dict:
    """A type-value object as a parameter of a primitive or parser op. bmv2 (JSON_format.md, actions)
    reads a parameter of type `expression` as a whole expression, so an operator node is wrapped once
    more; action data inside an expression is `local`, not `runtime_data`."""
    if j.get("type") == "expression":
        return {"type": "expression", "value": _local_data(j)}
    return j


def _local_data(j: dict) -> dict:
    t = j.get("type")
    if t == "runtime_data":
        return {"type": "local", "value": j["value"]}
    if t != "expression":
        return j
    node = dict(j["value"])
    for side in ("left", "right", "cond"):
        if isinstance(node.get(side), dict):
            node[side] = _local_data(node[side])
    return {"type": "expression", "value": node}


def overflow(loc: Loc, value: str, width: int) -> None:
    """p4c's warning for a constant made to fit a width (it keeps the low bits, as p4c does)."""
    log.warning("%s:%s: warning: %s%s: value does not fit in %s bits", loc.file, loc.line, width, value, width)


def mask_of(width: int) -> int:
    """All-ones of width bits."""
    return (1 << width) - 1


def wrap(value: int, t: Type) -> int:
    """value reduced to the range of bit<W>/int<W>."""
    t = strip(t)
    if isinstance(t, BitsT):
        value &= mask_of(t.width)
        if t.signed and value >> (t.width - 1):
            value -= 1 << t.width
    return value


def describe(e: A.Expr) -> str:
    """Source-like text of an expression (also p4c's key names, e.g. `hdr.ipv4.dstAddr`)."""
    if isinstance(e, A.Name):
        return e.name
    if isinstance(e, A.Member):
        return f"{describe(e.expr)}.{e.name}"
    if isinstance(e, A.Index):
        return f"{describe(e.expr)}[{describe(e.index)}]"
    if isinstance(e, A.Slice):
        return f"{describe(e.expr)}[{describe(e.hi)}:{describe(e.lo)}]"
    if isinstance(e, A.IntLit):
        if e.width is not None:
            return f"{e.width}{'s' if e.signed else 'w'}{e.value}"
        return str(e.value)
    if isinstance(e, A.BoolLit):
        return "true" if e.value else "false"
    if isinstance(e, A.Call):
        return f"{describe(e.func)}({', '.join(describe(a.expr) for a in e.args)})"
    if isinstance(e, A.Binary):
        return f"{describe(e.left)} {e.op} {describe(e.right)}"
    if isinstance(e, A.Unary):
        return f"{e.op}{describe(e.expr)}"
    if isinstance(e, A.Cast):
        return f"({type(e.to).__name__}){describe(e.expr)}"
    return type(e).__name__
