"""tofino_check: the front-end check of the TNA programs, its error filter and the resource summary."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from scripts import tofino_check as tc

INCLUDE = tc.tofino_include()
P4C = shutil.which("p4c-bm2-ss")
needs_front_end = pytest.mark.skipif(
    P4C is None or not INCLUDE.is_dir(),
    reason=f"needs p4c-bm2-ss (make setup) and the Tofino architecture files at {INCLUDE}")


def test_only_the_model_error_is_expected() -> None:
    out = ("p4src/tna/ocs.p4(79): [--Werror=Target model error] error: package Switch: main package  "
           "match the expected model\n[--Werror=overlimit] error: 1 errors encountered, aborting compilation\n"
           "x.p4(3): [--Wwarn=unused] warning: 'x' is unused\n")
    assert tc.unexpected_errors(out) == []
    bad = "flowlet.p4(83): [--Werror=type-error] error: Cannot cast implicitly type 'bit<8>' to type 'bit<32>'"
    assert tc.unexpected_errors(out + bad + "\n") == [bad]
    assert tc.unexpected_errors("Compiler Bug: Exiting with SIGSEGV\n") == ["Compiler Bug: Exiting with SIGSEGV"]


@needs_front_end
def test_both_programs_pass_on_both_targets(tmp_path: Path) -> None:
    results, tool = tc.run(list(tc.PROGRAMS), work=tmp_path, p4c=P4C)
    if tc.find_bf_p4c() is None:
        assert tool.startswith("p4c front end")
    assert [(r.program, r.target.arch, r.ok, r.errors) for r in results] == [
        ("fabric", "tna", True, []), ("fabric", "t2na", True, []),
        ("ocs", "tna", True, []), ("ocs", "t2na", True, [])]


@needs_front_end
def test_a_type_error_fails_the_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The bug of issue 21 (a bit<8> into a bit<32>), put back into a copy of p4src/.
    root = tmp_path / "repo"
    shutil.copytree(tc.ROOT / "p4src", root / "p4src")
    flowlet = root / "p4src" / "include" / "fabric" / "flowlet.p4"
    text = flowlet.read_text()
    assert "meta.flow_wanted = (bit<8>) meta.version + 1;" in text
    flowlet.write_text(text.replace("meta.flow_wanted = (bit<8>) meta.version + 1;",
                                    "meta.flow_index = (bit<8>) meta.version + 1;"))
    monkeypatch.setenv("TOFINO_P4INCLUDE", str(INCLUDE))
    monkeypatch.delenv("BF_P4C", raising=False)
    monkeypatch.setattr(tc, "find_bf_p4c", lambda root=None: None)
    results, _ = tc.run(["fabric"], root=root, work=tmp_path / "out", p4c=P4C)
    assert [r.ok for r in results] == [False, False]
    assert any("flowlet.p4" in e and "bit<8>" in e for e in results[0].errors), results[0].errors


def test_unknown_program_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no TNA program 'nope'.*fabric, ocs"):
        tc.run(["nope"], work=tmp_path, p4c="p4c-bm2-ss")


def test_bf_p4c_commands() -> None:
    prog = Path("/r/p4src/tna/fabric.p4")
    argv = tc.bf_p4c_argv("bf-p4c", prog, tc.TARGETS[1], Path("/o"))
    assert argv == ["bf-p4c", "--target", "tofino2", "--arch", "t2na", "-I", "/r/p4src", "-o", "/o",
                    "--p4runtime-files", "/o/fabric.p4info.txtpb", "/r/p4src/tna/fabric.p4"]
    front = tc.front_end_argv("p4c-bm2-ss", Path("/inc"), prog, tc.TARGETS[0], Path("/o/x.json"))
    assert front[:4] == ["p4c-bm2-ss", "-D__TARGET_TOFINO__=1", "-I", "/inc"]


def test_resource_summary_reads_the_compiler_metrics(tmp_path: Path) -> None:
    logs = tmp_path / "pipe" / "logs"
    logs.mkdir(parents=True)
    (logs / "metrics.json").write_text(json.dumps(
        {"compiler_version": "9.13.4", "resources": {"mau": {"stages": 9, "srams": 41, "tcams": 3},
                                                      "phv": {"normal": {"bits_occupied": 812}}}}))
    assert tc.resource_summary(tmp_path) == [
        "pipe: resources.mau.stages = 9", "pipe: resources.mau.srams = 41", "pipe: resources.mau.tcams = 3",
        "pipe: resources.phv.normal.bits_occupied = 812"]
    assert tc.resource_summary(tmp_path / "none")[0].startswith("no metrics.json under")


def test_missing_architecture_files_skip_or_fail_when_strict(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """A bare clone (no ../shared): skipped with the reason, recorded for make test's summary; with
    HITLESS_STRICT=1 (CI) the same is a failure."""
    monkeypatch.setenv("TOFINO_P4INCLUDE", str(tmp_path / "missing"))
    monkeypatch.setenv("HITLESS_TEST_REPORT", str(tmp_path / "report"))
    monkeypatch.setattr(tc, "find_bf_p4c", lambda root=None: None)
    monkeypatch.delenv("HITLESS_STRICT", raising=False)
    assert tc.main([]) == 0
    out = capsys.readouterr().out
    assert out.startswith("tofino-check: skipped: bf-p4c not installed and no Tofino architecture files at "), out
    rec = json.loads((tmp_path / "report" / "tofino-check.json").read_text())
    assert rec["status"] == "skipped" and "tofino" in rec["untested"], rec
    monkeypatch.setenv("HITLESS_STRICT", "1")
    assert tc.main([]) == 1
    assert capsys.readouterr().out.startswith("tofino-check: FAILED (HITLESS_STRICT=1): bf-p4c not installed")
    assert json.loads((tmp_path / "report" / "tofino-check.json").read_text())["status"] == "failed"
