"""Bytestrings, match keys and action parameters checked as PI checks them (P4Runtime spec 8.3/8.4)."""

from __future__ import annotations

import pytest
from google.rpc import code_pb2

from p4sim.switch.p4runtime import codec
from p4sim.switch.p4runtime.errors import P4RuntimeError
from p4sim.switch.p4runtime.schema import ActionInfo, MatchFieldInfo, ParamInfo, TableInfo
from p4sim.switch.values import Exact, Lpm, Range, Ternary


def table(*fields: tuple[str, int, str]) -> TableInfo:
    mfs = [MatchFieldInfo(i + 1, n, w, k) for i, (n, w, k) in enumerate(fields)]
    return TableInfo(1, "t", mfs, {m.id: m for m in mfs}, {}, 0, 0, 0, 0, False, 16,
                     any(m.kind in ("ternary", "range", "optional") for m in mfs))


def code_of(fn, *args) -> int:  # noqa: ANN001
    with pytest.raises(P4RuntimeError) as ei:
        fn(*args)
    return ei.value.code


def test_bytestrings() -> None:
    assert codec.decode(b"\x00\x00\x01\xff", 9, "x") == 0x1FF  # padded form accepted
    assert codec.encode(0) == b"\x00" and codec.encode(0x1FF) == b"\x01\xff"  # canonical form
    assert code_of(codec.decode, b"\x02\x00", 9, "x") == code_pb2.OUT_OF_RANGE
    assert code_of(codec.decode, b"", 9, "x") == code_pb2.INVALID_ARGUMENT


def test_match_kinds_and_their_errors() -> None:
    t = table(("dst", 32, "lpm"))
    assert codec.match_key(t, [(1, "lpm", b"\x0a\x00\x00\x00", 8)]) == (Lpm(0x0A000000, 8),)
    assert code_of(codec.match_key, t, [(1, "lpm", b"\x0a\x00\x00\x01", 8)]) == code_pb2.INVALID_ARGUMENT
    assert code_of(codec.match_key, t, [(1, "lpm", b"\x0a", 33)]) == code_pb2.OUT_OF_RANGE
    assert code_of(codec.match_key, t, [(1, "lpm", b"\x00", 0)]) == code_pb2.INVALID_ARGUMENT
    assert code_of(codec.match_key, t, [(1, "exact", b"\x0a", None)]) == code_pb2.INVALID_ARGUMENT
    assert code_of(codec.match_key, t, [(2, "lpm", b"\x0a", 8)]) == code_pb2.INVALID_ARGUMENT

    t = table(("a", 16, "exact"), ("b", 8, "ternary"), ("c", 8, "range"), ("d", 9, "optional"))
    key = codec.match_key(t, [(4, "optional", b"\x01\x00", None), (1, "exact", b"\x12", None),
                              (3, "range", b"\x06", b"\x11"), (2, "ternary", b"\x10", b"\xf0")])
    assert key == (Exact(0x12), Ternary(0x10, 0xF0), Range(6, 17), Exact(0x100))
    assert codec.match_key(t, [(1, "exact", b"\x01", None)]) == (Exact(1), None, None, None)  # don't cares
    assert code_of(codec.match_key, t, []) == code_pb2.INVALID_ARGUMENT  # exact field missing
    assert code_of(codec.match_key, t, [(1, "exact", b"\x01", None)] * 2) == code_pb2.INVALID_ARGUMENT
    bad = [(1, "exact", b"\x01", None)]
    assert code_of(codec.match_key, t, bad + [(2, "ternary", b"\x11", b"\xf0")]) == code_pb2.INVALID_ARGUMENT
    assert code_of(codec.match_key, t, bad + [(2, "ternary", b"\x00", b"\x00")]) == code_pb2.INVALID_ARGUMENT
    assert code_of(codec.match_key, t, bad + [(3, "range", b"\x07", b"\x06")]) == code_pb2.INVALID_ARGUMENT
    assert code_of(codec.match_key, t, bad + [(3, "range", b"\x00", b"\xff")]) == code_pb2.INVALID_ARGUMENT
    assert code_of(codec.check_priority, t, 0) == code_pb2.INVALID_ARGUMENT
    assert codec.check_priority(t, 5) == 5
    assert code_of(codec.check_priority, table(("a", 8, "exact")), 5) == code_pb2.INVALID_ARGUMENT


def test_action_params() -> None:
    params = [ParamInfo(1, "port", 9), ParamInfo(2, "mac", 48)]
    a = ActionInfo(7, "set", params, {p.id: p for p in params}, {1: 0, 2: 1})
    assert codec.action_args(a, [(2, b"\xaa"), (1, b"\x01\x00")]) == [0x100, 0xAA]
    assert code_of(codec.action_args, a, [(1, b"\x01")]) == code_pb2.INVALID_ARGUMENT
    assert code_of(codec.action_args, a, [(1, b"\x01"), (1, b"\x02")]) == code_pb2.INVALID_ARGUMENT
    assert code_of(codec.action_args, a, [(1, b"\x01"), (3, b"\x02")]) == code_pb2.INVALID_ARGUMENT
    assert code_of(codec.action_args, a, [(1, b"\x02\x00"), (2, b"\x02")]) == code_pb2.OUT_OF_RANGE
