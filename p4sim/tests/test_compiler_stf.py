"""STF packet tests (p4c's format, p4sim/tests/stf.py) on every compiler x switch pairing: the project's
own STF corpus (p4sim/tests/corpus/stf/: the constructs p4c's test programs needed) always, and p4c's
test programs too when P4C_SAMPLES names p4c's `testdata/p4_16_samples` (a session's run; CI runs the
project's corpus):

    P4C_SAMPLES=/path/to/p4c/testdata/p4_16_samples .venv/bin/pytest p4sim/tests/test_compiler_stf.py

Each program is compiled by p4sim-compile and by p4c-bm2-ss; its STF test runs over P4Runtime on p4sim
(in this process) and on bmv2 (simple_switch_grpc on pcap files, no root). A pairing whose tool is not
installed is a skip that says so. A program p4c refuses (one of p4c's own) must be refused by
p4sim-compile too, with a located error. The P4Info files of the project's STF corpus and programs must
hold what p4c's hold. `python -m p4sim.tests.p4c_samples` runs p4c's programs with counts instead.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from p4sim.target import REAL_COMPILER, REAL_SWITCH
from p4sim.tests import stf, stf_run
from p4sim.tests.p4c_samples import Outcome, p4c_compile, p4info_difference, p4sim_compile, stf_programs

OWN = Path(__file__).resolve().parent / "corpus" / "stf"
P4SRC = Path(__file__).resolve().parents[2] / "p4src"
SAMPLES_ENV = "P4C_SAMPLES"
PAIRINGS = ("p4sim+p4sim", "p4c+p4sim", "p4sim+bmv2", "p4c+bmv2")
TOOLS = {"p4c": REAL_COMPILER, "bmv2": REAL_SWITCH}


def own_programs() -> list[Path]:
    """The project's STF programs (a .p4 without an .stf is a fragment another one includes)."""
    return sorted(p for p in OWN.glob("*.p4") if p.with_suffix(".stf").is_file())


def programs() -> list[Path]:
    """The project's STF programs, then p4c's when $P4C_SAMPLES is set."""
    own = own_programs()
    samples = os.environ.get(SAMPLES_ENV)
    if samples and not Path(samples).is_dir():
        raise pytest.UsageError(f"{SAMPLES_ENV}={samples}: not a folder")
    return own + (stf_programs(Path(samples)) if samples else [])


@dataclass(slots=True)
class Builds:
    """Each program's outputs by compiler, compiled on first use."""

    root: Path
    done: dict[tuple[Path, str], tuple[Outcome, Path]]

    def get(self, program: Path, compiler: str) -> tuple[Outcome, Path]:
        """(how the compiler took the program, the folder with <stem>.json and <stem>.p4info.txtpb)."""
        key = (program, compiler)
        if key not in self.done:
            folder = self.root / program.parent.name / program.stem / compiler
            folder.mkdir(parents=True)
            got = p4c_compile(program, folder) if compiler == "p4c" else p4sim_compile(program, folder)
            self.done[key] = (got, folder)
        return self.done[key]


@pytest.fixture(scope="module")
def builds(tmp_path_factory: pytest.TempPathFactory) -> Builds:
    return Builds(tmp_path_factory.mktemp("stf"), {})


def _need(*parts: str) -> None:
    missing = [TOOLS[p] for p in parts if p in TOOLS and shutil.which(TOOLS[p]) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not on PATH (install: ../shared/toolchain/install.sh)")


@pytest.mark.parametrize("pairing", PAIRINGS)
@pytest.mark.parametrize("program", programs(), ids=lambda p: p.stem)
def test_stf_packets(program: Path, pairing: str, builds: Builds) -> None:
    compiler, switch = pairing.split("+")
    _need(compiler, switch)
    if program.parent != OWN:  # one of p4c's: does p4c take it?
        _need("p4c")
        reference, _ = builds.get(program, "p4c")
        if reference.kind != "ok":
            if compiler == "p4c":
                pytest.xfail(f"p4c-bm2-ss refuses it: {reference.message}")
            refused, _ = builds.get(program, "p4sim")
            assert refused.kind == "error", f"p4c refuses it ({reference.message}); p4sim-compile: {refused}"
            return
    got, folder = builds.get(program, compiler)
    assert got.kind == "ok", f"{compiler} does not compile {program.name}: {got.kind}: {got.message}"
    result = stf_run.run(stf.read(program.with_suffix(".stf")), folder / f"{program.stem}.json",
                         folder / f"{program.stem}.p4info.txtpb", switch)
    assert result.passed, f"{program.name} on {pairing}: " + "; ".join(result.problems)


@pytest.mark.parametrize("program", own_programs() + [P4SRC / "fabric.p4", P4SRC / "ocs.p4"], ids=lambda p: p.stem)
def test_p4info_holds_what_p4c_writes(program: Path, builds: Builds) -> None:
    _need("p4c")
    (ours, mine), (theirs, p4cs) = builds.get(program, "p4sim"), builds.get(program, "p4c")
    assert ours.kind == theirs.kind == "ok", (ours, theirs)
    name = f"{program.stem}.p4info.txtpb"
    assert p4info_difference(mine / name, p4cs / name) == ""
