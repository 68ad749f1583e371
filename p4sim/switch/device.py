"""The switch device: ports, the running pipeline, its runtime state, and the hooks a P4Runtime server uses.

API for the P4Runtime server (p4sim/switch/p4runtime/), all names are bmv2 JSON names (p4c uses
the P4Info fully qualified names, e.g. `FabricIngress.route`):

    dev = Device(ports={1: "veth1"}, cpu_port=255, device_id=1)
    pl = dev.load_pipeline(json_bytes)      # parse + validate + compile; ValueError on bad JSON
    dev.commit_pipeline(pl)                 # atomic swap; all runtime state starts fresh, PRE cleared
                                            #   (keep_pre=True keeps it); the old pipeline is freed
    dev.pipeline                            # the running Pipeline or None (--no-p4)
    pl.json_bytes, pl.program               # device config as given; typed view (p4sim.switch.program)

    t = pl.tables["FabricIngress.routing.route"]    # p4sim.switch.tables.Table (also pl.table("route"))
    t.info                                  # TableInfo: key (KeyField name/match_type/bitwidth),
                                            #   action_ids, type simple|indirect|indirect_ws, action_profile,
                                            #   with_counters, direct_meters, needs_priority, is_const
    e = t.insert(key, action, priority)     # key: tuple per key field: Exact(v) | Lpm(v, plen) |
                                            #   Ternary(v, mask) | Range(lo, hi) | None (wildcard)
                                            # action: ActionCall(name, args) | MemberRef(id) | GroupRef(id)
                                            #   | ActionSet(((ActionCall, weight, watch_port|None), ...))
    t.modify(key, action, priority); t.delete(key, priority); t.get(key, priority) -> Entry
    t.entries() -> list[Entry]              # Entry: key, priority, action, handle, is_const,
                                            #   packets, bytes (direct counter), meter
    t.get_default() / t.set_default(ActionCall) / t.reset_default(); t.default_const
    t.reset_counters()
    pl.profiles[name]                       # ActionProfile: insert/modify/delete/get_member(id, ActionCall),
                                            #   insert/modify/delete/get_group(id, [(member_id, weight, watch)]),
                                            #   .members, .groups, .has_selector
    pl.counters[name]                       # CounterArray: read(i) -> (packets, bytes), write(i, p, b), reset()
    pl.direct_counters[name] -> table name  # direct counter values live on the table's entries
    pl.registers[name]                      # RegisterArray: read(i), write(i, v), reset()
    pl.meters[name]                         # MeterArray: get_config(i), set_config(i, MeterConfig|None)
    pl.direct_meters[name]                  # DirectMeter: config(entry.meter), set_config(entry, cfg)
    dev.pre                                 # Pre: insert/modify/delete_group(gid, [(port, rid)]),
                                            #   insert/modify/delete_session(sid, CloneSession), .groups, .sessions

Errors from writes are ValueError subclasses in p4sim.switch.values: AlreadyExists, NotFound,
InvalidArgument, ReadOnly, ResourceExhausted, InUse (map them to P4Runtime codes).
All state methods are thread-safe (they take dev.lock, an RLock, which the data plane holds per frame);
hold `dev.lock` yourself to make a batch atomic with respect to packets.

Packet I/O hooks:
    dev.inject(port, frame)                 # a frame arriving on `port` (packet-out: port = cpu_port,
                                            #   frame = packet_out header + packet); thread-safe
    dev.on_cpu_frame = fn(frame: bytes)     # frames the program sends to cpu_port (packet_in header first)
    dev.on_digest = fn(Digest)              # Digest(learn_id, name, values: tuple[int, ...])
    dev.on_port_status = fn(port, up)       # link changes of front-panel ports
    dev.port_up(port) -> bool; dev.cpu_port; dev.device_id; dev.ports (port -> interface)
    dev.start() / dev.stop()                # the AF_PACKET I/O thread (p4sim.switch.ports)
    dev.process(port, frame) -> [(port, frame)]   # one frame through the pipeline, no I/O (tests)
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from p4sim.switch.digest import Digest
from p4sim.switch.engine import Recirculation, run
from p4sim.switch.heap import settle_heap
from p4sim.switch.pipeline import Pipeline
from p4sim.switch.pre import Pre

if TYPE_CHECKING:
    from p4sim.switch.native.device import NativeDevice

log = logging.getLogger(__name__)
program_log = logging.getLogger("p4sim.switch.program_log")  # log_msg of the program, as runtime._log

DROP_PORT = 511
# Each port's receive ring of the native data plane, KiB: libpcap's 2 MiB for bmv2. About 1,200 frames
# of the fabric's MTU (a TCP burst at 1 Gbit/s through a switch that lost the CPU for 14 ms); smaller
# rings dropped bursts of e1 at 1 Gbit/s on a loaded machine (512 KiB: 248 frames in one run)
RING_KIB = 2048


def _call_hook(name: str, hook: Callable[..., None] | None, *args: object) -> None:
    """Call a device hook if one is set; its failure is logged, never stops the data plane."""
    if hook is not None:
        try:
            hook(*args)
        except Exception:
            log.exception("%s hook failed", name)


class Device:
    """A switch: ports, one running pipeline, the packet replication engine and the control hooks."""

    def __init__(self, ports: dict[int, str] | None = None, cpu_port: int | None = None,
                 device_id: int = 0, pcap_dir: str | None = None, nb_queues: int = 1,
                 freeze_heap: bool = False, native: bool = False, ring_kib: int = RING_KIB) -> None:
        """freeze_heap: settle_heap() after every commit. It sets the garbage collector of the whole
        process, so the switch process asks for it (cli.py); a Device inside another program does not.
        native: run programs as native code and the ports in a native loop (p4sim.switch.native) where
        a C compiler is available, else (one line says so) the Python data path; ring_kib: each port's
        receive ring then."""
        self.ports: dict[int, str] = dict(ports or {})
        for port in self.ports:
            if not 0 <= port < DROP_PORT:
                raise ValueError(f"port {port}: expected 0..{DROP_PORT - 1}")
        if cpu_port is not None and not 0 < cpu_port < DROP_PORT:
            raise ValueError(f"cpu port {cpu_port}: expected 1..{DROP_PORT - 1}")
        if cpu_port is not None and cpu_port in self.ports:
            raise ValueError(f"cpu port {cpu_port}: also given as a front-panel port")
        if not 1 <= nb_queues <= 8:
            raise ValueError(f"priority queues {nb_queues}: expected 1..8 (standard_metadata.priority has 3 bits)")
        self.cpu_port = cpu_port
        self.nb_queues = nb_queues
        self.device_id = device_id
        self.pcap_dir = pcap_dir
        self.freeze_heap = freeze_heap
        self.t0 = time.monotonic()
        self.ring_kib = ring_kib
        self.native: NativeDevice | None = None
        if native:
            from p4sim.switch.native.device import NativeDevice, native_available

            if native_available():
                self.native = NativeDevice(cpu_port, nb_queues, self.t0)
        self.lock = self.native.lock if self.native is not None else threading.RLock()
        self.pipeline: Pipeline | None = None
        self.pre = self.native.pre(self.lock) if self.native is not None else Pre(self.lock)
        self.on_cpu_frame: Callable[[bytes], None] | None = None
        self.on_digest: Callable[[Digest], None] | None = None
        self.on_port_status: Callable[[int, bool], None] | None = None
        self._up: dict[int, bool] = {p: True for p in self.ports}
        self.stats = {"rx": 0, "tx": 0, "drop": 0, "to_cpu": 0, "errors": 0}
        self._io = None  # p4sim.switch.ports.PortIO when started
        # While ports run: recirculated packets wait here for ingress, as in bmv2 (engine.Recirculation);
        # None: a recirculated packet passes ingress again at once (at most 16 rounds).
        self.recirculation: Recirculation | None = None

    # --- pipeline ------------------------------------------------------------------------------

    def load_pipeline(self, json_bytes: bytes | str) -> Pipeline:
        """Parse, validate and compile a bmv2 JSON program (not yet running); ValueError if bad."""
        data = json_bytes.encode() if isinstance(json_bytes, str) else bytes(json_bytes)
        return Pipeline(data, self.port_up, self.lock, self.nb_queues, native=self.native is not None)

    def commit_pipeline(self, pipeline: Pipeline | None, keep_pre: bool = False) -> None:
        """Make `pipeline` the running program (fresh state); None removes it (frames are dropped).

        The PRE (multicast groups, clone sessions) is cleared unless keep_pre. With freeze_heap the
        replaced pipeline is freed here (settle_heap), so the caller must hold no reference to it.
        """
        with self.lock:
            self.pipeline = pipeline
            if self.native is not None:
                self.native.set_pipeline(pipeline)
            if not keep_pre:
                self.pre.reset()
        if self.freeze_heap:
            settle_heap()
        log.info("pipeline committed%s", " (none)" if pipeline is None else
                 " (native code)" if pipeline.native is not None else "")

    # --- ports ---------------------------------------------------------------------------------

    def port_up(self, port: int) -> bool:
        """True if the port's interface is up (the CPU port is always up; unknown ports are down)."""
        if port == self.cpu_port:
            return True
        return self._up.get(port, False)

    def set_port_status(self, port: int, up: bool) -> None:
        """Record a link change (called by the port monitor); refreshes watch ports, notifies."""
        with self.lock:
            if self._up.get(port) == up:
                return
            self._up[port] = up
            if self.pipeline is not None:
                self.pipeline.refresh_ports()
        log.info("port %d (%s) is %s", port, self.ports.get(port, "?"), "up" if up else "down")
        _call_hook("on_port_status", self.on_port_status, port, up)

    def now_us(self) -> int:
        """Microseconds since the device started (bmv2 timestamps)."""
        return int((time.monotonic() - self.t0) * 1e6)

    # --- packets -------------------------------------------------------------------------------

    def process(self, port: int, frame: bytes) -> list[tuple[int, bytes]]:
        """Run one frame arriving on `port` through the pipeline; return the (port, frame)s it emits."""
        with self.lock:
            pl = self.pipeline
            if pl is None:
                return []
            if pl.native is None:
                return run(self, pl, port, frame)
            out = self.native.process(port, frame)  # type: ignore[union-attr]
            events = self.native.events()  # type: ignore[union-attr]
        self.native_events(events)
        return out

    def native_events(self, events: list[tuple[str, int, bytes]]) -> None:
        """Hand what the native data plane produced to the hooks: packet-ins, digests, log lines
        (p4sim.switch.native.device.Event)."""
        pl = self.pipeline
        for kind, arg, data in events:
            if kind == "packet_in":  # counted there
                _call_hook("on_cpu_frame", self.on_cpu_frame, data)
            elif kind == "digest" and pl is not None:
                ll = pl.program.learn_lists.get(arg)
                if ll is not None:
                    values = tuple(int.from_bytes(data[i:i + 8], "little") for i in range(0, len(data), 8))
                    self.digest(Digest(ll.id, ll.name, values))
            elif kind == "log":
                level = arg if arg in (logging.INFO, logging.WARNING, logging.ERROR) else logging.WARNING
                (program_log if level == logging.INFO else log).log(level, "%s", data.decode(errors="replace"))

    def inject(self, port: int, frame: bytes) -> None:
        """A frame arriving on `port`: process it and transmit what comes out (thread-safe)."""
        self.stats["rx"] += 1
        out = self.process(port, frame)
        self.emit(out)

    def emit(self, out: list[tuple[int, bytes]]) -> None:
        """Send processed frames: the CPU port goes to on_cpu_frame, others to their interface."""
        for port, frame in out:
            if port == self.cpu_port:
                self.stats["to_cpu"] += 1
                _call_hook("on_cpu_frame", self.on_cpu_frame, frame)
            elif self._io is not None:
                self._io.send(port, frame)
            else:
                self.stats["drop"] += 1

    def digest(self, d: Digest) -> None:
        """Deliver a digest to the hook (called by the engine)."""
        _call_hook("on_digest", self.on_digest, d)

    def start(self) -> None:
        """Open the ports (AF_PACKET) and start the I/O thread; ValueError for a missing interface."""
        if self.native is not None:
            from p4sim.switch.native.device import NativePortIO

            self._io = NativePortIO(self)
        else:
            from p4sim.switch.ports import PortIO

            self._io = PortIO(self)
        self._io.start()

    def stop(self) -> None:
        """Stop the I/O thread and close the ports."""
        if self._io is not None:
            self._io.stop()
            self._io = None
