"""Compile time of the project's largest P4 program with p4sim-compile (target: < 2 s).

Usage: .venv/bin/python -m scripts.bench.compile [PROG.p4 ...] [-I DIR] [-n RUNS]
Without programs, benchmarks the largest of p4src/*.p4 (by preprocessed tokens).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from p4sim.compiler.compile import lower
from p4sim.compiler.lexer import tokenize
from p4sim.compiler.p4info import to_text
from p4sim.compiler.parser import parse
from p4sim.compiler.preprocess import Preprocessor
from p4sim.compiler.program import Program

ROOT = Path(__file__).resolve().parents[2]

def phases(prog: Path, incs: list[str]) -> dict[str, float]:
    """Seconds spent in each compiler phase for one compilation."""
    t = [time.perf_counter()]
    lines = Preprocessor([Path(i) for i in incs]).run(prog)
    t.append(time.perf_counter())
    toks = tokenize(lines)
    t.append(time.perf_counter())
    ast = Program(parse(toks))
    t.append(time.perf_counter())
    res = lower(ast, str(prog))
    t.append(time.perf_counter())
    to_text(res.p4info)
    t.append(time.perf_counter())
    names = ["preprocess", "lex", "parse+declare", "lower (JSON+P4Info)", "p4info text"]
    out = {n: t[i + 1] - t[i] for i, n in enumerate(names)}
    out["tokens"] = len(toks)
    return out


def main() -> int:
    """Entry point."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("programs", nargs="*", metavar="PROG.p4")
    ap.add_argument("-I", dest="include", action="append", default=None, metavar="DIR")
    ap.add_argument("-n", dest="runs", type=int, default=10, metavar="RUNS")
    args = ap.parse_args()
    incs = args.include if args.include is not None else [str(ROOT / "p4src")]
    progs = [Path(p) for p in args.programs] or sorted((ROOT / "p4src").glob("*.p4"))
    if not progs:
        print("no programs found")
        return 1
    sizes = {p: len(tokenize(Preprocessor([Path(i) for i in incs]).run(p))) for p in progs}
    prog = max(progs, key=lambda p: sizes[p])
    runs = [phases(prog, incs) for _ in range(max(1, args.runs))]
    totals = [sum(v for k, v in r.items() if k != "tokens") for r in runs]
    print(f"program: {prog.relative_to(ROOT) if prog.is_relative_to(ROOT) else prog} "
          f"({sizes[prog]} tokens after preprocessing, includes core.p4/v1model.p4)")
    print(f"compile time over {len(runs)} runs: min {min(totals) * 1000:.0f} ms, "
          f"median {statistics.median(totals) * 1000:.0f} ms, max {max(totals) * 1000:.0f} ms (target < 2000 ms)")
    for k in runs[0]:
        if k != "tokens":
            print(f"  {k:22s} {statistics.median(r[k] for r in runs) * 1000:7.1f} ms (median)")
    cli = ROOT / ".venv" / "bin" / "p4sim-compile"
    if cli.exists():
        with tempfile.TemporaryDirectory() as d:
            cmd = [str(cli), str(prog), "-o", f"{d}/p.json", "--p4runtime-files", f"{d}/p.p4info.txtpb"]
            cmd += [a for i in incs for a in ("-I", i)]
            walls = []
            for _ in range(3):
                t0 = time.perf_counter()
                subprocess.run(cmd, check=True)
                walls.append(time.perf_counter() - t0)
        print(f"p4sim-compile command (process start to exit): median {statistics.median(walls) * 1000:.0f} ms")
    return 0 if statistics.median(totals) < 2.0 else 1


if __name__ == "__main__":
    sys.exit(main())
