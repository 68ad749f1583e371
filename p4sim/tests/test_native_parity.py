"""The native data path gives the Python path's frames, digests and state for the same inputs.

Every program of the parity corpus (p4sim/tests/parity_scenarios.py: the project's programs and the
compiler corpus) is loaded twice, on a Device whose data plane is native code and on one that runs
the Python path, each behind its own P4Runtime server; the scenario's entities are written to both
through the project's client. Then each probe frame and variants of it (truncated, bytes changed,
bytes appended; seeded) go through both devices: the frames out (ports and bytes, in order), the
digests, and afterwards every counter, register and direct counter must be the same. Both clocks
are fixed and `random` gives its lower bound, so timestamps and random values agree too.

CI runs a subset (the project's programs and a few of the corpus, p4sim-compile's JSON, a few
variants per probe). P4SIM_NATIVE_CORPUS=all runs every program, p4c's JSON too where p4c is
installed, and 200 variants per probe:

    P4SIM_NATIVE_CORPUS=all .venv/bin/pytest p4sim/tests/test_native_parity.py
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from p4rt.client import P4RuntimeClient
from p4sim.compiler.compile import compile_file
from p4sim.compiler.p4info import to_text
from p4sim.switch.device import Device
from p4sim.switch.native.build import compiler
from p4sim.switch.native.cgen.exprs import NotNative
from p4sim.switch.native.cgen.program import generate
from p4sim.switch.p4runtime.server import start_server
from p4sim.switch.program import parse_program
from p4sim.tests.parity_scenarios import Scenario, scenarios

FULL = os.environ.get("P4SIM_NATIVE_CORPUS") == "all"
CI_PROGRAMS = ("fabric", "ocs", "l3_basic", "features", "lang", "keys", "externs")
SCENARIOS = {s.name: s for s in scenarios() if FULL or s.name in CI_PROGRAMS}
VARIANTS = 200 if FULL else 12
NOW_US = 123_456_789
CPU_PORT = 255
P4C = shutil.which("p4c-bm2-ss")

pytestmark = pytest.mark.skipif(compiler() is None, reason="no C compiler: the native path cannot be built")


def _build(sc: Scenario, how: str, out: Path) -> tuple[bytes, Path]:
    """(JSON, P4Info path) of the scenario's program, compiled by p4sim-compile or p4c."""
    out.mkdir(parents=True, exist_ok=True)
    info = out / f"{sc.name}.p4info.txtpb"
    if how == "p4sim":
        res = compile_file(sc.source, include_dirs=[str(sc.include)] if sc.include else [])
        info.write_text(to_text(res.p4info))
        return json.dumps(res.json).encode(), info
    js = out / f"{sc.name}.json"
    cmd = [P4C, str(sc.source), "-o", str(js), "--p4runtime-files", str(info)]
    if sc.include:
        cmd += ["-I", str(sc.include)]
    res = subprocess.run(cmd, capture_output=True, text=True, check=False)
    # _cases() leaves out the programs p4c is known to refuse (Scenario.p4c_refuses)
    assert res.returncode == 0, f"p4c refuses {sc.name}: {res.stderr.strip().splitlines()[-1:]}"
    return js.read_bytes(), info


