"""Link state of the switches' interfaces from the kernel's notifications, one listener a process.

bmv2's PortMonitor reads every port's operstate five times a second. p4sim did the same per device,
and a process hosting many devices spent most of an idle core on it (a k=8 fat-tree, 80 devices in
16 processes: 6.4 CPU seconds in 20 idle seconds; read every 2 s instead, 0.9). The kernel announces
every change of a link on a netlink socket (RTMGRP_LINK): one listener thread per process reads
them and hands each watched interface's new state to its callback (p4sim.switch.ports.LinkFollower,
which a device applies at its 200 ms ticks, so a change still shows 0-200 ms late as on bmv2). The
rule stays bmv2's: a port is
up iff its operstate is "up" or "unknown" (IF_OPER_UP, IF_OPER_UNKNOWN); an interface removed is
down. When the socket's buffer overflowed (ENOBUFS: a burst of changes, such as a fat-tree's links
being made) notifications were lost, so every watched interface is read once again from sysfs.
"""

from __future__ import annotations

import errno
import logging
import socket
import struct
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)

RTMGRP_LINK = 1
RTM_NEWLINK, RTM_DELLINK = 16, 17
IFLA_IFNAME, IFLA_OPERSTATE = 3, 16
IF_OPER_UNKNOWN, IF_OPER_DOWN, IF_OPER_UP = 0, 2, 6
NLMSG_HDR = struct.Struct("=IHHII")  # length, type, flags, sequence, port id
IFINFO = struct.Struct("=BxHiII")  # family, type, index, flags, change
RTATTR = struct.Struct("=HH")  # length, type
RCVBUF = 4 << 20

Callback = Callable[[bool], None]


def _align(n: int) -> int:
    return (n + 3) & ~3


def link_changes(data: bytes) -> list[tuple[str, bool]]:
    """(interface, up) of every RTM_NEWLINK and RTM_DELLINK in a netlink datagram; a new link without
    an operstate is left out."""
    out = []
    off = 0
    while off + NLMSG_HDR.size <= len(data):
        length, mtype, _flags, _seq, _pid = NLMSG_HDR.unpack_from(data, off)
        if length < NLMSG_HDR.size or off + length > len(data):
            break
        if mtype in (RTM_NEWLINK, RTM_DELLINK) and length >= NLMSG_HDR.size + IFINFO.size:
            name, oper = None, None
            a = off + NLMSG_HDR.size + IFINFO.size
            while a + RTATTR.size <= off + length:
                alen, atype = RTATTR.unpack_from(data, a)
                if alen < RTATTR.size:
                    break
                value = data[a + RTATTR.size:a + alen]
                if atype == IFLA_IFNAME:
                    name = value.split(b"\0", 1)[0].decode(errors="replace")
                elif atype == IFLA_OPERSTATE and value:
                    oper = value[0]
                a += _align(alen)
            if name is not None:
                if mtype == RTM_DELLINK:
                    out.append((name, False))
                elif oper is not None:
                    out.append((name, oper in (IF_OPER_UP, IF_OPER_UNKNOWN)))
        off += _align(length)
    return out


class LinkWatch:
    """The process's listener: `watch(name, callback)` calls callback(up) on each change of `name`'s
    state (from the listener's thread), `unwatch(name)` stops. `read_state(name)` is the sysfs read a
    resync uses (p4sim.switch.ports.iface_up)."""

    _shared: LinkWatch | None = None
    _shared_lock = threading.Lock()

    def __init__(self, read_state: Callable[[str], bool]) -> None:
        self.read_state = read_state
        self._callbacks: dict[str, list[Callback]] = {}
        self._lock = threading.Lock()
        self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RCVBUF)
        self.sock.bind((0, RTMGRP_LINK))
        self._thread = threading.Thread(target=self._loop, name="p4sim-linkwatch", daemon=True)
        self._thread.start()

    @classmethod
    def shared(cls, read_state: Callable[[str], bool]) -> LinkWatch:
        """This process's listener, started on first use."""
        with cls._shared_lock:
            if cls._shared is None:
                cls._shared = cls(read_state)
            return cls._shared

    def watch(self, name: str, callback: Callback) -> None:
        """Call `callback(up)` whenever interface `name` changes (register before reading its state)."""
        with self._lock:
            self._callbacks.setdefault(name, []).append(callback)

    def unwatch(self, name: str, callback: Callback) -> None:
        """Stop calling `callback` for `name`."""
        with self._lock:
            cbs = self._callbacks.get(name, [])
            if callback in cbs:
                cbs.remove(callback)
            if not cbs:
                self._callbacks.pop(name, None)

    def _deliver(self, changes: list[tuple[str, bool]]) -> None:
        for name, up in changes:
            with self._lock:
                cbs = list(self._callbacks.get(name, ()))
            for cb in cbs:
                try:
                    cb(up)
                except Exception:  # a device's hook failed: the others still hear of their links
                    log.exception("link %s: a watcher failed", name)

    def _resync(self) -> None:
        with self._lock:
            names = list(self._callbacks)
        self._deliver([(n, self.read_state(n)) for n in names])

    def _loop(self) -> None:
        while True:
            try:
                data = self.sock.recv(1 << 16)
            except OSError as exc:
                if exc.errno == errno.ENOBUFS:  # changes were lost: read every watched link again
                    self._resync()
                    continue
                log.warning("link notifications stopped: %s", exc)
                return
            self._deliver(link_changes(data))
