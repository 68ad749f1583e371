"""fabric.p4 at a ToR of a time-sliced optical core: the egress choice by slot (slot_path), and an
unlit path's policy: held until its slot (SlotHold, bounded: overflow and expiry counted) or the
path table (electrical). Each packet's slot is read back from schedule_phase's counters
(schedule_helpers); a held packet passes the clock once per round of the hold loop (the switch's ports
253 -> 254, a veth pair paced by the runner: emulation/holdloop.py)."""

from __future__ import annotations

import struct
import time

from fabric_helpers import FabricTest, next_hop_mac, routed, tcp_packet
from ptf import testutils
from ptf.testutils import group
from scapy.layers.inet import IP
from scapy.layers.l2 import Ether
from schedule_helpers import ScheduleMixin, check_clock_probe

from emulation.holdloop import HOLD_PASSES_PER_S
from fabric.contract import PORT_COUNTERS
from fabric.schedule import TimeSchedule
from p4rt.entities import TableEntry
from tablegen.schedule import light_spans, run_mores
from topo.model import HOLD_IN_PORT, HOLD_OUT_PORT

PATH = 7  # the scheduled path; each hold test has its own (SlotTest.path)
SCHED = TimeSchedule(slots=2, day_us=450_000, night_us=150_000)


def uplink(slot: int, port: int, byte_ns: int = 0, more: tuple[int, int] = (0, 0), path: int = PATH) -> TableEntry:
    """`path`'s slot_path entry: out of `port` in `slot`; `more`: (more_after_day, more_after_night),
    the light after the current range when the slot is part of a longer window (0, 0: alone)."""
    return TableEntry("slot_path", {"path_id": path, "slot": slot}, "slot_port",
                      {"port": port, "dmac": next_hop_mac(port), "byte_ns": byte_ns,
                       "more_after_day": more[0], "more_after_night": more[1]})


class SlotTest(FabricTest, ScheduleMixin):
    """A route to 10.0.2.0/24 on path `path`, scheduled: slot 0 by uplink 2, slot 1 by uplink 3 (or none).
    A hold test takes a path of its own: the hold's depth is a register no entry resets, so a packet
    the switch lost in the loop (bmv2 under load, once in CI) would leave it one too high for every
    later test of the same path (hold_depth, emulation/holdloop.py)."""

    path = PATH

    def setup_path(self, policy: str, slot1: bool = True, electrical: int | None = None,
                   max_hold_us: int = 2_000_000, depth: int = 64, sched: TimeSchedule = SCHED,
                   fresh_us: int = 0, byte_ns: int = 0) -> None:
        """Route, the path table's version 0 (`electrical` port, or path_drop), clock, slots, policy."""
        self.add_route("10.0.2.0/24", self.path)
        self.set_version(self.path, 0)
        if electrical is not None:
            self.add_static_path(self.path, 0, electrical)
        self.install_clock(sched)
        entries = [uplink(0, 2, byte_ns, path=self.path)]
        if slot1:
            entries.append(uplink(1, 3, byte_ns, path=self.path))
        if policy == "hold":
            entries.append(TableEntry("slot_policy", {"path_id": self.path}, "slot_hold",
                                      {"max_hold_us": max_hold_us, "depth": depth, "fresh_us": fresh_us}))
        else:
            entries.append(TableEntry("slot_policy", {"path_id": self.path}, "slot_electrical", {}))
        self.insert(*entries)

    def sample_egress(self, want: dict[tuple[int, bool], int], seconds: float) -> set[tuple[int, bool]]:
        """For `seconds`, a packet every 50 ms: each must leave routed by the port `want` gives the
        (slot, night) the clock classified it in; the (slot, night)s sampled."""
        seen = set()
        end = time.monotonic() + seconds
        ip_id = 1
        while time.monotonic() < end:
            pkt = tcp_packet(ip_id=ip_id)
            before = self.phase_counts()
            self.send(1, pkt)
            got = self.collect(timeout=2.0, limit=1)
            phases = self.classified(before)
            self.assertEqual(len(phases), 1, f"classified {phases}")
            port = want[phases[0]]
            self.assertEqual([p for p, _ in got], [port], f"packet in {phases[0]}")
            self.assertEqual(got[0][1], bytes(routed(pkt, port, next_hop_mac(port), 0)))
            seen.add(phases[0])
            ip_id += 1
            time.sleep(0.05)
        return seen

    def port_counts(self) -> dict[tuple[str, int], int]:
        """Packets of each port counter at the input, the uplinks and the hold loop's two ports."""
        return {(n, port): self.read_counter(n, port)[0] for n in PORT_COUNTERS
                for port in (1, 2, HOLD_OUT_PORT, HOLD_IN_PORT)}

    def hold_counts(self) -> dict[str, int]:
        """Packets of the path entered, released, dropped for overflow and for age, so far."""
        return {n: self.read_counter(f"hold_{n}", self.path)[0]
                for n in ("entered", "released", "overflow", "expired", "stale")}


