"""p4sim/tests/targets.py: switches started and stopped by PID, refused JSONs, the VLAN-restoring Wire."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from p4sim.switch.p4runtime.testing import program_files
from p4sim.switch.testdata.veth import RawPort, is_root, veth_pairs
from p4sim.target import pairings
from p4sim.tests import targets

P4SIM = pairings()[0]  # p4sim-compile + p4sim-switch, always installed
BMV2 = targets.bmv2()


def _bad_json(tmp_path: Path) -> Path:
    """rt_basic with an operator node as a parameter without its second wrapper (what bmv2 refuses)."""
    doc = json.loads(program_files()[0].read_text())
    for action in doc["actions"]:
        for prim in action["primitives"]:
            for i, p in enumerate(prim["parameters"]):
                if p["type"] == "expression":
                    prim["parameters"][i] = p["value"]
                    path = tmp_path / "bad.json"
                    path.write_text(json.dumps(doc))
                    return path
    raise AssertionError("rt_basic.json has no expression parameter")


@pytest.mark.parametrize("target", [P4SIM, pytest.param(BMV2, marks=pytest.mark.skipif(
    BMV2 is None, reason=f"{targets.REAL_SWITCH} is not on PATH"))], ids=["p4sim", "bmv2"])
def test_load_error(target: targets.Target, tmp_path: Path) -> None:
    assert targets.load_error(target, program_files()[0]) is None
    said = targets.load_error(target, _bad_json(tmp_path))
    assert said is not None and "Invalid 'type' in expression: ''" in said, said


@pytest.mark.root
@pytest.mark.skipif(not is_root(), reason="needs root for veth pairs")
def test_switch_process_starts_and_stops_by_pid(tmp_path: Path) -> None:
    with veth_pairs(2, "tgt") as pairs:
        ports = {1: pairs[0][0], 2: pairs[1][0]}
        with targets.switch_process(P4SIM, program_files()[0], ports, log_dir=tmp_path) as sw:
            assert sw.proc.poll() is None and sw.grpc_addr.startswith("127.0.0.1:")
        assert sw.proc.returncode is not None  # stopped on leaving the block
        with pytest.raises(RuntimeError, match="Invalid 'type' in expression"):
            with targets.switch_process(P4SIM, _bad_json(tmp_path), ports, log_dir=tmp_path):
                pass


@pytest.mark.root
@pytest.mark.skipif(not is_root(), reason="needs root for veth pairs")
def test_wire_restores_the_vlan_tag_the_kernel_takes_off() -> None:
    tagged = bytes.fromhex("020000000002" "020000000001" "8100" "6005" "8100" "0006" "0800") + bytes(40)
    with veth_pairs(1, "tgw") as pairs:
        sender, wire = RawPort(pairs[0][0]), targets.Wire({1: pairs[0][1]})
        try:
            sender.send(tagged)
            assert wire.pending(0.3) == [(1, tagged)]  # both tags, the outer one put back
        finally:
            sender.close()
            wire.close()
