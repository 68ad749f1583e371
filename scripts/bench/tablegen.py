#!/usr/bin/env python3
"""Benchmark: generate a k-ary fat-tree, write its entry files, sample-check them; time and peak memory.

    .venv/bin/python -m scripts.bench.tablegen --k 48            # target: < 60 s, < 4 GiB
    .venv/bin/python -m scripts.bench.tablegen --k 32            # target: < 30 s
"""

from __future__ import annotations

import argparse
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

from fabric.contract import MODES
from tablegen.check import check
from tablegen.files import read, write
from tablegen.graph import Fabric
from topo.generators import fattree
from topo.model import load, save
from topo.validate import validate

TARGET_S = {48: 60.0, 32: 30.0}
TARGET_BYTES = 4 << 30


def peak_rss() -> int:
    """Peak resident set size of this process in bytes (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def main() -> int:
    """Run the benchmark; exit 1 when a target is missed or the check fails."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--k", type=int, default=48, metavar="<even>", help="fat-tree arity (default 48)")
    p.add_argument("--mode", default="ecmp", choices=MODES)
    p.add_argument("--pairs", type=int, default=1024, metavar="<n>", help="host pairs to check (default 1024)")
    p.add_argument("--out", metavar="<dir>", help="keep the files here (default: a temporary directory)")
    args = p.parse_args()

    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="bench-tablegen-"))
    steps: list[tuple[str, float]] = []
    t_start = time.perf_counter()

    def step(name: str, t0: float) -> float:
        now = time.perf_counter()
        steps.append((name, now - t0))
        return now

    try:
        t = time.perf_counter()
        topo = fattree(args.k)
        t = step("generate topology", t)
        validate(topo)
        t = step("validate", t)
        save(topo, out / "topo.json")
        topo = validate(load(out / "topo.json"))
        t = step("write + read back + validate topo.json", t)
        fabric = Fabric(topo)
        summary = write(fabric, args.mode, out / "tables")
        t = step(f"{args.mode} entries: plan + write {summary.files} files", t)
        tables = out / "tables"
        report = check(topo, lambda name: read(tables / f"{name}.json") if (tables / f"{name}.json").exists()
                       else None, args.pairs, 1, args.mode)
        step(f"check {report.pairs} pairs x 2 versions ({report.switches_loaded} files read)", t)
    finally:
        if not args.out:
            shutil.rmtree(out, ignore_errors=True)
    total = time.perf_counter() - t_start
    rss = peak_rss()

    print(f"fat-tree k={args.k}: {len(topo.switches)} switches, {len(topo.hosts)} hosts, {len(topo.links)} links")
    print(f"entries: {summary.entries} table entries, {summary.members} members, {summary.groups} groups")
    print("  " + ", ".join(f"{k} {v}" for k, v in sorted(summary.by_table.items())))
    for name, secs in steps:
        print(f"  {secs:7.2f} s  {name}")
    print(f"  {total:7.2f} s  total;  peak RSS {rss / 2**20:.0f} MiB")
    print(f"check: {'OK' if report.ok else 'FAILED'} ({report.walks} walks, {report.groups_checked} groups "
          f"checked, max {report.max_hops} switch hops)")
    for e in report.errors:
        print(f"  {e}")
    ok = report.ok
    target = TARGET_S.get(args.k)
    if target is not None:
        met = total < target and rss < TARGET_BYTES
        print(f"target k={args.k}: < {target:.0f} s and < 4 GiB: {'met' if met else 'MISSED'}")
        ok = ok and met
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
