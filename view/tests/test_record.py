"""The record a page reads from: bounded, numbered, telling a page that fell behind what it missed; and
files read as they grow."""

from __future__ import annotations

from pathlib import Path

from topo.generators import ucd4
from view.graph import build
from view.model import Sample, Span
from view.record import Record, Tail


def test_a_page_behind_the_bounded_record_is_told_what_it_missed() -> None:
    rec = Record(build(ucd4()), live=True, keep=(3, 10, 10))
    rec.add(spans=[Span(id="a", lane="steps", label="drain", t=1.0)])
    rec.add(samples=[Sample(t=float(t), links={}) for t in range(5)])
    seen = rec.since(0)
    assert ([s.t for s in seen.samples], len(seen.spans), seen.dropped, seen.seq) == ([2.0, 3.0, 4.0], 1, 2, 6)
    assert rec.since(seen.seq).samples == [] and rec.since(seen.seq).dropped == 0
    rec.add(samples=[Sample(t=5.0, links={})])
    later = rec.since(seen.seq)
    assert ([s.t for s in later.samples], later.dropped, later.spans) == ([5.0], 0, [])


def test_a_tail_returns_complete_lines_only(tmp_path: Path) -> None:
    f = tmp_path / "events.jsonl"
    tail = Tail(f)
    assert tail.read() == ""  # not written yet
    f.write_text('{"a": 1}\n{"b"')
    assert tail.read() == '{"a": 1}\n'
    with f.open("a") as out:
        out.write(': 2}\n')
    assert tail.read() == '{"b": 2}\n'
