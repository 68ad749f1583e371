"""Summary of a `strategies` experiment (seed 003): per variant, the transfers' throughput and
completion time per class over every run, their change against no direct link, and the paper's."""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

from scripts.experiments.bulk import change_pct, class_summary, paper_change, paper_value, time_factor
from scripts.experiments.spec import Spec
from scripts.report.summary import load_runs

BASELINE = "none"


def variant_summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Every transfer of every run pooled per class (the paper's boxplots pool 15 runs), plus the
    run-level counters (retransmissions, timeouts, circuit changes, load)."""
    if not runs:
        return {"runs": 0}
    out: dict[str, Any] = {"runs": len(runs), "strategy": runs[0]["strategy"], "procedure": runs[0]["procedure"]}
    out.update(class_summary([f for r in runs for f in r["flows"]]))  # every run's flows pooled
    for cls in ("elephant", "mouse"):
        # the slowest transfer of a run: when its ToRs' links had carried everything (a mean CT also
        # falls when the flows of one ToR merely share unequally)
        last = [max(f["fct_s"] for f in mine) for r in runs if (mine := [f for f in r["flows"]
                                                                         if f["cls"] == cls and f.get("fct_s")])]
        if cls in out and last:
            out[cls]["last_ct_mean"] = statistics.fmean(last)
    changes = [c for r in runs for c in r["changes"]]
    out["changes_per_run"] = len(changes) / len(runs)
    out["change_ms_mean"] = statistics.fmean(c["total_ms"] for c in changes) if changes else None
    out["retrans_segs_per_run"] = statistics.fmean(r["retrans_segs"] for r in runs)
    out["timeouts_per_run"] = statistics.fmean(r["timeouts"] for r in runs)
    out["ocs_dark_drops_per_run"] = statistics.fmean(r.get("ocs_dark_drops") or 0 for r in runs)
    out["optical_lost_per_run"] = statistics.fmean(r.get("optical_lost") or 0 for r in runs)
    # into the dark: lost at the optical links beyond their queues' drops (runs that read the queues)
    dark = [r["optical_lost"] - r["optical_queue_drops"] for r in runs if r.get("optical_queue_drops") is not None]
    out["dark_lost_per_run"] = statistics.fmean(dark) if dark else None
    out["dark_lost_runs"] = len(dark)
    out["probes_per_run"] = statistics.fmean(r.get("probes") or 0 for r in runs
                                             if r.get("optical_queue_drops") is not None) if dark else None
    out["queue_drops_per_run"] = statistics.fmean(r.get("queue_drops") or 0 for r in runs)
    out["makespan_s"] = statistics.fmean(r["makespan_s"] for r in runs)
    loads = [x for r in runs for x in (r.get("loadavg_start"), r.get("loadavg_end")) if x]
    out["loadavg_1min"] = (min(x[0] for x in loads), max(x[0] for x in loads)) if loads else None
    return out


def with_changes(variants: dict[str, dict[str, Any]], transfers: int) -> dict[str, dict[str, Any]]:
    """Each variant's change against the no-link variant (percent of the mean) next to the paper's."""
    base = next((v for v in variants.values() if v.get("strategy") == BASELINE and v.get("runs")), None)
    for v in variants.values():
        if not v.get("runs"):
            continue
        for cls in ("elephant", "mouse"):
            if cls not in v:
                continue
            for metric in ("tput", "ct"):
                ours = change_pct(v[cls][f"{metric}_mean"], base[cls][f"{metric}_mean"]) if base and cls in base \
                    else None
                v[cls][f"{metric}_change_pct"] = ours
                v[cls][f"{metric}_paper_change_pct"] = paper_change(cls, metric, v["strategy"], transfers)
    return variants


def quiet(run: dict[str, Any], max_load: float | None) -> bool:
    """True when the machine's 1-minute load stayed under max_load at the run's start and end."""
    if max_load is None:
        return True
    loads = [x[0] for x in (run.get("loadavg_start"), run.get("loadavg_end")) if x]
    return bool(loads) and max(loads) < max_load


def run_bulk(runs: list[dict[str, Any]], spec: Spec) -> dict[str, Any]:
    """The workload the runs used (their own record: --transfers and --stretch change the spec's), the
    spec's when there are none; ValueError when the runs of one results directory differ."""
    keys = ("transfers", "mouse_bytes", "elephant_bytes", "sse_s")
    seen = {tuple(r["bulk"][k] for k in keys) for r in runs if r.get("bulk")}
    if len(seen) > 1:
        raise ValueError(f"runs with different workloads {sorted(seen)}: expected one per results directory "
                         f"({', '.join(keys)})")
    if seen:
        return dict(zip(keys, seen.pop(), strict=True))
    return {k: getattr(spec.bulk, k) for k in keys}


def summarize_strategies(out: Path, spec: Spec, max_load: float | None = None) -> dict[str, Any]:
    """summary.json and summary.md of a strategies results directory (with max_load: only the runs
    on a machine quieter than that, into summary-load<max_load>.{json,md})."""
    data = load_runs(out, spec)
    b = run_bulk([r for d in data.values() for r in d["runs"]], spec)
    variants = {name: {**variant_summary([r for r in d["runs"] if quiet(r, max_load)]), "failed_runs": d["failed"]}
                for name, d in data.items()}
    summary = {"experiment": spec.name, "kind": spec.kind, "scale": spec.scale, "link_rate_mbit": spec.link_rate_mbit,
               "reference_rate_mbit": spec.reference_rate_mbit, "bulk": b,
               "time_factor": time_factor(b["elephant_bytes"], spec.scale),
               "max_load": max_load, "variants": with_changes(variants, b["transfers"])}
    stem = "summary" if max_load is None else f"summary-load{max_load:g}"
    (out / f"{stem}.json").write_text(json.dumps(summary, indent=1, default=str))
    (out / f"{stem}.md").write_text(strategies_markdown(spec, summary))
    return summary


def _f(v: Any, fmt: str = ".1f") -> str:
    return "-" if v is None else format(v, fmt)


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{v:+.0f}%"


def _paper_line(summary: dict[str, Any]) -> str:
    tf, transfers = summary.get("time_factor"), summary["bulk"]["transfers"]
    cts = [(s, paper_value("elephant", "ct", s, transfers)) for s in ("none", "ut", "dt", "on-demand")]
    if not tf or any(v is None for _s, v in cts):
        return ""
    return (f" Completion times here are the paper's x{tf:g}; its elephant CT means at this time scale: "
            + ", ".join(f"{s} {v * tf:.1f} s" for s, v in cts) + ".")


def strategies_markdown(spec: Spec, summary: dict[str, Any]) -> str:
    """The table of one strategies experiment."""
    b = summary["bulk"]
    lines = [f"# {spec.name}", "", spec.description.strip(), "",
             f"Link rate {summary['link_rate_mbit']:g} Mbit/s (scale {summary['scale']:g} of the paper's "
             f"{summary['reference_rate_mbit']:g}); {b['transfers']} transfers, mice {b['mouse_bytes']} B, "
             f"elephants {b['elephant_bytes']} B, SSE {b['sse_s']:g} s. Throughput: size / completion time "
             "per transfer (Mbit/s, the paper's per-VM rate, x1/scale to compare with its tables); "
             "change: of the mean against no direct link, the paper's in brackets (Tables 1-4)."
             + _paper_line(summary)
             + ("" if summary.get("max_load") is None else
                f" Only runs whose 1-minute load average was under {summary['max_load']:g} at start and end."), "",
             "| variant | runs | elephant Mbit/s mean (min-max) | elephant tput change (paper) | elephant CT s "
             "mean (min-max) | elephant CT change (paper) | last elephant CT s | mouse Mbit/s | mouse CT s | mouse CT change (paper) "
             "| changes per run (ms each) | retx / RTOs per run | lost into the dark per run (mbb probes) | load 1 min |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, v in summary["variants"].items():
        if not v.get("runs"):
            lines.append(f"| {name} | 0 | | | | | | | | | | | | |")
            continue
        e, m = v.get("elephant", {}), v.get("mouse", {})
        load = v.get("loadavg_1min")
        lines.append(
            f"| {name} | {v['runs']} | {_f(e.get('tput_mean'), '.2f')} ({_f(e.get('tput_min'), '.2f')}-"
            f"{_f(e.get('tput_max'), '.2f')}) | {_pct(e.get('tput_change_pct'))} ({_pct(e.get('tput_paper_change_pct'))}) "
            f"| {_f(e.get('ct_mean'))} ({_f(e.get('ct_min'))}-{_f(e.get('ct_max'))}) | {_pct(e.get('ct_change_pct'))} "
            f"({_pct(e.get('ct_paper_change_pct'))}) | {_f(e.get('last_ct_mean'))} | {_f(m.get('tput_mean'), '.2f')} | {_f(m.get('ct_mean'))} | "
            f"{_pct(m.get('ct_change_pct'))} ({_pct(m.get('ct_paper_change_pct'))}) | {v['changes_per_run']:.1f} "
            f"({_f(v.get('change_ms_mean'), '.0f')}) | {v['retrans_segs_per_run']:.0f} / {v['timeouts_per_run']:.1f} "
            f"| {_f(v['dark_lost_per_run'], '.0f')} ({_f(v['probes_per_run'], '.0f')}; {v['dark_lost_runs']} runs) | {'-' if not load else f'{load[0]:.1f}-{load[1]:.1f}'} |")
    return "\n".join(lines) + "\n"
