"""The reservation controller's loop (seed 001): requests from the ToRs' virtual output queues,
grants written as slot entries (control/grants.py, tablegen/reservation.py), removed when done.

The request. Every ToR holds what it has for another ToR of the OCS in that path's virtual output
queue (SlotHold, `slot_policy` = hold) until a `slot_path` entry lights its slot. The controller
reads the queues' `hold_entered`, `hold_released` and `hold_expired` counters every `poll_s` (all ToRs
at once): what entered and did not leave is the burst waiting (packets and bytes, the control
packet's burst length). A burst assembles as in the paper (mixed timer and size): from the first
read that finds bytes entered since the path's last request, it asks once `assembly_s` (T_a) has
passed or `max_burst` bytes are waiting. A path with bytes waiting and no window unfinished asks for
them all; one with a window unfinished asks for the bytes that entered since its last request (the
paper starts the next burst's assembly as soon as the control packet leaves), up to `max_pending`
windows. It is asked at the read; the grant's trip to the ToR (Algorithm 1's T_proc + T_oh) is
the lead, measured: the 80th percentile of the last grant writes (P4Runtime writes to a loaded
software switch take 5-1000 ms here; a window must not start before its entries exist).
This is a pull (one batched counter read per ToR per poll), not a packet-in: it needs no change to
the programs, and on Tofino the same counters are read the same way (a digest on a queue's first
held packet would be the push equivalent; not built).

The grant. The scheduler (TwoWay or OneWay) gives a window of slots; the controller writes the
OCS's entries first, then the ToR's (so the ToR never sends into a circuit not yet set), and deletes
them in the reverse order once the window has ended. The ToR's `slot_path` lights every slot of the
window and its inner nights, with the uplink's budget to the window's end (`byte_ns`), so the ToR
sends what the window can carry and holds the rest (control/grants.py, "The burst"); a window
allows for what the ToR's hold loop costs the path (`loop_share`). One-way windows that collide at
the OCS get the ToR's entries only: the burst leaves on time and the OCS drops it (`unlit_drops`).
Each ToR has a loop of its own (its read, requests and writes beside the others').
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from control.grants import Calendar, SlotGrant
from control.reservation import Timing
from control.switch import SwitchSession
from fabric.contract import QUEUE_COUNTERS, SCHEDULE_DROP_COUNTERS, SLOT_CIRCUIT
from p4rt.client import wildcard
from p4rt.entities import TableEntry
from p4rt.errors import applied
from p4rt.proto import code_pb2
from p4rt.resources import CounterEntry
from p4rt.schema import short_name

log = logging.getLogger(__name__)
LEAD_WINDOW = 20  # recent grant writes that set the lead
RATE_ALPHA = 0.3  # smoothing of a queue's arrival rate
DIAGNOSIS_S = 0.05  # period of the OCS's drop log and of the audit's count
MIN_PACE = 0.25  # the hold loop stretches a window at most 4x (a path's packets coming round slowly)
NOT_FOUND = code_pb2.NOT_FOUND


class Scheduler(Protocol):
    """TwoWay or OneWay (control/grants.py)."""

    cal: Calendar
    timing: Timing

    def request(self, src: int, dst: int, nbytes: int, now: float, growth_bps: float | None = None,
                lost_s: float = 0.0, pace: float = 1.0, control_s: float | None = None) -> SlotGrant:
        """A window for a burst."""
        ...


@dataclass(slots=True)
class PathState:
    """One ToR's path to another ToR: the slot entries a grant needs, and its windows."""

    src: int
    dst: int
    path_id: int
    tor_entries: Callable[[list[int]], list[TableEntry]]  # slots -> the ToR's entries of a window
    ocs_entries: Callable[[list[int]], list[TableEntry]]  # slots -> the OCS's
    pending: list[tuple[SlotGrant, list[TableEntry], list[TableEntry]]] = field(default_factory=list)
    stale: list[tuple[SlotGrant, list[TableEntry], list[TableEntry]]] = field(default_factory=list)  # undeleted
    entered: tuple[float, int] = (0.0, 0)  # (time, bytes) of the last read of hold_entered
    rate_bps: float = 0.0  # the queue's arrival rate, smoothed
    asked_entered: int = 0  # hold_entered bytes when the last request went out
    assembling: float = 0.0  # when a read first found bytes entered since the last request (0: none)


def waiting(cells: dict[str, tuple[int, int]]) -> tuple[int, int, int]:
    """(packets, bytes) in a queue from its counters, and the bytes that ever entered. Packets
    waiting: entered minus released minus expired. Bytes: those packets at the mean size of what
    entered; the counters' own bytes do not subtract, because a switch counts a frame's length as it
    passes, and a held packet comes back round the v1model loop longer by its hold mark."""
    e, r, x = (cells.get(n, (0, 0)) for n in QUEUE_COUNTERS)
    packets = e[0] - r[0] - x[0]
    return packets, packets * e[1] // e[0] if e[0] > 0 and packets > 0 else 0, e[1]


