"""CPU priorities of an emulation: the emulated data plane first, the software that drives it after.

On a machine of a few cores the emulated network shares the CPU with the controller, the hosts'
applications and whatever else runs there. A data plane that waits for a core is a network that stalls:
its queues fill, then drop (docs/e1-both-ends.md, "Hitless on bmv2"). A run therefore orders its
processes by what they emulate:
- switch processes (every thread) run SCHED_FIFO at SWITCH_REALTIME: the forwarding. bmv2 hands each
  packet through a chain of threads (receive, ingress, egress, transmit), and under the normal scheduler
  a woken thread may wait out the running task's time slice, niceness notwithstanding; a packet crossing
  seven switches of ucd4 collects those waits. e1 mbb on bmv2 with two busy loops beside it: at nice -15,
  8-13 segments lost in 3 of 5 runs and a median RTT of 15-143 ms; SCHED_FIFO, 0 lost in 5 of 5 and
  5.3 ms (the quiet machine at nice -15: 8-9 ms). The OCS that keeps a time-flow schedule showed it
  first (dark drops of the gated all-to-all: 11-49 a run at nice -15, 0-1 under SCHED_FIFO). Low among
  real-time priorities, and the kernel's RT throttling (sched_rt_runtime_us) leaves other work 5% of
  each core whatever the switches do. Where the machine refuses real-time scheduling (no CAP_SYS_NICE,
  a cgroup without an RT budget) they run at SWITCH_NICE instead, and the run says so once;
- the kernel's softirq threads (ksoftirqd/N) at SOFTIRQ_NICE while a run is up. Packet processing runs
  in whatever context raised it, until it defers the rest to these threads: a qdisc's timer (the htb
  of a shaped link releasing a burst), a burst over the softirq budget, or a switch thread woken in the
  middle of the loop. At nice 0 they wait behind every busy process, the controller's included. The
  values found are restored when the last holder lets go, or by `clean-net` after a killed run
  (SoftirqBoost);
- processes the experiments start in hosts (traffic, captures) and the hosts' shells at HOST_NICE;
- the controller, the OCS emulator's control plane and the analysis keep the niceness they started with,
  but for a controller that is part of what an experiment emulates: seed 001's reservation loop (the
  paper's scheduler, a few microseconds a round) runs its threads at EMULATED_CONTROL_REALTIME, above
  the switches it schedules (`emulated_control_thread`). Behind SCHED_FIFO switches at nice 0 it was
  starved: two-way's flows at TDC 1 took 15.2 s against 4.7 s before the switches went real time
  (bmv2, 4 ToRs, the commits before and after that change, 2026-12-02);
- the CPUs stay out of their halting idle states while a run is up (IdlePoll: a PM QoS request of 0 us
  on /dev/cpu_dma_latency, as latency testbeds and cyclictest hold it). A frame crossing bmv2 wakes four
  threads a switch; on a virtual machine whose idle halts the virtual CPU (cpuidle `haltpoll` without
  polling: this one) each wake-up of an idle CPU goes through the host, and the path stalls. e1 mbb
  on p4c + bmv2 at 4 Mbit/s, 8 runs each, one batch after the other (2026-12-03): ACK round trips over
  11 ms (the stream's tail-loss probe timeout, 2 x srtt + 2 ms, so each a spurious retransmission
  waiting to happen) 2-56 a run (mean 26) without it, 0-7 (mean 2) with it; largest 15-40 ms against
  7-30 ms. The request lives as long as the open file, so a killed run leaves nothing behind;
Niceness is absolute here: a run started under `nice` still puts its hosts at HOST_NICE.
"""

from __future__ import annotations

import fcntl
import functools
import json
import logging
import os
import struct
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from emulation.state import proc_start_time, read_trusted, secure_dir, write_private

log = logging.getLogger(__name__)

SWITCH_REALTIME = 10  # SCHED_FIFO priority of every switch process
EMULATED_CONTROL_REALTIME = SWITCH_REALTIME + 1  # a controller thread that is part of the emulated network
SWITCH_NICE = -15  # where real-time scheduling is refused
SOFTIRQ_NICE = -15
HOST_NICE = -10
KERNEL_NICE = 0  # the kernel starts its softirq threads at this niceness
PM_QOS_CPU_LATENCY = Path("/dev/cpu_dma_latency")


@functools.cache
def realtime_allowed() -> bool:
    """Whether this process may start others under SCHED_FIFO (tried once, on a short-lived child)."""
    try:
        res = subprocess.run(["chrt", "--fifo", str(SWITCH_REALTIME), "true"], capture_output=True, timeout=10,
                             check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    if res.returncode != 0:
        log.warning("switches run at niceness %d, not SCHED_FIFO: %s", SWITCH_NICE,
                    res.stderr.decode(errors="replace").strip().splitlines()[-1:] or "chrt failed")
    return res.returncode == 0


def switch_argv(argv: list[str]) -> list[str]:
    """A switch command at the switches' priority: SCHED_FIFO at SWITCH_REALTIME (every thread inherits
    it), else niceness SWITCH_NICE."""
    if realtime_allowed():
        return ["chrt", "--fifo", str(SWITCH_REALTIME), *argv]
    return nice_argv(SWITCH_NICE, argv)


def emulated_control_thread() -> None:
    """The calling thread (only it) under SCHED_FIFO at EMULATED_CONTROL_REALTIME, else at SWITCH_NICE:
    for a control loop the experiment emulates as part of the network, which must not wait behind the
    switches it drives. Threads it starts inherit it."""
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(EMULATED_CONTROL_REALTIME))
    except OSError as exc:
        try:
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), SWITCH_NICE)
        except OSError:
            log.warning("control thread %s: neither SCHED_FIFO nor niceness %d (%s)",
                        threading.current_thread().name, SWITCH_NICE, exc)


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


class IdlePoll:
    """The CPUs kept out of idle states that halt them while held (module docstring): a PM QoS CPU
    latency request of 0 us, which lasts as long as its open file. Where the device is missing or not
    writable (not root), the run goes on with the machine's idle, and says so."""

    def __init__(self) -> None:
        self.fd: int | None = None

    def acquire(self) -> None:
        if self.fd is not None:
            return
        fd = None
        try:
            fd = os.open(PM_QOS_CPU_LATENCY, os.O_WRONLY | os.O_CLOEXEC)
            os.write(fd, struct.pack("i", 0))
        except OSError as exc:
            if fd is not None:
                os.close(fd)
            log.warning("%s: CPUs left to their idle states (%s)", PM_QOS_CPU_LATENCY, exc.strerror)
            return
        self.fd = fd

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


class RunPriorities:
    """What a run holds while it is up, beside its processes' own priorities: the softirq boost and,
    unless `idle_poll` is off, the CPUs out of halting idle (IdlePoll)."""

    def __init__(self, state_dir: Path, idle_poll: bool = True) -> None:
        self.boost = SoftirqBoost(state_dir)
        self.idle = IdlePoll() if idle_poll else None

    def acquire(self) -> None:
        self.boost.acquire()
        if self.idle is not None:
            self.idle.acquire()

    def release(self) -> None:
        if self.idle is not None:
            self.idle.release()
        self.boost.release()
