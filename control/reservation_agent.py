"""The reservation controller's loop (seed 001): requests from the ToRs' virtual output queues,
grants written as slot entries (control/grants.py, tablegen/reservation.py), removed when done.

The request. Every ToR holds what it has for another ToR of the OCS in that path's virtual output
queue (SlotHold, `slot_policy` = hold) until a `slot_path` entry lights its slot. The controller
reads the queues' `hold_entered`, `hold_released` and `hold_expired` counters every `poll_s` (all ToRs at once): what
entered and did not leave is the burst waiting (packets and bytes, the control packet's burst length).
A path with bytes waiting and no window still to come is a request; so is one with a window still
to come and bytes that entered since its last request (the paper starts the next burst's assembly
as soon as the control packet leaves), up to `max_pending` windows ahead. It is asked at the read
plus the lead: the 80th percentile of the last grant writes (P4Runtime writes to a loaded software switch
take 5-1000 ms here; a window must not start before its entries exist). The burst's bound grows
with the queue's own arrival rate (hold_entered between reads, twice the smoothed rate).
This is a pull (one batched counter read per ToR per poll), not a packet-in: it needs no change to
the programs, and on Tofino the same counters are read the same way (a digest on a queue's first
held packet would be the push equivalent; not built).

The grant. The scheduler (TwoWay or OneWay) gives a window of slots; the controller writes the
OCS's entries first, then the ToR's (so the ToR never sends into a circuit not yet set), and deletes
them in the reverse order once the window has ended. The ToR's `slot_path` is written for the
window's first slot only: SlotHold releases the whole queue at the first lit pass, and the link
drains it through the window (control/grants.py, "The burst"). One-way windows that collide at the OCS get
the ToR's entries only: the burst leaves on time and the OCS drops it (`unlit_drops`).
"""

from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol

from control.grants import Calendar, SlotGrant
from p4rt.client import P4RuntimeClient, wildcard
from p4rt.entities import TableEntry
from p4rt.resources import CounterEntry

log = logging.getLogger(__name__)
QUEUE_COUNTERS = ("hold_entered", "hold_released", "hold_expired")
LEAD_WINDOW = 20  # recent grant writes that set the lead
RATE_ALPHA = 0.3  # smoothing of a queue's arrival rate


class Scheduler(Protocol):
    """TwoWay or OneWay (control/grants.py)."""

    cal: Calendar

    def request(self, src: int, dst: int, nbytes: int, now: float, growth_bps: float | None = None) -> SlotGrant:
        """A window for a burst."""
        ...


@dataclass(slots=True)
class PathState:
    """One ToR's path to another ToR: the slot entries a grant needs, and its windows."""

    src: int
    dst: int
    path_id: int
    tor_docs: Any  # callable(slots) -> ToR entries
    ocs_docs: Any  # callable(slots) -> OCS entries
    pending: list[tuple[SlotGrant, list[TableEntry], list[TableEntry]]] = field(default_factory=list)
    entered: tuple[float, int] = (0.0, 0)  # (time, bytes) of the last read of hold_entered
    rate_bps: float = 0.0  # the queue's arrival rate, smoothed
    asked_entered: int = 0  # hold_entered bytes when the last request went out


def waiting(cells: dict[str, tuple[int, int]]) -> tuple[int, int, int]:
    """(packets, bytes) in a queue from its counters (entered minus released minus expired), and
    the bytes that ever entered."""
    e, r, x = (cells.get(n, (0, 0)) for n in QUEUE_COUNTERS)
    return e[0] - r[0] - x[0], e[1] - r[1] - x[1], e[1]


def conflicts(entries: list[TableEntry]) -> list[str]:
    """Slots in which two inputs of the OCS are lit to one output (what two-way must never write)."""
    seen: dict[tuple[int, int, int], int] = {}
    out = []
    for e in entries:
        if e.table.rsplit(".", 1)[-1] != "slot_circuit" or e.default:
            continue
        key = (int(e.match["slot"]), int(e.match["night"]), int(e.params["port"]))
        if key in seen:
            out.append(f"slot {key[0]} night {key[1]}: inputs {seen[key]} and {e.match['ingress_port']} -> {key[2]}")
        seen[key] = int(e.match["ingress_port"])
    return out