def conflicts(entries: list[TableEntry]) -> list[str]:
    """Slots in which two inputs of the OCS are lit to one output (what two-way must never write)."""
    seen: dict[tuple[int, int, int], int] = {}
    out = []
    for e in entries:
        if short_name(e.table) != SLOT_CIRCUIT or e.default:
            continue
        key = (int(e.match["slot"]), int(e.match["night"]), int(e.params["port"]))
        if key in seen:
            out.append(f"slot {key[0]} night {key[1]}: inputs {seen[key]} and {e.match['ingress_port']} -> {key[2]}")
        seen[key] = int(e.match["ingress_port"])
    return out


def loop_share(held_path: int, held_all: int, mean_bytes: float, passes: float, rate_bps: float) -> tuple[float, float]:
    """What the ToR's hold loop (`passes` pipeline passes a second, shared by every packet held)
    costs a path's window: its packets come round at passes x held_path / held_all a second, so the
    first comes after one such interval (the wait), and they feed the uplink (`rate_bps`, packets
    of `mean_bytes`) at that pace at most (1: as fast as it sends). (0, 1) with no loop or nothing held."""
    if not passes or held_path <= 0 or held_all <= 0 or mean_bytes <= 0:
        return 0.0, 1.0
    pps = passes * held_path / held_all
    return 1 / pps, min(1.0, pps * 8 * mean_bytes / rate_bps)


def lead(latencies: list[float], floor_s: float) -> float:
    """How far ahead of a request its window must start: the 80th percentile of the recent grant
    writes (the control path's delay here; a stall of one write does not hold every later
    window back), at least `floor_s`."""
    recent = sorted(latencies[-LEAD_WINDOW:])
    return max(floor_s, recent[min(len(recent) - 1, int(0.8 * len(recent)))] if recent else 0.0)


