"""p4sim/target.py: the one place that picks P4C/SWITCH, builds their command lines and
keeps a build directory tied to the compiler that made it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from p4sim.target import (
    PROGRAMS,
    STAMP,
    Target,
    choose_compiler,
    choose_switch,
    label,
    pairings,
    switch_command,
)

REPO = Path(__file__).resolve().parents[2]
SIM_C = str(Path(sys.executable).parent / "p4sim-compile")
SIM_S = str(Path(sys.executable).parent / "p4sim-switch")


def fake_compiler(tmp: Path, name: str, version: str) -> str:
    """A compiler script with p4c's command shape that writes empty outputs and counts its runs."""
    path = tmp / name
    path.write_text(f"""#!/bin/sh
if [ "$1" = --version ]; then echo "{name}"; echo "Version {version}"; exit 0; fi
echo run >> "{tmp}/{name}.runs"
while [ $# -gt 0 ]; do
  case "$1" in -o) echo '{{}}' > "$2"; shift;; --p4runtime-files) : > "$2"; shift;; esac; shift
done
""")
    path.chmod(0o755)
    return str(path)


def runs(tmp: Path, name: str) -> int:
    f = tmp / f"{name}.runs"
    return len(f.read_text().splitlines()) if f.exists() else 0


def test_labels_and_names() -> None:
    assert label("/usr/local/bin/simple_switch_grpc --log-console") == "bmv2"
    assert label("/x/p4c-bm2-ss") == "p4c"
    assert label(SIM_S) == label(SIM_C) == "p4sim"
    assert Target(SIM_C, SIM_S).name == "p4sim+p4sim"


