"""The record of what one emulation run created, and `clean-net`, which removes exactly that.

A run writes `/tmp/hitless-run/<run-id>.json` as it goes: every process it started (PID plus the
process's start time, so a recycled PID is never killed) and every interface it created. A clean exit
deletes the file; after a killed run, `clean_net()` stops those processes, deletes those interfaces
and then the file. Nothing is ever killed or deleted by name pattern.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

log = logging.getLogger(__name__)

STATE_DIR = Path(os.environ.get("HITLESS_RUN_DIR", "/tmp/hitless-run"))


def proc_start_time(pid: int) -> int | None:
    """The start time of a process (clock ticks since boot, /proc/PID/stat field 22), or None."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # the command name may hold spaces or parentheses: fields start after the last ')'
    return int(stat[stat.rindex(")") + 2:].split()[19])


def interface_exists(name: str) -> bool:
    """True when a network interface of that name exists in the root namespace."""
    return Path(f"/sys/class/net/{name}").exists()


@dataclass(slots=True)
class RunProcess:
    """A process a run started."""

    pid: int
    start_time: int | None
    what: str


@dataclass(slots=True)
class RunState:
    """What one run created; saved on every change."""

    run_id: str
    path: str
    owner: RunProcess | None = None  # the process running the emulation; while alive the run is live
    processes: list[RunProcess] = field(default_factory=list)
    interfaces: list[str] = field(default_factory=list)
    started: float = field(default_factory=time.time)

    @classmethod
    def create(cls, run_id: str | None = None, directory: Path | None = None) -> RunState:
        """A new, saved state file for this run."""
        d = directory or STATE_DIR
        d.mkdir(parents=True, exist_ok=True)
        rid = run_id or f"{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
        me = os.getpid()
        state = cls(rid, str(d / f"{rid}.json"), RunProcess(me, proc_start_time(me), "owner"))
        state.save()
        return state

    @classmethod
    def load(cls, path: str | Path) -> RunState:
        """Read a state file."""
        data = json.loads(Path(path).read_text())
        owner = RunProcess(**data["owner"]) if data.get("owner") else None
        return cls(data["run_id"], str(path), owner, [RunProcess(**p) for p in data.get("processes", [])],
                   list(data.get("interfaces", [])), data.get("started", 0.0))

    def save(self) -> None:
        """Write the file atomically."""
        tmp = Path(self.path + ".tmp")
        tmp.write_text(json.dumps(asdict(self), indent=1))
        tmp.replace(self.path)

    def add_process(self, pid: int, what: str) -> None:
        """Record a started process."""
        self.processes.append(RunProcess(pid, proc_start_time(pid), what))
        self.save()

    def add_interfaces(self, names: list[str]) -> None:
        """Record created interfaces (the root-namespace ends; deleting one deletes its veth peer)."""
        self.interfaces.extend(n for n in names if n not in self.interfaces)
        self.save()

    def remove(self) -> None:
        """Delete the state file (the run cleaned up after itself)."""
        Path(self.path).unlink(missing_ok=True)


def _alive(p: RunProcess) -> bool:
    if p.start_time is None or proc_start_time(p.pid) != p.start_time:
        return False
    try:  # a zombie has exited: only its parent's wait() is missing
        return Path(f"/proc/{p.pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def clean_state(state: RunState, grace: float = 3.0) -> tuple[int, int]:
    """Stop the state's live processes and delete its interfaces; returns (processes, interfaces)."""
    live = [p for p in state.processes if _alive(p)]
    for p in live:
        try:
            os.kill(p.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(_alive(p) for p in live):
        time.sleep(0.05)
    for p in live:
        if _alive(p):
            try:
                os.kill(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    removed = 0
    for name in state.interfaces:
        if interface_exists(name):
            subprocess.run(["ip", "link", "del", "dev", name], capture_output=True, check=False, timeout=10)
            removed += 1
    state.remove()
    return len(live), removed


def clean_net(directory: Path | None = None, force: bool = False) -> list[str]:
    """Clean every run recorded in the state directory (live runs only with force); one line per run."""
    d = directory or STATE_DIR
    lines = []
    for f in sorted(d.glob("*.json")) if d.is_dir() else []:
        try:
            state = RunState.load(f)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            lines.append(f"{f}: unreadable ({exc}); removed")
            f.unlink(missing_ok=True)
            continue
        if state.owner is not None and _alive(state.owner) and not force:
            lines.append(f"run {state.run_id}: still running (pid {state.owner.pid}); skipped")
            continue
        procs, intfs = clean_state(state)
        lines.append(f"run {state.run_id}: stopped {procs} processes, deleted {intfs} interfaces")
    return lines
