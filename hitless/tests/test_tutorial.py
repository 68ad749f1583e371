"""docs/tutorial.md runs as written, on p4sim and on bmv2: the thesis testbed, bbm and mbb measured,
the stream's gap plotted (its own assertions are in the page)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hitless.tests.literate import ROOT, TARGETS, needs, run_page


@pytest.mark.slow
@pytest.mark.parametrize("target", [pytest.param(t, marks=needs(t)) for t in TARGETS])
def test_the_tutorial_runs(target: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    page = run_page(ROOT / "docs" / "tutorial.md", target, tmp_path, monkeypatch)
    assert page["tb"].emu is None  # stopped by the page itself
    assert page["tb"].target.name == {"p4sim": "p4sim+p4sim", "bmv2": "p4c+bmv2"}[target]
    figures = tmp_path / "results" / "tutorial"
    assert sorted(f.name for f in figures.glob("*.png")) == ["cwnd.png", "rtt.png", "throughput.png"]
    assert (figures / "throughput.png").stat().st_size > 10_000
