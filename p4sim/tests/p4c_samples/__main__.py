"""`python -m p4sim.tests.p4c_samples CORPUS [NAME ...]`: p4sim against p4c's test programs (see the package)."""

from __future__ import annotations

import argparse
import logging
import shutil
import sys
import tempfile
from pathlib import Path

from p4sim.tests import p4c_samples as samples


def main(argv: list[str] | None = None) -> int:
    """Entry point: 0 when the whole target passes what p4c + bmv2 passes (--compile-all: no internal error)."""
    ap = argparse.ArgumentParser(prog="python -m p4sim.tests.p4c_samples", description=samples.__doc__.split("\n\n")[0])
    ap.add_argument("corpus", type=Path, metavar="CORPUS", help="p4c's testdata/p4_16_samples")
    ap.add_argument("names", nargs="*", metavar="NAME", help="only these programs (file names without .p4)")
    ap.add_argument("--compile-all", action="store_true",
                    help="every .p4 through p4sim-compile, outcomes by kind (no packet tests)")
    ap.add_argument("--against-p4c", action="store_true",
                    help="with --compile-all: also list the v1model programs p4c compiles and p4sim-compile refuses")
    ap.add_argument("--out", type=Path, metavar="DIR", help="keep the outputs here (default: a temporary folder)")
    ap.add_argument("--switches", default="p4sim,bmv2", metavar="LIST", help="p4sim and/or bmv2 (default both)")
    args = ap.parse_intermixed_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    logging.getLogger("p4rt").setLevel(logging.CRITICAL)  # a refused pipeline is in the program's line
    if not args.corpus.is_dir():
        ap.error(f"{args.corpus}: not a folder")
    if args.compile_all:
        outcomes = samples.compile_all(args.corpus, lambda line: print(line, flush=True))
        print("\n" + "\n".join(samples.outcome_summary(outcomes)))
        if args.against_p4c:
            with tempfile.TemporaryDirectory(prefix="p4c-samples-") as tmp:
                taken, refused = samples.refused_of_p4cs(args.corpus, outcomes, Path(tmp),
                                                         lambda line: print(line, flush=True))
            print(f"p4c-bm2-ss compiles {taken} of the v1model programs; p4sim-compile refuses {refused} of them")
        return 1 if any(o.kind in ("internal", "unplaced") for o in outcomes.values()) else 0
    switches = tuple(args.switches.split(","))
    if "bmv2" in switches and shutil.which("simple_switch_grpc") is None:
        ap.error("simple_switch_grpc is not on PATH: give --switches p4sim")
    if shutil.which(samples.P4C) is None:
        ap.error(f"{samples.P4C} is not on PATH")
    with tempfile.TemporaryDirectory(prefix="p4c-samples-") as tmp:
        out = args.out or Path(tmp)
        out.mkdir(parents=True, exist_ok=True)
        results = samples.run_all(args.corpus, out, args.names, switches, lambda line: print(line, flush=True))
    print("\n" + "\n".join(samples.summary(results)))
    whole = sum(r.runs.get("p4sim+p4sim") == "pass" for r in results)
    reference = sum(r.runs.get("p4c+bmv2") == "pass" for r in results) if "bmv2" in switches else len(results)
    return 0 if whole >= reference else 1


if __name__ == "__main__":
    sys.exit(main())
