"""fabric.p4 at a ToR of seed 001's reservation loop (include/v1model/reservation_tor.p4): a held burst
sends a request on its uplink (a copy of the packet cut to a reservation frame); the ToR sends the
burst only inside the window a grant gives it; a grant on a host port or of another kind is forged
and dropped, one for no request out is late; a request unanswered is asked again (a lost or late grant
loses nothing); one-way takes its window itself and announces it. The test plays the OCS's scheduler
on the uplink (port 2). Each path has its own id: the loop's registers outlive a test."""

from __future__ import annotations

import time

from fabric_helpers import FabricTest, next_hop_mac, routed, tcp_packet
from ptf import testutils
from ptf.testutils import group
from reservation_helpers import ANNOUNCE, GRANT, REQUEST, SCHED, frame, length_entries, loop, offset, parse
from schedule_helpers import ScheduleMixin

from fabric.contract import RESV_LOOP_BUCKETS
from p4rt.entities import TableEntry
from tablegen.reservation_loop import grant_path_entry, request_session, tor_config_entry, window_more_entries
from tablegen.schedule import light_spans

UPLINK, HOST, OCS_DST = 2, 1, 7


class LoopTest(FabricTest, ScheduleMixin):
    """A route to 10.0.2.0/24 on the test's path, held (slot_policy hold, no slot_path entry) and
    reserved through uplink 2 (grant_path, its clone session, window_more, window_length)."""

    path = 0

    def setup_loop(self, mode: str = "two-way", retry_us: int = 5_000_000, offset_slots: int = 1,
                   burst_bytes: int = 50_000) -> None:
        self.add_route("10.0.2.0/24", self.path)
        self.set_version(self.path, 0)
        self.install_clock(SCHED)
        lp = loop(mode, retry_us=retry_us, offset=offset_slots, burst_bytes=burst_bytes)
        cfg = tor_config_entry(lp)
        self.set_default(cfg.table, cfg.action, cfg.params)
        self.insert(request_session(UPLINK))
        self.insert(TableEntry("slot_policy", {"path_id": self.path}, "slot_hold",
                               {"max_hold_us": 3_000_000, "depth": 64, "fresh_us": 0}),
                    grant_path_entry(self.path, UPLINK, next_hop_mac(UPLINK), 0, OCS_DST),
                    *window_more_entries(lp, light_spans(SCHED)), *length_entries())

    def count(self, name: str, index: int | None = None) -> int:
        return self.read_counter(name, self.path if index is None else index)[0]

    def send_held(self, ip_id: int) -> tuple[object, int]:
        """A packet from the host (held: nothing is lit); (the packet, the slot it arrived in)."""
        pkt = tcp_packet(ip_id=ip_id)
        before = self.phase_counts()
        self.send(HOST, pkt)
        deadline = time.monotonic() + 2
        phases: list[tuple[int, bool]] = []
        while not phases and time.monotonic() < deadline:
            phases = self.classified(before)
        return pkt, phases[0][0]

    def request(self, timeout: float = 1.0):
        """The next reservation frame on the uplink (None if none comes)."""
        got = self.collect(timeout=timeout, limit=1)
        self.assertTrue(all(p == UPLINK for p, _ in got), f"only the uplink: {got}")
        return parse(got[0][1]) if got else None


