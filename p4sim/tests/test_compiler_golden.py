"""Golden bmv2 JSON + P4Info of the project's programs; update with
`.venv/bin/python -m p4sim.tests.golden --update`."""

from __future__ import annotations

import pytest

from p4sim.tests import golden


@pytest.mark.parametrize("name", sorted(golden.PROGRAMS))
def test_golden(name: str) -> None:
    jp, pp = golden.paths(name)
    if not jp.exists():
        pytest.fail(f"no golden file for {name}: run `.venv/bin/python -m p4sim.tests.golden --update`")
    j, p = golden.render(name)
    hint = "output changed; if intended run `.venv/bin/python -m p4sim.tests.golden --update`"
    assert p == pp.read_text(), f"{name} P4Info {hint}"
    assert j == jp.read_text(), f"{name} bmv2 JSON {hint}"