def test_choice_order(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("P4C", SIM_C)
    monkeypatch.setenv("SWITCH", SIM_S)
    assert Target.from_env() == Target(SIM_C, SIM_S)  # the environment before PATH
    monkeypatch.delenv("P4C")
    monkeypatch.delenv("SWITCH")
    expect_c = shutil.which("p4c-bm2-ss") or SIM_C
    assert choose_compiler() == os.path.abspath(expect_c)  # the real tool when on PATH, else p4sim
    assert choose_switch(SIM_S) == SIM_S  # an explicit value before everything
    with pytest.raises(ValueError, match="switch binary 'no-such-switch': not found"):
        choose_switch("no-such-switch")


def test_switch_command_shape() -> None:
    cmd = switch_command(SIM_S, {2: "b", 1: "a"}, 7, "127.0.0.1:5", Path("p.json"), options=("--pcap", "d"))
    assert cmd == [SIM_S, "-L", "warn", "-i", "1@a", "-i", "2@b", "--device-id", "7", "--pcap", "d", "p.json",
                   "--", "--grpc-server-addr", "127.0.0.1:5", "--cpu-port", "255"]
    # SWITCH's own log level wins (boost refuses an option given twice); no JSON: --no-p4
    cmd = switch_command(f"{SIM_S} --log-console -L debug", {}, 1, "127.0.0.1:5")
    assert cmd.count("-L") == 1 and "debug" in cmd and cmd[cmd.index("--") - 1] == "--no-p4"


def test_build_records_its_compiler(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    for prog in PROGRAMS:
        (src / f"{prog}.p4").write_text("// program\n")
    build = tmp_path / "build"
    a = Target(fake_compiler(tmp_path, "compA", "1.0"), SIM_S)
    b = Target(fake_compiler(tmp_path, "compB", "2.0"), SIM_S)
    assert "compiled fabric, ocs" in a.ensure_build(build, src)
    assert "up to date" in a.ensure_build(build, src) and runs(tmp_path, "compA") == 2
    assert "Version 1.0" in (build / STAMP).read_text()
    # another compiler never reuses A's outputs
    assert b.stale_programs(build, src) == list(PROGRAMS)
    b.ensure_build(build, src)
    assert runs(tmp_path, "compB") == 2 and "Version 2.0" in (build / STAMP).read_text()
    # a newer source (any .p4: programs share includes) recompiles every program
    os.utime(src / "ocs.p4", (os.path.getmtime(build / "ocs.json") + 10,) * 2)
    assert b.stale_programs(build, src) == list(PROGRAMS)


def test_failed_compile_names_the_program(tmp_path: Path) -> None:
    bad = tmp_path / "bad.p4"
    bad.write_text("control {\n")
    with pytest.raises(ValueError, match=r"bad.p4: p4sim failed: .*error"):
        Target(SIM_C, SIM_S).compile(bad, tmp_path)


def test_pairings_cover_every_installed_tool() -> None:
    names = [t.name for t in pairings()]
    assert names[0] == "p4sim+p4sim"
    if shutil.which("p4c-bm2-ss") and shutil.which("simple_switch_grpc"):
        assert sorted(names) == sorted(["p4sim+p4sim", "p4c+bmv2", "p4c+p4sim", "p4sim+bmv2"])
    else:
        assert names == ["p4sim+p4sim"]


def test_p4src_builds_with_the_default_target(tmp_path: Path) -> None:
    out = Target.from_env().ensure_build(tmp_path, REPO / "p4src")
    assert out.startswith("compiled fabric, ocs") and (tmp_path / "fabric.json").stat().st_size > 1000


def _make(tmp: Path, p4c: str) -> str:
    """`make p4-build` of the repository's Makefile in `tmp` (its p4src/ and build/) with P4C=p4c."""
    env = {**os.environ, "P4C": p4c}
    res = subprocess.run(["make", "-s", "-C", str(tmp), "-f", str(REPO / "Makefile"), "p4-build",
                          f"VENV={REPO / '.venv'}", f"PY={sys.executable}"],
                         env=env, capture_output=True, text=True, timeout=120, check=False)
    assert res.returncode == 0, res.stderr
    return res.stdout


@pytest.mark.skipif(shutil.which("make") is None, reason="needs GNU make")
def test_makefile_and_ensure_build_agree(tmp_path: Path) -> None:
    """`make p4-build` and Python's ensure_build share one staleness rule: sources and build/.compiler."""
    src = tmp_path / "p4src"
    (src / "include").mkdir(parents=True)
    for prog in PROGRAMS:
        (src / f"{prog}.p4").write_text("// program\n")
    (src / "include" / "parts.p4").write_text("// shared\n")
    (tmp_path / "pyproject.toml").write_text("")
    os.utime(tmp_path / "pyproject.toml", (0, 0))  # older than the venv's stamp: no `make setup`
    build = tmp_path / "build"
    a, b = fake_compiler(tmp_path, "compA", "1.0"), fake_compiler(tmp_path, "compB", "2.0")
    assert "compiled fabric, ocs" in _make(tmp_path, a) and runs(tmp_path, "compA") == 2
    assert _make(tmp_path, a) == "" and runs(tmp_path, "compA") == 2  # twice: nothing the second time
    assert Target(a, SIM_S).stale_programs(build, src) == []  # and Python agrees
    # a touched include (newer than every output and the stamp): stale for both
    for f in [*build.iterdir(), src / "fabric.p4", src / "ocs.p4"]:
        os.utime(f, (1000, 1000))
    os.utime(src / "include" / "parts.p4", (2000, 2000))
    assert Target(a, SIM_S).stale_programs(build, src) == list(PROGRAMS)
    assert "compiled fabric, ocs" in _make(tmp_path, a) and runs(tmp_path, "compA") == 4
    assert Target(a, SIM_S).stale_programs(build, src) == []
    # another P4C: make recompiles with it; then Python with A, and make with B again
    assert "compiled fabric, ocs" in _make(tmp_path, b) and runs(tmp_path, "compB") == 2
    assert Target(b, SIM_S).stale_programs(build, src) == [] and _make(tmp_path, b) == ""
    assert "compiled fabric, ocs" in Target(a, SIM_S).ensure_build(build, src) and runs(tmp_path, "compA") == 6
    assert "compiled fabric, ocs" in _make(tmp_path, b) and runs(tmp_path, "compB") == 4


def test_p4sim_by_name_without_the_environment_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """`make ... P4C=p4sim-compile SWITCH=p4sim-switch` picks p4sim where the real tools are installed,
    though .venv/bin is not on PATH."""
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    venv = Path(sys.executable).parent
    assert choose_compiler("p4sim-compile") == os.path.abspath(venv / "p4sim-compile")
    assert choose_switch("p4sim-switch --log-level warn").startswith(os.path.abspath(venv / "p4sim-switch"))
    with pytest.raises(ValueError, match="no-such-compiler"):
        choose_compiler("no-such-compiler")
