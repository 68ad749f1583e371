"""Run, re-analyse and report an experiment: the glue between runner, report and plots."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from scripts.experiments.reconf import analyze
from scripts.experiments.runner import Watch, run_experiment, say_flush
from scripts.experiments.schedule import schedule_plots
from scripts.experiments.spec import Spec
from scripts.report.summary import load_runs, markdown, summarize

log = logging.getLogger(__name__)


def run(spec: Spec, out: Path, seed: int = 1, say=say_flush, build: Path | None = None,
        watch: Watch | None = None, cluster: dict[str, Any] | None = None) -> dict[str, int]:
    """Run the missing runs (over several servers with `cluster`, run_experiment's), then write the
    summary and plots and print the table."""
    counts = run_experiment(spec, out, say=say, seed=seed, build=build, watch=watch, cluster=cluster)
    report(spec, out, say)
    return counts


def report(spec: Spec, out: Path, say=say_flush, max_load: float | None = None) -> dict[str, Any]:
    """summary.json, summary.md and the figures of a results directory; prints the table."""
    # imported here, not at the top: matplotlib (scripts.analysis.plots) is an optional heavy dependency
    from scripts.analysis import plots

    if spec.kind == "strategies":
        from scripts.report.strategies import strategies_markdown, summarize_strategies

        summary = summarize_strategies(out, spec)
        say(strategies_markdown(spec, summary))
        if max_load is not None:
            say(strategies_markdown(spec, summarize_strategies(out, spec, max_load)))
        say(f"[{spec.name}] summary: {out / 'summary.md'}")
        return summary
    if spec.kind == "reservation":
        from scripts.report import seed001

        runs = seed001.load(out)
        seed001.report(runs, out, say)
        return {"runs": len(runs)}
    if spec.kind == "alltoall":
        from scripts.experiments.schedule_alltoall import summary_line

        lines = [f"- {d.parent.name} {d.name}: {summary_line(json.loads((d / 'metrics.json').read_text()))}"
                 for v in spec.variants for d in sorted((out / v.name).glob("run-*")) if (d / "metrics.json").exists()]
        (out / "summary.md").write_text("\n".join(lines) + "\n")
        say("\n".join(lines))
        say(f"[{spec.name}] summary: {out / 'summary.md'}")
        return {"runs": len(lines)}
    summary = summarize(out, spec)
    data = load_runs(out, spec)
    if spec.kind == "load-balancing":
        files = plots.load_balancing_plots(data, out, spec.name)
    elif spec.kind == "schedule":
        files = schedule_plots(data, out, spec.name)
    else:
        files = plots.reconfiguration_plots(data, out, spec.name)
    say(markdown(spec, summary))
    say(f"[{spec.name}] summary: {out / 'summary.md'}, figures: {', '.join(f.name for f in files)}")
    return summary


def analyze_all(spec: Spec, out: Path) -> int:
    """Recompute metrics.json of every reconfiguration run that has its raw files."""
    from scripts.experiments.strategies import analyze as analyze_strategies

    n = 0
    for v in spec.variants:
        for d in sorted((out / v.name).glob("run-*")):
            if (d / "run.json").exists():
                if spec.kind == "strategies":
                    analyze_strategies(d)
                else:
                    analyze(d, spec)
                n += 1
            elif (d / "metrics.json").exists():
                json.loads((d / "metrics.json").read_text())
    return n
