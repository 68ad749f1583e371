"""The headline as a standing test: e1 mbb (the thesis's single stream moved by an OCS reconfiguration)
loses nothing on the user's stack and on p4sim.

Three short runs per target (p4c + bmv2 where installed, p4sim + p4sim always), each judged at both
ends from its captures (scripts/experiments/reconf.py `analyze`): no lost segment, no retransmission of any kind
at the sender (tshark's and the kernel's own count), no RTO. What the switches' queue counters say is
reported, never an excuse: a segment a queue dropped is a lost segment. Needs root, Mininet, tcpdump,
tshark and iperf3; about a minute per target.
"""

import json
import os
import shutil
from pathlib import Path

import pytest

from p4sim.target import REAL_COMPILER, REAL_SWITCH, Target, pairings
from scripts.experiments import spec as specmod
from scripts.experiments.runner import run_experiment

EXPERIMENTS = Path(__file__).resolve().parents[1] / "experiments"
TOOLS = ("tcpdump", "tshark", "iperf3", "mn")
RUNS = 3

pytestmark = [
    pytest.mark.root, pytest.mark.slow,
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root (Mininet)"),
    pytest.mark.skipif(any(shutil.which(t) is None for t in TOOLS), reason=f"needs {', '.join(TOOLS)} (make setup)"),
]


def stacks() -> list:
    """The whole stacks: each compiler with its own switch (p4c + bmv2, p4sim + p4sim)."""
    out = []
    for t in pairings():
        real = Path(t.p4c).name == REAL_COMPILER, Path(t.switch).name == REAL_SWITCH
        if real[0] == real[1]:
            out.append(pytest.param(t, id=t.name))
    return out


@pytest.mark.parametrize("target", stacks())
def test_mbb_is_hitless(target: Target, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("P4C", target.p4c)
    monkeypatch.setenv("SWITCH", target.switch)
    spec = specmod.shorten(specmod.load(EXPERIMENTS / "e1-single-stream.yaml"), runs=RUNS, duration_s=6, event_at_s=2)
    spec.variants = [v for v in spec.variants if v.name == "mbb"]
    lines: list[str] = []
    counts = run_experiment(spec, tmp_path / "out", say=lines.append, build=tmp_path / "build")
    assert counts == {"skipped": 0, "ran": RUNS, "failed": 0}, lines
    failed = []
    for i in range(RUNS):
        m = json.loads((tmp_path / "out" / "mbb" / f"run-{i:03d}" / "metrics.json").read_text())
        seen = {k: m[k] for k in ("lost_packets", "retransmissions", "nstat_retrans_segs", "rto_count",
                                  "nstat_timeouts", "queue_drops", "sender_data_gap_ms", "hold_longest_ms",
                                  "loadavg_start")}
        if m["lost_packets"] or m["retransmissions"] or m["nstat_retrans_segs"] or m["rto_count"] or \
                m["nstat_timeouts"]:
            failed.append(f"run {i}: {seen}")
    assert not failed, f"{target.name}: mbb not hitless in {len(failed)} of {RUNS} runs: " + "; ".join(failed)
