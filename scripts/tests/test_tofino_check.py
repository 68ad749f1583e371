"""tofino_check: every TNA program compiles for both chips within its budget, the resource table is the
README's, the known-errors list only shrinks, and a machine without bf-p4c skips (fails in CI)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from emulation import tofino
from emulation.tofino import Compiled
from scripts.tools import tofino_check as tc

BF_P4C = tofino.find_bf_p4c()
needs_bf_p4c = pytest.mark.skipif(BF_P4C is None, reason="bf-p4c is not installed (not $BF_P4C, on PATH or "
                                  f"{tofino.INSTALLED_BF_P4C}; make setup installs it from ../shared/toolchain)")
README = Path(__file__).resolve().parents[2] / "README.md"
TOFINO = tofino.chip("tofino")


def compiled(ok: bool, errors: list[str] | None = None, program: str = "fabric") -> Compiled:
    return Compiled(program, TOFINO, Path("/nowhere"), ok, 1.0, errors=errors or [])


def used(stages: int) -> tc.Resources:
    return tc.Resources((stages, 12), (1, 960), (1, 288), (1, 336), (1, 72), (1, 48))


def test_the_known_errors_only_shrink() -> None:
    known = {("fabric", "tofino"): "Null element"}
    bug = "Compiler Bug: typeMap.cpp:103: Null element"
    assert tc.problems(compiled(False, [bug]), None, known) == []
    assert tc.problems(compiled(True), used(9), known) == [
        "compiles now: remove ('fabric', 'tofino') from KNOWN_ERRORS"]
    other = "clock.p4(89): error: : action spanning multiple stages."
    assert tc.problems(compiled(False, [other]), None, known) == [
        "its known error changed: expected a line with 'Null element'", other]
    assert tc.problems(compiled(False, [other]), None, {}) == [other]
    # every TNA program compiles for both chips; the OCS's scheduler build only for Tofino 2 yet
    assert set(tc.KNOWN_ERRORS) <= {("ocs-scheduler", "tofino")}


def test_the_stage_budget() -> None:
    assert tc.STAGE_BUDGET[("fabric", "tofino")] == 10  # two of Tofino 1's 12 stages spare
    assert tc.problems(compiled(True), used(10)) == []
    assert tc.problems(compiled(True), used(11)) == ["11 stages of 12: over its budget of 10"]
    assert tc.problems(compiled(True, program="ocs"), used(12)) == []


@needs_bf_p4c
def test_every_program_compiles_for_both_chips_and_the_readme_shows_its_resources() -> None:
    programs = [*tofino.PROGRAMS, *tofino.VARIANTS]
    report = tc.check(str(BF_P4C), programs, list(tofino.CHIPS), tofino.work_dir())
    assert report.failures == {}  # ocs-scheduler on Tofino 1 fails with its known error (KNOWN_ERRORS)
    assert [r[:2] for r in report.rows] == [[p, c.name] for p in programs for c in tofino.CHIPS]
    fabric1 = report.rows[0]
    assert int(fabric1[2].split()[0]) <= 10 and fabric1[2].endswith("of 12")
    assert all(r[2].endswith("of 20") for r in report.rows if r[1] == "tofino2")  # every program fits Tofino 2
    assert tc.markdown(report.rows) in README.read_text(), \
        "README.md's Tofino resource table differs from tofino-check's:\n" + tc.markdown(report.rows)


@needs_bf_p4c
def test_resources_are_the_compilers_own_figures() -> None:
    c = tofino.compile_program(str(BF_P4C), "fabric", TOFINO, tofino.work_dir())
    logs = c.out / "pipe" / "logs"
    res = tc.resources(c.out)
    stages = json.loads((logs / "resources.json").read_text())["resources"]["mau"]["mau_stages"]
    assert res.stages == (len(stages), 12)
    metrics = json.loads((logs / "metrics.json").read_text())["mau"]
    assert (res.sram[0], res.tcam[0]) == (metrics["srams"], metrics["tcams"])
    # the flowlet's five registers, hold_depth, spray_rr, and the three selectors
    assert res.salus[0] == 10
    # mau.resources.log's totals line: Hash Dist Unit and Meter ALU columns
    text = (logs / "mau.resources.log").read_text()
    header = next(ln for ln in text.splitlines() if "Hash Dist Unit" in ln)
    totals = next(ln for ln in text.splitlines() if ln.startswith("|    Totals"))
    cols = [h.strip() for h in header.split("|")]
    vals = [v.strip() for v in totals.split("|")]
    assert int(vals[cols.index("Hash Dist Unit")]) == res.hash_units[0]
    assert int(vals[cols.index("Meter ALU")]) == res.salus[0]


def test_without_bf_p4c_a_skip_or_a_failure_when_strict(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """A bare clone (no ../shared): skipped with the reason, recorded for make test's summary; with
    HITLESS_STRICT=1 (CI) the same is a failure."""
    monkeypatch.setenv("HITLESS_TEST_REPORT", str(tmp_path / "report"))
    monkeypatch.setattr(tc, "find_bf_p4c", lambda: None)  # this machine's bf-p4c, out of sight
    monkeypatch.delenv("HITLESS_STRICT", raising=False)
    assert tc.main([]) == 0
    out = capsys.readouterr().out
    assert re.match(r"tofino-check: skipped: bf-p4c not installed \(not \$BF_P4C, on PATH or at /usr/local/lib/"
                    r"p4ref/tofino/bin/bf-p4c: make setup installs it from ../shared/toolchain\); no TNA program "
                    r"was checked\n$", out), out
    rec = json.loads((tmp_path / "report" / "tofino-check.json").read_text())
    assert rec["status"] == "skipped" and "tofino" in rec["untested"], rec
    monkeypatch.setenv("HITLESS_STRICT", "1")
    assert tc.main([]) == 1
    assert capsys.readouterr().out.startswith("tofino-check: FAILED (HITLESS_STRICT=1): bf-p4c not installed")
    assert json.loads((tmp_path / "report" / "tofino-check.json").read_text())["status"] == "failed"
