"""Two-way circuit reservation (seed 001, Algorithm 1): horizon scheduling across the ports of an
optical core, and the one-way baseline it is compared with.

A ToR asks the controller for a circuit to another ToR for a burst of `nbytes`. The controller keeps
a *horizon* per optical input and per optical output (the time the port is next free), picks the
optical switch whose earliest free (input, output) pair is earliest (the paper's "minimum value
method": no void filling), and grants the window [start, end) on that pair:

    start = max(h_in, h_out, t_request) + T_sw + T_proc + T_oh
    end   = start + 8 * nbytes / rate + T_guard

Both horizons move to `end`, the OCS is told to switch at `start - T_sw`, and the grant reaches the
ToR at `t_request + T_proc + T_oh`. Where that trip is measured rather than modelled (an emulation's
control path), the caller gives it per request (`control_s`) in place of T_proc + T_oh. Windows on
one port never overlap, so nothing collides: zero burst loss by construction.

Ports: P optical switches, each ToR has Q transceivers on each (its degree X = P*Q). Port q of ToR t
on switch p is index `t*Q + q` of that switch (the paper's listing indexes `i + srcID*X`, which is
only right when Q = 1 or P = 1; seed-notes/001, section 3.3). Times are seconds (floats): the paper's
microseconds scale to the emulation's milliseconds by the timing parameters alone.

One-way reservation (the baseline): the ToR sends after a fixed offset without waiting; the OCS is
configured for each burst as it comes, and a burst whose input or output port is still busy with
an earlier one is lost (`one_way`).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Timing:
    """The timing model (seconds; bits per second). Defaults: seed 001's Table 2, T_guard 0."""

    switch_s: float = 1e-6  # T_sw: the optical switch reconfigures
    proc_s: float = 1e-6  # T_proc: the controller processes a request
    overhead_s: float = 1e-6  # T_oh: a control packet crosses the management network
    guard_s: float = 0.0  # T_guard: slack after every window
    rate_bps: float = 10e9  # R: line rate of a circuit

    def __post_init__(self) -> None:
        for name in ("switch_s", "proc_s", "overhead_s", "guard_s"):
            if not getattr(self, name) >= 0:
                raise ValueError(f"timing {name}={getattr(self, name)!r}: expected a time >= 0")
        if not self.rate_bps > 0:
            raise ValueError(f"timing rate_bps={self.rate_bps!r}: expected a rate > 0")

    def trip_s(self, control_s: float | None = None) -> float:
        """The grant's trip to the ToR: `control_s` where it is measured, else T_proc + T_oh."""
        trip = self.proc_s + self.overhead_s if control_s is None else control_s
        if not trip >= 0:
            raise ValueError(f"reservation control_s={control_s!r}: expected a time >= 0")
        return trip

    def transmit_s(self, nbytes: int) -> float:
        """T_RL: how long a burst of `nbytes` occupies a circuit."""
        return 8 * nbytes / self.rate_bps


@dataclass(frozen=True, slots=True)
class Grant:
    """A reserved window: send on `port` (of the ToR's X ports) from `start` to `end`."""

    src: int
    dst: int
    nbytes: int
    switch: int  # which optical switch (0..P-1)
    port: int  # the source ToR's transceiver: switch * Q + q (what the grant packet carries)
    out_port: int  # the destination ToR's transceiver on the same switch
    start: float
    end: float
    configure_at: float  # the OCS starts switching (start - T_sw)
    granted_at: float  # the grant reaches the ToR


