"""CPU priorities of an emulation: the emulated data plane first, the software that drives it after.

On a machine of a few cores the emulated network shares the CPU with the controller, the hosts'
applications and whatever else runs there. A data plane that waits for a core is a network that stalls:
its queues fill, then drop (docs/e1-both-ends.md, "Where the losses went"). A run therefore orders its
processes by what they emulate:
- switch processes (every thread) at SWITCH_NICE: the forwarding;
- the kernel's softirq threads (ksoftirqd/N) at SOFTIRQ_NICE while a run is up. Packet processing runs
  in whatever context raised it, until it defers the rest to these threads: a qdisc's timer (the htb
  of a shaped link releasing a burst), a burst over the softirq budget, or a switch thread woken in the
  middle of the loop. At nice 0 they wait behind every busy process, the controller's included, and a
  shaped port's queue stops draining (e1 on bmv2 with two busy loops: 2-64 segments lost a run with
  them at 0, 0 in two of three at -15, bench_control_stall.py). The values found are restored when the
  last run that raised them ends, or by `clean-net` after a killed one (SoftirqBoost);
- processes the experiments start in hosts (traffic, captures) and the hosts' shells at HOST_NICE;
- the controller, the OCS emulator's control plane and the analysis keep the niceness they started with.
Niceness is absolute here: a run started under `nice` still puts its switches at SWITCH_NICE.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from emulation.state import proc_start_time, read_trusted, secure_dir, write_private

log = logging.getLogger(__name__)

SWITCH_NICE = -15
SOFTIRQ_NICE = -15
HOST_NICE = -10
# A switch that keeps time for others (the OCS running a time-flow schedule) runs SCHED_FIFO at this
# priority: it stamps each frame when its process reads it, so a stall behind the ToRs' hold loops
# moved frames that reached its port in a day into the night (gated all-to-all, 4 ToRs: 11-49 dark
# drops per run at nice -15, 0-1 under SCHED_FIFO). Low among real-time priorities; the kernel's RT
# throttling still leaves the rest of the machine 5% of each core.
REALTIME_PRIORITY = 10
KERNEL_NICE = 0  # the kernel starts its softirq threads at this niceness


def nice_argv(nice: int, argv: list[str]) -> list[str]:
    """argv run at niceness `nice` (absolute: `nice -n` adds to the caller's own, so the difference)."""
    delta = nice - os.getpriority(os.PRIO_PROCESS, 0)
    return ["nice", "-n", str(delta), *argv] if delta else list(argv)


def set_nice(pid: int, nice: int) -> None:
    """Every thread of a running process at niceness `nice` (threads it starts later inherit it)."""
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            os.setpriority(os.PRIO_PROCESS, int(tid), nice)
        except ProcessLookupError:
            pass  # a thread that just ended


def softirq_threads() -> dict[int, str]:
    """The kernel's per-CPU softirq threads: pid -> name (ksoftirqd/N)."""
    out = {}
    for p in Path("/proc").iterdir():
        if not p.name.isdigit():
            continue
        try:
            name = (p / "comm").read_text().strip()
        except OSError:
            continue
        if name.startswith("ksoftirqd/"):
            out[int(p.name)] = name
    return out


class SoftirqBoost:
    """The softirq threads at SOFTIRQ_NICE while any holder lives; the niceness found restored when the
    last one lets go.

    One record in the run state directory (`softirq.boost`: the values found and the holders, each a
    process id with its start time, written and read as the run records are, emulation/state.py) under
    an flock, so holders side by side (runs, test beds, benches) share one boost and the first never
    restores it under the second. A holder whose process died without letting go (a killed run) is
    dropped whenever the record is touched: by the next acquire or release, and by clean-net (`reap`).
    """

    def __init__(self, state_dir: Path, nice: int = SOFTIRQ_NICE) -> None:
        self.dir = state_dir
        self.path = state_dir / "softirq.boost"
        self.nice = nice
        self.me = [os.getpid(), proc_start_time(os.getpid())]

    @contextmanager
    def _locked(self) -> Iterator[dict]:
        secure_dir(self.dir)
        fd = os.open(self.dir / "softirq.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            rec = {"found": {}, "holders": []}
            if self.path.exists():
                try:
                    rec = json.loads(read_trusted(self.path))
                except ValueError as exc:  # not ours alone: never restore values another user wrote
                    log.warning("%s: %s; starting a new record", self.path, exc)
            rec["holders"] = [h for h in rec["holders"] if _holder_alive(h)]
            yield rec
            if rec["holders"]:
                write_private(self.path, json.dumps(rec))
            else:
                self.path.unlink(missing_ok=True)
        finally:
            os.close(fd)

    def acquire(self) -> None:
        """Hold the boost (raising the threads when no live process holds it)."""
        with self._locked() as rec:
            if not rec["holders"]:
                self._restore(rec)  # a killed holder's boost: back to what it found, then found again
                for pid in softirq_threads():
                    try:
                        now = os.getpriority(os.PRIO_PROCESS, pid)
                        # the boost's own value is a boost whose record was lost: the kernel starts them at 0
                        rec["found"][str(pid)] = KERNEL_NICE if now == self.nice else now
                        os.setpriority(os.PRIO_PROCESS, pid, self.nice)
                    except OSError as exc:  # not root: the run goes on at the default priority
                        log.warning("softirq thread %d: niceness %d not set (%s)", pid, self.nice, exc)
            rec["holders"].append(self.me)

    def release(self) -> None:
        """Let go of one hold of this process; the last holder restores the threads."""
        with self._locked() as rec:
            if self.me in rec["holders"]:
                rec["holders"].remove(self.me)
            if not rec["holders"]:
                self._restore(rec)

    def reap(self) -> bool:
        """Drop holders that died (clean-net); True when that restored the threads."""
        if not self.path.exists():
            return False
        with self._locked() as rec:
            if not rec["holders"]:
                self._restore(rec)
        return not self.path.exists()

    def holders(self) -> list[int]:
        """The live holders' process ids."""
        if not self.path.exists():
            return []
        with self._locked() as rec:
            return [h[0] for h in rec["holders"]]

    @staticmethod
    def _restore(rec: dict) -> None:
        for pid, nice in rec.get("found", {}).items():
            try:
                os.setpriority(os.PRIO_PROCESS, int(pid), int(nice))
            except (OSError, ValueError):
                pass  # the CPU went offline
        rec["found"] = {}


def _holder_alive(holder: object) -> bool:
    """A holder [pid, start time] whose process still runs (a recycled pid has another start time)."""
    if not isinstance(holder, list) or len(holder) != 2 or not isinstance(holder[0], int) or holder[0] <= 1:
        return False
    return holder[1] is not None and proc_start_time(holder[0]) == holder[1]
