"""The network controller: every switch of a topology, its pipeline, its entries, and recovery.

It connects to every switch (in parallel), pushes pipelines where missing, installs tablegen's
entries through reconcile (so a second install writes nothing), and a watcher reconnects and
reconciles a switch whose connection dropped or which restarted. It also sends and receives the
data-plane probes (packet-out on one switch port, packet-in on the far end) of the MBB procedure.
"""

from __future__ import annotations

import logging
import os
import queue
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from control.clock import ClockOffset, measure, probe_nonce
from control.events import EventLog
from control.switch import Pipeline, StaleView, SwitchSession
from fabric.contract import ETHERTYPE_PROBE
from fabric.schedule_clock import timestamp_tick_ns
from fabric.state import with_failover
from p4rt.client import EntityLike
from p4rt.errors import P4RuntimeError
from p4rt.reconcile import Plan
from p4rt.resources import Packet
from p4rt.state import SwitchState
from p4rt.tls import TlsOptions
from topo.model import CPU_PORT, Topology

log = logging.getLogger(__name__)

PROBE_ETHERTYPE = ETHERTYPE_PROBE
PROBE_MAGIC = b"HITLESS-PROBE"


@dataclass(slots=True)
class ProbeResult:
    """One proven direction of a circuit."""

    src: tuple[str, int]
    dst: tuple[str, int]
    sent: int
    rtt_ms: float  # packet-out to packet-in, controller side


