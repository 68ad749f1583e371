"""Compiler parity: {p4sim-compile, p4c-bm2-ss} x {p4sim-switch, bmv2's simple_switch_grpc}.

Every program of the parity scenarios (p4src/, the compiler corpus, the P4Runtime test program) is
compiled by both compilers; each JSON runs on both switches (one process per JSON and switch, on veth
pairs), gets the same P4Runtime writes (`control` client and entities) and the same probes, and
every pairing must send out exactly the expected frames (p4sim/tests/parity_scenarios.py). Needs
root, p4c-bm2-ss and simple_switch_grpc; each missing one is a skip that says so.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from p4rt.client import P4RuntimeClient
from p4sim.switch.testdata.veth import is_root, veth_pairs
from p4sim.target import Target, label, pairings
from p4sim.tests import targets
from p4sim.tests.parity_scenarios import Probe, Scenario, scenarios

PORTS = 4
LATE_WAIT = 0.2  # after the last probe, anything still coming out is a failure
PAIRINGS = ("p4sim+p4sim", "p4sim+bmv2", "p4c+p4sim", "p4c+bmv2")

pytestmark = [
    pytest.mark.root,
    pytest.mark.skipif(not is_root(), reason="needs root for veth pairs"),
    pytest.mark.skipif(bool(targets.missing_real_tools()),
                       reason=f"{', '.join(targets.missing_real_tools())} not on PATH "
                              "(install: ../shared/toolchain/install.sh)"),
]

SCENARIOS = {s.name: s for s in scenarios()}


@dataclass(slots=True)
class Builds:
    """The JSON and P4Info of each (program, compiler), compiled on first use."""

    out: Path
    built: dict[tuple[str, str], tuple[Path, Path]]

    def get(self, sc: Scenario, target: Target) -> tuple[Path, Path]:
        """(bmv2 JSON, P4Info text) of sc compiled by target's compiler; fails the test if it does not compile."""
        compiler = label(target.p4c)
        key = (sc.name, compiler)
        if key not in self.built:
            out = self.out / compiler
            out.mkdir(exist_ok=True)
            try:
                target.compile(sc.source, out, sc.include)
            except ValueError as exc:
                pytest.fail(str(exc))
            self.built[key] = (out / f"{sc.source.stem}.json", out / f"{sc.source.stem}.p4info.txtpb")
        return self.built[key]


@pytest.fixture(scope="module")
def builds(tmp_path_factory: pytest.TempPathFactory) -> Builds:
    return Builds(tmp_path_factory.mktemp("parity"), {})


@pytest.fixture(scope="module")
def by_name() -> dict[str, Target]:
    return {t.name: t for t in pairings()}


@pytest.fixture(scope="module")
def net() -> Iterator[tuple[dict[int, str], targets.Wire]]:
    """PORTS veth pairs: the switch side by port, and a Wire on the host side."""
    with veth_pairs(PORTS, "cpar") as pairs:
        wire = targets.Wire({i + 1: host for i, (_, host) in enumerate(pairs)})
        try:
            yield {i + 1: sw for i, (sw, _) in enumerate(pairs)}, wire
        finally:
            wire.close()


def _hex(frame: bytes) -> str:
    return frame[:48].hex() + ("..." if len(frame) > 48 else "")


def _mismatch(probe: Probe, got: list[tuple[int, bytes]]) -> str | None:
    """None if `got` is exactly the expected frames, else what differs."""
    left = list(got)
    missing = []
    for exp in probe.expect:
        hit = next((i for i, (port, frame) in enumerate(left) if exp.matches(port, frame)), None)
        if hit is None:
            missing.append(exp)
        else:
            left.pop(hit)
    if not missing and not left:
        return None
    parts = [f"missing port {e.port} {_hex(e.frame)}" for e in missing]
    parts += [f"unexpected port {port} {_hex(frame)}" for port, frame in left]
    return f"{probe.name}: " + ", ".join(parts)


@pytest.mark.parametrize("pairing", PAIRINGS)
@pytest.mark.parametrize("program", list(SCENARIOS))
def test_same_packets_out(program: str, pairing: str, builds: Builds, by_name: dict[str, Target],
                          net: tuple[dict[int, str], targets.Wire], tmp_path: Path) -> None:
    sc, target = SCENARIOS[program], by_name[pairing]
    compiler, switch = pairing.split("+")
    if compiler == "p4c" and sc.p4c_refuses:
        with pytest.raises(ValueError, match=sc.p4c_refuses):
            target.compile(sc.source, tmp_path, sc.include)
        return
    json_path, p4info = builds.get(sc, target)
    ifaces, wire = net
    failures: list[str] = []
    known: list[str] = []
    with targets.switch_process(target, json_path, ifaces, log_dir=tmp_path) as sw:
        client = P4RuntimeClient(sw.grpc_addr, device_id=sw.device_id)
        client.connect(timeout=10)
        try:
            client.set_pipeline_files(p4info, json_path)
            for entity in sc.entities:
                client.insert([entity])
            wire.pending()  # whatever an earlier switch left on the wires
            for probe in sc.probes:
                # a frame later than a probe's wait is not lost: it fails the next probe, or the check below
                problem = _mismatch(probe, wire.exchange(probe.port, probe.frame, len(probe.expect)))
                bug = dict(probe.known).get(pairing) or dict(probe.known).get(switch)
                if bug is None and problem:
                    failures.append(problem)
                elif bug is not None and not problem:
                    failures.append(f"{probe.name}: passes now; remove its known bug on {pairing} ({bug})")
                elif bug is not None:
                    known.append(f"{probe.name}: {bug}")
            late = wire.pending(LATE_WAIT)
            if late:
                failures.append("after the last probe: " + ", ".join(f"port {p} {_hex(f)}" for p, f in late))
        finally:
            client.close()
        if sw.proc.poll() is not None:
            failures.append(f"the switch exited with code {sw.proc.returncode}: {sw.log_tail()}")
    assert not failures, f"{program} on {pairing}: " + "; ".join(failures)
    if known:
        pytest.xfail("known bug: " + "; ".join(known))
