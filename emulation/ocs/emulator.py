"""The emulated OCS: cross-connect state, dark ports and the delay model's timeline.

A port p in 1..N is the input side and N+p the output side of transceiver slot p, which sits on
data-plane port `port_map[p]` of the `ocs` switch (identity by default). A connection (i, N+o)
carries the light of slot i to slot o: in the data plane, one `circuit` entry dp(i) -> dp(o); the
link of slot o is up only while that light is through and the ToR has polled it (delay model).

Side effects (data-plane writes, link changes, event log) run in one worker thread in time order,
so a command returns at once, as on the real switch, and *OPC? waits for the mirrors.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from control.ocs.driver import OcsDriver, Pair, PortStatus, check_pairs
from emulation.ocs.delay import DelayModel

log = logging.getLogger(__name__)

# The largest switch the emulator builds: the biggest Polatis is 384x384, and state is a few hundred
# bytes per port, so 1024 ports stay far below a megabyte (10^8 took 2.7 GB before failing).
MAX_PORTS = 1024


class CircuitTable(Protocol):
    """Where circuits take effect: the `ocs` program's `circuit` table (see dataplane.py)."""

    def set_circuit(self, in_port: int, out_port: int) -> None:
        """Forward frames received on data-plane port `in_port` to `out_port`."""

    def clear_circuit(self, in_port: int) -> None:
        """Drop frames received on `in_port` (dark)."""


class LinkControl(Protocol):
    """Makes the switches attached to the OCS see a port go down or up."""

    def set_link(self, dp_port: int, up: bool) -> None:
        """Set the link on data-plane port `dp_port` down or up."""


@dataclass(slots=True)
class _Port:
    gen: int = 0  # bumped on every change, so stale timeline events are ignored
    light: bool = False  # light through (outputs: received; inputs: passed on)
    up: bool = False  # reported up by the polling ToR (outputs only)