class ReservationAgent:
    """Polls the ToRs' queues, asks the scheduler, writes and removes the grants through the switches'
    sessions (each grant a change of their desired state: a reconnect restores the grants written).

    poll_s: a ToR loop's period; max_burst: bytes a request asks for at most; max_pending: unfinished
    windows a path may have (the paper: a new burst assembles at once); assembly_s: T_a, how long a
    burst assembles before its request (unless max_burst bytes wait); loop_passes: passes a second of
    the ToRs' hold loops (0: a window allows nothing for them); growth: a burst adds this many times its
    queue's arrival rate until its window; lead_floor_s: the least lead of a window over its request;
    drop_ports: the OCS ports whose drops are logged with their time; audit_every: DIAGNOSIS_S periods
    between reads of the OCS's slot_circuit (0: never); on_thread: called first in every thread the
    agent starts (its priority, e.g. emulation.priority.emulated_control_thread)."""

    def __init__(self, scheduler: Scheduler, tors: dict[str, SwitchSession], ocs: SwitchSession,
                 paths: dict[str, list[PathState]], poll_s: float = 0.005, max_burst: int = 50_000,
                 max_pending: int = 3, assembly_s: float = 0.0, loop_passes: float = 0.0, growth: float = 0.0,
                 lead_floor_s: float = 0.0, drop_ports: Sequence[int] = (), audit_every: int = 0,
                 on_thread: Callable[[], None] | None = None) -> None:
        if not poll_s > 0 or max_burst < 1 or max_pending < 1:
            raise ValueError(f"poll {poll_s!r} s, max burst {max_burst!r} B, max pending {max_pending!r}: "
                             "expected > 0, >= 1 and >= 1")
        self.scheduler, self.tors, self.ocs, self.paths = scheduler, tors, ocs, paths
        self.poll_s, self.max_burst, self.max_pending = poll_s, max_burst, max_pending
        self.assembly_s, self.loop_passes, self.growth = assembly_s, loop_passes, growth
        self.lead_floor_s, self.drop_ports, self.audit_every = lead_floor_s, list(drop_ports), audit_every
        self.on_thread = on_thread or (lambda: None)
        self.grants: list[dict[str, Any]] = []  # every grant, for the report
        self.polls = 0  # rounds of a ToR's loop (read, requests, writes), all ToRs'
        self.poll_time_s = 0.0
        self.write_errors = 0
        self.write_s: list[float] = []  # each grant's write time (OCS and ToR)
        self.refused = 0  # requests whose window would not fit in one cycle
        self.drop_log: list[tuple[float, int, str, int]] = []
        self._drops: dict[tuple[int, str], int] = {}
        self.audits = 0
        self.audit_conflicts: list[str] = []
        self._lock = threading.Lock()  # the scheduler and the records, shared by the ToRs' loops
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
                for g, tor, ocs in st.pending + st.stale:
                    self._remove(st, g, tor, ocs)
                st.pending.clear()
                st.stale.clear()

    def _read(self, name: str, states: list[PathState]) -> dict[int, tuple[int, int, int]]:
        cells = self.tors[name].read([CounterEntry(c, st.path_id) for c in QUEUE_COUNTERS for st in states])
        by: dict[int, dict[str, tuple[int, int]]] = {}
        for c in cells:
            if isinstance(c, CounterEntry) and c.index is not None:
                by.setdefault(c.index, {})[short_name(c.counter)] = (c.packets, c.bytes)
        return {pid: waiting(v) for pid, v in by.items()}

    def _remove(self, st: PathState, g: SlotGrant, tor: list[TableEntry], ocs: list[TableEntry],
                again: bool = False) -> tuple[list[TableEntry], list[TableEntry]]:
        """Delete a grant's ToR entries, then its OCS entries, the second tried whatever the first did;
        what is still written (a failed delete is counted and logged once, not `again`)."""
        return self._delete(self.tor_of(st), tor, g, again), self._delete(self.ocs, ocs, g, again)

    def _delete(self, session: SwitchSession, entries: list[TableEntry], g: SlotGrant,
                again: bool) -> list[TableEntry]:
        """DELETE entries; those still written (an entry the switch does not hold, NOT_FOUND, is gone)."""
        if not entries:
            return []
        try:
            session.apply(remove=entries)
            return []
        except Exception as exc:
            left = [e for e, ok in zip(entries, applied(exc, len(entries), False, NOT_FOUND), strict=True)
                    if not ok]
            if left and not again:
                with self._lock:  # the ToRs' loops delete beside each other
                    self.write_errors += 1
                log.warning("grant %s: delete failed (%d entries kept to delete again): %s", g, len(left), exc)
            return left

    def _cleanup(self, states: list[PathState], now: float) -> None:
        """Delete a ToR's windows that ended more than a slot ago, before any new grant of that ToR
        can reuse their slot indexes (one cycle later) on its OCS input: its paths share them. Entries
        a delete or a failed grant left are deleted again."""
        cal = self.scheduler.cal
        for st in states:
            done = [p for p in st.pending if p[0].end(cal) < now - cal.slot_s]
            if done:
                st.pending = [p for p in st.pending if p not in done]
            retry, st.stale = st.stale, []
            for (g, tor, ocs), again in [(p, False) for p in done] + [(p, True) for p in retry]:
                left = self._remove(st, g, tor, ocs, again)
                if left[0] or left[1]:
                    st.stale.append((g, *left))

    def _audit(self) -> None:
        """Read the OCS's slot_circuit as written and record any output lit from two inputs."""
        try:
            got = self.ocs.read([wildcard(self.ocs.schema, "table_entry", SLOT_CIRCUIT)])
        except Exception as exc:
            log.warning("OCS slot_circuit: read failed: %s", exc)
            return
        self.audits += 1
        self.audit_conflicts += conflicts([e for e in got if isinstance(e, TableEntry)])

    def _log_drops(self) -> None:
        """Record (time, OCS port, counter, new drops) when the OCS's dark-drop counters grow."""
        try:
            cells = self.ocs.read([CounterEntry(c, p) for c in SCHEDULE_DROP_COUNTERS for p in self.drop_ports])
        except Exception as exc:
            log.warning("OCS drop counters: read failed: %s", exc)
            return
        now = time.monotonic()
        for c in cells:
            if isinstance(c, CounterEntry) and c.index is not None:
                key = (c.index, short_name(c.counter))
                if key in self._drops and c.packets > self._drops[key]:
                    self.drop_log.append((now, key[0], key[1], c.packets - self._drops[key]))
                self._drops[key] = c.packets

    def tor_of(self, st: PathState) -> SwitchSession:
        """The session of the ToR a path starts at."""
        return self.tors[self._names[st.src]]

    def _run(self) -> None:
        """A loop per ToR (its reads and its grants' writes run beside the other ToRs'), the drop log
        and the audit here (the ToRs' loops inherit this thread's priority, `on_thread`)."""
        self.on_thread()
        self._names = {states[0].src: name for name, states in self.paths.items() if states}
        loops = [threading.Thread(target=self._tor_loop, args=(name, states), name=f"reservation-{name}", daemon=True)
                 for name, states in self.paths.items()]
        for t in loops:
            t.start()
        rounds = 0
        while not self._stop.wait(DIAGNOSIS_S):
            if self.drop_ports:
                self._log_drops()
            if self.audit_every and rounds % self.audit_every == 0:
                self._audit()
            rounds += 1
        for t in loops:
            t.join(timeout=10)

    def _tor_loop(self, name: str, states: list[PathState]) -> None:
        while not self._stop.is_set():
            t0 = time.monotonic()
            try:
                queues = self._read(name, states)
            except Exception as exc:
                log.warning("%s: counter read failed: %s", name, exc)
                queues = None
            if queues is not None:
                now = time.monotonic()
                self._cleanup(states, now)
                held = sum(max(0, q[0]) for q in queues.values())
                for st in states:
                    self._serve(name, st, queues, now, held)
            with self._lock:
                self.polls += 1
                self.poll_time_s += time.monotonic() - t0
            self._stop.wait(max(0.0, self.poll_s - (time.monotonic() - t0)))

    def _serve(self, name: str, st: PathState, queues: dict[int, tuple[int, int, int]], now: float,
               held_all: int = 0) -> None:
        """One path's request, if it has one, and its grant's writes; `held_all`: the packets its ToR
        holds on every path (what the hold loop costs its window, `loop_share`)."""
        cal = self.scheduler.cal
        packets, nbytes, entered = queues.get(st.path_id, (0, 0, st.entered[1]))
        if st.entered[0] and now > st.entered[0]:
            rate = 8 * (entered - st.entered[1]) / (now - st.entered[0])
            st.rate_bps = RATE_ALPHA * rate + (1 - RATE_ALPHA) * st.rate_bps
        st.entered = (now, entered)
        unfinished = sum(p[0].end(cal) > now for p in st.pending)
        new = entered - st.asked_entered  # assembled since the last request
        if packets <= 0 or unfinished >= self.max_pending or (unfinished and new <= 0):
            return
        if unfinished:
            nbytes = new
        if not st.assembling:
            st.assembling = now
        if now - st.assembling < self.assembly_s and nbytes < self.max_burst:
            return
        sched = self.scheduler
        wait_s, pace = loop_share(packets, max(held_all, packets), nbytes / packets if nbytes else 0.0,
                                  self.loop_passes, sched.timing.rate_bps)
        with self._lock:
            ahead = lead(self.write_s, self.lead_floor_s)
            try:
                g = sched.request(st.src, st.dst, min(max(nbytes, 1), self.max_burst), now,
                                  growth_bps=self.growth * st.rate_bps, lost_s=wait_s, pace=max(pace, MIN_PACE),
                                  control_s=ahead)
            except ValueError as exc:  # the horizon is more than a cycle away: ask again later
                self.refused += 1
                log.debug("request %s -> %s refused: %s", st.src, st.dst, exc)
                return
        slots = g.indexes(cal.slots)
        tor = st.tor_entries(slots)
        ocs = [] if g.lost else st.ocs_entries(slots)
        if not self._write(st, g, self.tors[name], tor, ocs):
            return
        written = time.monotonic()
        st.asked_entered, st.assembling = entered, 0.0
        st.pending.append((g, tor, ocs))
        with self._lock:
            self.write_s.append(written - now)
            self.grants.append({"src": g.src, "dst": g.dst, "bytes": g.nbytes, "queued": packets, "read": now,
                                "waiting_bytes": nbytes, "lead": ahead, "rate_bps": st.rate_bps,
                                "first": g.first, "count": g.count, "asked": g.asked, "written": written,
                                "start": cal.start(g.first), "end": g.end(cal), "lost": g.lost,
                                "late": written > cal.start(g.first) + cal.night_s})

    def _write(self, st: PathState, g: SlotGrant, session: SwitchSession, tor: list[TableEntry],
               ocs: list[TableEntry]) -> bool:
        """A grant, all or nothing: the OCS's entries, then the ToR's; when a write fails, what it and
        the write before it applied is deleted again (what such a delete leaves is kept in `stale`, so it
        neither lights a circuit every cycle nor makes the next grant of its slots fail)."""
        try:
            if ocs:
                self.ocs.apply(add=ocs)
        except Exception as exc:
            return self._undo(st, g, exc, [], _written(exc, ocs))
        try:
            session.apply(add=tor)
        except Exception as exc:
            return self._undo(st, g, exc, _written(exc, tor), ocs)
        return True

    def _undo(self, st: PathState, g: SlotGrant, exc: Exception, tor: list[TableEntry],
              ocs: list[TableEntry]) -> bool:
        """A failed grant write: count it (once), delete what it wrote, keep what that leaves; False."""
        with self._lock:
            self.write_errors += 1
        log.warning("grant %s: write failed, undone: %s", g, exc)
        left = self._remove(st, g, tor, ocs, again=True)
        if left[0] or left[1]:
            st.stale.append((g, *left))
        return False


def _written(exc: BaseException, entries: list[TableEntry]) -> list[TableEntry]:
    """The entries a failed INSERT may have written (all, when the switch did not say which failed)."""
    return [e for e, ok in zip(entries, applied(exc, len(entries), True), strict=True) if ok]
