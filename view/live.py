"""The view of a running emulation: a thread that records the switches' port counters and the path
versions the controller set (view-samples.jsonl in the run's log directory), reads the run's files
into the record, and the server that shows it.

    with LiveView(emu, port=8765) as v:      # emulation.network.Emulation, started
        print(v.url)

The counters are read with `Emulation.port_counters`: one batched read per fabric switch of only its
ports' cells (never a wildcard read of whole counter arrays). The OCS is not read: each fibre's rates
come from its ToR end. Nothing here writes to a switch; the controls call the run's own code.
"""

from __future__ import annotations

import json
import logging
import re
import secrets
import threading
import time
from pathlib import Path
from types import TracebackType
from typing import Any

from control.plan import PROCEDURES
from fabric.state import path_versions
from view.graph import build
from view.model import Graph, Status
from view.record import GRAPH_FILE, SAMPLES_FILE, Reader, Record, RunFiles
from view.server import Controls, Server, create_app, is_loopback
from view.timeline import SAMPLED

log = logging.getLogger(__name__)

DEFAULT_PORT = 8765
PERIOD_S = 0.25  # a few readings a second
_PAIRS = re.compile(r"\d+-\d+(,\d+-\d+)*")


def page_circuits(graph: Graph, spec: str) -> None:
    """ValueError unless a circuit spec from a page is `none`, a map of the topology or pairs a-b,c-d:
    the CLI's grammar (topo/circuits.py) without its file names, which a page may not name."""
    if spec == "none" or spec in graph.circuit_maps or _PAIRS.fullmatch(spec.replace(" ", "")):
        return
    raise ValueError(f"circuits {spec!r}: expected none, a map name ({', '.join(sorted(graph.circuit_maps))}) "
                     "or pairs a-b,c-d")


def emulation_controls(emu: Any) -> Controls:
    """The Mininet CLI's `reconfigure` (emulation/shell.py) and the OCS-only circuit change of `set_circuits`."""
    from emulation.shell import parse_circuits, reconfigure  # Mininet: only for a running emulation

    def run(procedure: str, circuits: str, hold_s: float) -> str:
        res = reconfigure(emu, procedure, circuits, hold_s)
        return f"{res.procedure}: total {res.total_ms:.1f} ms, control {res.control_ms:.1f} ms"

    def set_circuits(spec: str) -> str:
        new = parse_circuits(emu, spec)
        emu.set_circuits(new)
        return f"circuits {new}: lit"

    return Controls(run, set_circuits)


class Sampler:
    """One reading of every fabric switch's port counters and path versions, appended to a JSON-lines file."""

    def __init__(self, emu: Any, path: Path) -> None:
        self.emu, self.path = emu, path
        self.reads = 0  # P4Runtime read requests made
        self.cells = 0  # counter cells they read
        self.failed = 0
        self._out = open(path, "a", buffering=1)  # noqa: SIM115 - closed in close()

    def sample(self) -> None:
        """Read and record once; a switch that does not answer is left out of this reading."""
        ctl = self.emu.controller
        if ctl is None:
            return
        counters, times = {}, {}
        for name in list(ctl.sessions):
            try:
                counters[name] = self.emu.port_counters(name, SAMPLED)
                times[name] = time.time()  # each switch's own: a slow read must not skew the others' rates
                self.reads += 1
                # the cells port_counters reads: the switch's ports, the CPU port and its hold loop's two
                self.cells += len(SAMPLED) * (len(self.emu.topo.switch_map()[name].ports) + 3)
            except Exception as exc:  # noqa: BLE001 - a restarting switch: the next reading has it again
                self.failed += 1
                log.debug("view: counters of %s: %s", name, exc)
        versions = {n: path_versions(st) for n, st in ctl.desired().items()}
        self._out.write(json.dumps({"t": time.time(), "times": times, "counters": counters,
                                    "versions": versions}) + "\n")

    def close(self) -> None:
        """Close the file."""
        self._out.close()


class LiveView:
    """The view of one running emulation (module docstring); `start()`/`stop()` or a `with` block."""

    def __init__(self, emu: Any, port: int = DEFAULT_PORT, bind: str = "127.0.0.1", token: str | None = None,
                 controls: Controls | None = None, runs_under: Path | None = None, period_s: float = PERIOD_S) -> None:
        if not is_loopback(bind) and not token:
            raise ValueError(f"bind address {bind}: not loopback; expected a token (--view-token) with it")
        if emu.log_dir is None or emu.controller is None:
            raise ValueError("view: the emulation is not running; expected it started")
        self.emu, self.period_s, self.controls = emu, period_s, controls
        self.token = token or secrets.token_urlsafe(16)
        self.graph = build(emu.topo, emu.controller.desired())
        log_dir = Path(emu.log_dir)
        (log_dir / GRAPH_FILE).write_text(self.graph.model_dump_json())
        self.t0 = time.time()
        self.record = Record(self.graph, live=True)
        self.reader = Reader(RunFiles(log_dir, runs_under=runs_under), self.record, newer_than=self.t0)
        app = create_app(self, self.token, bind, controls, lambda spec: page_circuits(self.graph, spec))
        self.server = Server(app, bind, port)  # first: a port in use fails before anything is opened
        self.sampler = Sampler(emu, log_dir / SAMPLES_FILE)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="view-sampler", daemon=True)
        self.cpu_s = 0.0  # CPU time of the sampling thread (its reads and the reading of the files)

    # -- Source (server.py) ---------------------------------------------------------------------------

    def status(self, run: str | None) -> Status:
        """The live run's status (a live view has no other runs)."""
        if run is not None:
            raise ValueError(f"run {run!r}: a live view shows its own run only")
        return Status(mode="live", source=str(self.emu.log_dir), control=self.controls is not None,
                      procedures=list(PROCEDURES), t0=self.t0)

    def graph_of(self, run: str | None) -> Graph:
        """The drawing."""
        self.status(run)
        return self.graph

    def record_of(self, run: str | None) -> Record:
        """The record."""
        self.status(run)
        return self.record

    # -- life cycle -----------------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """The page's address; with the token when the page needs it (controls, or a bind beyond loopback)."""
        needs = self.controls is not None or not is_loopback(self.server.bind)
        return self.server.url(self.token if needs else None)

    def start(self) -> LiveView:
        """Start sampling and serving."""
        self._thread.start()
        self.server.start()
        return self

    def stop(self) -> None:
        """Stop serving and sampling (idempotent); the files stay for a replay."""
        self._stop.set()
        self.server.stop()
        if self._thread.is_alive():
            self._thread.join(timeout=10)
        self.sampler.close()

    def __enter__(self) -> LiveView:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()

    def _loop(self) -> None:
        cpu0 = time.thread_time()
        next_t = time.monotonic()
        while not self._stop.is_set():
            try:
                self.sampler.sample()
                self.reader.poll()
            except Exception:  # noqa: BLE001 - the view must never end the run
                log.exception("view: sampling failed")
            self.cpu_s = time.thread_time() - cpu0
            next_t += self.period_s
            self._stop.wait(max(0.0, next_t - time.monotonic()))
            next_t = max(next_t, time.monotonic() - self.period_s)
        self.reader.poll()
        self.reader.finish()