class EmulatedOcs(OcsDriver):
    """An N x N OCS with the thesis delay model; also usable in-process as an OcsDriver."""

    def __init__(self, size: int, delay: DelayModel | None = None, circuits: CircuitTable | None = None,
                 links: LinkControl | None = None, port_map: dict[int, int] | None = None,
                 on_event: Callable[[dict[str, Any]], None] | None = None) -> None:
        if isinstance(size, bool) or not isinstance(size, int) or not 1 <= size <= MAX_PORTS:
            raise ValueError(f"size {size!r}: expected 1..{MAX_PORTS} ports")
        self._size = size
        self.delay = delay or DelayModel()
        self.circuits = circuits
        self.links = links
        self.port_map = dict(port_map or {p: p for p in range(1, size + 1)})
        missing = [p for p in range(1, size + 1) if p not in self.port_map]
        if missing:
            raise ValueError(f"port map: slots {missing} have no data-plane port; expected all of 1..{size}")
        self.on_event = on_event
        self._conns: dict[int, int] = {}
        self._ports = {p: _Port() for p in range(1, 2 * size + 1)}
        self._lock = threading.RLock()
        self._mirrors_done = 0.0
        self._queue: list[tuple[float, int, Callable[[], None]]] = []
        self._seq = itertools.count()
        self._cv = threading.Condition(self._lock)
        self._stopping = False
        self._busy = False
        self._links_due: list[tuple[int, bool]] = []
        self._worker = threading.Thread(target=self._run, name="ocs-timeline", daemon=True)
        self._worker.start()

    # -- OcsDriver --------------------------------------------------------------------------------

    @property
    def size(self) -> int:
        """N: the number of inputs (and of outputs)."""
        return self._size

    def connect(self, pairs: Iterable[Pair], delay: DelayModel | None = None) -> None:
        """Add connections; a port already connected elsewhere is a conflict (ValueError)."""
        pairs = check_pairs(pairs, self._size)
        with self._lock:
            outs = {o: i for i, o in self._conns.items()}
            for i, o in pairs:
                if (i in self._conns and self._conns[i] != o) or (o in outs and outs[o] != i):
                    raise ValueError(f"connection {(i, o)!r}: port already connected "
                                     f"({i}->{self._conns.get(i, 0)}, {outs.get(o, 0)}->{o})")
            new = dict(self._conns)
            new.update(pairs)
            self._apply(new, delay)

    def disconnect(self, pairs: Iterable[Pair], delay: DelayModel | None = None) -> None:
        """Remove connections; removing one that does not exist is a conflict (ValueError)."""
        pairs = check_pairs(pairs, self._size)
        with self._lock:
            for i, o in pairs:
                if self._conns.get(i) != o:
                    raise ValueError(f"connection {(i, o)!r}: not connected")
            new = {i: o for i, o in self._conns.items() if (i, o) not in set(pairs)}
            self._apply(new, delay)

    def set_map(self, pairs: Iterable[Pair], delay: DelayModel | None = None) -> None:
        """Make exactly these connections."""
        pairs = check_pairs(pairs, self._size)
        with self._lock:
            self._apply(dict(pairs), delay)

    def disconnect_all(self) -> None:
        """Remove every connection."""
        self.set_map([])

    def query(self) -> dict[int, int]:
        """The current connections, input -> output (as commanded; light may still be coming)."""
        with self._lock:
            return dict(sorted(self._conns.items()))

    def peer(self, port: int) -> int:
        """The port connected to `port` (input or output), 0 when none."""
        self._check_port(port)
        with self._lock:
            if port <= self._size:
                return self._conns.get(port, 0)
            return next((i for i, o in self._conns.items() if o == port), 0)

    def port_status(self, port: int) -> PortStatus:
        """Peer and light of one port."""
        self._check_port(port)
        with self._lock:
            return PortStatus(port, self.peer(port), self._ports[port].light)

    def port_up(self, slot: int) -> bool:
        """True when transceiver slot `slot` (1..N) is reported up by the polling ToR."""
        if not 1 <= slot <= self._size:
            raise ValueError(f"slot {slot}: expected 1..{self._size}")
        with self._lock:
            return self._ports[self._size + slot].up

    def wait_complete(self, timeout: float | None = None) -> None:
        """Block until the mirrors of every command so far have moved (*OPC?)."""
        with self._lock:
            remaining = self._mirrors_done - time.monotonic()
        if timeout is not None and remaining > timeout:
            time.sleep(max(0.0, timeout))
            raise TimeoutError(f"mirrors still moving after {timeout:.3f} s")
        if remaining > 0:
            time.sleep(remaining)

    def wait_settled(self, timeout: float = 10.0) -> bool:
        """Wait until every connected output is up and no event is pending; False on timeout."""
        deadline = time.monotonic() + timeout
        with self._cv:
            while True:
                if not self._queue and not self._busy and all(self._ports[o].up for o in self._conns.values()):
                    return True
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cv.wait(min(left, 0.05))

    def init_links(self) -> None:
        """Set every slot's link down (at start: no connection, no light)."""
        with self._cv:
            for slot in range(1, self._size + 1):
                self._later(time.monotonic(), self._do_link, self._size + slot, False)

    def reset(self) -> None:
        """*RST: disconnect everything at once, without the delay model."""
        self.set_map([], delay=DelayModel.instant())

    def close(self) -> None:
        """Stop the timeline worker (pending events are dropped)."""
        with self._cv:
            self._stopping = True
            self._queue.clear()
            self._cv.notify_all()
        self._worker.join(timeout=2.0)

    # -- timeline ---------------------------------------------------------------------------------

    def _check_port(self, port: int) -> None:
        if not 1 <= port <= 2 * self._size:
            raise ValueError(f"port {port}: expected 1..{2 * self._size}")

    def _slot(self, port: int) -> int:
        return port if port <= self._size else port - self._size

    def _dp(self, port: int) -> int:
        return self.port_map[self._slot(port)]

    def _apply(self, new: dict[int, int], delay: DelayModel | None) -> None:
        """Move from the current connections to `new` (lock held)."""
        model = delay or self.delay
        old = self._conns
        removed = [(i, o) for i, o in old.items() if new.get(i) != o]
        added = [(i, o) for i, o in new.items() if old.get(i) != o]
        if not removed and not added:
            return
        now = time.monotonic()
        self._conns = dict(new)
        self._event("command", removed=removed, added=added)
        for i, o in removed:
            for p in (i, o):
                self._ports[p].gen += 1
                self._ports[p].light = False
            was_up = self._ports[o].up
            self._ports[o].up = False
            self._later(now, self._do_clear, i)
            if was_up:
                self._later(now, self._do_link, o, False)
        last_mirror = now
        for i, o in added:
            for p in (i, o):
                self._ports[p].gen += 1
                self._ports[p].light = False
            self._ports[o].up = False
            mirror, light, up = model.sample()
            gens = (self._ports[i].gen, self._ports[o].gen)
            self._later(now + light / 1000, self._do_light, i, o, gens)
            self._later(now + up / 1000, self._do_up, i, o, gens)
            last_mirror = max(last_mirror, now + mirror / 1000)
        self._mirrors_done = max(self._mirrors_done, last_mirror)

    def _later(self, when: float, fn: Callable[..., None], *args: Any) -> None:
        heapq.heappush(self._queue, (when, next(self._seq), lambda: fn(*args)))
        self._cv.notify_all()

    def _run(self) -> None:
        while True:
            with self._cv:
                while not self._stopping and (not self._queue or self._queue[0][0] > time.monotonic()):
                    wait = self._queue[0][0] - time.monotonic() if self._queue else None
                    self._cv.wait(wait)
                if self._stopping:
                    return
                due = []
                now = time.monotonic()
                while self._queue and self._queue[0][0] <= now:
                    due.append(heapq.heappop(self._queue)[2])
                self._busy = True
            # everything due now runs as one group: circuit writes in one batch (when the table
            # supports it), then the link changes, so a link never comes up before its circuit
            self._links_due: list[tuple[int, bool]] = []
            batch = getattr(self.circuits, "batch", None)
            try:
                if batch is not None:
                    with batch():
                        self._run_all(due)
                else:
                    self._run_all(due)
            except Exception:  # a data-plane failure must not stop the timeline
                log.exception("OCS circuit batch failed")
            if self._links_due:
                try:
                    set_links = getattr(self.links, "set_links", None)
                    if set_links is not None:
                        set_links(self._links_due)
                    else:
                        for port, up in self._links_due:
                            self.links.set_link(port, up)  # type: ignore[union-attr]
                except Exception:
                    log.exception("OCS link change failed")
            with self._cv:
                self._busy = False
                self._cv.notify_all()

    @staticmethod
    def _run_all(due: list[Callable[[], None]]) -> None:
        for fn in due:
            try:
                fn()
            except Exception:  # one failed action must not stop the others
                log.exception("OCS timeline action failed")

    def _current(self, i: int, o: int, gens: tuple[int, int]) -> bool:
        return self._conns.get(i) == o and (self._ports[i].gen, self._ports[o].gen) == gens

    def _do_clear(self, i: int) -> None:
        self._event("dark", port=i, dp_port=self._dp(i))
        if self.circuits is not None:
            self.circuits.clear_circuit(self._dp(i))

    def _do_light(self, i: int, o: int, gens: tuple[int, int]) -> None:
        with self._lock:
            if not self._current(i, o, gens):
                return
            self._ports[i].light = self._ports[o].light = True
        self._event("light", input=i, output=o, dp_in=self._dp(i), dp_out=self._dp(o))
        if self.circuits is not None:
            self.circuits.set_circuit(self._dp(i), self._dp(o))

    def _do_up(self, i: int, o: int, gens: tuple[int, int]) -> None:
        with self._lock:
            if not self._current(i, o, gens):
                return
            self._ports[o].up = True
        self._do_link(o, True)

    def _do_link(self, o: int, up: bool) -> None:
        self._event("port-up" if up else "port-down", slot=self._slot(o), dp_port=self._dp(o))
        if self.links is not None:
            self._links_due.append((self._dp(o), up))

    def _event(self, kind: str, **fields: Any) -> None:
        record = {"event": kind, "t_mono": time.monotonic(), "t_wall": time.time(), **fields}
        log.debug("ocs %s", record)
        if self.on_event is not None:
            self.on_event(record)
