"""p4sim against p4c's own test programs (p4c's `testdata/p4_16_samples`, fetched, not vendored).

    python -m p4sim.tests.p4c_samples CORPUS [--out DIR] [--switches p4sim,bmv2] [NAME ...]
    python -m p4sim.tests.p4c_samples CORPUS --compile-all

Every program of CORPUS that has an `.stf` packet test and includes v1model.p4, compiled by
p4c-bm2-ss and by p4sim-compile (in this process), the two P4Info files compared whole, then the STF
test run (p4sim/tests/stf_run.py) on three pairings: p4c + bmv2 (the reference), p4c's JSON on
p4sim's switch (the engine), p4sim-compile + p4sim-switch (the whole target). Prints one line per
program and the counts; `--out` keeps the outputs and a `results.json`.

`--compile-all`: every `.p4` of CORPUS (packet tests or not, any architecture) through p4sim-compile,
counted by outcome: compiled, a located error (by its message, numbers and names taken out), an
error without a place, an internal error (any other exception: a defect, listed with its program).
"""

from __future__ import annotations

import json
import logging
import re
import signal
import subprocess
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path

from google.protobuf import text_format

from p4rt.proto import p4i
from p4sim.compiler.compile import compile_file, write_outputs
from p4sim.compiler.errors import CompileError
from p4sim.tests import stf, stf_run

log = logging.getLogger(__name__)

P4C = "p4c-bm2-ss"
COMPILE_TIMEOUT_S = 120
_V1MODEL = re.compile(r"^\s*#\s*include\s*[<\"]v1model\.p4[>\"]", re.M)
PAIRINGS = {"p4c+bmv2": ("p4c", "bmv2"), "p4c+p4sim": ("p4c", "p4sim"), "p4sim+p4sim": ("p4sim", "p4sim")}


def stf_programs(corpus: Path) -> list[Path]:
    """The programs of `corpus` with an .stf packet test that include v1model.p4, by name."""
    return sorted(p for p in corpus.glob("*.p4")
                  if p.with_suffix(".stf").is_file() and _V1MODEL.search(p.read_text(errors="replace")))


@dataclass(slots=True)
class Outcome:
    """How p4sim-compile took a program: "ok", "error" (located), "unplaced" or "internal", and what it said."""

    kind: str
    message: str = ""


class _Timeout(Exception):
    pass


@contextmanager
def _deadline(seconds: int) -> Iterator[None]:
    def expired(_sig: int, _frame: object) -> None:
        raise _Timeout(f"no result after {seconds} s")
    old = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def p4sim_compile(program: Path, out: Path | None = None) -> Outcome:
    """Compile with p4sim-compile in this process (into out/<stem>.json and .p4info.txtpb when given)."""
    try:
        with _deadline(COMPILE_TIMEOUT_S):
            res = compile_file(program, [str(program.parent)])
            if out is not None:
                write_outputs(res, str(out / f"{program.stem}.json"), str(out / f"{program.stem}.p4info.txtpb"))
    except CompileError as exc:
        return Outcome("error", str(exc))
    except (ValueError, OSError) as exc:
        return Outcome("unplaced", str(exc))
    except (Exception, RecursionError) as exc:  # noqa: BLE001 - every other exception is a compiler defect
        log.debug("%s: internal error", program, exc_info=True)
        return Outcome("internal", f"{type(exc).__name__}: {exc}")
    return Outcome("ok")


def p4c_compile(program: Path, out: Path) -> Outcome:
    """Compile with p4c-bm2-ss into out/<stem>.json and .p4info.txtpb."""
    cmd = [P4C, str(program), "-I", str(program.parent), "-o", str(out / f"{program.stem}.json"),
           "--p4runtime-files", str(out / f"{program.stem}.p4info.txtpb")]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=COMPILE_TIMEOUT_S, check=False)
    if res.returncode:
        errors = [ln for ln in res.stderr.splitlines() if "error" in ln.lower()] or res.stderr.splitlines()
        return Outcome("error", errors[0] if errors else f"exit {res.returncode}")
    return Outcome("ok")


def canonical_p4info(path: Path) -> p4i.P4Info:
    """A P4Info file's message with its objects in ID order: P4Runtime names every object by ID, so the
    order a compiler lists them in (p4c: as it meets them) says nothing."""
    info = text_format.Parse(path.read_text(), p4i.P4Info())
    for fd in info.DESCRIPTOR.fields:
        items = getattr(info, fd.name)
        if fd.label == fd.LABEL_REPEATED and fd.message_type is not None and "preamble" in fd.message_type.fields_by_name:
            ordered = sorted((type(x).FromString(x.SerializeToString()) for x in items),
                             key=lambda x: x.preamble.id)
            del items[:]
            items.extend(ordered)
    return info


def p4info_difference(ours: Path, theirs: Path) -> str:
    """'' when two P4Info files hold the same objects (in any order), else the first differing line."""
    a, b = canonical_p4info(ours), canonical_p4info(theirs)
    if a == b:
        return ""
    la, lb = text_format.MessageToString(a).splitlines(), text_format.MessageToString(b).splitlines()
    for i, (x, y) in enumerate(zip(la, lb, strict=False)):
        if x != y:
            return f"line {i + 1}: p4sim {x.strip()!r}, p4c {y.strip()!r}"
    return f"p4sim has {len(la)} lines, p4c {len(lb)}"