@group("fabric")
class SlotEgressTest(SlotTest):
    """A packet leaves by its slot's uplink (slot 0: port 2, slot 1: port 3), routed and tagged;
    in a night, with the electrical policy, by the path table (port 4)."""

    def runTest(self) -> None:
        self.setup_path("electrical", electrical=4)
        want = {(0, False): 2, (1, False): 3, (0, True): 4, (1, True): 4}
        self.assertEqual(self.sample_egress(want, 2.6), set(want), "every night and day sampled")
        testutils.verify_no_other_packets(self)


@group("fabric")
class SlotWindowTest(SlotTest):
    """A window of consecutive slots on one circuit is one stretch of light: the ToR sends through
    its inner nights (the OCS does not switch inside it), not through its first (the switching),
    and its budget runs to the window's end. Slots 0 and 1 by port 2 as one window (tablegen's
    `run_mores`), the electrical policy (port 4) otherwise; then the same slots alone."""

    def runTest(self) -> None:
        self.setup_path("electrical", slot1=False, electrical=4)
        spans, cycle = light_spans(SCHED)
        window = [uplink(k, 2, more=m, path=self.path) for k, m in zip((0, 1), run_mores(spans, cycle, [0, 1]), strict=True)]
        self.assertEqual(window[1].params["more_after_night"], spans[1][1] - spans[1][0], "the night: a day on")
        self.assertEqual(window[0].params["more_after_day"], spans[1][1] - spans[0][1], "the day: a slot on")
        self.modify(window[0])
        self.insert(window[1])
        through = {(0, False): 2, (1, False): 2, (0, True): 4, (1, True): 2}
        self.assertEqual(self.sample_egress(through, 2.6), set(through), "every night and day sampled")
        self.modify(uplink(1, 2, path=self.path))  # slot 1 alone: its night is the switching again
        alone = {**through, (1, True): 4}
        seen = self.sample_egress(alone, 1.3)
        self.assertIn((1, True), seen, "slot 1's night sampled")
        testutils.verify_no_other_packets(self)


