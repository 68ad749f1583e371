"""The emulated OCS's SCPI server: Polatis-style commands over TCP, line by line, many clients.

One event loop serves every connection and a bounded pool runs the commands (ScpiServer says why);
a silent connection is closed after IDLE_TIMEOUT_S, at most MAX_CLIENTS are open at once (more wait
in the listen backlog), and a line longer than MAX_LINE is dropped with -223 "Too much data".

Each connection has its own SCPI error queue (10 entries, the last replaced by -350 on overflow),
so one client's errors are not read by another. A bad command never closes the connection.
Commands without '?' answer nothing; queries answer one line (several queries on one line joined
by ';'). Extension beyond the Polatis set: `:OXC:SWITch:PORT:STATe? P` answers 1 when light is
through port P, else 0.
"""

from __future__ import annotations

import asyncio
import logging
import resource
import socket
import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from control.ocs import scpi
from control.ocs.scpi import Header, ScpiError
from emulation.ocs.emulator import EmulatedOcs

log = logging.getLogger(__name__)

IDN = "HITLESS,OCS-EMULATOR,{size}x{size},1.0"
ERROR_QUEUE_LEN = 10
MAX_LINE = 65536  # bytes; a longer line is dropped with -223 "Too much data"
# What one line may cost: its commands and its answers (what waits for a client that does not read is
# one line's answers; 8 such clients of a 1024-port switch once held 749 MiB). Past either, -223.
MAX_COMMANDS = 64
MAX_ANSWER = 256 * 1024  # bytes; STATe? of a full 1024-port switch answers about 10 KB
RECV_SIZE = 65536
MAX_CLIENTS = 1024  # open connections; more wait in the listen backlog
IDLE_TIMEOUT_S = 300.0  # a connection silent (or not reading answers) this long is closed
MAX_IDLE_TIMEOUT_S = 86400.0
FULL_IDLE_TIMEOUT_S = 5.0  # ... or this long while every slot is taken, so a new client gets one
WORKERS = 8  # threads running commands (a blocking *OPC? holds one)
FD_RESERVE = 64  # file descriptors kept for the data plane, logs and the event file


