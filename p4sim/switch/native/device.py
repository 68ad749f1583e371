"""A device's native half: the runtime device (its lock is the packet loop's), Device.process in
native code, the events the data plane hands to Python, and the packet loop's thread.

The packet loop runs in native code (rt/ports.c) without the GIL; its thread comes back to Python
when the data plane has something for the control plane (a packet-in, a digest, a log line, a port
whose interface is gone, or a frame for a pipeline the Python path runs), and every 200 ms to poll
link state as bmv2's PortMonitor does (p4sim.switch.ports).
"""

from __future__ import annotations

import logging
import os
import struct
import threading
import time
from typing import Any, Protocol

from p4sim.switch import engine
from p4sim.switch.engine import Recirculation, resume, run
from p4sim.switch.native.lib import ffi, rt
from p4sim.switch.native.state import NativePre
from p4sim.switch.ports import PORT_POLL_S, LinkFollower, iface_exists, iface_up

log = logging.getLogger(__name__)

# rt/p4s_api.h P4S_EV_*: what the data plane hands to Python
EVENTS = {1: "packet_in", 2: "digest", 3: "log", 4: "port_gone", 5: "rx"}
STATS = ("rx", "tx", "drop", "to_cpu", "errors")
RING_DROPS = 8  # rt/p4s_api.h P4S_ST_RING_DROPS: frames a full receive ring refused
Event = tuple[str, int, bytes]  # (EVENTS' name, port or learn id or log level, frame or values or text)


class NativeLock:
    """The native device's recursive mutex as a lock for Python threads (`with dev.lock:`)."""

    def __init__(self, ptr: Any) -> None:
        self._ptr = ptr
        self._lib = rt()

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        """Take the lock (the GIL is released while waiting)."""
        self._lib.p4s_lock(self._ptr)
        return True

    def release(self) -> None:
        """Give the lock back."""
        self._lib.p4s_unlock(self._ptr)

    def __enter__(self) -> bool:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def native_available() -> bool:
    """True when the runtime library builds and loads here (else one line says why not)."""
    from p4sim.switch.native.build import BuildError, compiler

    if compiler() is None:
        log.warning("p4sim: no C compiler (cc, gcc) or P4SIM_NATIVE=0: the Python data path runs")
        return False
    try:
        rt()
    except (BuildError, OSError, ValueError) as e:
        log.warning("p4sim: no native data path (%s); the Python data path runs", e)
        return False
    return True


class NativeDevice:
    """The runtime device of a Device: its lock, pipeline, packet replication engine and events."""

    def __init__(self, cpu_port: int | None, nb_queues: int, t0: float) -> None:
        info = logging.getLogger("p4sim.switch.program_log").isEnabledFor(logging.INFO)
        ptr = rt().p4s_dev_new(-1 if cpu_port is None else cpu_port, nb_queues, int(t0 * 1e9), int(info))
        if ptr == ffi.NULL:
            raise MemoryError("native device: out of memory")
        self.ptr = ffi.gc(ptr, rt().p4s_dev_free)
        self.lock = NativeLock(self.ptr)
        self._evbuf = ffi.new("uint8_t[]", 65536 + 64)
        self._out = ffi.new("const uint8_t **")
        self._kind, self._arg = ffi.new("int32_t *"), ffi.new("int32_t *")
        self._stats = ffi.new("uint64_t[9]")

    def pre(self, lock: NativeLock) -> NativePre:
        """The device's packet replication engine."""
        return NativePre(lock, self.ptr)  # type: ignore[arg-type]

    def set_pipeline(self, pipeline: Any) -> None:
        """Run `pipeline` (a p4sim.switch.pipeline.Pipeline, native or not, or None); lock held."""
        nat = pipeline.native.ptr if pipeline is not None and pipeline.native is not None else ffi.NULL
        rt().p4s_dev_set_pipe(self.ptr, nat, int(pipeline is not None and pipeline.native is None))

    def process(self, port: int, frame: bytes) -> list[tuple[int, bytes]]:
        """One frame through the native pipeline, without ports: what it emits; lock held."""
        n = rt().p4s_dev_process(self.ptr, port, frame, len(frame), self._out)
        out: list[tuple[int, bytes]] = []
        off = 0
        buf = self._out[0]
        for _ in range(n):
            port_, length = struct.unpack_from("=II", ffi.buffer(buf + off, 8))
            out.append((port_, bytes(ffi.buffer(buf + off + 8, length))))
            off += 8 + ((length + 7) & ~7)
        return out

    def events(self) -> list[Event]:
        """Every event waiting, oldest first (Event); lock held."""
        out = []
        lib = rt()
        while True:
            n = lib.p4s_dev_event(self.ptr, self._evbuf, len(self._evbuf), self._kind, self._arg)
            if n == -1:
                return out
            if n < -1:  # larger than the buffer: grow it
                self._evbuf = ffi.new("uint8_t[]", -n - 2)
                continue
            out.append((EVENTS.get(self._kind[0], "?"), self._arg[0], bytes(ffi.buffer(self._evbuf, n))))

    def stats(self) -> dict[str, int]:
        """The data plane's counts: rx, tx, drop, to_cpu, errors; ring_drops (a full receive ring)."""
        rt().p4s_dev_stats(self.ptr, self._stats)
        out = {k: int(self._stats[i]) for i, k in enumerate(STATS)}
        out["ring_drops"] = int(self._stats[RING_DROPS])
        return out