@group("fabric")
class SlotHoldTest(SlotTest):
    """Slot 0 alone reaches the path's ToR: a packet sent in a night or in slot 1 is held and leaves
    on port 2 in slot 0's day, whole; nothing leaves on another port."""

    path = 8

    def runTest(self) -> None:
        self.setup_path("hold", slot1=False)
        c0, p0 = self.hold_counts(), self.port_counts()
        held = lit = passes = 0
        held_s = 0.0
        end = time.monotonic() + 2.6
        ip_id = 100
        while time.monotonic() < end:
            pkt = tcp_packet(ip_id=ip_id)
            before = self.phase_counts()
            t0 = time.monotonic()
            self.send(1, pkt)
            got = self.collect(timeout=3.0, limit=1)
            waited = time.monotonic() - t0
            phases = self.classified(before)
            self.assertEqual([p for p, _ in got], [2], f"packet sent at {phases[:1]} (waited {waited:.2f} s)")
            self.assertEqual(got[0][1], bytes(routed(pkt, 2, next_hop_mac(2), 0)), "held packet intact")
            # One pass in slot 0's day (the one it left in); every other pass a night or slot 1.
            self.assertEqual(phases.count((0, False)), 1, f"passes {sorted(set(phases))}")
            if len(phases) > 1:
                held += 1
                passes += len(phases) - 1
                held_s += waited
                self.assertLess(waited, 2.5, "held about until the next slot 0 day (1.2 s cycle), not lost")
            else:
                lit += 1
            ip_id += 1
            time.sleep(0.05)
        self.assertGreater(held, 0, "some packets were sent while unlit")
        self.assertGreater(lit, 0, "some packets were sent in slot 0's day")
        c = self.hold_counts()
        self.assertEqual((c["entered"] - c0["entered"], c["released"] - c0["released"]), (held, held))
        self.assertEqual((c["overflow"], c["expired"]), (c0["overflow"], c0["expired"]))
        # The loop is the paced port pair: a held packet passes the clock at most the loop's rate (plus
        # its tbf burst), not as fast as the switch could recirculate it, and it does go round.
        self.assertLess(passes, HOLD_PASSES_PER_S * held_s * 1.1 + 2 * held, f"{passes} passes in {held_s:.2f} s held")
        self.assertGreater(passes, 10 * held, f"{passes} passes for {held} held packets")
        # Counted once as traffic (in on port 1, out on port 2); each pass into and out of the loop
        # port's queue (port_enq = port_deq: no queue drop), never in port_rx or port_tx.
        d = {k: v - p0[k] for k, v in self.port_counts().items()}
        self.assertEqual((d[("port_rx", 1)], d[("port_tx", 2)]), (held + lit, held + lit), f"{d}")
        self.assertEqual(d[("port_enq", HOLD_OUT_PORT)], passes, f"one pass each into the loop's queue: {d}")
        self.assertEqual(d[("port_deq", HOLD_OUT_PORT)], passes, f"and out of it: {d}")
        self.assertEqual([d[(n, port)] for n in ("port_rx", "port_tx") for port in (HOLD_OUT_PORT, HOLD_IN_PORT)],
                         [0, 0, 0, 0], f"the loop's ports carry no traffic: {d}")
        testutils.verify_no_other_packets(self)


