"""Ports on Linux interfaces: AF_PACKET raw sockets under epoll, link state polled as bmv2 does, pcap.

One thread reads every port; a frame the switch sends itself is not read back (PACKET_IGNORE_OUTGOING,
or the PACKET_OUTGOING packet type on older kernels). Link state is bmv2's: its PortMonitor reads
/sys/class/net/IF/operstate every 200 ms and counts a port as up when the state starts with 'u'
("up", or "unknown" as for tun and loopback-like devices); here the same thread polls on the same
period, so a change is seen 0-200 ms after it happens, as on bmv2.
"""

from __future__ import annotations

import errno
import functools
import logging
import os
import select
import socket
import struct
import threading
import time
from collections.abc import Callable
from typing import BinaryIO, Protocol

from p4sim.switch import engine
from p4sim.switch.engine import Recirculation, resume, run
from p4sim.switch.linkwatch import LinkWatch

log = logging.getLogger(__name__)

ETH_P_ALL = 0x0003
SOL_PACKET = 263
PACKET_IGNORE_OUTGOING = 23
PACKET_OUTGOING = 4
BATCH = 64
# The kernel takes a frame's outer VLAN tag off on receive and hands it over as PACKET_AUXDATA
# (struct tpacket_auxdata); libpcap, and so bmv2, puts it back into the frame. So does p4sim.
PACKET_AUXDATA = 8
TP_STATUS_VLAN_VALID = 0x10
TP_STATUS_VLAN_TPID_VALID = 0x40
AUXDATA = struct.Struct("=IIIHHHH")  # status, len, snaplen, mac, net, vlan_tci, vlan_tpid
AUXDATA_SPACE = socket.CMSG_SPACE(AUXDATA.size)


def with_vlan_tag(frame: bytes, ancillary: list[tuple[int, int, bytes]]) -> bytes:
    """The frame with the VLAN tag the kernel moved into its auxdata put back after the MACs."""
    for level, kind, data in ancillary:
        if level != SOL_PACKET or kind != PACKET_AUXDATA or len(data) < AUXDATA.size:
            continue
        status, _, _, _, _, tci, tpid = AUXDATA.unpack_from(data)
        if tci or status & TP_STATUS_VLAN_VALID:  # libpcap's test (a tag of 0 sets only the flag)
            tpid = tpid if status & TP_STATUS_VLAN_TPID_VALID else 0x8100
            return frame[:12] + struct.pack("!HH", tpid, tci) + frame[12:]
    return frame
PORT_POLL_S = 0.2  # bmv2's PortMonitor period: link changes show at these ticks (LinkFollower)


def iface_exists(name: str) -> bool:
    """True if a network interface with this name exists."""
    return os.path.exists(f"/sys/class/net/{name}")


def iface_up(name: str) -> bool:
    """bmv2's rule: up iff /sys/class/net/IF/operstate starts with 'u' ("up", "unknown"); an
    interface that is gone is down."""
    try:
        with open(f"/sys/class/net/{name}/operstate") as f:
            return f.read(1) == "u"
    except OSError:
        return False


class LinkFollower:
    """A device's ports kept in step with their links from start to stop, as bmv2's PortMonitor keeps
    them: a change shows at the device's next tick (every PORT_POLL_S, `apply`), 0-200 ms after it
    happened. The changes come from the kernel's announcements (p4sim.switch.linkwatch), noted as they
    arrive, instead of reading every port's operstate at each tick."""

    def __init__(self, dev: Device) -> None:
        self.dev = dev
        self._watching: list[tuple[str, Callable[[bool], None]]] = []
        self._pending: dict[int, bool] = {}
        self._lock = threading.Lock()

    def start(self) -> None:
        """Watch every port's link, then read each once (a change between the two is not missed)."""
        watch = LinkWatch.shared(iface_up)
        for port, ifname in self.dev.ports.items():
            cb = functools.partial(self._note, port)
            watch.watch(ifname, cb)
            self._watching.append((ifname, cb))
        for port, ifname in self.dev.ports.items():
            self._note(port, iface_up(ifname))

    def _note(self, port: int, up: bool) -> None:
        with self._lock:
            self._pending[port] = up

    def apply(self) -> None:
        """The tick: record every port whose link changed since the last (Device.set_port_status)."""
        with self._lock:
            pending, self._pending = self._pending, {}
        for port, up in pending.items():
            self.dev.set_port_status(port, up)

    def stop(self) -> None:
        """Stop watching."""
        watch = LinkWatch.shared(iface_up)
        for ifname, cb in self._watching:
            watch.unwatch(ifname, cb)
        self._watching.clear()


