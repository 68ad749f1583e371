"""scripts/tools/testreport.py: make test's summary from the steps' records."""

from __future__ import annotations

from pathlib import Path

import pytest

from scripts.tools.testreport import Record, load, main, record, summary


def _records(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *recs: Record) -> Path:
    monkeypatch.setenv("HITLESS_TEST_REPORT", str(tmp_path))
    for r in recs:
        record(r)
    return tmp_path


def test_a_bare_clone_passes_and_says_what_it_skipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HITLESS_STRICT", raising=False)
    folder = _records(tmp_path, monkeypatch,
                      Record("lint", "passed", "ruff: no findings"),
                      Record("tofino-check", "skipped", "no architecture files", untested={"tofino": "no bf-p4c"}),
                      Record("pytest", "passed", passed=10, skipped=3, skips={"needs root": 2, "needs bmv2": 1}),
                      Record("ptf", "passed", passed=46, tested=["p4sim+p4sim"],
                             untested={"p4c+bmv2": "p4c-bm2-ss not on PATH"}))
    lines, ok = summary(load(folder))
    assert ok
    assert "tofino-check  skipped: no architecture files" in lines
    assert lines.index("                skipped 2: needs root") < lines.index("                skipped 1: needs bmv2")
    assert lines[-3:] == ["targets tested: p4sim+p4sim",
                          "targets not tested: tofino (no bf-p4c); p4c+bmv2 (p4c-bm2-ss not on PATH); "
                          "HITLESS_STRICT=1 makes this a failure",
                          "test: 56 passed, 0 failed, 3 skipped"]
    assert main([str(folder)]) == 0


def test_a_failed_or_missing_step_fails_the_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = _records(tmp_path, monkeypatch, Record("lint", "passed"), Record("tofino-check", "failed", "strict"),
                      Record("pytest", "passed", passed=1))
    lines, ok = summary(load(folder))
    assert not ok
    assert "ptf           FAILED: no record (it stopped before the end; see its output above)" in lines
    assert main([str(folder)]) == 1


def test_bad_records_are_refused() -> None:
    with pytest.raises(ValueError, match="step 'lintt': expected one of lint"):
        Record("lintt", "passed")
    with pytest.raises(ValueError, match="status 'ok': expected one of passed, failed, skipped"):
        Record("lint", "ok")
