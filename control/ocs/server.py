"""The emulated OCS's SCPI server: Polatis-style commands over TCP, line by line, many clients.

Each connection has its own SCPI error queue (10 entries, the last replaced by -350 on overflow),
so one client's errors are not read by another. A bad command never closes the connection.
Commands without '?' answer nothing; queries answer one line (several queries on one line joined
by ';'). Extension beyond the Polatis set: `:OXC:SWITch:PORT:STATe? P` answers 1 when light is
through port P, else 0.
"""

from __future__ import annotations

import logging
import socket
import socketserver
import threading
from collections import deque
from collections.abc import Callable

from control.ocs import scpi
from control.ocs.emulator import EmulatedOcs
from control.ocs.scpi import Header, ScpiError

log = logging.getLogger(__name__)

IDN = "HITLESS,OCS-EMULATOR,{size}x{size},1.0"
ERROR_QUEUE_LEN = 10
MAX_LINE = 65536


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
        """Run every command of one line; the joined query answers, or None when there are none."""
        answers: list[str] = []
        for command in scpi.split_commands(line):
            try:
                answer = self.execute(command)
            except ScpiError as exc:
                log.info("scpi %r: %s", command, exc)
                self.push_error(exc.code, exc.detail)
                continue
            if answer is not None:
                answers.append(answer)
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


class _Handler(socketserver.StreamRequestHandler):
    server: ScpiServer

    def handle(self) -> None:
        """Serve one client connection line by line."""
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        session = Session(self.server.ocs)
        peer = self.client_address
        log.info("scpi client %s connected", peer)
        try:
            while True:
                raw = self.rfile.readline(MAX_LINE)
                if not raw:
                    break
                line = raw.decode("ascii", errors="replace").strip()
                if not line:
                    continue
                answer = session.execute_line(line)
                if answer is not None:
                    self.wfile.write(answer.encode("ascii") + b"\n")
                    self.wfile.flush()
        except (ConnectionError, OSError) as exc:
            log.info("scpi client %s: %s", peer, exc)
        log.info("scpi client %s disconnected", peer)


class ScpiServer(socketserver.ThreadingTCPServer):
    """A TCP server giving each client a Session on a shared EmulatedOcs."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], ocs: EmulatedOcs) -> None:
        self.ocs = ocs
        super().__init__(address, _Handler)
        self.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    @property
    def port(self) -> int:
        """The TCP port listened on (useful with port 0)."""
        return self.server_address[1]

    def start(self) -> threading.Thread:
        """Serve in a background thread."""
        t = threading.Thread(target=self.serve_forever, name="scpi-server", daemon=True)
        t.start()
        return t


def parse_listen(text: str) -> tuple[str, int]:
    """Parse "127.0.0.1:PORT" (PORT may be 0 for any free port)."""
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise ValueError(f"listen address {text!r}: expected <ip>:<port>")
    return host, int(port)