class HorizonScheduler:
    """The controller's horizon state for N ToRs on P optical switches with Q ports each per ToR."""

    def __init__(self, tors: int, switches: int = 1, ports_per_switch: int = 1,
                 timing: Timing | None = None) -> None:
        for name, value in (("tors", tors), ("switches", switches), ("ports_per_switch", ports_per_switch)):
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"horizon scheduler {name}={value!r}: expected an integer >= 1")
        self.tors, self.switches, self.q = tors, switches, ports_per_switch
        self.timing = timing or Timing()
        size = tors * ports_per_switch
        self.h_in = [[0.0] * size for _ in range(switches)]  # per switch: optical input (ToR uplink)
        self.h_out = [[0.0] * size for _ in range(switches)]  # per switch: optical output (ToR downlink)

    def _earliest(self, horizons: list[float], tor: int) -> tuple[float, int]:
        """The smallest horizon among ToR `tor`'s Q ports of one switch, and that port's index."""
        base = tor * self.q
        return min((horizons[base + q], base + q) for q in range(self.q))

    def request(self, src: int, dst: int, nbytes: int, now: float, control_s: float | None = None) -> Grant:
        """Reserve a circuit src -> dst for `nbytes`, asked at `now` (the request reaches the controller);
        `control_s`: the grant's trip to the ToR, when measured (default T_proc + T_oh)."""
        g = self.offer(src, dst, nbytes, now, control_s)
        self.take(g)
        return g

    def offer(self, src: int, dst: int, nbytes: int, now: float, control_s: float | None = None) -> Grant:
        """The grant `request` would make, the horizons left as they are (`take` moves them): a caller
        that may still refuse the window (control/grants.py, a window beyond one cycle) takes it only
        once it is sure, so a refused request leaves the scheduler as it was."""
        for name, tor in (("src", src), ("dst", dst)):
            if not isinstance(tor, int) or not 0 <= tor < self.tors:
                raise ValueError(f"reservation {name}={tor!r}: expected a ToR 0..{self.tors - 1}")
        if src == dst:
            raise ValueError(f"reservation {src} -> {dst}: expected two different ToRs")
        if not isinstance(nbytes, int) or nbytes <= 0:
            raise ValueError(f"reservation nbytes={nbytes!r}: expected a positive byte count")
        t = self.timing
        trip = t.trip_s(control_s)
        best = None
        for p in range(self.switches):
            h1, i = self._earliest(self.h_in[p], src)
            h2, o = self._earliest(self.h_out[p], dst)
            if best is None or max(h1, h2) < best[0]:
                best = (max(h1, h2), p, i, o)
        free, p, i, o = best  # type: ignore[misc]
        start = max(free, now) + t.switch_s + trip
        end = start + t.transmit_s(nbytes) + t.guard_s
        return Grant(src, dst, nbytes, p, p * self.q + i % self.q, p * self.q + o % self.q, start, end,
                     start - t.switch_s, now + trip)

    def take(self, g: Grant, until: float | None = None) -> None:
        """Move the horizons of a grant's input and output to `until` (default its end)."""
        i, o = g.src * self.q + g.port % self.q, g.dst * self.q + g.out_port % self.q
        self.h_in[g.switch][i] = self.h_out[g.switch][o] = g.end if until is None else until


@dataclass(frozen=True, slots=True)
class Burst:
    """A one-way burst: sent on the ToR's `port` at `sent` (after the fixed offset), to `dst`."""

    src: int
    dst: int
    nbytes: int
    port: int
    sent: float


def one_way(bursts: list[Burst], tors: int, ports_per_tor: int = 1, timing: Timing | None = None) -> list[bool]:
    """Which bursts of one-way reservation get through (True) and which collide (False).

    The OCS serves bursts in the order they arrive; a burst gets its circuit only if its input (the
    sender's port) and its output (the receiver's port of the same index) are free when it arrives
    plus T_sw; otherwise it is dropped (the OCS has no buffer). A burst that got through holds both
    ports for its transmission time plus T_guard."""
    t = timing or Timing()
    busy_in: dict[tuple[int, int], float] = {}
    busy_out: dict[tuple[int, int], float] = {}
    ok = [False] * len(bursts)
    for n in sorted(range(len(bursts)), key=lambda k: bursts[k].sent):
        b = bursts[n]
        if not (0 <= b.src < tors and 0 <= b.dst < tors and 0 <= b.port < ports_per_tor):
            raise ValueError(f"burst {b}: expected ToRs 0..{tors - 1} and a port 0..{ports_per_tor - 1}")
        at = b.sent + t.switch_s
        if busy_in.get((b.src, b.port), 0.0) > b.sent or busy_out.get((b.dst, b.port), 0.0) > b.sent:
            continue
        busy_in[(b.src, b.port)] = busy_out[(b.dst, b.port)] = at + t.transmit_s(b.nbytes) + t.guard_s
        ok[n] = True
    return ok