def lead(latencies: list[float], floor_s: float) -> float:
    """How far ahead of a request its window must start: the 80th percentile of the recent grant
    writes (the control path's delay here; a stall of one write does not hold every later
    window back), at least `floor_s`."""
    recent = sorted(latencies[-LEAD_WINDOW:])
    return max(floor_s, recent[min(len(recent) - 1, int(0.8 * len(recent)))] if recent else 0.0)


class ReservationAgent:
    """Polls the ToRs' queues, asks the scheduler, writes and removes the grants."""

    def __init__(self, scheduler: Scheduler, tors: dict[str, P4RuntimeClient], ocs: P4RuntimeClient,
                 paths: dict[str, list[PathState]], poll_s: float = 0.005, max_burst: int = 50_000) -> None:
        if not poll_s > 0 or max_burst < 1:
            raise ValueError(f"poll {poll_s!r} s, max burst {max_burst!r} B: expected > 0 and >= 1")
        self.scheduler, self.tors, self.ocs, self.paths = scheduler, tors, ocs, paths
        self.poll_s, self.max_burst = poll_s, max_burst
        self.max_pending = 3  # windows still to come per path (the paper: a new burst assembles at once)
        self.grants: list[dict[str, Any]] = []  # every grant, for the report
        self.polls = 0
        self.poll_time_s = 0.0
        self.write_errors = 0
        self.write_s: list[float] = []  # each grant's write time (OCS and ToR)
        self.lead_floor_s = 0.0
        self.refused = 0  # requests whose window would not fit in one cycle
        self.drop_ports: list[int] = []  # OCS ports whose drops are logged with their time (diagnosis)
        self.drop_log: list[tuple[float, int, str, int]] = []
        self._drops: dict[tuple[int, str], int] = {}
        self.audit_every = 0  # polls between reads of the OCS's slot_circuit (0: never)
        self.audits = 0
        self.audit_conflicts: list[str] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Run the loop in a thread."""
        self._thread = threading.Thread(target=self._run, name="reservation-agent", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the loop and remove every grant still written."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        for states in self.paths.values():
            for st in states:
                for g, tor, ocs in st.pending:
                    self._remove(st, g, tor, ocs)
                st.pending.clear()

    def _read(self, name: str, states: list[PathState]) -> dict[int, tuple[int, int, int]]:
        cells = self.tors[name].read_entities([CounterEntry(c, st.path_id) for c in QUEUE_COUNTERS for st in states])
        by: dict[int, dict[str, tuple[int, int]]] = {}
        for c in cells:
            if isinstance(c, CounterEntry) and c.index is not None:
                by.setdefault(c.index, {})[c.counter.rsplit(".", 1)[-1]] = (c.packets, c.bytes)
        return {pid: waiting(v) for pid, v in by.items()}

    def _remove(self, st: PathState, g: SlotGrant, tor: list[TableEntry], ocs: list[TableEntry]) -> None:
        try:
            self.tors_client(st).delete(tor)
            if ocs:
                self.ocs.delete(ocs)
        except Exception as exc:  # a failed delete leaves stale slots: count it, the run reports it
            self.write_errors += 1
            log.warning("grant %s: delete failed: %s", g, exc)

    def _cleanup(self, now: float) -> None:
        """Delete every window that ended more than a slot ago, before any new grant can reuse its
        slot indexes (one cycle later) on the same OCS input."""
        cal = self.scheduler.cal
        for states in self.paths.values():
            for st in states:
                done = [p for p in st.pending if p[0].end(cal) < now - cal.slot_s]
                for g, tor, ocs in done:
                    self._remove(st, g, tor, ocs)
                if done:
                    st.pending = [p for p in st.pending if p not in done]

    def _audit(self) -> None:
        """Read the OCS's slot_circuit as written and record any output lit from two inputs."""
        try:
            got = self.ocs.read_entities([wildcard(self.ocs.schema, "table_entry", "slot_circuit")])
        except Exception as exc:
            log.warning("OCS slot_circuit: read failed: %s", exc)
            return
        self.audits += 1
        self.audit_conflicts += conflicts([e for e in got if isinstance(e, TableEntry)])

    def _log_drops(self) -> None:
        """Record (time, OCS port, counter, new drops) when the OCS's dark-drop counters grow."""
        try:
            cells = self.ocs.read_entities([CounterEntry(c, p) for c in ("night_drops", "unlit_drops")
                                            for p in self.drop_ports])
        except Exception as exc:
            log.warning("OCS drop counters: read failed: %s", exc)
            return
        now = time.monotonic()
        for c in cells:
            if isinstance(c, CounterEntry) and c.index is not None:
                key = (c.index, c.counter.rsplit(".", 1)[-1])
                if key in self._drops and c.packets > self._drops[key]:
                    self.drop_log.append((now, key[0], key[1], c.packets - self._drops[key]))
                self._drops[key] = c.packets

    def tors_client(self, st: PathState) -> P4RuntimeClient:
        """The client of the ToR a path starts at."""
        return self.tors[self._names[st.src]]

    def _run(self) -> None:
        self._names = {states[0].src: name for name, states in self.paths.items() if states}
        pool = ThreadPoolExecutor(max_workers=max(1, len(self.paths)), thread_name_prefix="reservation-read")
        try:
            self._loop(pool)
        finally:
            pool.shutdown(wait=True)

    def _loop(self, pool: ThreadPoolExecutor) -> None:
        cal = self.scheduler.cal
        while not self._stop.is_set():
            t0 = time.monotonic()
            # every ToR's queues read at once (one round trip, not one per ToR); grants stay sequential
            reads = {name: pool.submit(self._read, name, states) for name, states in self.paths.items()}
            for name, states in self.paths.items():
                try:
                    queues = reads[name].result()
                except Exception as exc:
                    log.warning("%s: counter read failed: %s", name, exc)
                    continue
                now = time.monotonic()
                self._cleanup(now)  # every path's: a ToR's paths share its OCS input's slots
                for st in states:
                    packets, nbytes, entered = queues.get(st.path_id, (0, 0, st.entered[1]))
                    if st.entered[0] and now > st.entered[0]:
                        rate = 8 * (entered - st.entered[1]) / (now - st.entered[0])
                        st.rate_bps = RATE_ALPHA * rate + (1 - RATE_ALPHA) * st.rate_bps
                    st.entered = (now, entered)
                    ahead_windows = sum(cal.start(p[0].first) > now for p in st.pending)
                    new = entered - st.asked_entered  # assembled since the last request
                    if packets <= 0 or ahead_windows >= self.max_pending or (ahead_windows and new <= 0):
                        continue
                    if ahead_windows:
                        nbytes = new
                    ahead = lead(self.write_s, self.lead_floor_s)
                    try:
                        g = self.scheduler.request(st.src, st.dst, min(max(nbytes, 1), self.max_burst), now + ahead,
                                                   growth_bps=2 * st.rate_bps)
                    except ValueError as exc:  # the horizon is more than a cycle away: ask again later
                        self.refused += 1
                        log.debug("request %s -> %s refused: %s", st.src, st.dst, exc)
                        continue
                    slots = g.indexes(cal.slots)
                    tor = [TableEntry.from_dict(d) for d in st.tor_docs(slots[:1])]  # it sends in the first
                    ocs = [] if g.lost else [TableEntry.from_dict(d) for d in st.ocs_docs(slots)]
                    try:
                        if ocs:
                            self.ocs.insert(ocs)
                        self.tors[name].insert(tor)
                    except Exception as exc:
                        self.write_errors += 1
                        log.warning("grant %s: write failed: %s", g, exc)
                        continue
                    written = time.monotonic()
                    self.write_s.append(written - now)
                    st.asked_entered = entered
                    st.pending.append((g, tor, ocs))
                    self.grants.append({"src": g.src, "dst": g.dst, "bytes": g.nbytes, "queued": packets, "read": now,
                                        "waiting_bytes": nbytes, "lead": ahead, "rate_bps": st.rate_bps,
                                        "first": g.first, "count": g.count, "asked": g.asked, "written": written,
                                        "start": cal.start(g.first), "end": g.end(cal), "lost": g.lost,
                                        "late": written > cal.start(g.first) + cal.night_s})
            if self.drop_ports:
                self._log_drops()
            if self.audit_every and self.polls % self.audit_every == 0:
                self._audit()
            self.polls += 1
            self.poll_time_s += time.monotonic() - t0
            self._stop.wait(max(0.0, self.poll_s - (time.monotonic() - t0)))
