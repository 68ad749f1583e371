"""The root conftest.py: a skip fails under HITLESS_STRICT=1 (CI), an xfail stays expected, and a run
under `make test` records its counts and skips by reason (scripts/tools/testreport.py). Runs pytest itself
on a small suite that uses the project's conftest."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SUITE = '''
import pytest

def test_passes():
    assert True

@pytest.mark.skipif(True, reason="needs frobnicator (not on PATH)")
def test_needs_a_tool():
    pass

def test_skips_in_its_body():
    pytest.skip("needs frobnicator (not on PATH)")

@pytest.mark.xfail(reason="a known limit", strict=True)
def test_known_limit():
    assert False
'''
MODULE_SKIP = 'import pytest\npytest.importorskip("no_such_module_here", reason="needs no_such_module_here")\n'


def _pytest(tmp: Path, strict: bool) -> tuple[int, str, dict]:
    shutil.copy(ROOT / "conftest.py", tmp / "conftest.py")
    (tmp / "test_suite.py").write_text(SUITE)
    (tmp / "test_module_skip.py").write_text(MODULE_SKIP)
    report = tmp / "report"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HITLESS_TEST_REPORT": str(report),
           "HITLESS_STRICT": "1" if strict else "0"}
    res = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs", str(tmp)],
                         cwd=tmp, env=env, capture_output=True, text=True, timeout=120, check=False)
    return res.returncode, res.stdout, json.loads((report / "pytest.json").read_text())


def test_skips_are_skips_with_their_reasons(tmp_path: Path) -> None:
    rc, out, rec = _pytest(tmp_path, strict=False)
    assert rc == 0, out
    assert (rec["status"], rec["passed"], rec["failed"], rec["skipped"]) == ("passed", 1, 0, 3), rec
    assert rec["skips"] == {"needs frobnicator (not on PATH)": 2, "needs no_such_module_here": 1}, rec


def test_strict_turns_every_skip_into_a_failure(tmp_path: Path) -> None:
    rc, out, rec = _pytest(tmp_path, strict=True)
    assert rc == 1, out
    assert "HITLESS_STRICT=1: skipped, which is a failure here: needs frobnicator (not on PATH)" in out, out
    assert "FAILED test_module_skip.py: needs no_such_module_here (HITLESS_STRICT=1" in out, out
    assert "1 xfailed" in out, out
    assert (rec["status"], rec["passed"], rec["failed"], rec["skipped"]) == ("failed", 1, 3, 0), rec
