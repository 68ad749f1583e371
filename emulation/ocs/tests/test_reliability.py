"""Abuse suite of the OCS emulator's SCPI server: floods of clients, idle connections, oversized lines,
a channel range that once took gigabytes, an absurd switch size, float options that are NaN, infinite or
out of range, a 1024-port switch's lines of many channel lists or many queries, clients that never read
their answers, silent connections holding every slot. Bounded in count and time (a few
seconds in all), every connection on 127.0.0.1. Each test logs its figure:
`.venv/bin/pytest emulation/ocs/tests/test_reliability.py --log-cli-level=INFO`; the same figures for a
separate emulator process: `.venv/bin/python -m scripts.bench.ocs_server`.
"""

from __future__ import annotations

import asyncio
import logging
import resource
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from control.ocs import scpi
from emulation.ocs.delay import DelayModel
from emulation.ocs.emulator import MAX_PORTS, EmulatedOcs
from emulation.ocs.options import ports_arg
from emulation.ocs.schedule import Schedule, ScheduleRunner, round_robin
from emulation.ocs.server import MAX_ANSWER, MAX_COMMANDS, MAX_LINE, WORKERS, ScpiServer
from scripts.bench.ocs_server import flood

log = logging.getLogger(__name__)

REPO = Path(__file__).resolve().parents[3]

CLIENTS = 500
IDLE = 300
DEADLINE_S = 10.0


def rss_mib() -> float:
    """This process's resident memory now."""
    return int(Path("/proc/self/statm").read_text().split()[1]) * resource.getpagesize() / 2**20


def peak_mib() -> float:
    """This process's peak resident memory so far."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@pytest.fixture
def server(request):
    """An emulator of 16 ports (`size`: other) behind a ScpiServer (the other params: its options)."""
    kwargs = dict(getattr(request, "param", {}))
    ocs = EmulatedOcs(kwargs.pop("size", 16), DelayModel.instant())
    srv = ScpiServer(("127.0.0.1", 0), ocs, **kwargs)
    srv.start()
    yield srv
    srv.shutdown()
    srv.server_close()
    ocs.close()


def ask(port: int, *lines: str, timeout: float = 5.0) -> str:
    """Send lines on a fresh connection; the answer to the last (one line)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        f = s.makefile("rwb")
        for line in lines:
            f.write(line.encode() + b"\n")
        f.flush()
        return f.readline().decode().strip()


@contextmanager
def connections(port: int, n: int) -> Iterator[list[socket.socket]]:
    """`n` client connections to the server, closed afterwards (those still in the list)."""
    socks = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(n)]
    try:
        yield socks
    finally:
        for s in socks:
            s.close()


def test_500_simultaneous_clients_are_all_answered(server):
    t0 = time.monotonic()
    served = asyncio.run(flood(server.port, CLIENTS, DEADLINE_S))
    dt = time.monotonic() - t0
    log.info(f"flood: {served} of {CLIENTS} simultaneous clients answered within {DEADLINE_S:.0f} s "
          f"(all in {dt:.2f} s; peak {server.stats.peak_active} open at once)")
    assert served == CLIENTS


def test_idle_connections_hold_no_thread_and_others_are_answered(server):
    before = threading.active_count()
    with connections(server.port, IDLE):
        deadline = time.monotonic() + 5
        while server.stats.active < IDLE and time.monotonic() < deadline:
            time.sleep(0.02)
        grown, held = threading.active_count() - before, server.stats.active
        assert ask(server.port, "*IDN?").startswith("HITLESS")
        log.info(f"idle: {held} silent connections open; threads in the process {before} before them, "
                 f"{before + grown} with them (command pool of {WORKERS}); another client answered")
        assert held == IDLE
        assert grown <= WORKERS


@pytest.mark.parametrize("server", [{"idle_timeout": 0.3}], indirect=True)
def test_silent_connections_are_closed_after_the_idle_timeout(server):
    t0 = time.monotonic()  # before the connects: each one's 0.3 s runs from its own (a loaded machine
    with connections(server.port, 20) as socks:  # took 0.2 s to open the 20 and saw them close 0.1 s after)
        assert all(s.recv(1) == b"" for s in socks)  # the server closed each one
        assert 0.3 <= time.monotonic() - t0 < 3
        assert server.stats.idle_closed >= 20
        assert ask(server.port, "*IDN?").startswith("HITLESS")


@pytest.mark.parametrize("server", [{"max_clients": 10}], indirect=True)
def test_clients_past_the_limit_wait_in_the_backlog_and_are_served(server):
    with connections(server.port, 10) as held, connections(server.port, 1) as (late,):  # late: in the backlog
        late.sendall(b"*IDN?\n")
        late.settimeout(0.3)
        with pytest.raises(TimeoutError):
            late.recv(100)
        held.pop().close()  # a slot frees: the waiting client is taken and answered
        late.settimeout(5)
        assert late.recv(100).startswith(b"HITLESS")


