"""`make tofino-check`: compile the TNA programs (p4src/tna/) with bf-p4c for Tofino 1 (tna) and
Tofino 2 (t2na), print what each uses of its chip, and hold them to their budgets.

Resources come from the compiler's own logs (pipe/logs/resources.json and metrics.json of
`--verbose 1`): MAU stages of the chip's 12 or 20, SRAM and TCAM blocks, PHV containers, hash
distribution units and meter ALUs (the stateful ALUs of the registers and selectors). Budgets:
fabric on Tofino 1 leaves two of its 12 stages spare (room for what comes next).

KNOWN_ERRORS lists a (program, chip) that does not compile yet, with a line of its error: the check
fails when that error changes or the program starts compiling, so the list only shrinks. Compiles
are reused while their sources are unchanged (emulation/tofino.py). Without bf-p4c nothing is
checked: a skip with the reason, or a failure under HITLESS_STRICT=1 (CI).
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from emulation.tofino import (
    CHIPS,
    INSTALLED_BF_P4C,
    PROGRAMS,
    VARIANTS,
    Chip,
    Compiled,
    chip,
    compile_program,
    find_bf_p4c,
    work_dir,
)
from scripts.tools.testreport import Record, missing, record

log = logging.getLogger(__name__)

# (program, chip) -> a line of the error it is known to fail with. Empty: every program compiles.
# The OCS's reservation scheduler (issue 35) takes 13 stages on both chips: Tofino 2 has 20.
KNOWN_ERRORS: dict[tuple[str, str], str] = {("ocs-scheduler", "tofino"): "tofino supports up to 12 stages, using 13"}
# (program, chip) -> most MAU stages it may take (issue 30: fabric leaves two of Tofino 1's 12 spare).
STAGE_BUDGET = {("fabric", "tofino"): 10}


@dataclass(frozen=True, slots=True)
class Resources:
    """What a compiled program takes of its chip, each as (used, available)."""

    stages: tuple[int, int]
    sram: tuple[int, int]
    tcam: tuple[int, int]
    phv: tuple[int, int]
    hash_units: tuple[int, int]
    salus: tuple[int, int]

    def row(self) -> list[str]:
        """The table's cells: "used of available"."""
        return [f"{u} of {a}" for u, a in (self.stages, self.sram, self.tcam, self.phv, self.hash_units, self.salus)]


COLUMNS = ["program", "chip", "stages", "SRAM blocks", "TCAM blocks", "PHV containers", "hash dist units",
           "meter ALUs (stateful)"]


def resources(out: Path) -> Resources:
    """The program's use of its chip, from bf-p4c's resources.json and metrics.json under `out`."""
    logs = out / "pipe" / "logs"
    try:
        res = json.loads((logs / "resources.json").read_text())["resources"]
        metrics = json.loads((logs / "metrics.json").read_text())
        mau = res["mau"]
        stages = mau["mau_stages"]
        n = mau["nStages"]

        def per_stage(key: str, items: str, size: tuple[str, ...]) -> tuple[int, int]:
            # used: the items listed in every stage; available: a stage's rows x columns (or units) x stages
            return sum(len(s[key][items]) for s in stages), math.prod(stages[0][key][k] for k in size) * n

        phv_used = sum(c["containers_occupied"] for kind in metrics["phv"].values() for c in kind)
        phv_total = sum(c["units"] for kind in res["phv_containers"].values() for c in kind)
        return Resources((len(stages), n), per_stage("rams", "srams", ("nRows", "nColumns")),
                         per_stage("tcams", "tcams", ("nRows", "nColumns")), (phv_used, phv_total),
                         per_stage("hash_distribution_units", "units", ("nHashIds", "nUnitIds")),
                         per_stage("meter_alus", "meters", ("nAlus",)))
    except (OSError, ValueError, KeyError, IndexError, TypeError) as exc:
        raise ValueError(f"bf-p4c's logs under {logs}: unreadable ({exc!r:.100}); expected resources.json "
                         "and metrics.json of --verbose 1") from None