@group("fabric")
class SlotHoldOrderTest(SlotTest):
    """A packet that arrives lit while its path still holds packets joins them rather than passing
    them (the path's flows keep their order but for the loop's own rotation). The path is always
    lit but has no uplink at first, so the first packets are held; then its slot_path is written
    while packets keep coming: every packet held before the write leaves before any sent after it."""

    path = 9
    attempts = 3

    def runTest(self) -> None:
        always = TimeSchedule(slots=1, day_us=1_000_000, night_us=0)
        # held up to 10 s: on a machine where bmv2 forwards barely more than the loop's 4000 passes a
        # second (4,500 frames/s measured on one, 15,000 on another) a round of 200 takes far longer
        # than 50 ms, and what is tested is the order, not the bound
        self.setup_path("hold", slot1=False, sched=always, depth=250, max_hold_us=10_000_000)
        lit = uplink(0, 2, path=self.path)
        # An attempt in which the held packets all drained before the first later one arrived (the
        # test's own process descheduled past the drain on a loaded machine) tested nothing: its order
        # is checked all the same, and the test tries again, `attempts` times at most.
        # So is one in which a switch's queue dropped a packet (bmv2's 64-frame egress queue on a loaded
        # machine, as port_enq - port_deq counts): every packet that is missing must be such a drop.
        for _ in range(self.attempts):
            if self.attempt(lit, 200):
                return
        self.fail(f"in {self.attempts} attempts every held packet drained before a later one arrived, or a "
                  "queue dropped one")

    def attempt(self, lit, held: int) -> bool:
        """Hold `held` packets, write the uplink, send 40 more; check the order. Whether a later
        packet found packets still held (joined them) and no queue dropped one."""
        self.delete(lit)
        c0, p0 = self.hold_counts(), self.port_counts()
        # enough held that their drain takes rounds of the loop (200 at 4000 passes a second: 50 ms a
        # round), while the later packets are sent back to back right after the write (a few ms)
        for i in range(held):
            self.send(1, tcp_packet(ip_id=1000 + i))
        self.assertEqual(self.collect(timeout=0.2), [], "no uplink yet: everything held")
        self.insert(lit)
        sent = held
        for _ in range(40):
            self.send(1, tcp_packet(ip_id=1000 + sent))
            sent += 1
        got = self.collect(timeout=1.5)
        while len(got) < sent:  # a slow switch drains over several seconds; stop at the first quiet 1.5 s
            more = self.collect(timeout=1.5)
            if not more:
                break
            got += more
        c = {k: v - c0[k] for k, v in self.hold_counts().items()}
        d = {k: v - p0[k] for k, v in self.port_counts().items()}
        queue_drops = sum(d[("port_enq", port)] - d[("port_deq", port)] for port in (2, HOLD_OUT_PORT))
        self.assertEqual({p for p, _ in got}, {2}, f"ports {sorted({p for p, _ in got})}")
        ids = [Ether(raw)[IP].id - 1000 for _, raw in got]
        self.assertEqual(len(ids), len(set(ids)), f"no packet out twice: {ids}")
        if queue_drops and len(ids) + queue_drops == sent:
            return False  # the machine's, not the order's: try again
        self.assertEqual(sorted(ids), list(range(sent)), f"every packet out once; holds {c}; queues dropped "
                                                         f"{queue_drops}")
        first_late = min(i for i, x in enumerate(ids) if x >= held)
        self.assertEqual(sorted(ids[:first_late]), list(range(held)),
                         f"the held packets leave before any later one: {ids}")
        self.assertEqual((c["overflow"], c["expired"]), (0, 0), f"{c}")
        self.assertGreaterEqual(c["entered"], held, f"every packet sent before the write was held: {c}")
        return c["entered"] > held


@group("fabric")
class SlotHoldMarkTest(SlotTest):
    """A hold mark that did not come round the hold loop (a frame from a port that is not HOLD_IN_PORT
    with the mark's ether type) is dropped: nobody holds a packet or releases a held one by sending
    a mark."""

    path = 10

    def runTest(self) -> None:
        always = TimeSchedule(slots=1, day_us=1_000_000, night_us=0)  # one uplink, always lit
        self.setup_path("hold", slot1=False, sched=always)
        c0 = self.hold_counts()
        pkt = tcp_packet(ip_id=500)
        self.send_expect(1, pkt, routed(pkt, 2, next_hop_mac(2), 0), 2)
        # ether type 0x88B8, then the mark: its ether type, path id, version/stale/pad, seq, since (48 bits)
        mark = struct.pack("!HHBI", 0x0800, self.path, 0, 0) + bytes(6)
        forged = bytes(Ether(dst=pkt[Ether].dst, src=pkt[Ether].src, type=0x88B8)) + mark + bytes(pkt[IP])
        self.send_expect(1, forged)
        self.assertEqual(self.hold_counts(), c0, "no hold counter moved")


