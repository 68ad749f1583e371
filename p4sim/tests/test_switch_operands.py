"""The switch refuses the operand shapes bmv2 refuses at load time (p4sim/switch/operands.py)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from p4sim.switch.device import Device
from p4sim.switch.operands import check_operands
from p4sim.switch.testdata import programs

RT_BASIC = Path(programs.__file__).resolve().parent.parent / "p4runtime" / "testdata" / "rt_basic.json"


def _doc() -> dict:
    return json.loads(programs.l3_ecmp())


def _action(doc: dict, name: str) -> dict:
    return next(a for a in doc["actions"] if a["name"] == name)


def test_p4c_shaped_programs_pass() -> None:
    for data in (programs.l3_ecmp(), programs.replicate(), programs.basic_router(), RT_BASIC.read_bytes()):
        check_operands(json.loads(data))


def _bare_operator(doc: dict) -> None:
    # the bug p4sim-compile had: an operator node as a parameter without the second wrapper
    prim = _action(doc, "Ing.set_next_hop")["primitives"][2]
    prim["parameters"][1] = prim["parameters"][1]["value"]


def _runtime_data_inside(doc: dict) -> None:
    prim = _action(doc, "Ing.set_next_hop")["primitives"][2]
    prim["parameters"][1]["value"]["value"]["left"]["value"]["right"] = programs.R(0)


def _local_as_parameter(doc: dict) -> None:
    _action(doc, "Ing.acl_forward")["primitives"][0]["parameters"][1] = {"type": "local", "value": 0}


def _runtime_data_out_of_range(doc: dict) -> None:
    _action(doc, "Ing.acl_forward")["primitives"][0]["parameters"][1] = programs.R(1)


def _conditional_wrapped(doc: dict) -> None:
    cond = doc["pipelines"][0]["conditionals"][1]
    cond["expression"] = cond["expression"]["value"]


def _expression_key(doc: dict) -> None:
    doc["parsers"][0]["parse_states"][0]["transition_key"] = [programs.E("&", programs.F("ethernet", "etherType"),
                                                                          programs.X(0xFF))]


def _parser_set_bool(doc: dict) -> None:
    doc["parsers"][0]["parse_states"][2]["parser_ops"].append(
        {"op": "set", "parameters": [programs.F("scalars", "userMetadata.nhop"), {"type": "bool", "value": True}]})


@pytest.mark.parametrize(("mutate", "message"), [
    (_bare_operator, "action Ing.set_next_hop primitive 2 (assign): Invalid 'type' in expression: ''"),
    (_runtime_data_inside, "Invalid 'type' in expression: 'runtime_data'"),
    (_local_as_parameter, "Parameter type 'local' not supported"),
    (_runtime_data_out_of_range, "Invalid 'runtime_data' parameter reference: 1, the action has 1 parameter(s)"),
    (_conditional_wrapped, "conditional node_3: Invalid 'type' in expression: ''"),
    (_expression_key, "state start transition_key: Invalid entry in parse state key: type 'expression'"),
    (_parser_set_bool, "Parser 'set' operation has unsupported source type 'bool'"),
])
def test_bmv2_rejections_are_rejected(mutate: Callable[[dict], None], message: str) -> None:
    doc = _doc()
    mutate(doc)
    with pytest.raises(ValueError, match="^bmv2 JSON: .*" + re.escape(message)) as exc:
        check_operands(doc)
    assert "\n" not in str(exc.value)
    with pytest.raises(ValueError, match=re.escape(message)):
        Device().load_pipeline(json.dumps(doc))


def test_optional_match_kind_is_refused_as_by_bmv2() -> None:
    doc = _doc()
    acl = next(t for t in doc["pipelines"][0]["tables"] if t["name"] == "Ing.acl")
    acl["key"][2]["match_type"] = "optional"
    with pytest.raises(ValueError, match="match_type 'optional' is not one of exact, lpm, ternary, range, valid"):
        Device().load_pipeline(json.dumps(doc))

