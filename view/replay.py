"""Finished runs under a directory, each read whole into a record the page plays back with its slider.

A run is an experiment run directory (`run-NNN`: run.json, events.jsonl, ss.txt; its emulation's log
directory beside it, `emulation/`, gives the OCS log and, when the view was open, the counters), or an
emulation's log directory itself (`make run-topo`'s /var/log/hitless/<run id>, `Testbed`'s
`<out>/emulation`): everything the emulation did while it ran.
"""

from __future__ import annotations

import json
import logging
import threading
from collections import OrderedDict
from pathlib import Path

from scripts.experiments import spec as specmod
from scripts.experiments.runner import HOME
from tablegen.entries import generate_states
from view.graph import build
from view.model import Graph, Status
from view.record import EVENTS_FILE, GRAPH_FILE, OCS_FILE, Reader, Record, RunFiles, Window

log = logging.getLogger(__name__)

MAX_DEPTH = 3  # how deep under the directory runs are looked for
CACHED = 4  # replays kept read
MARGIN_S = 1.0  # an experiment run's replay: from a second before its traffic to a second after


def find_runs(root: Path) -> list[str]:
    """The runs under root (module docstring), as paths relative to it ('.' for root itself)."""
    out = []
    for d in [root, *_dirs(root, MAX_DEPTH)]:
        if (d / "run.json").is_file() or (d / EVENTS_FILE).is_file() or (d / OCS_FILE).is_file():
            out.append(str(d.relative_to(root)))
    return out


def _dirs(root: Path, depth: int) -> list[Path]:
    if depth == 0:
        return []
    out = []
    try:
        children = sorted(p for p in root.iterdir() if p.is_dir() and not p.is_symlink())
    except OSError:
        return []
    for c in children:
        out += [c, *_dirs(c, depth - 1)]
    return out


def run_files(d: Path) -> RunFiles:
    """What one run's replay reads: an experiment run with its emulation's files in its window, or a
    whole emulation's log directory with the runs beside it."""
    meta = d / "run.json"
    if meta.is_file():
        m = json.loads(meta.read_text())
        emu = d.parent / "emulation"
        window = Window(float(m["t_start"]) - MARGIN_S, float(m.get("t_end", m["t_start"])) + MARGIN_S) \
            if "t_start" in m else Window()
        return RunFiles(emu if emu.is_dir() else None, runs=[d], window=window)
    return RunFiles(d, runs_under=d.parent if d.name == "emulation" else None)


def graph_for(d: Path, files: RunFiles) -> Graph:
    """The drawing the live view wrote, else one made from the experiment's spec (spec.json above the run)."""
    if files.emulation is not None and (files.emulation / GRAPH_FILE).is_file():
        return Graph.model_validate_json((files.emulation / GRAPH_FILE).read_text())
    for up in [d, *d.parents][:4]:
        if (up / "spec.json").is_file():
            path = Path(json.loads((up / "spec.json").read_text())["path"])
            sp = specmod.load(path if path.is_absolute() or path.exists() else HOME / path)
            topo = specmod.make_topology(sp)
            mode = sp.variants[0].mode if sp.variants else "ecmp"
            return build(topo, generate_states(topo, mode))
    raise ValueError(f"run {d}: no drawing; expected {GRAPH_FILE} (a run with the view) or the experiment's "
                     "spec.json above it")


class Replays:
    """The finished runs of a directory, for the server (server.Source)."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        if not self.root.is_dir():
            raise ValueError(f"replay {root}: not a directory; expected a run's or an experiment's results")
        self.runs = find_runs(self.root)
        if not self.runs:
            raise ValueError(f"replay {root}: no run found; expected run.json, {EVENTS_FILE} or {OCS_FILE} "
                             f"at most {MAX_DEPTH} directories down")
        # first shown: the first experiment run, else the first emulation
        self.default = next((r for r in self.runs if (self.root / r / "run.json").is_file()), self.runs[0])
        self._cache: OrderedDict[str, tuple[Graph, Record, float]] = OrderedDict()
        self._lock = threading.Lock()

    def _load(self, run: str | None) -> tuple[Graph, Record, float]:
        name = run or self.default
        if name not in self.runs:  # only what was found: a page never names a path of its own
            raise ValueError(f"run {name!r}: expected one of {', '.join(self.runs[:20])}")
        with self._lock:
            if name in self._cache:
                self._cache.move_to_end(name)
                return self._cache[name]
            d = self.root / name
            files = run_files(d)
            graph = graph_for(d, files)
            record = Record(graph, live=False)
            reader = Reader(files, record)
            reader.poll()
            reader.finish()
            frame = record.since(0)
            times = [x.t for x in [*frame.samples, *frame.spans, *frame.ocs]]
            times += [p.t for pts in frame.flows.values() for p in pts]
            t0 = files.window.start + MARGIN_S if files.window.start > float("-inf") else min(times, default=0.0)
            self._cache[name] = (graph, record, t0)
            while len(self._cache) > CACHED:
                self._cache.popitem(last=False)
            return self._cache[name]

    def status(self, run: str | None) -> Status:
        """The replay's status, with every run found."""
        _, _, t0 = self._load(run)
        return Status(mode="replay", source=str(self.root), control=False, procedures=[], t0=t0,
                      runs=self.runs, run=run or self.default)

    def graph_of(self, run: str | None) -> Graph:
        """A run's drawing."""
        return self._load(run)[0]

    def record_of(self, run: str | None) -> Record:
        """A run's record, read whole."""
        return self._load(run)[1]

