"""Switch processes for tests: a switch binary of a `Target` (p4sim/target.py: bmv2's
`simple_switch_grpc` or `p4sim-switch`, same command shape) started on given interfaces with a bmv2
JSON and a P4Runtime server on a free loopback port, awaited until it listens, stopped by its PID.

    for target in pairings():                     # or Target.from_env(switch=...)
        with switch_process(target, "prog.json", {1: "veth0", 2: "veth2"}, log_dir=tmp) as sw:
            P4RuntimeClient(sw.grpc_addr, device_id=sw.device_id) ...

`Wire` sends a frame into one port and collects what comes out of all of them (on the host ends
of veth pairs from `p4sim.switch.testdata.veth`); `load_error` starts a switch with a JSON only (no
interfaces, no root) to see whether it accepts it.
"""

from __future__ import annotations

import logging
import select
import shutil
import socket
import struct
import tempfile
import time
from pathlib import Path

from emulation.switchproc import start_switch, switch_process  # noqa: F401 - switch_process for the tests
from p4sim.switch.testdata.veth import RawPort
from p4sim.target import REAL_COMPILER, REAL_SWITCH, Target

log = logging.getLogger(__name__)

DEVICE_ID = 1
READY_TIMEOUT = 20.0
SOL_PACKET = 263
PACKET_AUXDATA = 8
TP_STATUS_VLAN_VALID = 1 << 4
TP_STATUS_VLAN_TPID_VALID = 1 << 6
_AUXDATA = struct.Struct("=IIIHHHH")  # struct tpacket_auxdata (linux/if_packet.h)


def missing_real_tools() -> list[str]:
    """The reference tools (p4c-bm2-ss, simple_switch_grpc) that are not on PATH."""
    return [t for t in (REAL_COMPILER, REAL_SWITCH) if shutil.which(t) is None]


def bmv2() -> Target | None:
    """The target simple_switch_grpc (with p4c-bm2-ss if installed) from PATH; None without the switch."""
    switch = shutil.which(REAL_SWITCH)
    return Target(shutil.which(REAL_COMPILER) or REAL_COMPILER, switch) if switch else None


def load_error(target: Target, json_path: str | Path, timeout: float = 10.0) -> str | None:
    """None if target's switch starts with this JSON (no interfaces), else what it said when it exited."""
    with tempfile.TemporaryDirectory() as tmp:
        try:
            start_switch(target, json_path, {}, log_dir=tmp, device_id=DEVICE_ID, timeout=timeout).stop()
        except RuntimeError as exc:
            return str(exc)  # the switch's first lines are in the message
    return None


class Wire:
    """Raw sockets on the host ends of a switch's ports: a frame in, every frame out. The kernel moves
    a received frame's outer VLAN tag into metadata; it is put back (PACKET_AUXDATA), as libpcap does."""

    def __init__(self, host_ifaces: dict[int, str]) -> None:
        self.ports: dict[int, RawPort] = {}
        try:
            for port, iface in host_ifaces.items():
                rp = RawPort(iface)
                rp.sock.setsockopt(SOL_PACKET, PACKET_AUXDATA, 1)
                self.ports[port] = rp
        except OSError:
            self.close()
            raise

    def close(self) -> None:
        """Close every socket."""
        for rp in self.ports.values():
            rp.close()
        self.ports.clear()

    @staticmethod
    def _frame(sock: socket.socket) -> bytes | None:
        """The next received frame with its VLAN tag restored; None if none is waiting (or it was ours)."""
        try:
            data, anc, _flags, addr = sock.recvmsg(65536, socket.CMSG_SPACE(_AUXDATA.size))
        except BlockingIOError:
            return None
        if addr[2] == socket.PACKET_OUTGOING:
            return b""
        for level, kind, raw in anc:
            if level == SOL_PACKET and kind == PACKET_AUXDATA and len(raw) >= _AUXDATA.size:
                status, _len, _snap, _mac, _net, tci, tpid = _AUXDATA.unpack_from(raw)
                if status & TP_STATUS_VLAN_VALID:
                    tpid = tpid if status & TP_STATUS_VLAN_TPID_VALID else 0x8100
                    data = data[:12] + struct.pack("!HH", tpid, tci) + data[12:]
        return data

    def _read(self, timeout: float) -> list[tuple[int, bytes]]:
        by_fd = {rp.sock.fileno(): (port, rp) for port, rp in self.ports.items()}
        ready, _, _ = select.select(list(by_fd), [], [], max(0.0, timeout))
        out = []
        for fd in ready:
            port, rp = by_fd[fd]
            while (frame := self._frame(rp.sock)) is not None:
                if frame:
                    out.append((port, frame))
        return out

    def pending(self, wait: float = 0.0) -> list[tuple[int, bytes]]:
        """Frames that came out and were not collected yet (waiting `wait` s for more), sorted."""
        got: list[tuple[int, bytes]] = []
        deadline = time.monotonic() + wait
        while True:
            got += self._read(max(0.0, deadline - time.monotonic()))
            if time.monotonic() >= deadline:
                return sorted(got)

    def exchange(self, port: int, frame: bytes, expect: int, timeout: float = 2.0, quiet: float = 0.1,
                 grace: float = 0.03) -> list[tuple[int, bytes]]:
        """Send frame into `port`; return (port, frame) of what comes out, sorted: waits for `expect`
        frames (at most `timeout` s) and `grace` s more for extras; with expect 0, `quiet` s. A frame
        later than that shows up in the next `pending()` (call it before the next exchange)."""
        self.ports[port].send(frame)
        got: list[tuple[int, bytes]] = []
        deadline = time.monotonic() + (timeout if expect else quiet)
        while (left := deadline - time.monotonic()) > 0:
            got += self._read(left)
            if expect and len(got) >= expect:
                deadline = min(deadline, time.monotonic() + grace)
        return sorted(got)