class Session:
    """The state of one SCPI connection: its error queue."""

    def __init__(self, ocs: EmulatedOcs) -> None:
        self.ocs = ocs
        self.errors: deque[tuple[int, str]] = deque()

    def push_error(self, code: int, detail: str) -> None:
        """Queue an error; on overflow the newest entry becomes -350 Queue overflow."""
        if len(self.errors) >= ERROR_QUEUE_LEN:
            self.errors[-1] = (scpi.QUEUE_OVERFLOW, "")
            return
        self.errors.append((code, detail))

    def pop_error(self) -> str:
        """The oldest queued error, or `0,"No error"`."""
        if not self.errors:
            return scpi.format_error(0)
        return scpi.format_error(*self.errors.popleft())

    def execute_line(self, line: str) -> str | None:
        """Run the commands of one line, MAX_COMMANDS at most, until their answers reach MAX_ANSWER bytes
        (the rest is dropped with one -223 error); the joined query answers, or None when there are none."""
        answers: list[str] = []
        size = 0
        commands = scpi.split_commands(line)
        for n, command in enumerate(commands):
            if n == MAX_COMMANDS or size > MAX_ANSWER:
                why = f"more than {MAX_COMMANDS} commands" if n == MAX_COMMANDS else f"answers over {MAX_ANSWER} bytes"
                self.push_error(scpi.TOO_MUCH_DATA, f"{why} on one line; {len(commands) - n} not run")
                break
            try:
                answer = self.execute(command)
            except ScpiError as exc:
                log.info("scpi %r: %s", command[:80], exc)
                self.push_error(exc.code, exc.detail)
                continue
            if answer is not None:
                answers.append(answer)
                size += len(answer) + 1
        return ";".join(answers) if answers else None

    def execute(self, command: str) -> str | None:
        """Run one command; raises ScpiError."""
        header, params = scpi.split_header(command)
        for pattern, handler, takes_params in _COMMANDS:
            if pattern.matches(header):
                if params and not takes_params:
                    raise ScpiError(scpi.PARAMETER_NOT_ALLOWED, f"{header} takes no parameter")
                return handler(self, params)
        raise ScpiError(scpi.UNDEFINED_HEADER, header)

    # -- handlers -------------------------------------------------------------------------------

    def _pairs(self, params: str) -> list[tuple[int, int]]:
        lists = scpi.parse_channel_lists(params, 2 * self.ocs.size)
        if len(lists) != 2 or len(lists[0]) != len(lists[1]):
            raise ScpiError(scpi.SYNTAX_ERROR, "expected two channel lists of equal length")
        n = self.ocs.size
        pairs = []
        for a, b in zip(lists[0], lists[1], strict=True):
            if a > n >= b:  # either order names the same connection
                a, b = b, a
            if not (1 <= a <= n and n < b <= 2 * n):
                raise ScpiError(scpi.DATA_OUT_OF_RANGE, f"connection ({a},{b}) needs an input 1..{n} "
                                                        f"and an output {n + 1}..{2 * n}")
            pairs.append((a, b))
        return pairs

    def _apply(self, fn: Callable[..., None], pairs: list[tuple[int, int]]) -> None:
        try:
            fn(pairs)
        except ValueError as exc:
            raise ScpiError(scpi.SETTINGS_CONFLICT, str(exc)) from None

    def idn(self, params: str) -> str:
        """*IDN?: identification."""
        return IDN.format(size=self.ocs.size)

    def opc_query(self, params: str) -> str:
        """*OPC?: 1 once the mirrors have moved."""
        self.ocs.wait_complete()
        return "1"

    def opc(self, params: str) -> None:
        """*OPC: accepted (operations complete synchronously)."""
        return None

    def rst(self, params: str) -> None:
        """*RST: disconnect everything at once."""
        self.ocs.reset()

    def cls(self, params: str) -> None:
        """*CLS: clear this session's error queue."""
        self.errors.clear()

    def add(self, params: str) -> None:
        """:OXC:SWITch:CONNect:ADD."""
        self._apply(self.ocs.connect, self._pairs(params))

    def subtract(self, params: str) -> None:
        """:OXC:SWITch:CONNect:SUBtract."""
        self._apply(self.ocs.disconnect, self._pairs(params))

    def only(self, params: str) -> None:
        """:OXC:SWITch:CONNect:ONLY."""
        self._apply(self.ocs.set_map, self._pairs(params))

    def disconnect_all(self, params: str) -> None:
        """:OXC:SWITch:DISConnect:ALL."""
        self.ocs.disconnect_all()

    def _port(self, params: str) -> int:
        port = scpi.parse_int_param(params)
        if not 1 <= port <= 2 * self.ocs.size:
            raise ScpiError(scpi.DATA_OUT_OF_RANGE, f"port {port} not in 1..{2 * self.ocs.size}")
        return port

    def port_query(self, params: str) -> str:
        """:OXC:SWITch:CONNect:PORT? P: the connected port, 0 when none."""
        return str(self.ocs.peer(self._port(params)))

    def state_query(self, params: str) -> str:
        """:OXC:SWITch:CONNect:STATe?: (@ins),(@outs)."""
        conns = self.ocs.query()
        return scpi.format_channel_lists(list(conns), list(conns.values()))

    def size_query(self, params: str) -> str:
        """:OXC:SWITch:SIZE?: N,N."""
        return f"{self.ocs.size},{self.ocs.size}"

    def port_state_query(self, params: str) -> str:
        """:OXC:SWITch:PORT:STATe? P (emulator extension): 1 when light is through."""
        return "1" if self.ocs.port_status(self._port(params)).light else "0"

    def error_query(self, params: str) -> str:
        """:SYSTem:ERRor?: the oldest queued error."""
        return self.pop_error()


_COMMANDS: list[tuple[Header, Callable[[Session, str], str | None], bool]] = [
    (Header("*IDN?"), Session.idn, False),
    (Header("*OPC?"), Session.opc_query, False),
    (Header("*OPC"), Session.opc, False),
    (Header("*RST"), Session.rst, False),
    (Header("*CLS"), Session.cls, False),
    (Header(":OXC:SWITch:CONNect:ADD"), Session.add, True),
    (Header(":OXC:SWITch:CONNect:SUBtract"), Session.subtract, True),
    (Header(":OXC:SWITch:CONNect:ONLY"), Session.only, True),
    (Header(":OXC:SWITch:DISConnect:ALL"), Session.disconnect_all, False),
    (Header(":OXC:SWITch:CONNect:PORT?"), Session.port_query, True),
    (Header(":OXC:SWITch:CONNect:STATe?"), Session.state_query, False),
    (Header(":OXC:SWITch:SIZE?"), Session.size_query, False),
    (Header(":OXC:SWITch:PORT:STATe?"), Session.port_state_query, True),
    (Header(":SYSTem:ERRor?"), Session.error_query, False),
    (Header(":SYSTem:ERRor:NEXT?"), Session.error_query, False),
]