@dataclass(slots=True)
class ProgramResult:
    """One program of the STF run."""

    name: str
    p4c: str = ""
    p4sim: str = ""
    p4info: str = ""
    runs: dict[str, str] = field(default_factory=dict)  # pairing -> "pass" or the problem

    def line(self) -> str:
        """The program's line in the report."""
        runs = " ".join(f"{k}={'pass' if v == 'pass' else 'FAIL'}" for k, v in self.runs.items())
        notes = [f"p4c: {self.p4c}" if self.p4c else "", f"p4sim-compile: {self.p4sim}" if self.p4sim else "",
                 f"P4Info differs: {self.p4info}" if self.p4info else ""]
        notes += [f"{k}: {v}" for k, v in self.runs.items() if v != "pass"]
        return f"{self.name}: {runs or '-'}" + "".join(f"\n    {n}" for n in notes if n)


def run_program(program: Path, out: Path, switches: tuple[str, ...]) -> ProgramResult:
    """Compile `program` both ways, compare the P4Info files, run its STF test on each pairing."""
    res = ProgramResult(program.stem)
    built: dict[str, Path] = {}
    for compiler in ("p4c", "p4sim"):
        folder = out / compiler
        folder.mkdir(parents=True, exist_ok=True)
        got = p4c_compile(program, folder) if compiler == "p4c" else p4sim_compile(program, folder)
        if got.kind == "ok":
            built[compiler] = folder
        else:
            setattr(res, compiler, f"{got.kind}: {got.message}")
    if len(built) == 2:
        res.p4info = p4info_difference(*(built[c] / f"{program.stem}.p4info.txtpb" for c in ("p4sim", "p4c")))
    script = stf.read(program.with_suffix(".stf"))
    for pairing, (compiler, switch) in PAIRINGS.items():
        if switch not in switches:
            continue
        if compiler not in built:
            res.runs[pairing] = "does not compile"
            continue
        folder = built[compiler]
        try:
            result = stf_run.run(script, folder / f"{program.stem}.json", folder / f"{program.stem}.p4info.txtpb",
                                 switch)
            res.runs[pairing] = "pass" if result.passed else "; ".join(result.problems)
        except Exception as exc:  # noqa: BLE001 - a run that fails in any way is a failure of that pairing
            res.runs[pairing] = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    return res


def run_all(corpus: Path, out: Path, names: list[str], switches: tuple[str, ...],
            report: Callable[[str], None]) -> list[ProgramResult]:
    """Run every STF program of `corpus` (or those named), report(line) for each; keep results.json."""
    results = []
    for program in (p for p in stf_programs(corpus) if not names or p.stem in names):
        res = run_program(program, out / program.stem, switches)
        report(res.line())
        results.append(res)
    (out / "results.json").write_text(json.dumps([asdict(r) for r in results], indent=1) + "\n")
    return results


def summary(results: list[ProgramResult]) -> list[str]:
    """The counts: programs, compiled by each compiler, same P4Info, passes per pairing."""
    compiled = {c: sum(not getattr(r, c) for r in results) for c in ("p4c", "p4sim")}
    same = sum(not r.p4c and not r.p4sim and not r.p4info for r in results)
    lines = [f"{len(results)} programs with an STF test that include v1model.p4",
             f"compiled: p4c {compiled['p4c']}, p4sim-compile {compiled['p4sim']}; same P4Info: {same}"]
    for pairing in PAIRINGS:
        if any(pairing in r.runs for r in results):
            lines.append(f"{pairing}: {sum(r.runs.get(pairing) == 'pass' for r in results)} pass")
    return lines


def _kind(message: str) -> str:
    """A located error's message without its place, numbers and quoted names: its kind."""
    text = message.split(": error: ", 1)[-1]
    text = re.sub(r"'[^']*'|\"[^\"]*\"|`[^`]*`", "_", text)
    return re.sub(r"\b\d+\b|\b0x[0-9a-f]+\b", "N", text)[:90]


def compile_all(corpus: Path, report: Callable[[str], None]) -> dict[str, Outcome]:
    """Every .p4 of the corpus through p4sim-compile; report(line) for each internal or unplaced error."""
    outcomes: dict[str, Outcome] = {}
    for program in sorted(corpus.glob("*.p4")):
        outcomes[program.name] = got = p4sim_compile(program)
        if got.kind in ("internal", "unplaced"):
            report(f"{program.name}: {got.kind}: {got.message}")
    return outcomes


def refused_of_p4cs(corpus: Path, outcomes: dict[str, Outcome], out: Path,
                    report: Callable[[str], None]) -> tuple[int, int]:
    """(v1model programs p4c-bm2-ss compiles, how many of them p4sim-compile refuses); report(line) for each."""
    taken = refused = 0
    for program in sorted(corpus.glob("*.p4")):
        if not _V1MODEL.search(program.read_text(errors="replace")) or p4c_compile(program, out).kind != "ok":
            continue
        taken += 1
        got = outcomes[program.name]
        if got.kind != "ok":
            refused += 1
            report(f"{program.name}: p4c compiles it, p4sim-compile: {got.message.split(': error: ')[-1]}")
    return taken, refused


def outcome_summary(outcomes: dict[str, Outcome]) -> list[str]:
    """Outcomes by kind, then the located errors by kind of message, most frequent first."""
    by_kind = Counter(o.kind for o in outcomes.values())
    lines = [f"{len(outcomes)} programs: " + ", ".join(f"{k} {n}" for k, n in sorted(by_kind.items()))]
    errors = Counter(_kind(o.message) for o in outcomes.values() if o.kind == "error")
    return lines + [f"{n:5d}  {text}" for text, n in errors.most_common()]