class Bed:
    """A device behind an in-process P4Runtime server, with the scenario's program and entities."""

    def __init__(self, native: bool, json_bytes: bytes, p4info: Path, sc: Scenario, tmp: Path) -> None:
        self.dev = Device(ports={p: f"eq{p}" for p in range(1, 9)}, cpu_port=CPU_PORT, device_id=1, native=native)
        self.digests: list[tuple[int, tuple[int, ...]]] = []
        self.dev.on_digest = lambda d: self.digests.append((d.learn_id, d.values))
        self.dev.now_us = lambda: NOW_US  # type: ignore[method-assign]
        if self.dev.native is not None:
            from p4sim.switch.native.lib import rt

            rt().p4s_dev_fix(self.dev.native.ptr, NOW_US)
        self.server = start_server(self.dev, "127.0.0.1:0", 1)
        js = tmp / ("native.json" if native else "python.json")
        js.write_bytes(json_bytes)
        client = P4RuntimeClient(self.server.address, device_id=1)
        client.connect()
        try:
            client.set_pipeline_files(p4info, js)
            for entity in sc.entities:
                client.insert([entity])
        finally:
            client.close()
        pl = self.dev.pipeline
        if pl is not None and pl.namespace is not None:
            pl.namespace["_rand"] = lambda lo, hi: lo

    @property
    def native(self) -> bool:
        """True when the program runs as native code on this device."""
        return self.dev.pipeline is not None and self.dev.pipeline.native is not None

    def state(self) -> dict[str, object]:
        """Every counter, register and direct counter of the running program."""
        pl = self.dev.pipeline
        out: dict[str, object] = {}
        for name, c in pl.counters.items():
            out[f"counter {name}"] = [c.read(i) for i in range(c.size)]
        for name, r in pl.registers.items():
            out[f"register {name}"] = [r.read(i) for i in range(r.size)]
        for name, t in pl.tables.items():
            if t.info.with_counters:
                out[f"direct {name}"] = sorted((e.handle, e.packets, e.bytes) for e in t.entries())
        return out

    def close(self) -> None:
        """Stop the server."""
        self.server.stop(grace=0)


def variants(frame: bytes, n: int, rng: random.Random) -> list[bytes]:
    """The frame and n changed copies: truncated, bytes changed in the headers, bytes appended."""
    out = [frame]
    for i in range(n):
        f = bytearray(frame)
        kind = i % 3
        if kind == 0:
            f = f[: rng.randrange(0, len(f) + 1)]
        elif kind == 1:
            for _ in range(rng.randrange(1, 4)):
                if f:
                    f[rng.randrange(0, min(len(f), 80))] = rng.randrange(256)
        else:
            f += bytes(rng.randrange(256) for _ in range(rng.randrange(1, 40)))
        out.append(bytes(f))
    return out


# programs the native path leaves to the Python one: name -> the construct (NotNative's message)
PYTHON_ONLY = {"externs": "push|72 bits wide", "json_forms": "variable-length field",
               "parsing": "variable-length field", "stacks": "run-time stack index"}


def _cases() -> list[tuple[str, str]]:
    """(program, build): p4sim-compile's JSON of every program; p4c's of the project's programs (of
    every program p4c takes with P4SIM_NATIVE_CORPUS=all)."""
    out = []
    for name, sc in sorted(SCENARIOS.items()):
        out.append((name, "p4sim"))
        if P4C and not sc.p4c_refuses and (FULL or name in ("fabric", "ocs")):
            out.append((name, "p4c"))
    return out


@pytest.mark.parametrize(("program", "how"), _cases())
def test_native_and_python_paths_agree(program: str, how: str, tmp_path: Path) -> None:
    sc = SCENARIOS[program]
    json_bytes, p4info = _build(sc, how, tmp_path / how)
    nat = Bed(True, json_bytes, p4info, sc, tmp_path)
    py = Bed(False, json_bytes, p4info, sc, tmp_path)
    try:
        if program in PYTHON_ONLY:  # both beds run the same Python path: check that it is so, and why
            assert not nat.native
            with pytest.raises(NotNative, match=PYTHON_ONLY[program]):
                generate(parse_program(json_bytes))
            return
        assert nat.native, f"{program}: the native path should run it but does not (see the log)"
        rng = random.Random(f"{program}-{how}")
        bad = []
        for probe in sc.probes:
            for k, frame in enumerate(variants(probe.frame, VARIANTS, rng)):
                a, b = nat.dev.process(probe.port, frame), py.dev.process(probe.port, frame)
                if a != b:
                    bad.append(f"{probe.name} #{k} {frame.hex()}: native {[(p, f.hex()) for p, f in a]} "
                               f"python {[(p, f.hex()) for p, f in b]}")
        assert not bad, f"{len(bad)} inputs differ:\n" + "\n".join(bad[:5])
        assert nat.digests == py.digests
        assert nat.state() == py.state()
    finally:
        nat.close()
        py.close()
