"""A run as the view knows it: the files a run writes, read as they grow (live) or whole (replay), and
the bounded record of what they gave, from which each page gets what is new since its last frame.

Files (every one optional; `emulation/README.md`, `scripts/README.md`):
    <emulation log dir>/events.jsonl        the controller's event log (run-topo, the CLI's reconfigure)
    <emulation log dir>/ocs-events.jsonl    the emulated OCS's commands and ports going dark and up
    <emulation log dir>/view-samples.jsonl  the view's port counter readings and path versions (live.py)
    <emulation log dir>/view-graph.json     the drawing (graph.py), written when the view starts
    <run dir>/events.jsonl, ss.txt, run.json an experiment run's procedure, `ss` samples, start and end
"""

from __future__ import annotations

import bisect
import json
import logging
import threading
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scripts.hosts.kernel import SS_MARK, parse_ss
from view.model import FlowPoint, Frame, Graph, OcsState, Sample, Span
from view.timeline import EventFolder, FlowFolder, LinkRates, OcsFolder

log = logging.getLogger(__name__)

SAMPLES_FILE = "view-samples.jsonl"
GRAPH_FILE = "view-graph.json"
EVENTS_FILE = "events.jsonl"
OCS_FILE = "ocs-events.jsonl"
SS_FILE = "ss.txt"
# what a record keeps (a page that connects later gets these): 30 min of samples at 4 a second
KEEP_SAMPLES = 7200
KEEP_POINTS = 20000
KEEP_SPANS = 5000


class Record:
    """What the page shows, each item numbered; `since(seq)` gives a page what it has not seen yet.
    Bounded: the oldest items go first, and a page that fell behind is told how many it missed."""

    def __init__(self, graph: Graph, live: bool, keep: tuple[int, int, int] = (KEEP_SAMPLES, KEEP_SPANS, KEEP_POINTS)) -> None:
        self.graph, self.live = graph, live
        self._lock = threading.Lock()
        self._seq = 0
        self._samples: deque[tuple[int, Sample]] = deque(maxlen=keep[0])
        self._spans: deque[tuple[int, Span]] = deque(maxlen=keep[1])
        self._ocs: deque[tuple[int, OcsState]] = deque(maxlen=keep[1])
        self._points: deque[tuple[int, str, FlowPoint]] = deque(maxlen=keep[2])
        self._evicted: list[int] = []  # the numbers of the items no longer kept, in order

    @property
    def seq(self) -> int:
        """The number of the newest item."""
        with self._lock:
            return self._seq

    def add(self, samples: list[Sample] = (), spans: list[Span] = (), ocs: list[OcsState] = (),
            points: dict[str, list[FlowPoint]] | None = None) -> None:
        """Append new items."""
        with self._lock:
            for q, items in ((self._samples, samples), (self._spans, spans), (self._ocs, ocs),
                             (self._points, [(flow, p) for flow, pts in (points or {}).items() for p in pts])):
                for item in items:
                    self._seq += 1
                    if len(q) == q.maxlen:
                        bisect.insort(self._evicted, q[0][0])
                    q.append((self._seq, *item) if q is self._points else (self._seq, item))

    def since(self, seq: int) -> Frame:
        """Everything after item `seq`, and how many items after it are no longer kept."""
        with self._lock:
            frame = Frame(seq=self._seq, live=self.live)
            frame.samples = [s for n, s in self._samples if n > seq]
            frame.spans = [s for n, s in self._spans if n > seq]
            frame.ocs = [s for n, s in self._ocs if n > seq]
            for n, flow, p in self._points:
                if n > seq:
                    frame.flows.setdefault(flow, []).append(p)
            frame.dropped = len(self._evicted) - bisect.bisect_right(self._evicted, seq)
            return frame


class Tail:
    """A file read as it grows: each `read()` returns the complete lines written since the last."""

    def __init__(self, path: Path, offset: int = 0) -> None:
        self.path, self.offset = path, offset

    def read(self) -> str:
        """New complete lines ('' when none, or when the file does not exist yet)."""
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read()
        except FileNotFoundError:
            return ""
        end = data.rfind(b"\n") + 1
        self.offset += end
        return data[:end].decode(errors="replace")


def json_lines(text: str) -> Iterator[dict[str, Any]]:
    """The JSON objects of a JSON-lines text; a line that is not one is skipped (a run killed mid-write)."""
    for line in text.splitlines():
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict):
            yield obj