def test_oversized_lines_are_dropped_with_an_error_and_the_connection_stays(server):
    rss0 = rss_mib()
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as s:
        f = s.makefile("rwb")
        junk = b"X" * (64 * MAX_LINE)  # 4 MiB without a newline, then a newline
        f.write(junk + b"\n*IDN?\n")
        f.flush()
        assert f.readline().startswith(b"HITLESS")
        f.write(b":SYST:ERR?\n:SYST:ERR?\n")
        f.flush()
        assert f.readline().decode().startswith(f"{scpi.TOO_MUCH_DATA},")
        assert f.readline().decode().startswith("0,")  # one error for the one long line, not 64 commands
    log.info(f"oversized: a 4 MiB line dropped with -223; rss {rss0:.0f} -> {rss_mib():.0f} MiB")
    assert server.stats.oversized_lines == 1 and server.stats.lines == 3


def test_a_huge_channel_range_costs_no_memory(server):
    rss0, peak0 = rss_mib(), peak_mib()
    t0 = time.monotonic()
    err = ask(server.port, ":OXC:SWIT:CONN:ADD (@1:30000000),(@17:30000016)", ":SYST:ERR?")
    dt = time.monotonic() - t0
    log.info(f"line: rss {rss0:.0f} MiB before, {rss_mib():.0f} MiB after, peak {peak0:.0f} -> {peak_mib():.0f} "
          f"MiB, answered in {dt * 1000:.0f} ms: {err}")
    assert err.startswith(f"{scpi.DATA_OUT_OF_RANGE},") and "1..32" in err
    assert peak_mib() - peak0 < 50  # expanded first, the range took 2.3 GiB
    assert dt < 1


def test_switch_size_is_bounded_before_allocating():
    t0 = time.monotonic()
    with pytest.raises(ValueError, match=rf"expected 1\.\.{MAX_PORTS} ports"):
        EmulatedOcs(10**8, DelayModel.instant())
    for bad in ("100000000", "0", "-3", "1e8", "16x"):
        with pytest.raises(Exception, match=rf"expected an integer 1\.\.{MAX_PORTS}"):
            ports_arg(bad)
    assert ports_arg("16") == 16
    assert time.monotonic() - t0 < 1  # 10^8 ports took 2.7 GB before failing


# -- float options: finite and in range, or refused in one line before anything starts ----------------

def _emulator(*args: str, timeout: float = 20) -> subprocess.CompletedProcess:
    """`python -m emulation ocs-emulator ARGS` on loopback; killed (and the test failed) if it keeps running."""
    cmd = [sys.executable, "-m", "emulation", "ocs-emulator", "--listen", "127.0.0.1:0", "--ports", "4", *args]
    try:
        return subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        pytest.fail(f"ocs-emulator {' '.join(args)}: started instead of refusing the options")


@pytest.mark.parametrize(("args", "msg"), [
    (["--mirror-ms", "nan"], "mirror_ms nan: expected milliseconds from 0 and at most 60000"),
    (["--lock-ms", "inf"], "lock_ms inf: expected milliseconds"),
    (["--poll-ms", "1e300"], "poll_period_ms 1e+300: expected milliseconds"),
    (["--lock-jitter-ms", "-1"], "lock_jitter_ms -1.0: expected milliseconds"),
    (["--missed-poll-prob", "nan"], "missed_poll_prob nan: expected a probability in 0..1"),
    (["--schedule", "round-robin", "--day-ms", "nan"], "--day-ms nan: expected milliseconds above 0"),
    (["--schedule", "round-robin", "--day-ms", "inf"], "--day-ms inf: expected milliseconds above 0"),
    (["--schedule", "round-robin", "--night-ms=-inf"], "--night-ms -inf: expected milliseconds from 0"),
    (["--schedule", "round-robin", "--day-ms", "1e-9", "--night-ms", "0"], "expected a slot of at least 1 ms"),
    (["--schedule", "round-robin", "--schedule-slots", "1,x"], "expected slot numbers separated by commas"),
    (["--idle-timeout", "nan"], "idle_timeout nan: expected seconds above 0"),
    (["--idle-timeout", "inf"], "idle_timeout inf: expected seconds above 0"),
    (["--max-clients", "0"], "max_clients 0: expected an integer >= 1"),
])
def test_bad_float_options_are_refused_in_one_line_before_starting(args: list[str], msg: str) -> None:
    """One error line (argparse's own errors follow its usage text), no traceback, nothing served."""
    res = _emulator(*args)
    assert res.returncode == 2 and res.stdout == "" and "Traceback" not in res.stderr, (res.stdout, res.stderr)
    assert msg in res.stderr.splitlines()[-1], res.stderr


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -1.0, 1e300, True, "5"])
def test_delay_model_and_schedule_refuse_non_finite_lengths(bad: object) -> None:
    for name in ("mirror_ms", "lock_ms", "lock_jitter_ms", "poll_period_ms", "missed_poll_jitter_ms"):
        with pytest.raises(ValueError, match=rf"{name} .*: expected milliseconds"):
            DelayModel(**{name: bad})
    with pytest.raises(ValueError, match=r"day .*: expected milliseconds above 0"):
        Schedule(round_robin(4), bad, 1.0)
    with pytest.raises(ValueError, match=r"night .*: expected milliseconds from 0"):
        Schedule(round_robin(4), 10.0, bad)