@group("fabric")
class GrantReleasesBurstTest(LoopTest):
    """A held packet asks (a request: its path, the destination's OCS port, its slot, its bytes, a
    new number); nothing leaves until a grant; then it leaves whole by the uplink in the granted
    slot's day, and the loop's time is counted."""

    path = 31

    def runTest(self) -> None:
        self.setup_loop()
        r0, g0 = self.count("resv_requests"), self.count("resv_grants")
        t0 = self.count("resv_loop_time", RESV_LOOP_BUCKETS - 1)
        pkt, slot = self.send_held(1)
        req = self.request()
        self.assertIsNotNone(req, "a request on the uplink")
        self.assertEqual((req.kind, req.path_id, req.dst_port, req.req_slot), (REQUEST, self.path, OCS_DST, slot))
        self.assertGreaterEqual(req.nbytes, len(pkt), "the burst: at least the packet")
        self.assertEqual(self.count("resv_requests"), r0 + 1)
        self.assertEqual(self.collect(timeout=0.3), [], "held: nothing leaves without a grant")
        start = (req.req_slot + 6) % SCHED.slots  # after the 0.3 s wait above
        before = self.phase_counts()
        self.send(UPLINK, frame(kind=GRANT, path_id=self.path, seq=req.seq, req_slot=req.req_slot,
                                asked_at=req.asked_at, start=start, slots=1))
        got = self.collect(timeout=1.5, limit=1)
        self.assertEqual([(p, f) for p, f in got], [(UPLINK, bytes(routed(pkt, UPLINK, next_hop_mac(UPLINK), 0)))],
                         "the held packet, whole, by the uplink")
        phases = self.classified(before)
        self.assertEqual(phases.count((start, False)), 1, f"it left in slot {start}'s day: {sorted(set(phases))}")
        self.assertEqual(self.count("resv_grants"), g0 + 1)
        self.assertEqual(self.count("resv_loop_time", RESV_LOOP_BUCKETS - 1), t0 + 1, "the loop's time (> 8 ms here)")
        testutils.verify_no_other_packets(self)


@group("fabric")
class ForgedAndLateGrantTest(LoopTest):
    """A grant from a host port, a request sent to the ToR, and a grant for a number not out are
    dropped (forged by port, late by path) and release nothing."""

    path = 32

    def runTest(self) -> None:
        self.setup_loop()
        self.send_held(2)
        req = self.request()
        f0, l0 = self.count("resv_forged", HOST), self.count("resv_late")
        fu0 = self.count("resv_forged", UPLINK)
        start = (req.req_slot + 2) % SCHED.slots
        grant = dict(path_id=self.path, seq=req.seq, req_slot=req.req_slot, asked_at=req.asked_at, start=start, slots=2)
        self.send(HOST, frame(kind=GRANT, **grant))
        self.send(UPLINK, frame(kind=REQUEST, **grant))
        self.send(UPLINK, frame(kind=GRANT, **{**grant, "seq": (req.seq + 5) % 65536}))
        self.assertEqual(self.collect(timeout=1.5), [], "nothing released")
        self.assertEqual(self.count("resv_forged", HOST), f0 + 1)
        self.assertEqual(self.count("resv_forged", UPLINK), fu0 + 1, "a request into a ToR")
        self.assertEqual(self.count("resv_late"), l0 + 1)


@group("fabric")
class LostGrantAsksAgainTest(LoopTest):
    """A request unanswered for retry_us is asked again with a new number; the grant of the first,
    arriving after, is late and lights nothing; the second's grant releases the packet."""

    path = 33

    def runTest(self) -> None:
        self.setup_loop(retry_us=300_000)
        pkt, _ = self.send_held(3)
        first = self.request()
        second = self.request(timeout=2.0)
        self.assertIsNotNone(second, "asked again")
        self.assertEqual(second.seq, (first.seq + 1) % 65536)
        l0 = self.count("resv_late")
        start = (second.req_slot + 5) % SCHED.slots
        self.send(UPLINK, frame(kind=GRANT, path_id=self.path, seq=first.seq, req_slot=first.req_slot,
                                asked_at=first.asked_at, start=start, slots=1))
        self.send(UPLINK, frame(kind=GRANT, path_id=self.path, seq=second.seq, req_slot=second.req_slot,
                                asked_at=second.asked_at, start=start, slots=1))
        got = self.collect(timeout=1.5)
        self.assertEqual([p for p, _ in got], [UPLINK], "released once, by the uplink")
        self.assertEqual(got[0][1], bytes(routed(pkt, UPLINK, next_hop_mac(UPLINK), 0)))
        self.assertEqual(self.count("resv_late"), l0 + 1, "the first grant came late")


