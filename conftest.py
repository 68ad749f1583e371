"""Hooks for every test of the project.

- HITLESS_STRICT=1 (CI): a skipped test (it lacked root, Mininet, bmv2, p4c, bf-p4c, ...) fails
  instead, with its skip reason, and so does a skipped module (at the run's end, after every other
  test ran); an expected failure (xfail) stays what it is.
- Under `make test` ($HITLESS_TEST_REPORT), the run's counts and its skips by reason go into the
  run's summary (scripts/tools/testreport.py).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from scripts.tools.testreport import STRICT_ENV, Record, record, strict


def _skip_reason(report: Any) -> str:
    """The one-line reason of a skip report (its longrepr is (file, line, 'Skipped: reason'))."""
    longrepr = report.longrepr
    text = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
    return text.removeprefix("Skipped: ").strip().splitlines()[0] if text.strip() else "no reason given"


def _strict(report: Any) -> None:
    if strict() and report.skipped and not hasattr(report, "wasxfail"):
        reason = _skip_reason(report)
        report.outcome = "failed"
        report.longrepr = f"{STRICT_ENV}=1: skipped, which is a failure here: {reason}"


# modules skipped whole under HITLESS_STRICT=1: reported and failing the run at its end (a collection
# error instead would stop pytest before it ran any test)
_SKIPPED_MODULES: list[str] = []


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Any:
    """A test's skip (in setup or in its body) fails under HITLESS_STRICT=1."""
    outcome = yield
    _strict(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Any:
    """A module's skip (importorskip, allow_module_level) fails the run under HITLESS_STRICT=1."""
    outcome = yield
    report = outcome.get_result()
    if strict() and report.skipped:
        _SKIPPED_MODULES.append(f"{report.nodeid}: {_skip_reason(report)}")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Under HITLESS_STRICT=1 a skipped module fails the run."""
    if _SKIPPED_MODULES and exitstatus in (0, 5):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int) -> None:
    """Record the run for `make test`'s summary: counts and the skips grouped by reason."""
    for line in _SKIPPED_MODULES:
        terminalreporter.write_line(f"FAILED {line} ({STRICT_ENV}=1: a skipped module is a failure here)")
    stats = terminalreporter.stats
    skips = [r for r in stats.get("skipped", []) if not hasattr(r, "wasxfail")]
    reasons = Counter(_skip_reason(r) for r in skips)
    passed = len(stats.get("passed", []))
    failed = len(stats.get("failed", [])) + len(stats.get("error", [])) + len(_SKIPPED_MODULES)
    status = "failed" if failed or exitstatus not in (0, 5) else "passed"
    record(Record("pytest", status, passed=passed, failed=failed, skipped=len(skips) - len(_SKIPPED_MODULES),
                  skips=dict(reasons) if not strict() else {}))
