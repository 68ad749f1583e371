"""What the live view costs a run: e1's mbb (the thesis testbed, one TCP stream, the OCS moved at 3 s)
with the page open in a headless chromium the whole time, as root:

    .venv/bin/python -m view.bench [--runs 10] [--out results/view-bench]

Prints, and writes to <out>/view-cost.json: the runs judged by scripts/report/summary.py (`hitless_run`,
`truly_hitless`), the P4Runtime reads the view made (one batched read per fabric switch a reading) and
their cells, and the CPU time of the view's sampling thread, of its server thread and of the browser.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from scripts.experiment import run
from scripts.experiments import spec as specmod
from scripts.experiments.runner import HOME
from scripts.report.summary import hitless_run, truly_hitless
from topo.cli import main_of
from view.browser import browser, wait_for
from view.live import LiveView

SPEC = HOME / "scripts" / "experiments" / "e1-single-stream.yaml"
TICK = os.sysconf("SC_CLK_TCK")


def cpu_of(pid: int, task: int | None = None) -> float:
    """CPU seconds (user + system) of a process, or of one of its threads."""
    path = f"/proc/{pid}/task/{task}/stat" if task else f"/proc/{pid}/stat"
    try:
        fields = Path(path).read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICK


def descendants(pid: int) -> list[int]:
    """A process and every process below it."""
    children: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(d.name))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo += children.get(p, [])
    return out


class Watched:
    """The runner's watch (scripts/experiments/runner.py): each emulation's live view with a browser on its page;
    what they cost is added up over every emulation."""

    def __init__(self) -> None:
        self.cost: dict[str, float] = {"seconds": 0.0, "reads": 0, "cells": 0, "failed_reads": 0, "sampler_cpu_s": 0.0,
                                       "server_cpu_s": 0.0, "browser_cpu_s": 0.0, "frames_dropped": 0}

    @contextlib.contextmanager
    def __call__(self, emu: Any, out: Path) -> Iterator[None]:
        with LiveView(emu, port=0, runs_under=out) as view, browser() as page:
            page.get(view.url)
            wait_for("the page's first sample", lambda: page.execute_script(
                "return window.hitlessView.samples.length"), timeout=30)
            procs = descendants(page.service.process.pid)
            t0, browser0 = time.monotonic(), sum(cpu_of(p) for p in procs)
            server0 = cpu_of(os.getpid(), view.server.native_id)
            reads0, cells0, sampler0 = view.sampler.reads, view.sampler.cells, view.cpu_s
            try:
                yield
            finally:
                c = self.cost
                c["seconds"] += time.monotonic() - t0
                c["reads"] += view.sampler.reads - reads0
                c["failed_reads"] += view.sampler.failed
                c["cells"] += view.sampler.cells - cells0
                c["sampler_cpu_s"] += view.cpu_s - sampler0
                c["server_cpu_s"] += cpu_of(os.getpid(), view.server.native_id) - server0
                c["browser_cpu_s"] += sum(cpu_of(p) for p in descendants(page.service.process.pid)) - browser0
                c["frames_dropped"] += page.execute_script("return window.hitlessView.dropped")


def build_parser(prog: str = "python -m view.bench") -> argparse.ArgumentParser:
    """The bench's options."""
    p = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0])
    p.add_argument("-v", "--verbose", action="store_true", help="log progress")
    p.add_argument("--runs", type=int, default=10, metavar="<n>", help="mbb runs (default 10)")
    p.add_argument("--out", type=Path, default=HOME / "results" / "view-bench", metavar="<dir>")
    return p


def bench(args: argparse.Namespace) -> int:
    """Run, judge and print."""
    sp = specmod.load(SPEC)
    sp.variants = [v for v in sp.variants if v.name == "mbb"]
    sp = specmod.shorten(sp, args.runs, 8.0, 3.0)
    watched = Watched()
    run(sp, args.out, watch=watched)
    runs = [json.loads(f.read_text()) for f in sorted((args.out / "mbb").glob("run-*/metrics.json"))]
    c = watched.cost
    per_s = {k: c[k] / c["seconds"] for k in ("reads", "cells", "sampler_cpu_s", "server_cpu_s", "browser_cpu_s")} \
        if c["seconds"] else {}
    result = {"runs": len(runs), "hitless_run": sum(map(hitless_run, runs)),
              "truly_hitless": sum(map(truly_hitless, runs)), "cost": c, "per_second": per_s}
    (args.out / "view-cost.json").write_text(json.dumps(result, indent=1))
    print(f"e1 mbb with the view open: {result['hitless_run']}/{len(runs)} hitless (hitless_run), "
          f"{result['truly_hitless']}/{len(runs)} truly hitless (truly_hitless)")
    if per_s:
        print(f"view over {c['seconds']:.0f} s: {per_s['reads']:.1f} P4Runtime reads/s ({per_s['cells']:.0f} counter "
              f"cells/s, {c['failed_reads']:.0f} failed), CPU: sampler {100 * per_s['sampler_cpu_s']:.1f}%, "
              f"server {100 * per_s['server_cpu_s']:.1f}%, browser {100 * per_s['browser_cpu_s']:.1f}% of a core; "
              f"{c['frames_dropped']:.0f} frames dropped")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point."""
    return main_of("view.bench", build_parser(), bench, argv)


if __name__ == "__main__":
    sys.exit(main())