@dataclass(slots=True)
class ServerStats:
    """Counters of a running server (tests and `scripts/bench/ocs_server.py` print them)."""

    accepted: int = 0
    active: int = 0
    peak_active: int = 0
    idle_closed: int = 0
    oversized_lines: int = 0
    lines: int = 0


class ScpiServer:
    """A TCP server giving each client a Session on a shared EmulatedOcs.

    Modelled on a gRPC server: one event loop owns every socket (a connection costs a small coroutine,
    not a thread), commands run on a bounded thread pool (`workers`, gRPC's `ThreadPoolExecutor`:
    `*OPC?` blocks on the mirrors, so commands never run on the loop), a connection that sends nothing
    for `idle_timeout` seconds, or reads no answer for as long, is closed (gRPC's
    `max_connection_idle`, OpenSSH's `ClientAliveInterval`). The listen backlog is SOMAXCONN (what
    gRPC core and sshd ask for); at `max_clients` open connections it stops accepting until one
    closes, so further clients wait in the kernel's backlog instead of failing (nginx's
    `worker_connections`); while every slot is taken, the connection idle longest is closed once it
    has been idle `full_idle_timeout` (silent connections cannot lock a real client out). A line longer
    than MAX_LINE is dropped up to its newline with a -223 error in that session's queue; the
    connection stays open. A line runs MAX_COMMANDS commands at most and answers MAX_ANSWER bytes at
    most, and the next line is read only once its answer is sent, so a client that does not read
    holds one line's answer.
    """

    def __init__(self, address: tuple[str, int], ocs: EmulatedOcs, *, max_clients: int = MAX_CLIENTS,
                 idle_timeout: float = IDLE_TIMEOUT_S, workers: int = WORKERS,
                 full_idle_timeout: float = FULL_IDLE_TIMEOUT_S) -> None:
        check_limits(max_clients, idle_timeout, workers)
        check_limits(max_clients, full_idle_timeout, workers)
        self.ocs = ocs
        self.max_clients = _fit_fd_limit(max_clients)
        self.idle_timeout = idle_timeout
        self.full_idle_timeout = min(full_idle_timeout, idle_timeout)
        self.stats = ServerStats()
        self.socket = socket.create_server(address, backlog=socket.SOMAXCONN)
        self.socket.setblocking(False)
        self.server_address = self.socket.getsockname()
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="scpi-cmd")
        self._loop = asyncio.new_event_loop()
        self._thread: threading.Thread | None = None
        self._main: asyncio.Task[None] | None = None
        self._clients: dict[asyncio.Task[None], float] = {}  # each connection's last activity (loop time)

    @property
    def port(self) -> int:
        """The TCP port listened on (useful with port 0)."""
        return self.server_address[1]

    def start(self) -> threading.Thread:
        """Serve in a background thread."""
        if self._thread is not None:
            raise RuntimeError("ScpiServer.start: already started")
        self._thread = threading.Thread(target=self._run, name="scpi-server", daemon=True)
        self._thread.start()
        return self._thread

    def shutdown(self) -> None:
        """Close every connection and stop serving; returns once the loop has stopped."""
        if self._thread is None or not self._thread.is_alive():
            return

        def stop() -> None:
            if self._main is not None:
                self._main.cancel()

        self._loop.call_soon_threadsafe(stop)
        self._thread.join(timeout=10)

    def server_close(self) -> None:
        """Release the listening socket and the command threads (after shutdown)."""
        self.socket.close()
        self._pool.shutdown(wait=False, cancel_futures=True)
        if self._thread is None or not self._thread.is_alive():
            self._loop.close()

    # -- event loop -----------------------------------------------------------------------------

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._main = self._loop.create_task(self._accept())
        try:
            self._loop.run_until_complete(self._main)
        except asyncio.CancelledError:
            pass
        finally:
            for task in list(self._clients):
                task.cancel()
            if self._clients:
                self._loop.run_until_complete(asyncio.gather(*self._clients, return_exceptions=True))
            self._loop.close()

    async def _accept(self) -> None:
        loop = asyncio.get_running_loop()
        room = asyncio.Event()
        room.set()
        while True:
            while len(self._clients) >= self.max_clients:
                room.clear()
                try:
                    await asyncio.wait_for(room.wait(), min(1.0, self.full_idle_timeout))
                except asyncio.TimeoutError:
                    self._close_longest_idle(loop.time())
            try:
                conn, peer = await loop.sock_accept(self.socket)
            except OSError as exc:  # EMFILE and the like: wait for a connection to close, then retry
                log.warning("scpi accept: %s", exc)
                await asyncio.sleep(0.1)
                continue
            conn.setblocking(False)
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.stats.accepted += 1
            task = loop.create_task(self._serve(conn, peer))
            self._clients[task] = loop.time()
            self.stats.active = len(self._clients)
            self.stats.peak_active = max(self.stats.peak_active, self.stats.active)

            def done(t: asyncio.Task[None]) -> None:
                self._clients.pop(t, None)
                self.stats.active = len(self._clients)
                room.set()

            task.add_done_callback(done)

    def _close_longest_idle(self, now: float) -> None:
        """Every slot taken: close the connection idle longest if it has been idle full_idle_timeout."""
        task, last = min(self._clients.items(), key=lambda kv: kv[1])
        if now - last >= self.full_idle_timeout:
            self.stats.idle_closed += 1
            log.info("scpi: every slot taken; a connection idle for %.0f s closed", now - last)
            task.cancel()

    def _active(self) -> None:
        """The calling connection did something (read a line or sent an answer)."""
        task = asyncio.current_task()
        if task in self._clients:
            self._clients[task] = asyncio.get_running_loop().time()  # type: ignore[index]

    async def _serve(self, conn: socket.socket, peer: Any) -> None:
        """One client, line by line; its commands run on the pool, one at a time, in order."""
        loop = asyncio.get_running_loop()
        session = Session(self.ocs)
        log.info("scpi client %s connected", peer)
        buf = b""
        discarding = False  # inside a line longer than MAX_LINE: drop bytes up to its newline
        try:
            while True:
                data = await asyncio.wait_for(loop.sock_recv(conn, RECV_SIZE), self.idle_timeout)
                if not data:
                    break
                self._active()
                buf += data
                *lines, buf = buf.split(b"\n")
                for raw in lines:
                    if discarding:  # the end of an over-long line
                        discarding = False
                        continue
                    if len(raw) > MAX_LINE:
                        self._too_long(session, peer)
                        continue
                    line = raw.decode("ascii", errors="replace").strip()
                    if not line:
                        continue
                    self.stats.lines += 1
                    answer = await loop.run_in_executor(self._pool, session.execute_line, line)
                    if answer is not None:
                        await asyncio.wait_for(loop.sock_sendall(conn, answer.encode("ascii", "replace") + b"\n"),
                                               self.idle_timeout)
                        self._active()
                if len(buf) > MAX_LINE:
                    if not discarding:
                        self._too_long(session, peer)
                    discarding, buf = True, b""
        except asyncio.TimeoutError:  # (TimeoutError itself from Python 3.11)
            self.stats.idle_closed += 1
            log.info("scpi client %s: idle for %.0f s, closed", peer, self.idle_timeout)
        except asyncio.CancelledError:  # closed for a new client (_close_longest_idle) or the server stops
            log.info("scpi client %s: closed", peer)
        except OSError as exc:
            log.info("scpi client %s: %s", peer, exc)
        finally:
            conn.close()
        log.info("scpi client %s disconnected", peer)

    def _too_long(self, session: Session, peer: Any) -> None:
        self.stats.oversized_lines += 1
        log.info("scpi client %s: line longer than %d bytes dropped", peer, MAX_LINE)
        session.push_error(scpi.TOO_MUCH_DATA, f"line longer than {MAX_LINE} bytes")


def check_limits(max_clients: int, idle_timeout: float, workers: int = WORKERS) -> None:
    """ValueError unless the server's limits are whole numbers >= 1 and seconds in (0, MAX_IDLE_TIMEOUT_S]."""
    for name, n in (("max_clients", max_clients), ("workers", workers)):
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ValueError(f"{name} {n!r}: expected an integer >= 1")
    if isinstance(idle_timeout, bool) or not isinstance(idle_timeout, (int, float)) \
            or not 0 < idle_timeout <= MAX_IDLE_TIMEOUT_S:  # NaN fails too
        raise ValueError(f"idle_timeout {idle_timeout!r}: expected seconds above 0 and at most {MAX_IDLE_TIMEOUT_S:.0f}")


def _fit_fd_limit(max_clients: int) -> int:
    """max_clients, lowered to what the open-file limit leaves after a reserve for everything else."""
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft - FD_RESERVE >= max_clients:
        return max_clients
    fitted = max(1, soft - FD_RESERVE)
    log.warning("scpi server: %d clients at most (open-file limit %d); asked for %d", fitted, soft, max_clients)
    return fitted
