"""ocs.p4's reservation scheduler (seed 001's Algorithm 1 in the data plane,
include/v1model/reservation_ocs.p4): a request gets a grant whose window starts after both ports'
horizons, never overlapping another window of either port; the window lights the calendar (data
frames of the input cross to the output in its slots, the first slot's night dark) and nothing else;
a window beyond the cycle is refused; a forged booking is dropped; one-way announcements book a free
output and count a collision. Slots are read back from schedule_phase's counters (a request's first
pass; its booking passes recirculate and are not classified)."""

from __future__ import annotations

import time

from ocs_schedule import ScheduleTest
from ptf import testutils
from ptf.testutils import group
from reservation_helpers import (
    ANNOUNCE,
    BOOKING,
    GRANT,
    OCS_SCHED,
    REQUEST,
    frame,
    length_entries,
    loop,
    offset,
    parse,
)

from tablegen.reservation_loop import ocs_loop_entries


class ReservationTest(ScheduleTest):
    """The OCS's clock (OCS_SCHED), the loop's config and window lengths; a cycle's wait at the end,
    so the horizons and calendar cells a test booked (registers no entry resets) have expired before
    the next test, whichever: a cell that still holds switches its input whatever schedule that test
    installs (ocs_schedule's tests after these saw frames leave by a window's output)."""

    def setUp(self) -> None:
        super().setUp()
        self.install_clock(OCS_SCHED)
        cfg = ocs_loop_entries(loop(sched=OCS_SCHED))[0]
        self.set_default(cfg.table, cfg.action, cfg.params)
        self.insert(*length_entries())

    def tearDown(self) -> None:
        time.sleep(OCS_SCHED.cycle_ns / 1e9)  # a window ends within a cycle of its request
        super().tearDown()

    def ask(self, port: int, dst: int, nbytes: int, seq: int = 1, kind: int = REQUEST, start: int = 0,
            slots: int = 0) -> tuple[int, object | None]:
        """Send a request (or announcement) on `port` for OCS port `dst`; (the slot it arrived in, the
        frame that came back on `port`, or None)."""
        before = self.phase_counts()
        self.send(port, frame(kind=kind, path_id=9, dst_port=dst, seq=seq, req_slot=5, nbytes=nbytes,
                              asked_at=123456, start=start, slots=slots))
        got = self.collect(timeout=1.0, limit=1) if kind == REQUEST else self.collect(timeout=0.3)
        # its booking passes recirculate, with no timestamp of their own: the clock puts them in
        # slot 0's night (the schedule's epoch is 0); the request's own pass is the other one
        phases = self.classified(before)
        real = [p for p in phases if p != (0, True)] or [(0, True)]
        self.assertEqual(len(real), 1, f"one pass of the request classified: {phases}")
        self.assertTrue(all(p == port for p, _ in got), f"only back out of the input port: {got}")
        grant = parse(got[0][1]) if got else None
        return real[0][0], grant

    def granted(self, port: int, dst: int, nbytes: int) -> tuple[int, int, int]:
        """A request's grant: (the slot it was asked in, the window's first slot, its length)."""
        slot, g = self.ask(port, dst, nbytes)
        self.assertIsNotNone(g, "a grant came back")
        self.assertEqual((g.kind, g.refused, g.path_id, g.seq, g.req_slot, g.asked_at, g.in_port),
                         (GRANT, 0, 9, 1, 5, 123456, port), f"the request's fields echoed: {g.show(dump=True)}")
        return slot, g.start, g.slots


@group("ocs")
class GrantAfterHorizonsTest(ReservationTest):
    """Algorithm 1: the first window starts at the next slot at the earliest; a second request for the
    same output, and a third from the same input, start where the earlier windows end (both horizons),
    so no two windows of a port overlap; lengths follow window_length."""

    def runTest(self) -> None:
        c, s1, n1 = self.granted(1, 3, 15_000)
        self.assertEqual(n1, 2, "15 kB: two slots")
        self.assertEqual(offset(s1, c), 1, f"the next slot (asked in {c}, window {s1})")
        c2, s2, n2 = self.granted(2, 3, 500)
        c3, s3, n3 = self.granted(1, 4, 25_000)
        self.assertEqual((n2, n3), (1, 3))
        end = offset(s1, c) + n1  # the first window's end, from the first request's slot
        for name, asked, start in (("output 3's", c2, s2), ("input 1's", c3, s3)):
            if offset(asked, c) < end:  # asked before the first window ended (a slow switch may not)
                self.assertEqual(offset(start, c), end, f"{name} second window from its horizon")
            else:
                self.assertEqual(offset(start, asked), 1, f"{name} second window: the next slot")
        testutils.verify_no_other_packets(self)
        self.assertGreaterEqual(self.read_counter("resv_booked", 1)[0], 2)