class Device(engine.Device, Protocol):
    """What the packet loop needs of its switch (p4sim.switch.device.Device is one)."""

    ports: dict[int, str]
    pcap_dir: str | None
    lock: Any
    pipeline: Any
    native: NativeDevice
    ring_kib: int
    _up: dict[int, bool]

    def set_port_status(self, port: int, up: bool) -> None:
        """Record a port's link state (and tell the control plane)."""

    def emit(self, frames: list[tuple[int, bytes]]) -> None:
        """Transmit frames through the general path (CPU port, pcap)."""

    def native_events(self, events: list[Event]) -> None:
        """Hand the data plane's events to the control plane's hooks."""


class NativePortIO:
    """The packet loop of a Device whose runtime is native: ports, its thread, sending."""

    def __init__(self, dev: Device) -> None:
        self.dev = dev
        nd = dev.native
        pcap = dev.pcap_dir.encode() if dev.pcap_dir else ffi.NULL
        if dev.pcap_dir:
            os.makedirs(dev.pcap_dir, exist_ok=True)
        with dev.lock:
            for port, ifname in dev.ports.items():
                if not iface_exists(ifname):
                    rt().p4s_dev_close_ports(nd.ptr)
                    raise ValueError(f"interface {ifname!r} (port {port}) does not exist")
                rc = rt().p4s_dev_add_port(nd.ptr, port, ifname.encode(), dev.ring_kib * 1024, pcap)
                if rc < 0:
                    rt().p4s_dev_close_ports(nd.ptr)
                    raise ValueError(f"interface {ifname!r} (port {port}): cannot open ({os.strerror(-rc)})")
        for port, ifname in dev.ports.items():
            dev._up[port] = iface_up(ifname)
        self._stop = False
        self._thread: threading.Thread | None = None
        self._seen = dict.fromkeys((*STATS, "ring_drops"), 0)
        self._links = LinkFollower(dev)

    def start(self) -> None:
        """Start the packet loop's thread."""
        self.dev.recirculation = Recirculation()  # for a pipeline the Python path runs
        rt().p4s_dev_io(self.dev.native.ptr, 1)
        self._links.start()
        self._thread = threading.Thread(target=self._loop, name="p4sim-ports", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the thread and close every port."""
        self._stop = True
        self._links.stop()
        rt().p4s_dev_wake(self.dev.native.ptr)
        if self._thread is not None:
            self._thread.join(timeout=5)
        with self.dev.lock:
            rt().p4s_dev_io(self.dev.native.ptr, 0)
            rt().p4s_dev_close_ports(self.dev.native.ptr)
        self.dev.recirculation = None
        self._merge_stats()

    def send(self, port: int, frame: bytes) -> None:
        """Transmit a frame on a port (unknown or down ports drop it, counted)."""
        with self.dev.lock:
            rt().p4s_dev_send(self.dev.native.ptr, port, frame, len(frame))

    def _merge_stats(self) -> None:
        now = self.dev.native.stats()
        for k, v in now.items():
            self.dev.stats[k] = self.dev.stats.get(k, 0) + v - self._seen[k]
        if now["ring_drops"] > self._seen["ring_drops"]:
            log.warning("receive rings full: %d frames dropped (%d in all; --ring-kib)",
                        now["ring_drops"] - self._seen["ring_drops"], now["ring_drops"])
        self._seen = now

    def _loop(self) -> None:
        dev, lib, ptr = self.dev, rt(), self.dev.native.ptr
        clock = time.monotonic
        next_poll = clock() + PORT_POLL_S
        while not self._stop:
            recirc = dev.recirculation
            wait = 0 if recirc else max(0, int((next_poll - clock()) * 1000) + 1)
            try:
                if lib.p4s_dev_run(ptr, wait) or lib.p4s_dev_pending(ptr):
                    with dev.lock:
                        events = dev.native.events()
                    self._handle(events)
                if recirc:
                    self._recirculate(recirc)
            except Exception:  # a control-plane hook or a Python pipeline failed: keep forwarding
                log.exception("packet loop: handling the data plane's events failed")
            now = clock()
            if now >= next_poll:
                self._links.apply()
                self._merge_stats()
                next_poll += PORT_POLL_S
                if next_poll <= now:  # fell behind (a long stall): keep the period, skip the backlog
                    next_poll = now + PORT_POLL_S

    def _handle(self, events: list[Event]) -> None:
        dev = self.dev
        rx = [(port, data) for kind, port, data in events if kind == "rx"]
        for port, frame in rx:  # a pipeline the Python path runs
            with dev.lock:
                pl = dev.pipeline
                if pl is None or pl.native is not None:
                    continue
                out = run(dev, pl, port, frame)
            dev.emit(out)
        for kind, port, _ in events:
            if kind == "port_gone":
                log.warning("port %d (%s): interface removed; no longer read", port, dev.ports.get(port))
                dev.set_port_status(port, False)
        dev.native_events([e for e in events if e[0] not in ("rx", "port_gone")])

    def _recirculate(self, recirc: Recirculation) -> None:
        """Recirculated packets of a pipeline the Python path runs (ports.PortIO._recirculate)."""
        dev = self.dev
        for _ in range(len(recirc)):
            pl, p = recirc.take()
            with dev.lock:
                if dev.pipeline is not pl:
                    continue
                out = resume(dev, pl, p)
            dev.emit(out)
