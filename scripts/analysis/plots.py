"""Figures of an experiment (matplotlib, Agg): throughput, RTT and cwnd over time with the
reconfiguration marked, boxplots of loss and unavailability per procedure, CDFs of the gap; for
load balancing, FCT boxplots and CDFs per class and utilisation per mode."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402 - after the backend

log = logging.getLogger(__name__)


def _representative(runs: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The run with the median largest gap (a typical run, not the best or the worst)."""
    with_series = sorted((r for r in runs if r.get("series")), key=lambda r: r.get("max_gap_ms", 0))
    return with_series[len(with_series) // 2] if with_series else None


def time_series(data: dict[str, dict[str, Any]], out: Path, name: str) -> list[Path]:
    """Throughput, RTT and cwnd over time of a typical run per variant, the procedure shaded."""
    reps = {v: _representative(d["runs"]) for v, d in data.items()}
    reps = {v: r for v, r in reps.items() if r}
    if not reps:
        return []
    files = []
    for key, ylabel, fname in (("throughput", "throughput (Mbit/s)", "throughput"), ("rtt", "RTT (ms)", "rtt"),
                               ("cwnd", "cwnd (segments)", "cwnd")):
        fig, axes = plt.subplots(len(reps), 1, figsize=(8, 2.2 * len(reps)), sharex=True, squeeze=False)
        for ax, (v, r) in zip(axes[:, 0], reps.items(), strict=False):
            s = r["series"]
            pts = s.get(key) or []
            if pts:
                xs, ys = zip(*pts, strict=False)
                ax.plot(xs, ys, lw=0.8, marker="." if key == "rtt" else None, ms=2)
            ax.axvspan(s["event_s"], s["event_done_s"], color="tab:red", alpha=0.2, label="procedure")
            ax.axvline(s["event_s"], color="tab:red", lw=0.8)
            for step, a, _b in s.get("steps", []):
                if step in ("ocs", "to-shadow", "flip", "routes", "hold", "probe"):
                    ax.axvline(a, color="tab:gray", lw=0.5, ls=":")
                    ax.text(a, ax.get_ylim()[1], step, fontsize=6, rotation=90, va="top", ha="right", color="tab:gray")
            ax.set_ylabel(ylabel, fontsize=8)
            ax.set_title(f"{v}: largest data gap {r.get('max_gap_ms', 0):.0f} ms, retx {r.get('retransmissions')}, "
                         f"RTOs {r.get('rto_count')}", fontsize=9)
            if key == "rtt":
                ax.set_yscale("log")
        axes[-1, 0].set_xlabel("time (s)")
        fig.suptitle(name, fontsize=10)
        fig.tight_layout()
        f = out / f"{fname}.png"
        fig.savefig(f, dpi=110)
        plt.close(fig)
        files.append(f)
    return files


def boxplots(data: dict[str, dict[str, Any]], out: Path, name: str) -> list[Path]:
    """Boxplots of loss (retransmitted/sent) and link unavailability per variant."""
    names = [v for v, d in data.items() if d["runs"]]
    if not names:
        return []
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.5))
    for ax, key, label in ((axes[0], "loss_pct", "loss: retransmitted / sent (%)"),
                           (axes[1], "max_gap_ms", "largest data gap, either end (ms)")):
        ax.boxplot([[r.get(key) or 0 for r in data[v]["runs"]] for v in names])
        ax.set_xticks(range(1, len(names) + 1), names)
        ax.set_ylabel(label, fontsize=8)
    fig.suptitle(name, fontsize=10)
    fig.tight_layout()
    f = out / "boxplots.png"
    fig.savefig(f, dpi=110)
    plt.close(fig)
    return [f]


def cdf(values_by_label: dict[str, list[float]], xlabel: str, path: Path, title: str = "",
        logx: bool = False) -> Path:
    """Empirical CDFs, one line per label."""
    fig, ax = plt.subplots(figsize=(6, 3.5))
    for label, vals in values_by_label.items():
        vs = sorted(v for v in vals if v is not None)
        if vs:
            ax.step(vs, [(i + 1) / len(vs) for i in range(len(vs))], where="post", label=f"{label} (n={len(vs)})")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("CDF")
    if logx:
        ax.set_xscale("symlog")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def reconfiguration_plots(data: dict[str, dict[str, Any]], out: Path, name: str) -> list[Path]:
    """Every figure of a reconfiguration or route-flip experiment."""
    files = time_series(data, out, name) + boxplots(data, out, name)
    files.append(cdf({v: [r.get("max_gap_ms") for r in d["runs"]] for v, d in data.items()},
                     "largest data gap, either end (ms)", out / "gap_cdf.png", name, logx=True))
    return files


def load_balancing_plots(data: dict[str, dict[str, Any]], out: Path, name: str) -> list[Path]:
    """FCT boxplots and CDFs per class, utilisation per mode and class."""
    modes = [m for m, d in data.items() if d["runs"]]
    if not modes:
        return []
    classes = sorted({c for m in modes for r in data[m]["runs"] for c in r["classes"]})
    files = []
    fig, axes = plt.subplots(1, len(classes), figsize=(4 * len(classes), 3.5), squeeze=False)
    for ax, cls in zip(axes[0], classes, strict=False):
        ax.boxplot([[1000 * f["fct_s"] for r in data[m]["runs"] for f in r["classes"].get(cls, {}).get("flows", [])]
                    for m in modes])
        ax.set_xticks(range(1, len(modes) + 1), modes)
        ax.set_title(f"FCT {cls}", fontsize=9)
        ax.set_ylabel("ms", fontsize=8)
    fig.tight_layout()
    f = out / "fct_boxplots.png"
    fig.savefig(f, dpi=110)
    plt.close(fig)
    files.append(f)
    for cls in classes:
        files.append(cdf({m: [1000 * f["fct_s"] for r in data[m]["runs"] for f in r["classes"].get(cls, {}).get("flows", [])]
                          for m in modes}, f"FCT {cls} (ms)", out / f"fct_cdf_{cls}.png", name))
    fig, ax = plt.subplots(figsize=(6, 3.5))
    width = 0.8 / len(modes)
    for i, m in enumerate(modes):
        vals = []
        for cls in classes:
            us = [r["classes"][cls]["utilisation"]["mean_over_max"] for r in data[m]["runs"] if cls in r["classes"]]
            vals.append(sum(us) / len(us) if us else 0)
        ax.bar([j + i * width for j in range(len(classes))], vals, width, label=m)
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(classes))], classes)
    ax.set_ylabel("core utilisation (mean/max bytes)")
    ax.set_ylim(0, 1.05)
    ax.legend(fontsize=8)
    fig.tight_layout()
    f = out / "utilisation.png"
    fig.savefig(f, dpi=110)
    plt.close(fig)
    files.append(f)
    return files