@group("ocs")
class CalendarLightsWindowTest(ReservationTest):
    """A granted window lights its input to its output in its slots only: by day, and by night after
    the first slot (the OCS switches in that one); every other frame of the input is dropped and
    counted, for a whole cycle after the request."""

    def runTest(self) -> None:
        t0 = time.monotonic()
        c, start, n = self.granted(2, 4, 25_000)
        first = offset(start, c)
        data = b"\x02" * 12 + b"\x08\x00" + b"\x45" + b"\x00" * 60  # any frame: the OCS does not parse data
        outcomes = []
        while time.monotonic() - t0 < (OCS_SCHED.slots - 1) * (OCS_SCHED.day_ns + OCS_SCHED.night_ns) / 1e9:
            before = self.phase_counts()
            self.send(2, data)
            got = self.collect(timeout=0.05, limit=1)
            phases = self.classified(before)
            self.assertEqual(len(phases), 1, f"classified {phases}")
            slot, night = phases[0]
            rel = offset(slot, c)
            lit = first <= rel < first + n and not (night and rel == first)
            self.assertEqual([p for p, _ in got], [4] if lit else [], f"frame in slot {slot} night {night}, "
                             f"window {start}+{n} asked in {c}")
            outcomes.append(lit)
        self.assertIn(True, outcomes, "a frame sampled in the window")
        self.assertIn(False, outcomes, "a frame sampled outside it")
        testutils.verify_no_other_packets(self)


@group("ocs")
class RefusedBeyondCycleTest(ReservationTest):
    """Windows end within the cycle (8 slots): after windows of 3 slots at offsets 1 and 4, a third
    would end at 10: refused (refused = 1, no slots, counted), the horizons left where they were."""

    def runTest(self) -> None:
        r0 = self.read_counter("resv_refused", 3)[0]
        c, s1, _ = self.granted(3, 1, 30_000)
        _, s2, _ = self.granted(3, 1, 30_000)
        self.assertEqual((offset(s1, c), offset(s2, c)), (1, 4))
        _, g = self.ask(3, 1, 30_000)
        self.assertEqual((g.kind, g.refused, g.slots), (GRANT, 1, 0), "refused")
        self.assertEqual(self.read_counter("resv_refused", 3)[0], r0 + 1)
        _, g = self.ask(4, 2, 500)  # another input and output: neither busy, the next slot
        self.assertEqual((g.refused, g.slots), (0, 1))


@group("ocs")
class ForgedBookingTest(ReservationTest):
    """A frame from a port of a kind the OCS does not take, with booking state (cursor, cells left,
    until) and all, and a grant sent to the OCS are dropped; the calendar does not light for them."""

    def runTest(self) -> None:
        for cur in range(OCS_SCHED.slots):
            self.send(4, frame(kind=BOOKING, dst_port=1, in_port=4, cursor=cur, left=1, slots=1, expires=(1 << 47)))
        self.send(4, frame(kind=GRANT, dst_port=1, in_port=4))
        testutils.verify_no_other_packets(self)
        data = b"\x02" * 12 + b"\x08\x00" + b"\x45" + b"\x00" * 60
        end = time.monotonic() + OCS_SCHED.cycle_ns / 1e9
        while time.monotonic() < end:
            self.send(4, data)
            time.sleep(0.05)
        testutils.verify_no_other_packets(self)


@group("ocs")
class OneWayCollisionTest(ReservationTest):
    """One-way: an announced window on a free output is booked (no answer); a second one onto the same
    output's slots collides: counted, not booked."""

    def runTest(self) -> None:
        b0, x0 = self.read_counter("resv_booked", 1)[0], self.read_counter("resv_collided", 2)[0]
        before = self.phase_counts()
        self.send(1, frame(kind=REQUEST, dst_port=2, nbytes=1))  # only to read the slot
        self.collect(timeout=1.0, limit=1)  # its grant
        cur = self.classified(before)[0][0]
        start = (cur + 3) % OCS_SCHED.slots
        _, got = self.ask(1, 4, 0, kind=ANNOUNCE, start=start, slots=2)
        self.assertIsNone(got, "nothing answers an announcement")
        _, got = self.ask(2, 4, 0, kind=ANNOUNCE, start=(start + 1) % OCS_SCHED.slots, slots=1)
        self.assertIsNone(got)
        self.assertEqual(self.read_counter("resv_booked", 1)[0] - b0, 2, "the request and the first announcement")
        self.assertEqual(self.read_counter("resv_collided", 2)[0] - x0, 1, "the second collided")
        testutils.verify_no_other_packets(self)
