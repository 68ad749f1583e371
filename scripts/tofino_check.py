"""`make tofino-check`: check the TNA programs (p4src/tna/) for Tofino 1 (tna) and Tofino 2 (t2na).

Where bf-p4c is installed (on PATH, $BF_P4C, or ../shared/toolchain/bin/), it compiles each program
for each target and prints a resource summary from the compiler's own logs. Without it, p4c's front
end (p4c-bm2-ss) type-checks each program against Tofino's architecture files
(../shared/toolchain/tofino-p4include, or $TOFINO_P4INCLUDE): a correct TNA program then fails only
with the bmv2 back end's "main package ... expected model" error (it is not a V1Switch), any other
error fails the check.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from scripts.testreport import Record, missing, record

log = logging.getLogger(__name__)

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = ("fabric", "ocs")
# The bmv2 back end's refusal of a non-V1Switch program: the one error a correct TNA program gets
# from p4c-bm2-ss (p4c 1.2.5.16 prints "main package  match the expected model").
EXPECTED_ERROR = re.compile(r"main package\s+(does not\s+)?match the expected model")
_ERROR = re.compile(r"\berror\b|Compiler Bug", re.IGNORECASE)
_ERROR_COUNT = re.compile(r"\d+ errors? encountered, aborting compilation")


@dataclass(frozen=True, slots=True)
class Target:
    """A Tofino chip: bf-p4c's --target and --arch, and __TARGET_TOFINO__."""

    name: str
    arch: str
    generation: int


TARGETS = (Target("tofino", "tna", 1), Target("tofino2", "t2na", 2))


@dataclass(slots=True)
class Result:
    """One program on one target: passed or not, the errors, and what was run."""

    program: str
    target: Target
    ok: bool
    errors: list[str] = field(default_factory=list)
    resources: list[str] = field(default_factory=list)
    argv: list[str] = field(default_factory=list)


def tofino_include(root: Path = ROOT) -> Path:
    """The folder of tna.p4/t2na.p4: $TOFINO_P4INCLUDE, else ../shared/toolchain/tofino-p4include."""
    env = os.environ.get("TOFINO_P4INCLUDE")
    return Path(env) if env else root.parent / "shared" / "toolchain" / "tofino-p4include"


def find_bf_p4c(root: Path = ROOT) -> str | None:
    """bf-p4c: $BF_P4C, else on PATH, else in ../shared/toolchain/bin; None when not installed."""
    env = os.environ.get("BF_P4C")
    if env:
        return env
    found = shutil.which("bf-p4c")
    if found:
        return found
    shared = root.parent / "shared" / "toolchain" / "bin" / "bf-p4c"
    return str(shared) if shared.is_file() and os.access(shared, os.X_OK) else None


def unexpected_errors(output: str) -> list[str]:
    """The error lines of p4c's output other than the expected model mismatch (and its count line)."""
    bad = []
    for line in output.splitlines():
        if not _ERROR.search(line) or _ERROR_COUNT.search(line) or EXPECTED_ERROR.search(line):
            continue
        if "[--Wwarn" in line or "warning:" in line:
            continue
        bad.append(line.strip())
    return bad


def front_end_argv(p4c: str, include: Path, program: Path, target: Target, out: Path) -> list[str]:
    """The p4c-bm2-ss command that type-checks `program` for `target`."""
    return [p4c, f"-D__TARGET_TOFINO__={target.generation}", "-I", str(include),
            "-I", str(program.parent.parent), str(program), "-o", str(out)]


def check_front_end(p4c: str, include: Path, program: Path, target: Target, work: Path) -> Result:
    """Type-check one TNA program with p4c's front end; only the expected model error may remain."""
    argv = front_end_argv(p4c, include, program, target, work / f"{program.stem}.{target.arch}.json")
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    output = proc.stdout + proc.stderr
    errors = unexpected_errors(output)
    if proc.returncode != 0 and not errors and not EXPECTED_ERROR.search(output):
        errors = [f"p4c exited with {proc.returncode} without the expected model error"]
    return Result(program.stem, target, not errors, errors, argv=argv)


def bf_p4c_argv(bf_p4c: str, program: Path, target: Target, out: Path) -> list[str]:
    """The bf-p4c command that compiles `program` for `target` into `out`."""
    return [bf_p4c, "--target", target.name, "--arch", target.arch, "-I", str(program.parent.parent),
            "-o", str(out), "--p4runtime-files", str(out / f"{program.stem}.p4info.txtpb"), str(program)]


def compile_bf_p4c(bf_p4c: str, program: Path, target: Target, work: Path) -> Result:
    """Compile one TNA program with bf-p4c; any error fails it. Resources from its logs."""
    out = work / f"{program.stem}.{target.name}"
    out.mkdir(parents=True, exist_ok=True)
    argv = bf_p4c_argv(bf_p4c, program, target, out)
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    errors = [] if proc.returncode == 0 else (unexpected_errors(proc.stdout + proc.stderr)
                                              or [f"bf-p4c exited with {proc.returncode}"])
    return Result(program.stem, target, not errors, errors, resource_summary(out) if not errors else [], argv)


