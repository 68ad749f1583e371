"""Every program a p4sim test compiles must be a JSON bmv2 loads: its operands are checked always
(bmv2's rules, p4sim.switch.operands) and, where simple_switch_grpc is on PATH, bmv2 itself loads it
(once per distinct JSON). So a P4 snippet embedded in any test is also a bmv2 load test."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from p4sim.compiler import compile as compile_mod
from p4sim.switch.operands import check_operands
from p4sim.tests import targets

_BMV2_SAID: dict[str, str | None] = {}  # sha256 of a JSON -> None (loaded) or why bmv2 refused it


@pytest.fixture(autouse=True)
def _compiled_programs_load_in_bmv2(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    real_lower = compile_mod.lower
    bmv2 = targets.bmv2()

    def lower(prog: Any, program_file: str) -> compile_mod.Result:
        res = real_lower(prog, program_file)
        check_operands(res.json)
        if bmv2 is not None:
            text = json.dumps(res.json)
            key = hashlib.sha256(text.encode()).hexdigest()
            if key not in _BMV2_SAID:
                path = Path(tmp_path_factory.getbasetemp()) / f"bmv2-load-{key[:16]}.json"
                path.write_text(text)
                _BMV2_SAID[key] = targets.load_error(bmv2, path)
            assert _BMV2_SAID[key] is None, f"{program_file}: bmv2 refuses p4sim-compile's JSON: {_BMV2_SAID[key]}"
        return res

    monkeypatch.setattr(compile_mod, "lower", lower)
