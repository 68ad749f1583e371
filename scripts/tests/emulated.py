"""What the end-to-end tests of the experiment runner share: the shipped specs, the prebuilt programs
($P4_BUILD_DIR, else build/ compiled when stale), the marks that skip a test where Mininet cannot run,
and one run of each of a spec's variants read back."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from scripts.experiments.runner import run_experiment
from scripts.experiments.spec import Spec

EXPERIMENTS = Path(__file__).resolve().parents[1] / "experiments"
BUILD = Path(os.environ["P4_BUILD_DIR"]) if os.environ.get("P4_BUILD_DIR") else None


def needs_mininet(*tools: str) -> list[pytest.MarkDecorator]:
    """A module's marks: root, slow, and skipped without root, Mininet or any of `tools`."""
    need = ("mn", *tools)
    return [pytest.mark.root, pytest.mark.slow,
            pytest.mark.skipif(os.geteuid() != 0, reason="needs root (Mininet)"),
            pytest.mark.skipif(any(shutil.which(t) is None for t in need), reason=f"needs {', '.join(need)} (make setup)")]


def run_once(spec: Spec, out: Path) -> dict[str, dict[str, Any]]:
    """Run 0 of every variant of `spec` into `out`; each variant's metrics by name (every run must
    have run: the progress lines are the failure's message)."""
    lines: list[str] = []
    counts = run_experiment(spec, out, say=lines.append, build=BUILD)
    assert counts == {"skipped": 0, "ran": len(spec.variants), "failed": 0}, lines
    return {v.name: json.loads((out / v.name / "run-000" / "metrics.json").read_text()) for v in spec.variants}
