"""Every module of scripts/ imports: a standalone experiment or benchmark that no other test runs
(schedule_alltoall, the benchmarks of scripts/bench/) must not rot when a module it uses changes."""

import importlib
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[1]
MODULES = sorted(".".join(("scripts", *p.relative_to(SCRIPTS).with_suffix("").parts)) for p in SCRIPTS.rglob("*.py")
                 if p.stem != "__init__" and "tests" not in p.relative_to(SCRIPTS).parts)


@pytest.mark.parametrize("module", MODULES)
def test_module_imports(module: str) -> None:
    importlib.import_module(module)
