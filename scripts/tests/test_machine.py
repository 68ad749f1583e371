"""scripts/hosts/machine.py: the cores' busy share from /proc/stat readings."""

from pathlib import Path

from scripts.hosts.machine import busy_pct, cpu_jiffies


def stat(tmp_path: Path, line: str) -> Path:
    p = tmp_path / "stat"
    p.write_text(line + "\ncpu0 1 2 3 4 5 6 7 8 0 0\n")
    return p


def test_busy_is_all_but_idle_and_iowait(tmp_path):
    # user nice system idle iowait irq softirq steal guest guest_nice
    assert cpu_jiffies(stat(tmp_path, "cpu  100 5 20 800 50 3 7 15 40 0")) == (150, 1000)


def test_busy_pct_between_two_readings():
    assert busy_pct((150, 1000), (300, 1200)) == 75.0
    assert busy_pct((150, 1000), (150, 1000)) is None  # no tick passed
    assert busy_pct(None, (1, 2)) is None


def test_unreadable_or_foreign_stat_is_none(tmp_path):
    assert cpu_jiffies(tmp_path / "missing") is None
    assert cpu_jiffies(stat(tmp_path, "intr 1 2 3")) is None
    assert cpu_jiffies(stat(tmp_path, "cpu  1 2 x 4 5 6 7 8")) is None
    assert cpu_jiffies(stat(tmp_path, "cpu  1 2 3")) is None


def test_this_machine_reads():
    busy, total = cpu_jiffies()
    assert 0 <= busy <= total
