"""Extern calls under `if` in table actions: p4c's `_jump_if_zero`/`_jump` primitives, compiled and run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from p4sim.compiler.errors import CompileError
from p4sim.switch.device import Device
from p4sim.switch.values import ActionCall, Exact
from p4sim.tests.corpus import build

LOCALS = """counter(4, CounterType.packets) c;
    action a(bit<8> v) {
        m.x = v;
        if (hdr.h.a == 1) {
            c.count(0);
            if (hdr.h.c == 2) { mark_to_drop(sm); } else { c.count(2); }
        } else {
            c.count(1);
            exit;
        }
        hdr.h.b = 7;
    }
    table t { key = { hdr.h.a: exact; } actions = { a; } }"""
BODY = "sm.egress_spec = 2; t.apply(); hdr.h.c = m.x;"


def _ops(res, name: str) -> list[tuple[str, str | None]]:
    act = next(a for a in res.json["actions"] if a["name"] == name)
    return [(p["op"], p["parameters"][-1]["value"] if p["op"].startswith("_jump") else None)
            for p in act["primitives"]]


def test_if_around_calls_becomes_jumps_with_absolute_offsets(tmp_path: Path) -> None:
    res = build(tmp_path, BODY, LOCALS)
    # hasExited = false; m.x = v; the if/else as jumps; exit sets hasExited, which guards hdr.h.b = 7
    # (bmv2's exit only marks the packet: the rest of the action would run; p4c guards it too)
    assert _ops(res, "I.a") == [
        ("assign", None), ("assign", None), ("_jump_if_zero", "0x09"), ("count", None), ("_jump_if_zero", "0x07"),
        ("mark_to_drop", None), ("_jump", "0x08"), ("count", None), ("_jump", "0x0c"), ("count", None),
        ("exit", None), ("assign", None), ("assign", None), ("assign", None)]
    jz = next(p for a in res.json["actions"] if a["name"] == "I.a" for p in a["primitives"]
              if p["op"] == "_jump_if_zero")
    assert jz["parameters"][0]["value"]["value"]["op"] == "b2d"  # p4c converts the condition to data


def test_assignments_only_stay_predicated(tmp_path: Path) -> None:
    res = build(tmp_path, "t.apply();", "action a() { if (m.f) { m.x = 1; } } "
                "table t { key = { m.x: exact; } actions = { a; } }")
    assert [op for op, _ in _ops(res, "I.a")] == ["assign", "assign"]


@pytest.mark.parametrize("fused", ["1", "0"])
def test_jumps_run_on_the_switch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fused: str) -> None:
    monkeypatch.setenv("P4SIM_FUSED", fused)
    res = build(tmp_path, BODY, LOCALS)
    d = Device(ports={1: "j1", 2: "j2"})
    d.commit_pipeline(d.load_pipeline(json.dumps(res.json)))
    t = d.pipeline.table("t")
    t.insert((Exact(1),), ActionCall("I.a", (5,)))
    t.insert((Exact(3),), ActionCall("I.a", (6,)))
    assert d.process(1, bytes([1, 0, 0, 0])) == [(2, bytes([1, 0, 7, 5]))]   # then, inner else
    assert d.process(1, bytes([1, 0, 0, 2])) == []                           # then, inner then: drop
    assert d.process(1, bytes([3, 0, 0, 9])) == [(2, bytes([3, 0, 0, 9]))]   # else: exit before the rest
    c = d.pipeline.counter("I.c")
    assert [c.read(i)[0] for i in range(3)] == [2, 1, 1]


def test_jumps_in_p4c_shape_with_empty_else(tmp_path: Path) -> None:
    """A `_jump` to its own target (p4c's `else {}`) and nesting directly at the end of a branch."""
    res = build(tmp_path, BODY, LOCALS)
    doc = res.json
    act = next(a for a in doc["actions"] if a["name"] == "I.a")
    hx = [{"type": "hexstr", "value": f"0x{n:02x}"} for n in range(16)]
    cnt = next(p for p in act["primitives"] if p["op"] == "count")
    cond = next(p for p in act["primitives"] if p["op"] == "_jump_if_zero")["parameters"][0]

    def count(i: int) -> dict:
        return {"op": "count", "parameters": [cnt["parameters"][0], hx[i]]}
    # if (a == 1) { if (a == 1) { count(0); } else { } } count(3);
    act["primitives"] = [{"op": "_jump_if_zero", "parameters": [cond, hx[4]]},
                         {"op": "_jump_if_zero", "parameters": [cond, hx[4]]}, count(0),
                         {"op": "_jump", "parameters": [hx[4]]}, count(3)]
    d = Device(ports={1: "j1", 2: "j2"})
    d.commit_pipeline(d.load_pipeline(json.dumps(doc)))
    d.pipeline.table("t").insert((Exact(1),), ActionCall("I.a", (5,)))
    d.pipeline.table("t").insert((Exact(3),), ActionCall("I.a", (5,)))
    d.process(1, bytes([1, 0, 0, 0]))
    d.process(1, bytes([3, 0, 0, 0]))
    c = d.pipeline.counter("I.c")
    assert (c.read(0)[0], c.read(3)[0]) == (1, 2)


def _field(h: str, f: str) -> dict:
    return {"type": "field", "value": [h, f]}


def _expr(e: dict) -> dict:
    return {"type": "expression", "value": {"type": "expression", "value": e}}


def test_backward_jump_runs_as_a_loop(tmp_path: Path) -> None:
    # p4c's shape of `for (h.b = 0; h.b < h.c; h.b = h.b + 1) c.count(0);`: a backward _jump
    res = build(tmp_path, BODY, LOCALS)
    doc = res.json
    act = next(a for a in doc["actions"] if a["name"] == "I.a")
    count = next(p for p in act["primitives"] if p["op"] == "count")
    count = {**count, "parameters": [count["parameters"][0], {"type": "hexstr", "value": "0x0"}]}
    less = {"op": "<", "left": _field("h", "b"), "right": _field("h", "c")}
    plus = {"op": "&", "left": {"type": "expression", "value": {"op": "+", "left": _field("h", "b"),
                                                                 "right": {"type": "hexstr", "value": "0x1"}}},
            "right": {"type": "hexstr", "value": "0xffff"}}
    act["primitives"] = [
        {"op": "assign", "parameters": [_field("h", "b"), {"type": "hexstr", "value": "0x0"}]},
        {"op": "_jump_if_zero", "parameters": [
            _expr({"op": "b2d", "left": None, "right": {"type": "expression", "value": less}}),
            {"type": "hexstr", "value": "0x5"}]},
        count,
        {"op": "assign", "parameters": [_field("h", "b"), _expr(plus)]},
        {"op": "_jump", "parameters": [{"type": "hexstr", "value": "0x1"}]},
    ]
    d = Device(ports={1: "j1", 2: "j2"})
    d.commit_pipeline(d.load_pipeline(json.dumps(doc)))
    d.pipeline.table("t").insert((Exact(1),), ActionCall("I.a", (5,)))
    out = d.process(1, bytes([1, 0, 0, 6]))
    assert d.pipeline.counter("I.c").read(0)[0] == 6
    assert out == [(2, bytes([1, 0, 6, 0]))]  # h.b counted to h.c; then h.c = m.x, which nothing set


def test_jump_outside_the_action_is_rejected(tmp_path: Path) -> None:
    res = build(tmp_path, BODY, LOCALS)
    doc = res.json
    act = next(a for a in doc["actions"] if a["name"] == "I.a")
    act["primitives"] = [{"op": "_jump", "parameters": [{"type": "hexstr", "value": "0x05"}]}]
    d = Device(ports={1: "j1"})
    with pytest.raises(ValueError, match="outside the action"):
        d.load_pipeline(json.dumps(doc))


def test_return_inside_a_loop_is_a_located_error(tmp_path: Path) -> None:
    with pytest.raises(CompileError, match=r"prog\.p4:\d+:\d+: error: return inside a for loop is not supported"):
        build(tmp_path, "t.apply();", "action a() { for (bit<8> i = 0; i < 3; i = i + 1) { if (i == 1) { return; } } }"
              " table t { key = { hdr.h.a: exact; } actions = { a; } }")