@group("fabric")
class NextWindowAskedInLastSlotTest(LoopTest):
    """Two-way with a whole burst queued: in its window's last slot a path asks for the next window
    (so one can follow back to back), and the packet of that slot still leaves in it."""

    path = 35

    def runTest(self) -> None:
        self.setup_loop(burst_bytes=1)  # any queue is a whole burst
        pkt, _ = self.send_held(5)
        req = self.request()
        start = (req.req_slot + 3) % SCHED.slots
        self.send(UPLINK, frame(kind=GRANT, path_id=self.path, seq=req.seq, req_slot=req.req_slot,
                                asked_at=req.asked_at, start=start, slots=1))
        got = self.collect(timeout=1.5, limit=2)
        data = [f for p, f in got if parse(f) is None]
        asks = [parse(f) for p, f in got if parse(f) is not None]
        self.assertEqual(data, [bytes(routed(pkt, UPLINK, next_hop_mac(UPLINK), 0))], f"the packet: {got}")
        self.assertEqual([(a.kind, a.seq, a.req_slot) for a in asks], [(REQUEST, (req.seq + 1) % 65536, start)],
                         "the next request, from the window's (only, so last) slot")


@group("fabric")
class NextWindowFollowsAtOnceTest(LoopTest):
    """A next window granted back to back (starting in the slot after the current one's last) is the
    path's from that slot's start, though the current window's until (counted from when the ToR
    asked, up to a slot into the asking slot) is still ahead: a packet there leaves on its first pass,
    it does not go round the loop until the until passes. The first grant echoes the request's time
    50 ms later, as if the ToR had asked 50 ms into its slot, so that the until falls at least 50 ms
    into the next window's first slot."""

    path = 36
    late_ask_us = 50_000

    def runTest(self) -> None:
        self.setup_loop(burst_bytes=1)  # any queue is a whole burst: the window's last slot asks again
        before = self.phase_counts()
        self.send_held(40)
        r1 = self.request()
        w1 = (r1.req_slot + 3) % SCHED.slots
        self.send(UPLINK, frame(kind=GRANT, path_id=self.path, seq=r1.seq, req_slot=r1.req_slot,
                                asked_at=r1.asked_at + self.late_ask_us, start=w1, slots=1))
        got = self.collect(timeout=1.5, limit=2)
        asks = [parse(f) for _, f in got if parse(f) is not None]
        self.assertEqual([a.req_slot for a in asks], [w1], f"the next request, from the window's slot: {got}")
        w2 = (w1 + 1) % SCHED.slots
        self.send(UPLINK, frame(kind=GRANT, path_id=self.path, seq=asks[0].seq, req_slot=w1,
                                asked_at=asks[0].asked_at, start=w2, slots=2))
        time.sleep(0.09)  # past the first window's day: the packet is the second window's
        pkt = tcp_packet(ip_id=41)
        self.send(HOST, pkt)
        got = self.collect(timeout=1.5, limit=1)
        self.assertEqual(got, [(UPLINK, bytes(routed(pkt, UPLINK, next_hop_mac(UPLINK), 0)))], "it left in the window")
        phases = self.classified(before)
        waited = phases.count((w2, False))
        self.assertLessEqual(waited, 1, f"{waited} passes in slot {w2}'s day: it waited for the first window's until")
        self.assertTrue(set(phases) & {(w2, False), ((w2 + 1) % SCHED.slots, False)},
                        f"it left in the second window's day: {sorted(set(phases))}")
        testutils.verify_no_other_packets(self)


@group("fabric")
class OneWayAnnounceTest(LoopTest):
    """One-way: the ToR takes the first slot at least `offset` ahead on its free uplink, announces it
    (no answer needed) and sends the packet in that slot's day."""

    path = 34

    def runTest(self) -> None:
        self.setup_loop("one-way", offset_slots=2)
        before = self.phase_counts()
        pkt, slot = self.send_held(4)
        ann = self.request()
        self.assertEqual((ann.kind, ann.path_id, ann.dst_port, ann.slots), (ANNOUNCE, self.path, OCS_DST, 1))
        self.assertGreaterEqual(offset(ann.start, slot), 2, f"at least the offset ahead of slot {slot}")
        got = self.collect(timeout=1.5, limit=1)
        self.assertEqual([(p, f) for p, f in got], [(UPLINK, bytes(routed(pkt, UPLINK, next_hop_mac(UPLINK), 0)))])
        phases = self.classified(before)
        self.assertEqual(phases.count((ann.start, False)), 1, f"left in its slot's day: {sorted(set(phases))}")
        testutils.verify_no_other_packets(self)
