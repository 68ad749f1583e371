"""The language corpus (the parity scenarios without control-plane state) compiled by p4sim-compile and
run in-process on p4sim-switch's two unicast paths, FUSED and FAST: the frames the parity test expects
on every pairing, without root, veths or bmv2. A program that needs a packet object somewhere (a
backward jump, run-time stack indices) has no FUSED path; both runs then take FAST, which is fine.
"""

from __future__ import annotations

import json

import pytest

from p4sim.compiler.compile import compile_file
from p4sim.switch import engine
from p4sim.switch.device import Device
from p4sim.tests.parity_scenarios import Probe, Scenario, scenarios

PROGRAMS = ("json_forms", "lang", "apply_loop", "stacks", "keys")
SCENARIOS = {s.name: s for s in scenarios() if s.name in PROGRAMS}


def _device(sc: Scenario) -> Device:
    assert not sc.entities, f"{sc.name}: this test writes no control-plane state"
    d = Device(ports={p: f"c{p}" for p in range(1, 5)})
    d.commit_pipeline(d.load_pipeline(json.dumps(compile_file(sc.source).json)))
    return d


def _matches(probe: Probe, got: list[tuple[int, bytes]]) -> bool:
    left = list(got)
    for exp in probe.expect:
        hit = next((i for i, (port, frame) in enumerate(left) if exp.matches(port, frame)), None)
        if hit is None:
            return False
        left.pop(hit)
    return not left


@pytest.mark.parametrize("fused", [True, False], ids=["fused", "fast"])
@pytest.mark.parametrize("program", PROGRAMS)
def test_corpus_frames_on_both_paths(program: str, fused: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine, "USE_FUSED", fused)
    sc = SCENARIOS[program]
    d = _device(sc)
    bad = []
    for p in sc.probes:
        got = d.process(p.port, p.frame)
        if not _matches(p, got):
            bad.append(f"{p.name}: got {[(port, f.hex()) for port, f in got]}")
    assert not bad, "\n".join(bad)
