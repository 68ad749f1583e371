"""Helpers the generated code calls at packet time (bound into its namespace by `load`)."""

from __future__ import annotations

import logging
import random
import time
from typing import Any

from p4sim.switch import hashes

log = logging.getLogger("p4sim.switch.codegen")


def _tcm(v: int, w: int) -> int:
    """bmv2 two_comp_mod: v as a w-bit two's complement value."""
    v &= (1 << w) - 1
    return v - (1 << w) if v >> (w - 1) else v


def _sat_s(v: int, w: int) -> int:
    lo, hi = -(1 << (w - 1)), (1 << (w - 1)) - 1
    return lo if v < lo else hi if v > hi else v


def _sat_u(v: int, w: int) -> int:
    hi = (1 << w) - 1
    return 0 if v < 0 else hi if v > hi else v


def _stack_last(p: Any, attrs: tuple[str, ...], nxt: int) -> int:
    return getattr(p, attrs[nxt - 1]) if 0 < nxt <= len(attrs) else 0


def _stack_push(p: Any, attrs: tuple[tuple[str, ...], ...], valids: tuple[tuple[str, ...], ...], nxt: str,
                count: int) -> None:
    """P4 push_front(count): shift elements up, the first `count` become invalid. An element is the
    attributes it copies (fields and validity) and the validity bits that clear it (one per header of
    a union)."""
    size = len(valids)
    for i in range(size - 1, -1, -1):
        j = i - count
        if j >= 0:
            for a, b in zip(attrs[i], attrs[j], strict=True):
                setattr(p, a, getattr(p, b))
        else:
            for v in valids[i]:
                setattr(p, v, 0)
    setattr(p, nxt, min(size, getattr(p, nxt) + count))


def _stack_pop(p: Any, attrs: tuple[tuple[str, ...], ...], valids: tuple[tuple[str, ...], ...], nxt: str,
               count: int) -> None:
    """P4 pop_front(count): shift elements down, the last `count` become invalid (elements as in _stack_push)."""
    size = len(valids)
    for i in range(size):
        j = i + count
        if j < size:
            for a, b in zip(attrs[i], attrs[j], strict=True):
                setattr(p, a, getattr(p, b))
        else:
            for v in valids[i]:
                setattr(p, v, 0)
    setattr(p, nxt, max(0, getattr(p, nxt) - count))


def _fmt(fmt: str, vals: tuple[int, ...]) -> str:
    """bmv2 log_msg formatting: each {} takes the next value."""
    parts = fmt.split("{}")
    out = parts[0]
    for i, rest in enumerate(parts[1:]):
        out += (str(vals[i]) if i < len(vals) else "{}") + rest
    return out


def _assert_failed(p: Any, what: str) -> None:
    """An assert/assume failed: bmv2 aborts the process; p4sim logs it and drops the packet."""
    log.error("%s failed in the P4 program; dropping the packet", what)
    p._exit = True
    p.standard_metadata__egress_spec = 511
    p._dropped_by_assert = True


def helpers() -> dict[str, Any]:
    """The names generated code finds in its namespace before the program's own constants."""
    return {
        "_tcm": _tcm, "_sat_s": _sat_s, "_sat_u": _sat_u, "_stack_last": _stack_last,
        "_rand": random.randint, "_time": time.monotonic, "hashes": hashes,
        "csum16_int": hashes.csum16_int, "_stack_push": _stack_push, "_stack_pop": _stack_pop,
        "_fmt": _fmt, "_log": logging.getLogger("p4sim.switch.program_log"), "_assert_failed": _assert_failed,
    }