@group("fabric")
class SlotHoldBoundsTest(SlotTest):
    """The hold is bounded: beyond `depth` packets of the path at once the rest drop (hold_overflow),
    and a packet held longer than max_hold_us drops (hold_expired); both counted apart from each
    other and from the OCS's drops in the dark."""

    path = 11

    def runTest(self) -> None:
        # Slot 0's day is 100 ms of a 1 s cycle; max hold 150 ms: an unlit burst mostly expires. (50 ms
        # let each packet expire before the next arrived where PTF sends a frame every 10-20 ms: no
        # overflow in 8 attempts on one machine.)
        sched = TimeSchedule(slots=2, day_us=100_000, night_us=400_000)
        self.setup_path("hold", slot1=False, max_hold_us=150_000, depth=3, sched=sched)
        n = 6
        for attempt in range(8):
            c0 = self.hold_counts()
            for i in range(n):
                self.send(1, tcp_packet(ip_id=200 + 10 * attempt + i))
            got = self.collect(timeout=0.5)
            c = self.hold_counts()
            entered, overflow = c["entered"] - c0["entered"], c["overflow"] - c0["overflow"]
            released, expired = c["released"] - c0["released"], c["expired"] - c0["expired"]
            unlit = entered + overflow
            what = f"entered {entered} overflow {overflow} released {released} expired {expired} got {len(got)}"
            # Overflow only once `depth` packets are held: all entered in this burst (the last one's
            # are gone, 150 ms at most). Entered may exceed depth: a packet arriving lit while its
            # path holds packets joins them and leaves with them (SlotHoldOrderTest); CI once saw
            # 4 entered and 4 released of a burst.
            if overflow:
                self.assertGreaterEqual(entered, 3, f"overflow only with `depth` packets held: {what}")
            self.assertEqual(released + expired, entered, "every held packet released or expired")
            self.assertEqual(len(got), n - unlit + released, "delivered: the lit ones and the released")
            self.assertTrue(all(p == 2 for p, _ in got), f"ports {[p for p, _ in got]}")
            if overflow >= 1 and expired >= 1:
                testutils.verify_no_other_packets(self)
                return
            time.sleep(0.13)
        self.fail("no burst both overflowed and expired in 8 attempts")


@group("fabric")
class SlotFreshnessTest(SlotTest):
    """A lit decision older than the path's fresh_us when egress takes the packet does not go out:
    egress counts it (hold_stale) and sends it round the hold loop, where ingress decides again. With
    fresh_us 1 us a packet from a host port is stale by egress (its receive ring and the pipeline
    take longer than that); back from the loop it is decided again with its own arrival time, and
    leaves if that pass is fresh (a switch that turns the loop round within 1 us: p4sim's native
    path), or goes round again until it expires, counted. Either way no stale pass goes out: each
    one is a pass round the loop, and only fresh passes reach the uplink. With fresh_us 1 s the same
    packets leave at once."""

    path = 12

    def runTest(self) -> None:
        always = TimeSchedule(slots=1, day_us=1_000_000, night_us=0)  # one uplink, always lit
        self.setup_path("hold", slot1=False, max_hold_us=30_000, sched=always, fresh_us=1)
        c0, p0 = self.hold_counts(), self.port_counts()
        for i in range(5):
            self.send(1, tcp_packet(ip_id=300 + i))
        got = self.collect(timeout=0.3)  # a packet still going round expires 30 ms after it arrived
        d = {k: v - c0[k] for k, v in self.hold_counts().items()}
        p = {k: v - p0[k] for k, v in self.port_counts().items()}
        self.assertGreaterEqual(d["stale"], 5, f"each packet found stale at egress at least once: {d}")
        self.assertEqual(p[("port_deq", HOLD_OUT_PORT)], d["stale"],
                         f"each stale pass went round the loop, not out of the uplink: {d} {p}")
        self.assertEqual(p[("port_tx", 2)], len(got), f"only what left was sent by the uplink: {p}")
        self.assertTrue(all(port == 2 for port, _ in got), f"ports {[port for port, _ in got]}")
        self.assertEqual(len(got) + d["expired"], 5, f"each packet left after the loop or expired: {d}")
        self.assertEqual((d["entered"], d["released"], d["overflow"]), (d["expired"], 0, 0),
                         f"an expired one, sent back round the loop, enters the books as it expires (so "
                         f"entered - released - expired, what the controller counts as held, stays 0): {d}")
        self.modify(TableEntry("slot_policy", {"path_id": self.path}, "slot_hold",
                               {"max_hold_us": 30_000, "depth": 64, "fresh_us": 1_000_000}))
        for i in range(5):
            self.send(1, tcp_packet(ip_id=400 + i))
        got = self.collect(timeout=1.0)
        self.assertEqual([p for p, _ in got], [2] * 5, "fresh decisions leave by the slot's uplink")
        self.assertEqual(self.hold_counts()["stale"] - c0["stale"], d["stale"], "and none was stale")


