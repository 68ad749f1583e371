"""The real Polatis driver: SCPI over TCP (port 5025), a timeout on every answer, SYST:ERR? after each command.

Works with a Polatis switch and with the emulator (`python -m emulation ocs-emulator`), which speaks
the same command set.
"""

from __future__ import annotations

import logging
import re
import socket
import threading
import time
from collections.abc import Iterable

from control.ocs import scpi
from control.ocs.driver import OcsDriver, OcsError, OcsTimeout, Pair, PortStatus, check_pairs

log = logging.getLogger(__name__)

DEFAULT_PORT = 5025
_ERROR_RE = re.compile(r'^[+-]?\d+,".*"$')


class PolatisDriver(OcsDriver):
    """One SCPI session with a Polatis OCS (or the emulator)."""

    def __init__(self, host: str, port: int = DEFAULT_PORT, timeout: float = 5.0,
                 opc_timeout: float = 10.0) -> None:
        self.host, self.port = host, port
        self.timeout = timeout
        self.opc_timeout = opc_timeout
        self._sock: socket.socket | None = None
        self._buf = b""
        self._lock = threading.Lock()
        self._size: int | None = None

    # -- session ----------------------------------------------------------------------------------

    def open(self) -> PolatisDriver:
        """Connect the TCP session and clear the device's error queue."""
        with self._lock:
            self._open_locked()
        self.command("*CLS")
        return self

    def _open_locked(self) -> None:
        if self._sock is not None:
            return
        try:
            self._sock = socket.create_connection((self.host, self.port), timeout=self.timeout)
        except TimeoutError:
            raise OcsTimeout(f"OCS {self.host}:{self.port}: no connection within {self.timeout} s") from None
        except OSError as exc:
            raise OcsError(f"OCS {self.host}:{self.port}: {exc.strerror or exc}") from None
        self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._buf = b""
        self._send("*CLS")  # a new session starts with an empty error queue (no answer to read)
        log.info("connected to OCS %s:%d", self.host, self.port)

    def close(self) -> None:
        """Close the TCP session."""
        with self._lock:
            if self._sock is not None:
                self._sock.close()
            self._sock = None

    def __enter__(self) -> PolatisDriver:
        return self.open()

    # -- wire -------------------------------------------------------------------------------------

    def _send(self, line: str) -> None:
        assert self._sock is not None
        try:
            self._sock.sendall(line.encode("ascii") + b"\n")
        except OSError as exc:
            self._drop()
            raise OcsError(f"OCS {self.host}:{self.port}: send failed: {exc}") from None

    def _readline(self, timeout: float) -> str:
        assert self._sock is not None
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                self._drop()
                raise OcsTimeout(f"OCS {self.host}:{self.port}: no answer within {timeout} s")
            self._sock.settimeout(left)
            try:
                chunk = self._sock.recv(4096)
            except TimeoutError:
                continue
            except OSError as exc:
                self._drop()
                raise OcsError(f"OCS {self.host}:{self.port}: receive failed: {exc}") from None
            if not chunk:
                self._drop()
                raise OcsError(f"OCS {self.host}:{self.port}: connection closed")
            self._buf += chunk
        line, _, self._buf = self._buf.partition(b"\n")
        return line.decode("ascii", errors="replace").strip()

    def _drop(self) -> None:
        # after a timeout the stream may still carry a late answer: start a fresh session next time
        if self._sock is not None:
            self._sock.close()
        self._sock = None

    def _check_error(self, answer: str) -> None:
        code, message = scpi.parse_error(answer)
        if code != 0:
            raise OcsError(f"OCS {self.host}:{self.port}: {code},{message}", code)

    def command(self, line: str) -> None:
        """Send a command (no answer expected) followed by SYST:ERR?; raise OcsError on a device error."""
        with self._lock:
            self._open_locked()
            self._send(line + "\n:SYST:ERR?")
            self._check_error(self._readline(self.timeout))

    def ask(self, line: str, timeout: float | None = None) -> str:
        """Send a SCPI query and SYST:ERR? (pipelined); return the answer, raise OcsError on a device error."""
        header = line.split(None, 1)[0] if line.strip() else ""
        if not header.endswith("?"):
            raise ValueError(f"query {line!r}: expected a SCPI query (header ending in '?')")
        with self._lock:
            self._open_locked()
            self._send(line + "\n:SYST:ERR?")
            answer = self._readline(self.timeout if timeout is None else timeout)
            if _ERROR_RE.match(answer):
                # a failed query answers nothing, so this line is already SYST:ERR?'s
                self._check_error(answer)
                raise OcsError(f"OCS {self.host}:{self.port}: {line!r} gave no answer", scpi.COMMAND_ERROR)
            self._check_error(self._readline(self.timeout))
            return answer

    # -- OcsDriver --------------------------------------------------------------------------------

    @property
    def size(self) -> int:
        """N, from :OXC:SWITch:SIZE? (cached)."""
        if self._size is None:
            answer = self.ask(":OXC:SWIT:SIZE?")
            try:
                self._size = int(answer.split(",")[0])
            except ValueError:
                raise OcsError(f"OCS size answer {answer!r}: expected <inputs>,<outputs>") from None
        return self._size

    def identify(self) -> str:
        """*IDN?."""
        return self.ask("*IDN?")

    @staticmethod
    def _lists(pairs: list[Pair]) -> str:
        return scpi.format_channel_lists([i for i, _ in pairs], [o for _, o in pairs])

    def connect(self, pairs: Iterable[Pair]) -> None:
        """:OXC:SWITch:CONNect:ADD."""
        pairs = check_pairs(pairs, self.size)
        if pairs:
            self.command(":OXC:SWIT:CONN:ADD " + self._lists(pairs))

    def disconnect(self, pairs: Iterable[Pair]) -> None:
        """:OXC:SWITch:CONNect:SUBtract."""
        pairs = check_pairs(pairs, self.size)
        if pairs:
            self.command(":OXC:SWIT:CONN:SUB " + self._lists(pairs))

    def set_map(self, pairs: Iterable[Pair]) -> None:
        """:OXC:SWITch:CONNect:ONLY (or DISConnect:ALL for an empty map)."""
        pairs = check_pairs(pairs, self.size)
        if pairs:
            self.command(":OXC:SWIT:CONN:ONLY " + self._lists(pairs))
        else:
            self.command(":OXC:SWIT:DISC:ALL")

    def query(self) -> dict[int, int]:
        """:OXC:SWITch:CONNect:STATe? as input -> output."""
        answer = self.ask(":OXC:SWIT:CONN:STAT?")
        try:
            lists = scpi.parse_channel_lists(answer, 2 * self.size)
        except scpi.ScpiError:
            raise OcsError(f"OCS state answer {answer!r}: expected (@ins),(@outs)") from None
        if len(lists) != 2 or len(lists[0]) != len(lists[1]):
            raise OcsError(f"OCS state answer {answer!r}: expected two lists of equal length")
        return dict(sorted(zip(lists[0], lists[1], strict=True)))

    def port_status(self, port: int) -> PortStatus:
        """:OXC:SWITch:CONNect:PORT? (peer); light from the emulator's PORT:STATe? when it has it."""
        peer = int(self.ask(f":OXC:SWIT:CONN:PORT? {port}"))
        light: bool | None = None
        try:
            light = self.ask(f":OXC:SWIT:PORT:STAT? {port}") == "1"
        except OcsError as exc:
            if exc.code != scpi.UNDEFINED_HEADER:
                raise
        return PortStatus(port, peer, light)

    def wait_complete(self, timeout: float | None = None) -> None:
        """*OPC?: returns once the mirrors have moved."""
        answer = self.ask("*OPC?", timeout=self.opc_timeout if timeout is None else timeout)
        if answer != "1":
            raise OcsError(f"OCS *OPC? answer {answer!r}: expected 1")

    def reset(self) -> None:
        """*RST."""
        self.command("*RST")
