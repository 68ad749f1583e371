"""The emulation's CPU priorities: absolute niceness for what it starts, the softirq boost shared by runs, the
CPUs held out of halting idle."""

import os
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from emulation import priority
from emulation.priority import (
    PM_QOS_CPU_LATENCY,
    SWITCH_REALTIME,
    IdlePoll,
    SoftirqBoost,
    set_nice,
    softirq_threads,
    switch_argv,
)

TEST_NICE = -3  # neither the default niceness nor SOFTIRQ_NICE
root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to raise a thread's priority")


def nices() -> set[int]:
    return {os.getpriority(os.PRIO_PROCESS, pid) for pid in softirq_threads()}


def test_nice_argv_is_absolute_whatever_the_callers_niceness() -> None:
    # a child 3 steps nicer than this process runs `nice` (which prints its niceness) through nice_argv(7)
    code = "import os; from emulation.priority import nice_argv; os.execvp('nice', nice_argv(7, ['nice']))"
    out = subprocess.run(["nice", "-n", "3", sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=Path(__file__).resolve().parents[2])
    assert out.stdout.split() == ["7"]


@root
def test_a_switch_command_runs_real_time() -> None:
    code = "import os; print(os.sched_getscheduler(0), os.sched_getparam(0).sched_priority)"
    out = subprocess.run(switch_argv([sys.executable, "-c", code]), capture_output=True, text=True, check=True)
    assert out.stdout.split() == [str(os.SCHED_FIFO), str(SWITCH_REALTIME)]


def test_softirq_threads_are_one_per_cpu() -> None:
    names = sorted(softirq_threads().values())
    assert len(names) == os.cpu_count() and all(n.startswith("ksoftirqd/") for n in names), names


@root
def test_set_nice_reaches_every_thread() -> None:
    code = ("import threading, time; "
            "[threading.Thread(target=time.sleep, args=(30,), daemon=True).start() for _ in range(3)]; time.sleep(30)")
    proc = subprocess.Popen([sys.executable, "-c", code])
    try:
        time.sleep(0.5)
        set_nice(proc.pid, 4)
        tids = os.listdir(f"/proc/{proc.pid}/task")
        assert len(tids) == 4 and {os.getpriority(os.PRIO_PROCESS, int(t)) for t in tids} == {4}
    finally:
        proc.kill()
        proc.wait()


@root
def test_the_boost_is_shared_and_the_last_holder_restores(tmp_path: Path) -> None:
    found = nices()  # a value of its own: an emulation running meanwhile may hold the real boost
    first, second = SoftirqBoost(tmp_path / "run", nice=TEST_NICE), SoftirqBoost(tmp_path / "run", nice=TEST_NICE)
    first.acquire()
    assert nices() == {TEST_NICE}
    second.acquire()
    first.release()
    assert nices() == {TEST_NICE}, "the first holder restored the threads under the second"
    assert first.holders() == [os.getpid()]
    second.release()
    assert nices() == found
    assert not (tmp_path / "run" / "softirq.boost").exists()


@root
def test_a_killed_holder_is_reaped(tmp_path: Path) -> None:
    found = nices()
    code = ("import sys, time; from pathlib import Path; from emulation.priority import SoftirqBoost; "
            f"SoftirqBoost(Path(sys.argv[1]), nice={TEST_NICE}).acquire(); print('held', flush=True); time.sleep(60)")
    proc = subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], stdout=subprocess.PIPE, text=True,
                            cwd=Path(__file__).resolve().parents[2])
    try:
        assert proc.stdout.readline().strip() == "held"
        assert nices() == {TEST_NICE} and SoftirqBoost(tmp_path).holders() == [proc.pid]
    finally:
        proc.kill()  # dies holding the boost
        proc.wait()
    boost = SoftirqBoost(tmp_path, nice=TEST_NICE)
    assert boost.reap()
    assert nices() == found and boost.holders() == []
    assert not boost.reap()  # nothing left to reap


def cpu_latency_us() -> int:
    """The machine's CPU latency limit now (the strictest request held)."""
    return struct.unpack("i", PM_QOS_CPU_LATENCY.read_bytes()[:4])[0]


@root
@pytest.mark.skipif(not PM_QOS_CPU_LATENCY.exists(), reason=f"no {PM_QOS_CPU_LATENCY} on this kernel")
def test_idle_poll_holds_the_cpus_out_of_idle_while_held_and_a_dead_holder_leaves_nothing() -> None:
    before = cpu_latency_us()
    hold = IdlePoll()
    hold.acquire()
    try:
        assert cpu_latency_us() == 0
    finally:
        hold.release()
    assert cpu_latency_us() == before
    # a holder killed while it holds: the request goes with its open file
    code = ("import time; from emulation.priority import IdlePoll; h = IdlePoll(); h.acquire(); "
            "print(h.fd is not None, flush=True); time.sleep(60)")
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                             cwd=Path(__file__).resolve().parents[2])
    try:
        assert child.stdout.readline().strip() == "True"
        assert cpu_latency_us() == 0
    finally:
        child.kill()
        child.wait()
    assert cpu_latency_us() == before


def test_idle_poll_without_the_device_runs_on_and_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(priority, "PM_QOS_CPU_LATENCY", tmp_path / "missing")
    hold = IdlePoll()
    hold.acquire()
    assert hold.fd is None and "CPUs left to their idle states" in caplog.text
    hold.release()
