"""Reservations on a slot calendar: seed 001's two-way reservation (Algorithm 1) and its one-way
baseline, as windows of whole slots of a time-flow schedule (p4src/README.md).

The data plane knows time only through its schedule: `schedule_config`/`schedule_phase` cut each
switch's clock into a cycle of `slots` equal slots (a night of `night_s`, the OCS's switching time,
then a day), written once. A grant is then a run of consecutive slots: the controller writes the
ToR's `slot_path` and the OCS's `slot_circuit` for those slots (the reservation itself) and deletes
them once the window is over; nothing is written per slot. Slot k (counted from the calendar's epoch,
in the controller's clock) is entry index k mod `slots`, so a window must start and end within one
cycle of now (`Calendar.check`).

Two-way (`TwoWay`): Algorithm 1 (control/reservation.py) picks the window on the free time of both the
source's uplink and the destination's downlink; its start is rounded up to the next slot boundary
(the slot's night is the switching, T_sw) and its length to whole slots; both horizons move to the
window's end. Windows never overlap on a port: zero burst loss by construction. One change of scale:
Algorithm 1 adds the grant's trip (T_proc + T_oh) after a busy port's horizon too, 2 us between two
bursts of a port (5% of a 40 us burst); here the trip is the measured lead, 20-50 ms, which would
leave 2-5 idle slots after every window of a busy port. So the trip counts from the request only:
a window starts at the first slot boundary both after its port's horizon and T_sw + the trip after
its request (`control_s`, the lead; default T_proc + T_oh).

The burst. As in the paper, a burst is what the virtual output queue holds when it asks (its bytes,
the control packet's burst length); `Burst` can add what is expected to arrive until the window
(`growth_bps`, off by default). The ToR is lit in every slot of the window and through its inner
nights (the OCS does not switch inside a window), its sending bounded by the budget (UplinkClock:
what the uplink can still send before the window's last guarded day ends), so a window carries at
most what its light can: its first slot's sending time (`send_s`, the ToR's guarded day) and a
whole slot for each further one, covering the burst's T_RL plus T_guard. What arrives meanwhile rides
along where a day has room, and otherwise waits for the next window. The ToR's hold is a loop that
brings each held packet, of every destination, back to the pipeline once a round (SlotHold), so a
path's packets are seen lit only as they come round: a window adds the wait for the path's first
packet (`lost_s`) and stretches by the pace at which they come round when that is slower than the
uplink (`pace`; control/reservation_agent.py `loop_share`).

One-way (`OneWay`): the source sends after a fixed offset (from the request, as two-way's trip) as
soon as its own uplink is free; the OCS
sets the circuit only if the destination's downlink is free for the whole window (first come, first
served); otherwise the burst is lost (the OCS has no buffer: it goes to a dark port).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from control.reservation import HorizonScheduler, Timing


@dataclass(frozen=True, slots=True)
class Calendar:
    """`slots` slots of `slot_s` (night `night_s` first) per cycle, slot 0 starting at `epoch_s`
    (the controller's monotonic clock)."""

    epoch_s: float
    slot_s: float
    night_s: float
    slots: int
    send_s: float = 0.0  # of each slot's day, what a ToR sends in (its guards cut the rest); 0: all of it

    def __post_init__(self) -> None:
        if not self.slot_s > 0 or not 0 <= self.night_s < self.slot_s:
            raise ValueError(f"calendar slot {self.slot_s!r} s, night {self.night_s!r} s: expected 0 <= night < slot")
        if isinstance(self.slots, bool) or not isinstance(self.slots, int) or self.slots < 2:
            raise ValueError(f"calendar slots={self.slots!r}: expected an integer >= 2")
        if not 0 <= self.send_s <= self.slot_s - self.night_s:
            raise ValueError(f"calendar send {self.send_s!r} s: expected 0 <= send <= the day "
                             f"({self.slot_s - self.night_s!r} s)")

    @property
    def day_s(self) -> float:
        """The lit part of a slot."""
        return self.slot_s - self.night_s

    def start(self, k: int) -> float:
        """When slot k begins (its night)."""
        return self.epoch_s + k * self.slot_s

    def slot_at(self, t: float) -> int:
        """The slot that time t falls in."""
        return math.floor((t - self.epoch_s) / self.slot_s + 1e-9)

    def first_at_or_after(self, t: float) -> int:
        """The first slot beginning at or after time t."""
        return math.ceil((t - self.epoch_s) / self.slot_s - 1e-9)

    def slots_for(self, seconds: float, lost_s: float = 0.0) -> int:
        """A window's slots: enough light for `seconds` of transmission plus `lost_s` (once per
        window). A window is one stretch of light from its first day's start to its last day's
        end (the ToR sends through its inner nights: the OCS keeps the circuit): `send_s` in one
        slot, a whole slot more for each further one."""
        send = self.send_s or self.day_s
        need = seconds + lost_s
        return 1 if need <= send else 1 + math.ceil((need - send) / self.slot_s - 1e-9)

    def check(self, first: int, count: int, now: float) -> None:
        """Refuse a window that its entries (slot mod `slots`) would alias onto the current cycle."""
        if first + count - self.slot_at(now) >= self.slots:
            raise ValueError(f"window slots {first}..{first + count - 1} at slot {self.slot_at(now)}: expected "
                             f"within one cycle ({self.slots} slots) of now")


@dataclass(frozen=True, slots=True)
class SlotGrant:
    """A reservation of slots first .. first+count-1 for src -> dst (ToR indexes), the ToR sending in
    each; `nbytes`: the burst; `lost`: the OCS did not set the circuit (one-way
    collision), so the burst goes to a dark port."""

    src: int
    dst: int
    nbytes: int
    first: int
    count: int
    asked: float
    lost: bool = False

    def indexes(self, slots: int) -> list[int]:
        """The `slot` match values of the window (slot k is entry k mod `slots`)."""
        return [k % slots for k in range(self.first, self.first + self.count)]

    def end(self, cal: Calendar) -> float:
        """When the window's last slot ends."""
        return cal.start(self.first + self.count)


@dataclass(frozen=True, slots=True)
class Burst:
    """A burst from a queue's bytes at the request (the paper: exactly those)."""

    growth_bps: float = 0.0  # what is expected to arrive until the window, added to it (0: nothing)
    cap_bytes: int = 1 << 30  # the queue's capacity (hold depth x largest frame)

    def __post_init__(self) -> None:
        if not self.growth_bps >= 0 or not self.cap_bytes >= 1:
            raise ValueError(f"burst growth {self.growth_bps!r} bit/s, cap {self.cap_bytes!r} B: expected >= 0, >= 1")

    def bound(self, nbytes: int, wait_s: float, growth_bps: float | None = None) -> int:
        """The burst's bytes, its window `wait_s` after the request (growth: the queue's own arrival
        rate when the caller measured it, else `growth_bps`)."""
        rate = self.growth_bps if growth_bps is None else growth_bps
        return min(self.cap_bytes, nbytes + math.ceil(rate * max(0.0, wait_s) / 8))


def window(cal: Calendar, timing: Timing, burst: Burst, first: int, nbytes: int, now: float,
           growth_bps: float | None, lost_s: float, pace: float) -> tuple[int, int]:
    """(bytes, slots) of a window from slot `first` for a burst of `nbytes` asked at `now` (TwoWay's
    and OneWay's `request`), refused if it would alias onto the current cycle (`Calendar.check`)."""
    size = burst.bound(nbytes, cal.start(first) - now, growth_bps)
    count = cal.slots_for(timing.transmit_s(size) / pace + timing.guard_s, lost_s)
    cal.check(first, count, now)
    return size, count


class TwoWay:
    """Algorithm 1 on a calendar: N ToRs, one uplink each, on one OCS."""

    def __init__(self, tors: int, cal: Calendar, timing: Timing, burst: Burst | None = None) -> None:
        self.cal, self.timing, self.burst = cal, timing, burst or Burst()
        self.horizon = HorizonScheduler(tors, 1, 1, timing)

    def request(self, src: int, dst: int, nbytes: int, now: float, growth_bps: float | None = None,
                lost_s: float = 0.0, pace: float = 1.0, control_s: float | None = None) -> SlotGrant:
        """Reserve the earliest window both ports allow, asked at `now` with `nbytes` waiting; the
        window adds `lost_s` and sends at `pace` of the uplink's rate (the ToR's hold loop);
        `control_s`: the grant's trip to the ToR, when measured (default T_proc + T_oh)."""
        trip = self.timing.trip_s(control_s)
        # The trip delays the window from the request only, not from a busy port's horizon (see the
        # module's "Two-way"): the OCS switches in the window's first night.
        # The horizons move only once the window is sure: a refused request (beyond one cycle) leaves
        # them as they were, or each retry would push them further and starve the ports.
        g = self.horizon.offer(src, dst, nbytes, now + trip, control_s=0.0)
        first = self.cal.first_at_or_after(g.configure_at)
        size, count = window(self.cal, self.timing, self.burst, first, nbytes, now, growth_bps, lost_s, pace)
        self.horizon.take(g, self.cal.start(first + count))
        return SlotGrant(src, dst, size, first, count, now)


class OneWay:
    """The baseline: the source's uplink is its own to schedule; the destination's is first come."""

    def __init__(self, tors: int, cal: Calendar, timing: Timing, burst: Burst | None = None) -> None:
        if isinstance(tors, bool) or not isinstance(tors, int) or tors < 2:
            raise ValueError(f"one-way tors={tors!r}: expected an integer >= 2")
        self.tors, self.cal, self.timing, self.burst = tors, cal, timing, burst or Burst()
        self.h_src = [0.0] * tors
        self.busy_out: list[set[int]] = [set() for _ in range(tors)]

    def request(self, src: int, dst: int, nbytes: int, now: float, growth_bps: float | None = None,
                lost_s: float = 0.0, pace: float = 1.0, control_s: float | None = None) -> SlotGrant:
        """Send after the fixed offset (T_sw + T_proc + T_oh, as two-way's idle case) once the uplink
        is free; lost if any slot of the window is taken on the destination's downlink. `lost_s`,
        `pace`, `control_s`: as TwoWay's."""
        for name, tor in (("src", src), ("dst", dst)):
            if isinstance(tor, bool) or not isinstance(tor, int) or not 0 <= tor < self.tors:
                raise ValueError(f"one-way {name}={tor!r}: expected a ToR 0..{self.tors - 1}")
        if src == dst or not isinstance(nbytes, int) or nbytes <= 0:
            raise ValueError(f"one-way {src} -> {dst} of {nbytes!r} bytes: expected two ToRs and bytes > 0")
        # the window's first night (the switching, T_sw) begins once the uplink is free and the trip is over
        first = self.cal.first_at_or_after(max(self.h_src[src], now + self.timing.trip_s(control_s)))
        size, count = window(self.cal, self.timing, self.burst, first, nbytes, now, growth_bps, lost_s, pace)
        slots = set(range(first, first + count))
        lost = bool(slots & self.busy_out[dst])
        if not lost:
            self.busy_out[dst] |= slots
        self.h_src[src] = self.cal.start(first + count)
        now_slot = self.cal.slot_at(now)
        self.busy_out[dst] = {k for k in self.busy_out[dst] if k >= now_slot}
        return SlotGrant(src, dst, size, first, count, now, lost)