@dataclass(slots=True)
class Window:
    """Wall-clock bounds of what a replay shows (an experiment run's, from its run.json)."""

    start: float = float("-inf")
    end: float = float("inf")

    def __contains__(self, t: float) -> bool:
        return self.start <= t <= self.end


@dataclass(slots=True)
class RunFiles:
    """The directories whose files one view reads: the emulation's log directory, and experiment run
    directories (given, or found under `runs` as they appear)."""

    emulation: Path | None
    runs: list[Path] = field(default_factory=list)
    runs_under: Path | None = None
    window: Window = field(default_factory=Window)


class Reader:
    """Reads a run's files into a record: `poll()` takes what was written since the last poll."""

    def __init__(self, files: RunFiles, record: Record, newer_than: float = 0.0) -> None:
        self.files, self.record = files, record
        self.newer_than = newer_than  # live: run directories from before the view started are old runs
        graph = record.graph
        self._events, self._ocs = EventFolder(), OcsFolder(graph)
        self._rates, self._flows = LinkRates(graph), FlowFolder()
        self._tails: dict[Path, Tail] = {}
        self._ss_rest: dict[Path, str] = {}
        self._before: OcsState | None = None
        self.lock = threading.Lock()

    def _tail(self, path: Path) -> Tail:
        if path not in self._tails:
            self._tails[path] = Tail(path)
        return self._tails[path]

    def _run_dirs(self) -> list[Path]:
        found = list(self.files.runs)
        under = self.files.runs_under
        if under is not None:
            for d in sorted([*under.glob("run-*"), *under.glob("*/run-*")]):
                try:
                    if d.is_dir() and d not in found and d.stat().st_mtime >= self.newer_than:
                        found.append(d)
                except OSError:
                    continue
        return found

    def poll(self) -> None:
        """Fold what the files gained into the record."""
        with self.lock:
            self._poll()

    def _poll(self) -> None:
        w = self.files.window
        spans: list[Span] = []
        states: list[OcsState] = []
        samples: list[Sample] = []
        emu = self.files.emulation
        event_files = [emu / EVENTS_FILE] if emu is not None else []
        event_files += [d / EVENTS_FILE for d in self._run_dirs()]
        records = [e for f in event_files for e in json_lines(self._tail(f).read())]
        for e in sorted(records, key=lambda e: e.get("t_wall", 0.0)):
            if e.get("t_wall", 0.0) in w:
                spans += self._events.feed(e)
        if emu is not None:
            for e in json_lines(self._tail(emu / OCS_FILE).read()):
                got, state = self._ocs.feed(e)  # every event, for the state; only the window's are shown
                t = e.get("t_wall", 0.0)
                if t in w:
                    states += [state] if state is not None else []
                    spans += got
                elif t < w.start and state is not None:
                    self._before = state.model_copy(update={"t": w.start})
            if self._before is not None:  # the circuits as the window opens
                states.insert(0, self._before)
                self._before = None
            for e in json_lines(self._tail(emu / SAMPLES_FILE).read()):
                s = self._rates.feed(e["t"], e.get("counters", {}), _versions(e.get("versions", {})), e.get("times", {}))
                if s is not None and s.t in w:
                    samples.append(s)
        points: dict[str, list[FlowPoint]] = {}
        for d in self._run_dirs():
            for flow, pts in self._flows.feed(self._ss(d / SS_FILE)).items():
                points.setdefault(flow, []).extend(p for p in pts if p.t in w)
        self.record.add(samples, spans, states, points)

    def _ss(self, path: Path) -> list:
        """The complete samples the ss file gained (a sample is complete once the next one's mark is out)."""
        text = self._ss_rest.get(path, "") + self._tail(path).read()
        cut = text.rfind(f"\n{SS_MARK} ")
        if cut < 0:
            self._ss_rest[path] = text
            return []
        self._ss_rest[path] = text[cut + 1:]
        return parse_ss(text[:cut + 1])

    def finish(self) -> None:
        """Take the last ss sample too (a finished run writes no next mark)."""
        with self.lock:
            points: dict[str, list[FlowPoint]] = {}
            for rest in self._ss_rest.values():
                for flow, pts in self._flows.feed(parse_ss(rest)).items():
                    points.setdefault(flow, []).extend(p for p in pts if p.t in self.files.window)
            self._ss_rest.clear()
            self.record.add(points=points)


def _versions(raw: dict[str, Any]) -> dict[str, dict[int, int]]:
    """Path versions as recorded (JSON keys are strings)."""
    return {sw: {int(p): int(v) for p, v in paths.items()} for sw, paths in raw.items()}
