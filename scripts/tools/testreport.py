"""`make test`'s summary: each step records what it tested and what it skipped, and the last lines
say it all at once, ending with which targets were tested.

A step writes one JSON record into $HITLESS_TEST_REPORT (set by `make test` only; elsewhere
`record` does nothing): lint, tofino-check (scripts/tools/tofino_check.py), pytest (the root conftest.py)
and ptf (ptf-tests/ptf_runner.py). A check that needs a tool the machine lacks is a skip with a
one-line reason; with HITLESS_STRICT=1 (CI) it is a failure (`missing`).

    python -m scripts.tools.testreport DIR              # print the summary of a run; 1 if a step failed or is missing
    python -m scripts.tools.testreport record STEP passed|failed|skipped [DETAIL]
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

REPORT_ENV = "HITLESS_TEST_REPORT"
STRICT_ENV = "HITLESS_STRICT"
STEPS = ("lint", "tofino-check", "pytest", "ptf")
STATUSES = ("passed", "failed", "skipped")


def strict() -> bool:
    """True when HITLESS_STRICT=1: every check skipped for a missing tool fails instead."""
    return os.environ.get(STRICT_ENV, "") == "1"


def missing(what: str, reason: str) -> tuple[str, str]:
    """A check that cannot run for lack of a tool: ("skipped", line), or ("failed", line) when strict."""
    if strict():
        return "failed", f"{what}: FAILED ({STRICT_ENV}=1): {reason}"
    return "skipped", f"{what}: skipped: {reason}"


@dataclass(slots=True)
class Record:
    """What one step of `make test` did: its status, counts, the skips by reason, the targets it tested."""

    step: str
    status: str
    detail: str = ""
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    skips: dict[str, int] = field(default_factory=dict)  # reason -> how many checks it skipped
    tested: list[str] = field(default_factory=list)  # targets this step ran on: "p4sim+p4sim", "tofino (bf-p4c)"
    untested: dict[str, str] = field(default_factory=dict)  # target -> why it was not tested

    def __post_init__(self) -> None:
        if self.step not in STEPS:
            raise ValueError(f"step {self.step!r}: expected one of {', '.join(STEPS)}")
        if self.status not in STATUSES:
            raise ValueError(f"status {self.status!r}: expected one of {', '.join(STATUSES)}")


def record(rec: Record) -> Path | None:
    """Write a step's record into $HITLESS_TEST_REPORT (None when it is not set: not a `make test` run)."""
    folder = os.environ.get(REPORT_ENV)
    if not folder:
        return None
    path = Path(folder) / f"{rec.step}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(asdict(rec), indent=1))
    return path


def load(folder: Path) -> dict[str, Record]:
    """The records of a run, by step."""
    out = {}
    for path in sorted(folder.glob("*.json")):
        rec = Record(**json.loads(path.read_text()))
        out[rec.step] = rec
    return out


def summary(records: dict[str, Record]) -> tuple[list[str], bool]:
    """The summary lines of a run and whether it passed (every step recorded, none failed)."""
    lines = ["== test summary"]
    ok = True
    for step in STEPS:
        rec = records.get(step)
        if rec is None:
            lines.append(f"{step:13} FAILED: no record (it stopped before the end; see its output above)")
            ok = False
            continue
        ok = ok and rec.status != "failed"
        counts = f"{rec.passed} passed, {rec.failed} failed, {rec.skipped} skipped" if rec.passed or rec.failed else ""
        lines.append(f"{step:13} {rec.status}" + "".join(f": {x}" for x in (counts, rec.detail) if x))
        lines += [f"{'':13}   skipped {n}: {reason}" for reason, n in sorted(rec.skips.items(), key=lambda x: -x[1])]
    steps = [records[s] for s in STEPS if s in records]
    tested = _unique(t for r in steps for t in r.tested)
    untested = {t: why for r in steps for t, why in r.untested.items() if t not in tested}
    lines.append(f"targets tested: {', '.join(tested) or 'none'}")
    if untested:
        lines.append("targets not tested: " + "; ".join(f"{t} ({why})" for t, why in untested.items())
                     + ("" if strict() else f"; {STRICT_ENV}=1 makes this a failure"))
    passed, failed, skipped = (sum(getattr(r, k) for r in steps) for k in ("passed", "failed", "skipped"))
    lines.append(f"test: {passed} passed, {failed} failed, {skipped} skipped")
    return lines, ok and not failed


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def main(argv: list[str] | None = None) -> int:
    """Entry point: print a run's summary, or record a step."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["record"] and len(args) in (3, 4):
        record(Record(args[1], args[2], args[3] if len(args) == 4 else ""))
        return 0
    if len(args) != 1:
        print("usage: python -m scripts.tools.testreport DIR | record STEP STATUS [DETAIL]", file=sys.stderr)
        return 2
    lines, ok = summary(load(Path(args[0])))
    print("\n".join(lines))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
