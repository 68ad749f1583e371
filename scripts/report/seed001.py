"""Seed 001's table and figures from the runs of a kind reservation spec (scripts.experiments.seed001);
`python -m scripts run|report` prints them, or by hand:

    .venv/bin/python -m scripts.report.seed001 [--runs results/e9-seed001-reservation] [--out docs/figures/seed001]

Reads <runs>/<variant>/run-<i>/metrics.json; prints a Markdown table (completion time, retransmissions,
RTT, bursts and lost bursts, the OCS's drops, the data-plane loop's time, load average) and writes throughput-over-time and
completion-time figures (PNG).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

ORDER = ("two-way", "two-way-controller", "electrical", "one-way", "one-way-controller")


def load(runs: Path) -> list[dict[str, Any]]:
    """Every run's metrics, by TDC then variant."""
    out = [json.loads(p.read_text()) for p in sorted(runs.glob("*/run-*/metrics.json"))]
    return sorted(out, key=lambda r: (r["tdc"], ORDER.index(r["variant"]) if r["variant"] in ORDER else 9))


def label(r: dict[str, Any]) -> str:
    """The variant, with the electrical spine's oversubscription where it has one (1:3: a third of
    the optical uplinks' rate)."""
    spine, rate = r.get("electrical_mbit"), r.get("rate_mbit")
    if r["variant"] == "electrical" and spine and rate and spine < rate:
        return f"electrical 1:{rate / spine:.3g}"
    return r["variant"]


def mean_fct(r: dict[str, Any]) -> float:
    """A run's mean flow completion time, an unfinished flow counting as the run's timeout."""
    fcts = [f["fct_s"] if f["fct_s"] is not None else r["timeout_s"] for f in r["flows"].values()]
    return sum(fcts) / len(fcts)


def mean_server(r: dict[str, Any]) -> float | None:
    """A run's mean server completion time (the paper's: a server's last flow done, from the common
    start), an unfinished server counting as the run's timeout; None for a run without it."""
    servers = r.get("servers")
    if not servers:
        return None
    ends = [t if t is not None else r["timeout_s"] for t in servers.values()]
    return sum(ends) / len(ends)


def spread(values: list[float]) -> str:
    """The mean of some runs' figures and their range."""
    return f"{sum(values) / len(values):.2f} ({min(values):.2f}-{max(values):.2f})"


def cells(rs: list[dict[str, Any]]) -> str:
    """One Markdown row per TDC and variant over its runs: the mean flow and server completion times'
    means and ranges, the bursts lost in all of them (the paper's ordering is on the mean)."""
    by: dict[tuple[int, str], list[dict[str, Any]]] = {}
    for r in rs:
        by.setdefault((r["tdc"], label(r)), []).append(r)
    lines = ["| TDC | variant | runs | mean flow completion (s): mean of runs (min-max) | mean server completion "
             "(s), the same | bursts lost (all runs) |", "|---|---|---|---|---|---|"]
    for (tdc, name), runs in by.items():
        servers = [m for m in map(mean_server, runs) if m is not None]
        lost = sum(r["bursts_lost"] for r in runs) if all("bursts_lost" in r for r in runs) else "-"
        lines.append(f"| {tdc} | {name} | {len(runs)} | {spread([mean_fct(r) for r in runs])} | "
                     f"{spread(servers) if servers else '-'} | {lost} |")
    return "\n".join(lines)


def row(r: dict[str, Any]) -> str:
    """One Markdown table row."""
    fl = list(r["flows"].values())
    done = [f["fct_s"] for f in fl if f["fct_s"] is not None]
    rtts = [f["mean_rtt_ms"] for f in fl if f["mean_rtt_ms"]]
    fct = f"{max(done):.2f} / {sum(done) / len(done):.2f}" if done else "-"
    if len(done) < len(fl):
        fct += f" ({len(fl) - len(done)} of {len(fl)} unfinished at {r['timeout_s']:.0f} s)"
    bursts = f"{r['grants']} / {r['bursts_lost']}" if "grants" in r else "-"
    drops = (f"{r['ocs_drops']} (night {r['night_drops']}, unlit {r['unlit_drops']})" if "grants" in r else "-")
    holds = f"{r['hold_overflow']} / {r['hold_expired']}" if "grants" in r else "-"
    rtt = f"{sum(rtts) / len(rtts):.0f}" if rtts else "-"
    lt = r.get("loop_time_us") or {}
    loop = f"{lt['median']:.0f} / {lt['p99']:.0f}" if lt.get("grants") else "-"
    return (f"| {r['tdc']} | {label(r)} | {fct} | {sum(f['retransmits'] or 0 for f in fl)} | {rtt} | {bursts} | "
            f"{drops} | {holds} | {loop} | {r['load_avg'][0][0]:.1f}-{r['load_avg'][1][0]:.1f} |")