class Network:
    """Sessions to every fabric switch of a topology."""

    def __init__(self, topo: Topology, pipeline: Pipeline, host: str = "127.0.0.1",
                 election_id: tuple[int, int] = (0, 1), events: EventLog | None = None,
                 timeout: float = 10.0, batch_size: int = 1000, names: Iterable[str] | None = None,
                 tls: TlsOptions | None = None, addresses: Mapping[str, str] | None = None) -> None:
        """`host`: where every switch's P4Runtime server listens, unless `addresses` names the switch's
        own (a cluster's switches listen on their servers' addresses, emulation/cluster.py)."""
        self.topo = topo
        where = dict(addresses or {})
        self.events = events or EventLog()
        only = set(names) if names is not None else None
        self.sessions: dict[str, SwitchSession] = {}
        for sw in topo.switches:
            if only is not None and sw.name not in only:
                continue
            sess = SwitchSession(sw.name, f"{where.get(sw.name, host)}:{sw.grpc_port}", sw.device_id, pipeline, election_id,
                                 timeout, batch_size, tls)
            sess.client.on_packet_in(lambda pkt, n=sw.name: self._on_packet(n, pkt))
            sess.on_primary_change = lambda s, what, other: self.events.log(what, switch=s.name, election_id=other)
            self.sessions[sw.name] = sess
        self._pool = ThreadPoolExecutor(max_workers=min(16, (os.cpu_count() or 2) * 4))
        self._probe_lock = threading.Lock()
        self._probes: dict[bytes, tuple[str, int, threading.Event]] = {}
        self._seq = 0
        self._watch_stop = threading.Event()
        self._watcher: threading.Thread | None = None
        self.packet_ins: list[tuple[str, Packet]] = []
        self._clock_in: dict[str, queue.Queue[tuple[bytes, int]]] = {n: queue.Queue() for n in self.sessions}

    # -- parallel helpers ---------------------------------------------------------------------------

    def each(self, fn: Callable[[SwitchSession], Any], names: Iterable[str] | None = None) -> dict[str, Any]:
        """Run fn on the sessions in parallel; raise the first error after all finished."""
        chosen = [self.sessions[n] for n in (names if names is not None else self.sessions)]
        futures = {s.name: self._pool.submit(fn, s) for s in chosen}
        results, first = {}, None
        for name, fut in futures.items():
            try:
                results[name] = fut.result()
            except Exception as exc:  # collect, then raise the first: the others must finish first
                log.error("%s: %s", name, exc)
                first = first or exc
        if first is not None:
            raise first
        return results

    def connect(self) -> dict[str, bool]:
        """Connect to every switch; returns which ones got their pipeline pushed."""
        pushed = self.each(lambda s: s.connect())
        self.events.log("connected", switches=len(pushed), pipelines_pushed=sum(pushed.values()))
        return pushed

    def sync(self, states: dict[str, SwitchState], delete: bool = True, step: str = "sync",
             trust_cache: bool = False, events: EventLog | None = None) -> dict[str, Plan]:
        """Reconcile the named switches to these states, in parallel; the writes go to `events` (default: ours)."""
        t0 = time.monotonic()
        plans = self.each(lambda s: s.sync(states[s.name], delete=delete, trust_cache=trust_cache), list(states))
        (events or self.events).log(step, switches=len(plans), inserts=sum(p.inserts for p in plans.values()),
                        modifies=sum(p.modifies for p in plans.values()),
                        deletes=sum(p.deletes for p in plans.values()), ms=(time.monotonic() - t0) * 1000)
        return plans

    def install(self, states: dict[str, SwitchState]) -> dict[str, Plan]:
        """Connect (pushing pipelines where missing) and reconcile every switch to its state."""
        missing = sorted(set(self.sessions) - set(states))
        if missing:
            raise ValueError(f"entries for switches {missing}: missing; expected one state per switch")
        self.connect()
        return self.sync({n: states[n] for n in self.sessions}, step="install")

    def set_failover(self, on: bool, names: Iterable[str] | None = None) -> dict[str, Plan]:
        """Turn the data-plane fast failover on or off on the synced switches (liveness groups only)."""
        have = self.desired()
        chosen = list(names) if names is not None else list(have)
        missing = sorted(n for n in chosen if n not in have)
        if missing:
            raise ValueError(f"switches {missing}: have no synced state; expected installed switches")
        return self.sync({n: with_failover(have[n], on) for n in chosen}, step="failover-on" if on else "failover-off",
                         trust_cache=True)

    def read(self, name: str, entities: Iterable[EntityLike]) -> list[Any]:
        """Read entities (counters, entries) of one switch as entity objects."""
        return self.sessions[name].read(entities)

    def counter_packets(self, name: str, counters: Iterable[str], indexes: Sequence[int]) -> dict[str, int]:
        """Packets of each indirect counter of one switch, summed over the indexes."""
        return self.sessions[name].counter_packets(counters, indexes)

    def desired(self) -> dict[str, SwitchState]:
        """The last state synced to each switch."""
        return {n: s.desired for n, s in self.sessions.items() if s.desired is not None}

    # -- recovery -------------------------------------------------------------------------------------

    def start_watch(self, period: float = 0.2) -> None:
        """Watch the sessions; reconnect and reconcile any that dropped (switch restart, lost stream)."""
        self._watch_stop.clear()
        self._watcher = threading.Thread(target=self._watch, args=(period,), name="net-watch", daemon=True)
        self._watcher.start()

    def stop_watch(self) -> None:
        """Stop the watcher."""
        self._watch_stop.set()
        if self._watcher is not None:
            self._watcher.join(timeout=5)

    def _watch(self, period: float) -> None:
        """Reconcile restarted switches to their desired state; after another controller was primary,
        re-read a switch before anything is written (SwitchSession), or refuse and say so."""
        while not self._watch_stop.wait(period):
            for sess in self.sessions.values():
                if self._watch_stop.is_set():
                    break
                try:
                    if sess.client.connected:
                        st = sess.resync() if sess.resync_due else None
                        if st is not None:
                            self.events.log("resynced", switch=sess.name, entries=len(st.entries),
                                            members=len(st.members), groups=len(st.groups))
                        continue
                    t0 = time.monotonic()
                    p = sess.recover(timeout=min(2.0, period * 5))
                    self.events.log("reconciled", switch=sess.name, ms=(time.monotonic() - t0) * 1000,
                                    plan=str(p) if p else "no desired state")
                except StaleView as exc:
                    log.error("%s", exc)
                    self.events.log("restore-refused", switch=sess.name, reason=str(exc))
                except (P4RuntimeError, OSError) as exc:
                    log.debug("%s: still unreachable: %s", sess.name, exc)

    # -- probes ---------------------------------------------------------------------------------------

    def _on_packet(self, switch: str, pkt: Packet) -> None:
        data = pkt.payload
        if probe_nonce(data) is not None:
            self._clock_in[switch].put((data, int(pkt.metadata.get("timestamp", 0))))
            return
        if len(data) >= 14 + len(PROBE_MAGIC) + 8 and int.from_bytes(data[12:14], "big") == PROBE_ETHERTYPE \
                and data[14:14 + len(PROBE_MAGIC)] == PROBE_MAGIC:
            nonce = data[14 + len(PROBE_MAGIC):14 + len(PROBE_MAGIC) + 8]
            with self._probe_lock:
                want = self._probes.get(nonce)
            if want is not None and want[0] == switch and want[1] == pkt.metadata.get("ingress_port"):
                want[2].set()
            return
        self.packet_ins.append((switch, pkt))
        del self.packet_ins[:-1000]

    def probe(self, src: tuple[str, int], dst: tuple[str, int], timeout: float = 5.0,
              interval: float = 0.005) -> ProbeResult:
        """Send probes out of src (switch, port) until one comes in at dst (switch, port); raise on timeout."""
        with self._probe_lock:
            self._seq += 1
            nonce = (self._seq ^ (os.getpid() << 32)).to_bytes(8, "big")
            got = threading.Event()
            self._probes[nonce] = (dst[0], dst[1], got)
        sess = self.sessions[src[0]]
        smac = bytes.fromhex(self.topo.switch_map()[src[0]].ports[src[1]].replace(":", ""))
        frame = b"\xff" * 6 + smac + PROBE_ETHERTYPE.to_bytes(2, "big") + PROBE_MAGIC + nonce
        frame += bytes(max(0, 60 - len(frame)))
        t0 = time.monotonic()
        sent = 0
        try:
            while True:
                t_send = time.monotonic()
                sess.client.packet_out(Packet(frame, {"egress_port": src[1]}))
                sent += 1
                if got.wait(interval):
                    return ProbeResult(src, dst, sent, (time.monotonic() - t_send) * 1000)
                if time.monotonic() - t0 > timeout:
                    raise TimeoutError(f"probe {src[0]}:{src[1]} -> {dst[0]}:{dst[1]}: no packet-in after "
                                       f"{sent} probes in {timeout:.1f} s")
        finally:
            with self._probe_lock:
                self._probes.pop(nonce, None)

    def clock(self, name: str, probes: int = 16, timeout: float = 1.0) -> ClockOffset:
        """The switch's clock against this host's (control/clock.py), from clock probes."""
        sess, inbox = self.sessions[name], self._clock_in[name]

        def receive(left: float) -> tuple[bytes, int] | None:
            try:
                return inbox.get(timeout=left)
            except queue.Empty:
                return None

        return measure(lambda f: sess.client.packet_out(Packet(f, {"egress_port": CPU_PORT})), receive,
                       probes, timeout, timestamp_tick_ns(sess.client.schema))

    def close(self) -> None:
        """Stop watching and close every session."""
        self.stop_watch()
        for s in self.sessions.values():
            s.close()
        self._pool.shutdown(wait=True)
