"""emulation/tofino.py: bf-p4c's command per chip, its error lines, one compile reused until a source
changes, and the one file a switch takes (Stratum's BfPipelineConfig of bf-p4c's real output)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from emulation import tofino
from p4rt.bfconfig import BfPipelineConfig
from p4sim.target import P4SRC

BF_P4C = tofino.find_bf_p4c()
needs_bf_p4c = pytest.mark.skipif(BF_P4C is None, reason="bf-p4c is not installed (not $BF_P4C, on PATH or "
                                  f"{tofino.INSTALLED_BF_P4C}; make setup installs it from ../shared/toolchain)")


def test_commands_per_chip() -> None:
    out = Path("/o")
    assert tofino.bf_p4c_argv("bf-p4c", "fabric", tofino.chip("tofino"), out, Path("/r/p4src")) == [
        "bf-p4c", "--target", "tofino", "--arch", "tna", "-I", "/r/p4src", "-o", "/o", "--verbose", "1",
        "--p4runtime-files", "/o/fabric.p4info.txtpb", "--p4runtime-force-std-externs", "/r/p4src/tna/fabric.p4"]
    assert tofino.bf_p4c_argv("bf-p4c", "ocs", tofino.chip("tofino2"), out)[:7] == [
        "bf-p4c", "--target", "tofino2", "--arch", "t2na", "-Xp4c=--no-clot", "-I"]
    with pytest.raises(ValueError, match="Tofino chip 'tofino3': expected one of tofino, tofino2"):
        tofino.chip("tofino3")
    with pytest.raises(ValueError, match="TNA program 'nope': expected one of fabric, ocs"):
        tofino.compile_program("bf-p4c", "nope", tofino.CHIPS[0], out)


def test_error_lines_leave_the_warnings() -> None:
    log = ("x.p4(3): [--Wwarn=unused] warning: 'x' is unused\n"
           "p4src/include/schedule/clock.p4(89): error: : action spanning multiple stages.\n"
           "Compiler Bug: typeMap.cpp:103: Null element\n"
           "fabric.bfa:6649: error: tofino supports up to 12 stages, using 19\n"
           "failed command assembler\n")
    assert tofino.error_lines(log) == [
        "p4src/include/schedule/clock.p4(89): error: : action spanning multiple stages.",
        "Compiler Bug: typeMap.cpp:103: Null element", "fabric.bfa:6649: error: tofino supports up to 12 stages, using 19",
        "failed command assembler"]


@needs_bf_p4c
def test_a_compile_is_reused_until_a_source_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src = tmp_path / "p4src"
    shutil.copytree(P4SRC, src)
    target = tofino.chip("tofino")
    first = tofino.compile_program(str(BF_P4C), "ocs", target, tmp_path / "out", src)
    assert BfPipelineConfig.FromString(first.config.read_bytes()).p4_name == "ocs"
    assert first.ok and not first.cached, first.errors
    assert json.loads((first.out / tofino.STAMP).read_text())["seconds"] == round(first.seconds, 1)
    monkeypatch.chdir(tmp_path)  # make passes a relative folder ($BUILD/tofino): the same compile
    again = tofino.compile_program(str(BF_P4C), "ocs", target, Path("out"), Path("p4src"))
    assert again.cached and again.ok and again.seconds == pytest.approx(first.seconds, abs=0.1)
    sizes = src / "include" / "sizes.p4"
    sizes.write_text(sizes.read_text() + "\n// a change\n")
    changed = tofino.compile_program(str(BF_P4C), "ocs", target, tmp_path / "out", src)
    assert changed.ok and not changed.cached
    # a compile error is reported, located, and reused with its errors while the source stays as it is
    (src / "include" / "ocs" / "timeflow.p4").write_text("control Nope(\n")
    broken = tofino.compile_program(str(BF_P4C), "ocs", target, tmp_path / "out", src)
    # (bf-p4c locates it where the unclosed declaration runs into the next file's: include/ocs/dispatch.p4)
    assert not broken.ok and any(".p4(" in e and "syntax error" in e for e in broken.errors), broken.errors
    reused = tofino.compile_program(str(BF_P4C), "ocs", target, tmp_path / "out", src)
    assert reused.cached and not reused.ok and reused.errors == broken.errors


@needs_bf_p4c
@pytest.mark.parametrize("target", tofino.CHIPS, ids=[c.name for c in tofino.CHIPS])
@pytest.mark.parametrize("program", tofino.PROGRAMS)
def test_the_pipeline_config_packs_bf_p4c_output(program: str, target: tofino.Chip) -> None:
    """<program>.pb.bin is Stratum's BfPipelineConfig of what bf-p4c wrote: the program's name, its
    bfrt.json, one profile per pipe of the manifest with that pipe's context.json and binary."""
    c = tofino.compile_program(str(BF_P4C), program, target, tofino.work_dir())
    assert c.ok, c.errors
    cfg = BfPipelineConfig.FromString(c.config.read_bytes())
    assert cfg.p4_name == program
    assert cfg.bfruntime_info == (c.out / "bfrt.json").read_bytes()
    manifest = json.loads((c.out / "manifest.json").read_text())
    pipes = [p["pipe_name"] for p in manifest["programs"][0]["pipes"]]
    assert [p.profile_name for p in cfg.profiles] == pipes == ["pipe"]
    binary = "tofino.bin" if target.generation == 1 else "tofino2.bin"
    for prof in cfg.profiles:
        assert prof.context == (c.out / prof.profile_name / "context.json").read_bytes()
        assert prof.binary == (c.out / prof.profile_name / binary).read_bytes() and len(prof.binary) > 1 << 20
        assert list(prof.pipe_scope) == [0, 1, 2, 3]  # every pipe of the chip runs the program
        assert json.loads(prof.context)["program_name"] == program


@needs_bf_p4c
def test_build_writes_the_config_a_switch_takes(tmp_path: Path) -> None:
    """`hitless build --tofino CHIP`: compiles (or reuses) both programs and says where each one's
    pipeline config is; the controller's Tofino pipeline is that config with bf-p4c's P4Info."""
    from control.switch import Pipeline

    build = tofino.work_dir().parent
    res = subprocess.run([sys.executable, "-m", "emulation", "build", "--tofino", "tofino", "--build", str(build)],
                         capture_output=True, text=True, timeout=3600, check=False)
    assert res.returncode == 0, res.stdout + res.stderr
    for program in tofino.PROGRAMS:
        config = tofino.work_dir() / "tofino" / program / f"{program}.pb.bin"
        assert f"{program} for tofino: {config} (" in res.stdout
        pipe = Pipeline.for_target("tofino", program, tofino.work_dir() / "tofino")
        assert pipe.config == config.read_bytes()
        assert any(t.preamble.name.endswith("schedule_phase") for t in pipe.schema.p4info.tables)