def table(rs: list[dict[str, Any]]) -> str:
    """The Markdown table of every run."""
    head = ("| TDC | variant | completion max / mean (s) | retransmissions | mean RTT (ms) | bursts / lost | "
            "OCS drops (frames) | hold overflow / expired | loop time median / p99 (us) | load avg (1 min, start-end) |\n"
            "|---|---|---|---|---|---|---|---|---|---|")
    return "\n".join([head, *(row(r) for r in rs)])


def throughput(r: dict[str, Any], bin_s: float = 0.25) -> tuple[list[float], list[float]]:
    """Aggregate goodput (Mbit/s) over time from every flow's bytes acked (ss samples; what a flow
    had left when the last sample missed it counts at its completion)."""
    bins: dict[int, int] = {}
    for f in r["flows"].values():
        prev_t, prev_b = 0.0, 0
        for t, b in f["acked"]:
            if b >= prev_b and t > prev_t:
                k = int(t // bin_s)
                bins[k] = bins.get(k, 0) + (b - prev_b)
            prev_t, prev_b = t, b
        if f["fct_s"] is not None and f["bytes"] and f["bytes"] > prev_b:  # the rest, at its completion
            k = int(f["fct_s"] // bin_s)
            bins[k] = bins.get(k, 0) + f["bytes"] - prev_b
    ks = range(0, max(bins) + 1) if bins else range(0)
    return [k * bin_s for k in ks], [8 * bins.get(k, 0) / bin_s / 1e6 for k in ks]


def figures(rs: list[dict[str, Any]], out: Path) -> list[Path]:
    """Throughput over time per TDC, and completion times, as PNGs."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out.mkdir(parents=True, exist_ok=True)
    made = []
    for tdc in sorted({r["tdc"] for r in rs}):
        fig, ax = plt.subplots(figsize=(7, 3.5))
        for r in (r for r in rs if r["tdc"] == tdc):
            ax.plot(*throughput(r), label=label(r))
        ax.set_xlabel("time (s)")
        ax.set_ylabel("goodput, all flows (Mbit/s)")
        ax.set_title(f"seed 001 at ms scale: TDC {tdc}, {rs[0]['tors']} ToRs")
        ax.legend()
        fig.tight_layout()
        made.append(out / f"throughput-tdc{tdc}.png")
        fig.savefig(made[-1], dpi=100)
        plt.close(fig)
    fig, ax = plt.subplots(figsize=(7, 3.5))
    labels, data = [], []
    for r in rs:
        labels.append(f"{label(r)}\nTDC {r['tdc']}")
        data.append([f["fct_s"] if f["fct_s"] is not None else r["timeout_s"] for f in r["flows"].values()])
    ax.boxplot(data, tick_labels=labels)
    ax.set_ylabel("flow completion (s; unfinished = timeout)")
    ax.tick_params(axis="x", labelsize=7)
    fig.tight_layout()
    made.append(out / "completion.png")
    fig.savefig(made[-1], dpi=100)
    plt.close(fig)
    return made


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", default="results/e9-seed001-reservation", metavar="DIR")
    p.add_argument("--out", default="docs/figures/seed001", metavar="DIR")
    args = p.parse_args(argv)
    rs = load(Path(args.runs))
    if not rs:
        raise SystemExit(f"--runs {args.runs!r}: no <variant>/run-<i>/metrics.json there")
    report(rs, Path(args.out), print)
    return 0


def report(rs: list[dict[str, Any]], out: Path, say: Callable[[str], None]) -> list[Path]:
    """The table (also <out>/summary.md) and the figures of these runs; the files written."""
    out.mkdir(parents=True, exist_ok=True)
    if not rs:
        say(f"no run of {out} finished (no <variant>/run-<i>/metrics.json): no table, no figures")
        return []
    text = table(rs) + "\n\n" + cells(rs)
    (out / "summary.md").write_text(text + "\n")
    say(text)
    files = figures(rs, out)
    say(f"summary: {out / 'summary.md'}, figures: {', '.join(f.name for f in files)}")
    return files


if __name__ == "__main__":
    raise SystemExit(main())
