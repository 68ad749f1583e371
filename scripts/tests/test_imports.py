"""Every module of scripts/ imports: a standalone experiment or benchmark that no other test runs
(schedule_alltoall, the bench_* scripts) must not rot when a module it uses changes."""

import importlib
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[1]
MODULES = sorted(f"scripts.{p.stem}" for p in SCRIPTS.glob("*.py") if p.stem != "__init__")


@pytest.mark.parametrize("module", MODULES)
def test_module_imports(module: str) -> None:
    importlib.import_module(module)