def problems(c: Compiled, used: Resources | None, known: dict[tuple[str, str], str] = KNOWN_ERRORS,
             budget: dict[tuple[str, str], int] = STAGE_BUDGET) -> list[str]:
    """Why this compile (and what it `used`) fails the check (empty: it passes): an error not listed,
    a listed error that changed or went away, a stage budget exceeded."""
    expected = known.get((c.program, c.chip.name))
    if expected is not None:
        if c.ok:
            return [f"compiles now: remove ({c.program!r}, {c.chip.name!r}) from KNOWN_ERRORS"]
        if not any(expected in line for line in c.errors):
            return [f"its known error changed: expected a line with {expected!r}", *c.errors]
        return []
    if not c.ok or used is None:
        return c.errors
    limit = budget.get((c.program, c.chip.name))
    if limit is not None and used.stages[0] > limit:
        return [f"{used.stages[0]} stages of {c.chip.stages}: over its budget of {limit}"]
    return []


def markdown(rows: list[list[str]]) -> str:
    """A Markdown table (README's): COLUMNS, then the rows."""
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows])


@dataclass(slots=True)
class Report:
    """A check's outcome: the resource table's rows, each compile's time, the failures by compile."""

    rows: list[list[str]]
    times: list[str]
    failures: dict[str, list[str]]


def check(bf: str, programs: list[str], chips: list[Chip], work: Path) -> Report:
    """Compile (or reuse) every program for every chip, as many at once as the machine has cores
    (bf-p4c runs on one), and hold each to the check."""
    report = Report([], [], {})
    jobs = [(program, target) for program in programs for target in chips]
    with ThreadPoolExecutor(max_workers=max(1, min(len(jobs), os.cpu_count() or 1))) as pool:
        compiled = list(pool.map(lambda job: compile_program(bf, job[0], job[1], work), jobs))
    for (program, target), c in zip(jobs, compiled, strict=True):
        used = resources(c.out) if c.ok else None
        report.rows.append([program, target.name, *(used.row() if used else ["failed"] * 6)])
        report.times.append(f"{program} on {target.name} {c.seconds:.0f} s" + (" (reused)" if c.cached else ""))
        bad = problems(c, used)
        if bad:
            report.failures[f"{program} on {target.name}"] = bad
    return report


def main(argv: list[str] | None = None, prog: str = "python -m scripts.tools.tofino_check") -> int:
    """Entry point: 0 when every program passes on every chip (or bf-p4c is missing and not strict)."""
    ap = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0])
    ap.add_argument("--programs", default=",".join((*PROGRAMS, *VARIANTS)), metavar="P[,P]",
                    help="TNA programs and variants (default fabric,ocs,ocs-scheduler)")
    ap.add_argument("--chips", default=",".join(c.name for c in CHIPS), metavar="C[,C]",
                    help="chips (default tofino,tofino2)")
    ap.add_argument("--build", metavar="<dir>", help="compile folder (default $BUILD/tofino)")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    bf = find_bf_p4c()
    if bf is None:
        return _missing(f"bf-p4c not installed (not $BF_P4C, on PATH or at {INSTALLED_BF_P4C}: make setup "
                        "installs it from ../shared/toolchain)")
    try:
        chips = [chip(n) for n in args.chips.split(",") if n]
        report = check(bf, [p for p in args.programs.split(",") if p], chips,
                       Path(args.build) if args.build else work_dir())
    except ValueError as exc:
        print(f"tofino-check: {exc}")
        return 2
    print(f"tofino-check with {bf}\n{markdown(report.rows)}\ncompile times: {', '.join(report.times)}")
    for what, lines in report.failures.items():
        print(f"  FAILED {what}: " + "\n    ".join(lines))
    n, failed = len(report.rows), len(report.failures)
    print(f"tofino-check: {n - failed} of {n} passed")
    record(Record("tofino-check", "failed" if failed else "passed", bf, passed=n - failed, failed=failed,
                  tested=["tofino (bf-p4c)"]))
    return 1 if failed else 0


def _missing(reason: str) -> int:
    """No bf-p4c: a skip (0), or a failure under HITLESS_STRICT=1 (1); recorded either way."""
    status, line = missing("tofino-check", f"{reason}; no TNA program was checked")
    print(line)
    record(Record("tofino-check", status, reason, untested={"tofino": reason}))
    return 1 if status == "failed" else 0


if __name__ == "__main__":
    sys.exit(main())