@group("fabric")
class SlotDayBudgetTest(SlotTest):
    """A lit packet leaves by its slot's uplink only if the uplink can still send it, after what it
    already has to send, before its day ends (UplinkClock, slot_port's byte_ns): here each packet
    takes the uplink 200 ms and the day is 999 ms, so of a burst of 8 at most 5 fit; the rest take
    the electrical path (port 4), counted in slot_over_budget. Without a budget (byte_ns 0) the whole
    burst leaves by the uplink."""

    path = 13

    def runTest(self) -> None:
        day = TimeSchedule(slots=1, day_us=999_000, night_us=1_000)
        n = 8
        pkt = tcp_packet(ip_id=500)
        byte_ns = 200_000_000 // len(pkt)  # 200 ms a packet
        self.setup_path("electrical", slot1=False, electrical=4, sched=day, byte_ns=byte_ns)
        over0 = self.read_counter("slot_over_budget", self.path)[0]
        phases0 = self.phase_counts()
        for i in range(n):
            self.send(1, tcp_packet(ip_id=500 + i))
        got = self.collect(timeout=1.0)
        # a burst sent at a day's end may meet the 1 ms night: those take the path table unbudgeted
        # (CI once saw 6 over the budget, 1 in the night, then 1 lit in the next day)
        nights = self.classified(phases0).count((0, True))
        ports = [p for p, _ in got]
        lit, electrical = ports.count(2), ports.count(4)
        over = self.read_counter("slot_over_budget", self.path)[0] - over0
        self.assertEqual(lit + electrical, n, f"every packet out by the uplink or the path table: {ports}")
        self.assertEqual(over + nights, electrical, f"each packet over the budget counted: {over} (nights "
                                                    f"{nights}), ports {ports}")
        if nights == 0:  # one day: the first ones fit, then none
            self.assertLessEqual(lit, 5, f"at most 5 packets of 200 ms fit in a 999 ms day: {ports}")
            ids = {port: [Ether(raw)[IP].id for p, raw in got if p == port] for port in (2, 4)}
            self.assertLess(max(ids[2], default=0), min(ids[4], default=1 << 16), f"the first ones fit, then none: {ids}")
        self.modify(uplink(0, 2, path=self.path))
        for i in range(n):
            self.send(1, tcp_packet(ip_id=600 + i))
        ports = [p for p, _ in self.collect(timeout=1.0)]
        # without a budget nothing is over it (a packet that met the night, or a stalled switch's
        # late stamp, may still take the path table: CI once saw 2 of 8 at port 4 under load)
        self.assertEqual(len(ports), n, f"every packet out: {ports}")
        self.assertEqual(self.read_counter("slot_over_budget", self.path)[0] - over0, over,
                         f"no budget, nothing counted over it: {ports}")
        self.assertGreater(ports.count(2), 0, f"the burst leaves by the uplink: {ports}")


@group("fabric")
class ClockProbeTest(SlotTest):
    """The packet-in timestamp: a clock probe measures the switch's clock against the host's."""

    def runTest(self) -> None:
        check_clock_probe(self)