def test_a_schedule_thread_refuses_slots_it_cannot_keep() -> None:
    ocs = EmulatedOcs(4, DelayModel.instant())
    try:
        with pytest.raises(ValueError, match="expected a slot of at least 1 ms when a thread sets each map"):
            ScheduleRunner(ocs, Schedule(round_robin(4), 1e-6, 0.0))
        ScheduleRunner(ocs, Schedule(round_robin(4), 0.9, 0.1))  # 1 ms: kept
    finally:
        ocs.close()


# -- many ports: work per line, unread output, a slot for a new client ------------------------------------

BIG = 1024  # ports: the emulator's largest switch


def connect_all(srv: ScpiServer) -> None:
    """Every input connected (a full switch's STATe? answers about 10 KB)."""
    srv.ocs.set_map([(i, BIG + i) for i in range(1, BIG + 1)])


@pytest.mark.parametrize("server", [{"size": BIG}], indirect=True)
def test_many_channel_lists_on_one_line_cost_no_memory(server):
    """6,500 channel lists in one 64 KB line (each a full range of the 2048 channels) once took 516 MiB."""
    line = ":OXC:SWIT:CONN:ADD " + ",".join(["(@1:2048)"] * 6500)
    assert len(line) < MAX_LINE
    peak0 = peak_mib()
    err = ask(server.port, line, ":SYST:ERR?")
    log.info(f"lists: a line of 6,500 full channel lists; peak {peak0:.0f} -> {peak_mib():.0f} MiB: {err}")
    assert err.startswith(f"{scpi.SYNTAX_ERROR},") and "more than 2 channel lists" in err
    assert peak_mib() - peak0 < 50


@pytest.mark.parametrize("server", [{"size": BIG}], indirect=True)
def test_clients_that_never_read_hold_one_lines_answer_each(server):
    """8 clients send lines of 3,000 STATe? queries (30 MB of answers a line) and never read: the server
    once grew by 96 MiB here holding their answers until the idle timeout (749 MiB in the probe that
    found it)."""
    connect_all(server)
    line = b";".join([b":OXC:SWIT:CONN:STAT?"] * 3000) + b"\n"
    assert len(line) < MAX_LINE
    rss0, peak0 = rss_mib(), peak_mib()
    with connections(server.port, 8) as socks:
        for s in socks:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            s.sendall(line * 4)
        time.sleep(2)  # every line the server will take is taken (it reads the next once one is answered)
        rss, peak = rss_mib(), peak_mib()
        log.info(f"unread: 8 clients x 4 lines of 3,000 STATe?, never read: rss {rss0:.0f} -> {rss:.0f} MiB, "
                 f"peak {peak0:.0f} -> {peak:.0f} MiB")
        assert rss - rss0 < 50 and peak - peak0 < 50
        first = socks[0].recv(MAX_ANSWER + 20_000)  # what it answered: MAX_ANSWER bytes and one answer more
    assert 0 < len(first) <= MAX_ANSWER + 20_000
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as s:
        f = s.makefile("rwb")
        f.write(b";".join([b"*IDN?"] * 100) + b"\n:SYST:ERR?\n")
        f.flush()
        assert f.readline().count(b"HITLESS") == MAX_COMMANDS
        err = f.readline().decode()
        assert err.startswith(f"{scpi.TOO_MUCH_DATA},") and f"more than {MAX_COMMANDS} commands" in err


@pytest.mark.parametrize("server", [{"max_clients": 10, "full_idle_timeout": 0.5}], indirect=True)
def test_silent_connections_cannot_lock_out_a_new_client(server):
    """max_clients silent connections once held every slot for the 300 s idle timeout."""
    with connections(server.port, 10):
        t0 = time.monotonic()
        assert ask(server.port, "*IDN?", timeout=10).startswith("HITLESS")
        dt = time.monotonic() - t0
        log.info(f"full: 10 of 10 slots held by silent connections; a new client answered in {dt:.1f} s")
        assert server.stats.idle_closed >= 1
