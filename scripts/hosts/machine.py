"""The machine under a run: its load averages and how busy its cores were over a window.

An emulated network shares the machine's cores with everything else on it. A run that kept the
cores busy most of its quiet window (before the event) had no margin left for the event's own
work: what it measures there is the machine as much as the procedure (scripts/tests/test_hitless.py).
"""

from __future__ import annotations

from pathlib import Path

PROC_STAT = Path("/proc/stat")
PROC_LOADAVG = Path("/proc/loadavg")
CPU_BUSY_MAX = 70.0  # % of all cores in a run's quiet window above which it has no room left for the event


def loadavg() -> list[float] | None:
    """The machine's 1, 5 and 15 minute load averages (runs are timing-sensitive on shared cores)."""
    try:
        return [float(x) for x in PROC_LOADAVG.read_text().split()[:3]]
    except (OSError, ValueError):
        return None


def cpu_jiffies(stat: Path = PROC_STAT) -> tuple[int, int] | None:
    """(busy, total) clock ticks of all cores since boot, from the `cpu` line of /proc/stat: idle and
    iowait are not busy; guest time is already inside user time and is not counted twice."""
    try:
        line = stat.read_text().splitlines()[0].split()
    except (OSError, IndexError):
        return None
    if not line or line[0] != "cpu":
        return None
    try:
        ticks = [int(x) for x in line[1:9]]  # user nice system idle iowait irq softirq steal
    except ValueError:
        return None
    if len(ticks) < 8:
        return None
    total = sum(ticks)
    return total - ticks[3] - ticks[4], total


def busy_pct(before: tuple[int, int] | None, after: tuple[int, int] | None) -> float | None:
    """Percent of the cores' time spent busy between two `cpu_jiffies` readings (None without both,
    or when no tick passed)."""
    if before is None or after is None or after[1] <= before[1]:
        return None
    return 100.0 * (after[0] - before[0]) / (after[1] - before[1])
