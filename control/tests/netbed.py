"""Test bed: compile the fabric program, and run one p4sim switch process per switch of a topology."""

from __future__ import annotations

import os
from pathlib import Path

from control.switch import Pipeline
from emulation.testing import SwitchProcess
from p4sim.target import Target, free_port

ROOT = Path(__file__).resolve().parents[2]


def compile_program(name: str, out: Path) -> Pipeline:
    """Compile p4src/<name>.p4 with the run's compiler (Target.from_env; $P4SRC_DIR overrides p4src/).

    With $P4_BUILD_DIR set (e.g. `build`, the `make p4-build` outputs), use its artefacts instead.
    """
    prebuilt = os.environ.get("P4_BUILD_DIR")
    if prebuilt:
        return Pipeline.from_build(name, prebuilt)
    p4src = Path(os.environ.get("P4SRC_DIR", ROOT / "p4src"))
    out.mkdir(parents=True, exist_ok=True)
    Target.from_env().compile(p4src / f"{name}.p4", out, p4src)
    return Pipeline.load(name, out / f"{name}.p4info.txtpb", out / f"{name}.json")


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
