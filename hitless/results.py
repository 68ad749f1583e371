"""What a measured run returns, and its figures: the experiment runner's metrics (scripts/README.md,
"Metrics"), the few a comparison starts from as fields, and the runner's own plots."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scripts.report.summary import hitless_run


@dataclass(frozen=True, slots=True)
class Run:
    """One measured reconfiguration of a stream."""

    procedure: str
    gap_ms: float  # the largest silence of data at either end around the procedure (max_gap_ms)
    lost: int  # data packets that never reached the receiver
    retransmissions: int
    rtos: int  # retransmission timeouts of the stream
    hitless: bool  # no loss, no retransmission, no RTO, no reordering, gaps under 50 ms at both ends
    path: Path  # the run's folder: captures, events, metrics.json
    metrics: dict[str, Any] = field(repr=False, default_factory=dict)  # every metric, series included

    @classmethod
    def of(cls, metrics: dict[str, Any], path: Path) -> Run:
        """A Run from a run's metrics.json contents."""
        return cls(procedure=metrics["procedure"], gap_ms=float(metrics.get("max_gap_ms") or 0.0),
                   lost=int(metrics.get("lost_packets") or 0), retransmissions=int(metrics.get("retransmissions") or 0),
                   rtos=int(metrics.get("rto_count") or 0), hitless=hitless_run(metrics), path=path, metrics=metrics)

    @property
    def throughput(self) -> list[tuple[float, float]]:
        """(s from the stream's start, Mbit/s at the sender) every 100 ms."""
        return [(float(t), float(v)) for t, v in self.metrics.get("series", {}).get("throughput", [])]

    @property
    def procedure_s(self) -> tuple[float, float]:
        """When the procedure started and ended, s from the stream's start."""
        s = self.metrics["series"]
        return float(s["event_s"]), float(s["event_done_s"])

    def line(self) -> str:
        """One line: the procedure and its numbers."""
        return (f"{self.procedure}: largest gap {self.gap_ms:.0f} ms, {self.lost} lost, {self.retransmissions} "
                f"retransmissions, {self.rtos} RTOs{', hitless' if self.hitless else ''}")


def plot(runs: Sequence[Run], out: str | Path, title: str = "hitless") -> list[Path]:
    """The runner's figures of these runs, one row per procedure (its throughput, RTT and cwnd over
    time with the procedure shaded and its largest gap in the title) into `out`; the files written."""
    # imported here, not at the top: matplotlib is needed for figures only
    from scripts.analysis.plots import time_series

    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    data: dict[str, dict[str, Any]] = {}
    for r in runs:
        data.setdefault(r.procedure, {"runs": []})["runs"].append(r.metrics)
    return time_series(data, folder, title)
