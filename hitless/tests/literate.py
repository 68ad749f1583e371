"""Run the Python of a Markdown page (README.md's example, docs/tutorial.md) as a test: its ```python
blocks in order, in one namespace, from a given folder, on the target the environment names."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from hitless import Testbed

ROOT = Path(__file__).resolve().parents[2]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
# each target as P4C/SWITCH name it (p4sim/target.py); the page's code never names one
TARGETS = {"p4sim": ("p4sim-compile", "p4sim-switch"), "bmv2": ("p4c-bm2-ss", "simple_switch_grpc")}


def python_blocks(page: Path, first_only: bool = False) -> list[str]:
    """The ```python blocks of a Markdown page, in order (only the first with first_only)."""
    blocks = BLOCK.findall(page.read_text())
    if not blocks:
        raise ValueError(f"{page}: no ```python block")
    return blocks[:1] if first_only else blocks


def needs(target: str) -> Any:
    """pytest marks of a page run on `target`: root and Mininet always, bmv2's tools for bmv2."""
    missing = [t for t in TARGETS[target] if target == "bmv2" and shutil.which(t) is None]
    return [pytest.mark.root,
            pytest.mark.skipif(os.geteuid() != 0, reason="needs root (Mininet)"),
            pytest.mark.skipif(shutil.which("mnexec") is None, reason="needs Mininet (make setup)"),
            pytest.mark.skipif(bool(missing), reason=f"needs {' and '.join(missing)} on PATH (bmv2)")]


def run_page(page: Path, target: str, folder: Path, monkeypatch: pytest.MonkeyPatch,
             first_only: bool = False) -> dict[str, Any]:
    """Execute a page's Python in `folder` with P4C/SWITCH set to `target`; its namespace afterwards."""
    p4c, switch = TARGETS[target]
    monkeypatch.setenv("P4C", p4c)
    monkeypatch.setenv("SWITCH", switch)
    monkeypatch.chdir(folder)
    namespace: dict[str, Any] = {"__name__": "__page__"}
    try:
        for i, code in enumerate(python_blocks(page, first_only)):
            exec(compile(code, f"{page.name} block {i + 1}", "exec"), namespace)  # noqa: S102 - the page is ours
    finally:
        for value in list(namespace.values()):  # a page that failed half-way leaves nothing running
            if isinstance(value, Testbed):
                value.stop()
    return namespace
