"""Test bed: compile the fabric program, and run one p4sim switch process per switch of a topology."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from control.switch import Pipeline
from control.tests.switch_proc import SwitchProcess, free_port

ROOT = Path(__file__).resolve().parents[2]


def compile_program(name: str, out: Path) -> Pipeline:
    """Compile p4src/<name>.p4 with $P4C or p4sim-compile ($P4SRC_DIR overrides p4src/).

    With $P4_BUILD_DIR set (e.g. `build`, the `make p4-build` outputs), use its artefacts instead.
    """
    prebuilt = os.environ.get("P4_BUILD_DIR")
    if prebuilt:
        return Pipeline.from_build(name, prebuilt)
    p4src = Path(os.environ.get("P4SRC_DIR", ROOT / "p4src"))
    p4c = os.environ.get("P4C") or str(Path(sys.executable).parent / "p4sim-compile")
    out.mkdir(parents=True, exist_ok=True)
    js, info = out / f"{name}.json", out / f"{name}.p4info.txtpb"
    res = subprocess.run([p4c, str(p4src / f"{name}.p4"), "-o", str(js), "--p4runtime-files", str(info)],
                         capture_output=True, text=True, timeout=300)
    if res.returncode != 0:
        raise RuntimeError(f"compiling {name}.p4 failed: {res.stderr.strip()}")
    return Pipeline.load(name, info, js)


class SwitchFarm:
    """One switch process per fabric switch of `topo` (grpc ports rewritten to free ones)."""

    def __init__(self, topo, ports: dict[str, dict[int, str]] | None = None) -> None:
        self.topo = topo
        self.procs: dict[str, SwitchProcess] = {}
        for sw in topo.switches:
            sw.grpc_port = free_port()
            self.procs[sw.name] = SwitchProcess(sw.device_id, (ports or {}).get(sw.name), sw.grpc_port)

    def start(self) -> SwitchFarm:
        for p in self.procs.values():
            p.start()
        return self

    def stop(self) -> None:
        for p in self.procs.values():
            p.stop()