_RESOURCE_KEY = re.compile(r"stage|sram|tcam|phv|map_?ram|hash|alu|gateway|logical", re.IGNORECASE)


def _numbers(node: object, path: str, out: list[tuple[str, object]]) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            _numbers(value, f"{path}.{key}" if path else str(key), out)
    elif isinstance(node, list):
        for i, value in enumerate(node):
            _numbers(value, f"{path}[{i}]", out)
    elif isinstance(node, (int, float)) and not isinstance(node, bool):
        out.append((path, node))


def resource_summary(out: Path) -> list[str]:
    """Stage, SRAM, TCAM and PHV figures from bf-p4c's logs under `out` (metrics.json of each pipe)."""
    lines = []
    for metrics in sorted(out.rglob("metrics.json")):
        try:
            doc = json.loads(metrics.read_text())
        except (OSError, ValueError) as exc:
            lines.append(f"{metrics}: unreadable ({exc})")
            continue
        found: list[tuple[str, object]] = []
        _numbers(doc, "", found)
        pipe = metrics.parent.parent.name if metrics.parent.name == "logs" else metrics.parent.name
        lines += [f"{pipe}: {key} = {value}" for key, value in found if _RESOURCE_KEY.search(key)]
    if not lines:
        lines = [f"no metrics.json under {out}: see the compiler's logs there"]
    return lines


def run(programs: list[str], root: Path = ROOT, work: Path | None = None,
        p4c: str | None = None) -> tuple[list[Result], str]:
    """Check every program on both targets; returns the results and which tool checked them."""
    include = tofino_include(root)
    work = work or root / "build" / "tofino"
    work.mkdir(parents=True, exist_ok=True)
    bf = find_bf_p4c(root)
    results = []
    for name in programs:
        program = root / "p4src" / "tna" / f"{name}.p4"
        if not program.is_file():
            raise ValueError(f"no TNA program {name!r}: {program} does not exist (expected one of {', '.join(PROGRAMS)})")
        for target in TARGETS:
            if bf:
                results.append(compile_bf_p4c(bf, program, target, work))
            else:
                results.append(check_front_end(p4c or "p4c-bm2-ss", include, program, target, work))
    return results, (f"bf-p4c ({bf})" if bf else "p4c front end (bf-p4c not installed)")


def main(argv: list[str] | None = None) -> int:
    """Entry point: 0 when every program passes on both targets."""
    ap = argparse.ArgumentParser(prog="python -m scripts.tofino_check", description=__doc__.splitlines()[0])
    ap.add_argument("--programs", default=",".join(PROGRAMS), metavar="P[,P]", help="TNA programs (default fabric,ocs)")
    ap.add_argument("--build", metavar="<dir>", help="output folder (default build/tofino)")
    ap.add_argument("--p4c", metavar="<p4c-bm2-ss>", help="p4c for the front-end check (default p4c-bm2-ss on PATH)")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    include = tofino_include()
    bf = find_bf_p4c()
    p4c = args.p4c or shutil.which("p4c-bm2-ss")
    if not bf and not include.is_dir():
        return _missing(f"bf-p4c not installed and no Tofino architecture files at {include} "
                        "(../shared/toolchain/tofino-p4include, or set TOFINO_P4INCLUDE)")
    if not bf and not p4c:
        return _missing("neither bf-p4c nor p4c-bm2-ss is installed (make setup installs p4c beside ../shared)")
    try:
        results, tool = run([p for p in args.programs.split(",") if p],
                            work=Path(args.build) if args.build else None, p4c=p4c)
    except ValueError as exc:
        print(f"tofino-check: {exc}")
        return 2
    print(f"tofino-check with {tool}")
    for r in results:
        print(f"  {r.program:7} {r.target.name:8} ({r.target.arch:4}): {'ok' if r.ok else 'FAILED'}")
        for line in r.errors:
            print(f"      {line}")
        for line in r.resources:
            print(f"      {line}")
    failed = [r for r in results if not r.ok]
    if failed:
        print(f"tofino-check: {len(failed)} of {len(results)} failed; command of the first: {' '.join(failed[0].argv)}")
        record(Record("tofino-check", "failed", tool, passed=len(results) - len(failed), failed=len(failed)))
        return 1
    print(f"tofino-check: {len(results)} of {len(results)} passed")
    record(Record("tofino-check", "passed", tool, passed=len(results), tested=[f"tofino ({tool.split(' (')[0]})"]))
    return 0


def _missing(reason: str) -> int:
    """No tool to check with: a skip (0), or a failure under HITLESS_STRICT=1 (1); recorded either way."""
    status, line = missing("tofino-check", f"{reason}; no TNA program was checked")
    print(line)
    record(Record("tofino-check", status, reason, untested={"tofino": reason}))
    return 1 if status == "failed" else 0


if __name__ == "__main__":
    sys.exit(main())