class PcapWriter:
    """A minimal libpcap file writer (Ethernet link type, microsecond timestamps)."""

    def __init__(self, path: str) -> None:
        self._f: BinaryIO = open(path, "wb")  # noqa: SIM115 - closed in close()
        self._lock = threading.Lock()  # the I/O thread and packet-out (gRPC threads) both write
        self._f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))

    def write(self, frame: bytes) -> None:
        """Append one frame with the current time."""
        t = time.time()
        sec = int(t)
        with self._lock:
            self._f.write(struct.pack("<IIII", sec, int((t - sec) * 1e6), len(frame), len(frame)) + frame)
            self._f.flush()

    def close(self) -> None:
        """Close the file."""
        self._f.close()


class Device(engine.Device, Protocol):
    """What the I/O thread needs of its switch (p4sim.switch.device.Device is one)."""

    ports: dict[int, str]
    pcap_dir: str | None
    cpu_port: int | None
    lock: threading.RLock
    pipeline: engine.Pipeline | None
    _up: dict[int, bool]

    def set_port_status(self, port: int, up: bool) -> None:
        """Record a port's link state (and tell the control plane)."""

    def emit(self, frames: list[tuple[int, bytes]]) -> None:
        """Transmit frames through the general path (CPU port, pcap)."""


class PortIO:
    """The I/O thread of a Device: receive on every port, run the pipeline, transmit."""

    def __init__(self, dev: Device) -> None:
        self.dev = dev
        self.socks: dict[int, socket.socket] = {}
        self._fd_port: dict[int, int] = {}
        self._filter_outgoing: set[int] = set()
        self._pcap_in: dict[int, PcapWriter] = {}
        self._pcap_out: dict[int, PcapWriter] = {}
        for port, ifname in dev.ports.items():
            if not iface_exists(ifname):
                self.close()
                raise ValueError(f"interface {ifname!r} (port {port}) does not exist")
            s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
            try:
                s.bind((ifname, 0))
            except OSError as e:
                s.close()
                self.close()
                raise ValueError(f"interface {ifname!r} (port {port}): cannot open ({e.strerror})") from None
            s.setsockopt(SOL_PACKET, PACKET_AUXDATA, 1)
            try:
                s.setsockopt(SOL_PACKET, PACKET_IGNORE_OUTGOING, 1)
            except OSError:
                self._filter_outgoing.add(port)
            for opt in (socket.SO_RCVBUF, socket.SO_SNDBUF):
                try:
                    s.setsockopt(socket.SOL_SOCKET, opt, 4 << 20)
                except OSError:
                    pass
            s.setblocking(False)
            self.socks[port] = s
            self._fd_port[s.fileno()] = port
            if dev.pcap_dir:
                os.makedirs(dev.pcap_dir, exist_ok=True)
                self._pcap_in[port] = PcapWriter(os.path.join(dev.pcap_dir, f"{ifname}_in.pcap"))
                self._pcap_out[port] = PcapWriter(os.path.join(dev.pcap_dir, f"{ifname}_out.pcap"))
        self._wake_r, self._wake_w = os.pipe()
        self._buf = bytearray(65536)
        self._view = memoryview(self._buf)
        self._stop = False
        self._thread: threading.Thread | None = None
        self._links = LinkFollower(dev)
        for port, ifname in dev.ports.items():
            dev._up[port] = iface_up(ifname)

    def start(self) -> None:
        """Start the I/O thread."""
        self.dev.recirculation = Recirculation()
        self._links.start()
        self._thread = threading.Thread(target=self._loop, name="p4sim-ports", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the I/O thread and close every socket."""
        self._stop = True
        self._links.stop()
        os.write(self._wake_w, b"x")
        if self._thread is not None:
            self._thread.join(timeout=5)
        self.dev.recirculation = None
        self.close()

    def close(self) -> None:
        """Close sockets and pcap files."""
        for s in self.socks.values():
            s.close()
        self.socks.clear()
        for w in list(self._pcap_in.values()) + list(self._pcap_out.values()):
            w.close()
        self._pcap_in.clear()
        self._pcap_out.clear()
        if getattr(self, "_wake_r", None) is not None:
            os.close(self._wake_r)
            os.close(self._wake_w)
            self._wake_r = self._wake_w = None  # type: ignore[assignment]

    def send(self, port: int, frame: bytes) -> None:
        """Transmit a frame on a port (unknown or down ports drop it)."""
        s = self.socks.get(port)
        if s is None:
            self.dev.stats["drop"] += 1
            return
        try:
            s.send(frame)
            self.dev.stats["tx"] += 1
            w = self._pcap_out.get(port)
            if w is not None:
                w.write(frame)
        except OSError as e:
            self.dev.stats["drop"] += 1
            if e.errno not in (errno.ENETDOWN, errno.ENXIO, errno.EAGAIN, errno.ENOBUFS, errno.EMSGSIZE):
                log.warning("port %d: send failed: %s", port, e)

    def _loop(self) -> None:
        ep = select.epoll()
        for fd in self._fd_port:
            ep.register(fd, select.EPOLLIN)
        ep.register(self._wake_r, select.EPOLLIN)
        dev = self.dev
        clock = time.monotonic
        next_tick = clock() + PORT_POLL_S
        try:
            while not self._stop:
                now = clock()
                if now >= next_tick:
                    self._links.apply()
                    next_tick += PORT_POLL_S
                    if next_tick <= now:  # fell behind (a long stall): keep the period, skip the backlog
                        next_tick = now + PORT_POLL_S
                recirc = dev.recirculation
                if recirc:
                    self._recirculate(dev, recirc)
                wait = 0.0 if recirc else max(0.0, next_tick - clock())
                for fd, ev in ep.poll(wait):
                    if fd == self._wake_r:
                        return
                    try:
                        port = self._fd_port[fd]
                        sock = self.socks[port]
                        if ev & (select.EPOLLERR | select.EPOLLHUP):
                            # a link going down queues ENETDOWN on the socket: reading SO_ERROR clears it
                            sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                            if not iface_exists(dev.ports[port]):
                                self._detach(ep, fd, port, "interface removed")
                                continue
                        self._drain(port, sock, dev)
                    except OSError as e:
                        port = self._fd_port.get(fd)
                        if port is None:
                            log.warning("poll error: %s", e)
                        elif not iface_exists(dev.ports[port]):
                            # the interface went away (Mininet teardown): stop polling it, keep the rest
                            self._detach(ep, fd, port, "interface removed")
                        else:
                            log.debug("port %d: %s", port, e)
        finally:
            ep.close()

    def _recirculate(self, dev: Device, recirc: Recirculation) -> None:
        """Pass the recirculated packets waiting now through ingress again (those they recirculate
        wait for the next round, after the ports have been read)."""
        for _ in range(len(recirc)):
            pl, p = recirc.take()
            with dev.lock:
                if dev.pipeline is not pl:
                    continue  # the program was replaced meanwhile
                out = resume(dev, pl, p)
            dev.emit(out)

    def _detach(self, ep: select.epoll, fd: int, port: int, why: str) -> None:
        """Stop reading a port whose interface failed; it counts as down."""
        log.warning("port %d (%s): %s; no longer read", port, self.dev.ports.get(port), why)
        try:
            ep.unregister(fd)
        except OSError:
            pass
        self.dev.set_port_status(port, False)

    def _drain(self, port: int, s: socket.socket, dev: Device) -> None:
        filt = port in self._filter_outgoing
        pcap = self._pcap_in.get(port)
        bufs, view, socks, lock = [self._buf], self._view, self.socks, dev.lock
        cpu = dev.cpu_port
        debug = log.isEnabledFor(logging.DEBUG)  # per-packet lines only with --log-level debug/trace
        rx = tx = drop = 0
        try:
            for _ in range(BATCH):
                try:
                    # into one buffer (recv(65536) would allocate 64 KiB per frame), with the auxdata
                    n, anc, _, addr = s.recvmsg_into(bufs, AUXDATA_SPACE)
                    if filt and addr[2] == PACKET_OUTGOING:
                        continue
                    frame = bytes(view[:n])
                    if anc:
                        frame = with_vlan_tag(frame, anc)
                except BlockingIOError:
                    return
                except OSError as e:
                    if e.errno in (errno.ENETDOWN, errno.EAGAIN):
                        return
                    raise  # ENODEV, ENXIO: the interface is gone; the loop detaches the port
                rx += 1
                if pcap is not None:
                    pcap.write(frame)
                with lock:
                    pl = dev.pipeline
                    if pl is None:
                        continue
                    out = run(dev, pl, port, frame)
                if debug:
                    log.debug("port %d: %d bytes in -> %s", port, len(frame),
                              ", ".join(f"port {p}: {len(f)} bytes" for p, f in out) or "dropped")
                for eport, data in out:
                    sk = socks.get(eport)
                    if sk is None or eport == cpu or eport in self._pcap_out:
                        dev.emit([(eport, data)])  # CPU port, unknown port, or pcap: the general path
                        continue
                    try:
                        sk.send(data)
                        tx += 1
                    except OSError as e:
                        drop += 1
                        if e.errno not in (errno.ENETDOWN, errno.ENXIO, errno.EAGAIN, errno.ENOBUFS,
                                           errno.EMSGSIZE):
                            log.warning("port %d: send failed: %s", eport, e)
        finally:
            st = dev.stats
            st["rx"] += rx
            st["tx"] += tx
            st["drop"] += drop
