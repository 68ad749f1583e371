"""fabric.p4 gradual (flowlet-gated) flip: a flow moves to the new version only at a flowlet boundary."""

from __future__ import annotations

import time

from fabric_helpers import (
    ETHERTYPE_PATH_TAG,
    HOST_MAC,
    FabricTest,
    PathTag,
    next_hop_mac,
    port_mac,
    routed,
    tagged,
    tcp_packet,
)
from ptf import testutils
from ptf.testutils import group
from scapy.layers.inet import IP, TCP
from scapy.layers.l2 import Ether

from fabric.contract import DRAIN_PROBE_SESSION
from p4rt.resources import CloneSession, Replica

OLD, NEW = 2, 3  # ports of version 0 (old path) and version 1 (new path)
# Test timing (loose enough for a loaded 2-core machine): packets 20-30 ms apart stay in a flowlet.
GAP_US, STEP_S = 300_000, 0.02


class FlowletTest(FabricTest):
    """Path 1: version 0 on port OLD is active, version 1 on port NEW is written (the new path).

    The flowlet registers outlive a test (the pipeline is pushed once per run), so every test uses
    its own TCP source port (its own flow).
    """

    sport = 0

    def setUp(self) -> None:
        super().setUp()
        self.add_route("10.0.2.0/24", 1)
        self.add_static_path(1, 0, OLD)
        self.set_version(1, 0)
        self.add_static_path(1, 1, NEW)

    def pkt(self, i: int = 1, sport: int | None = None) -> Ether:
        """Packet `i` (IPv4 id) of this test's flow."""
        return tcp_packet(sport=sport or self.sport, ip_id=i)

    def ports_of(self, got: list[tuple[int, bytes]]) -> list[tuple[int, int]]:
        """(IPv4 id, port) of each received frame, checking its tag matches the port's version."""
        out = []
        for port, frame in got:
            eth = Ether(frame)
            self.assertIn(port, (OLD, NEW), f"packet on port {port}")
            self.assertEqual(eth[PathTag].version, 0 if port == OLD else 1, "version does not match path")
            out.append((eth[IP].id, port))
        return out


@group("fabric")
class FlowletDefaultTest(FlowletTest):
    """flowlet_config's default is set_flowlet(8000 us, 300000 us, 0 ns a byte, no pause) (p4src/README.md)."""

    def runTest(self) -> None:
        dflt = self.read_default("flowlet_config")
        self.assertEqual((dflt.action, dict(dflt.params)),
                         ("set_flowlet", {"gap_us": 8000, "max_hold_us": 300000, "byte_ns": 0, "pause": 0}))


@group("fabric")
class FlowletWaitsForGapTest(FlowletTest):
    """A flow sending with small gaps stays on the old version, then moves after an idle gap > GAP."""

    sport = 40001

    def runTest(self) -> None:
        self.set_flowlet(GAP_US, 30_000_000)  # MAX_HOLD out of reach: only a gap moves the flow
        self.send(1, self.pkt(0))
        testutils.verify_packet(self, routed(self.pkt(0), OLD, next_hop_mac(OLD), 0), OLD)
        self.flip_version(1, 1, gradual=True)
        for i in range(1, 11):
            self.send(1, self.pkt(i))
            time.sleep(STEP_S)
        got = self.ports_of(self.collect(timeout=0.5, limit=10))
        self.assertEqual(got, [(i, OLD) for i in range(1, 11)], "a packet left the flowlet early")
        # Another flow, never seen before, starts on the new version at once.
        other = self.pkt(99, sport=self.sport + 1000)
        self.send(1, other)
        testutils.verify_packet(self, routed(other, NEW, next_hop_mac(NEW), 1), NEW)
        time.sleep(2 * GAP_US / 1e6)  # the flowlet ends
        for i in range(11, 14):
            self.send(1, self.pkt(i))
            testutils.verify_packet(self, routed(self.pkt(i), NEW, next_hop_mac(NEW), 1), NEW)
        testutils.verify_no_other_packets(self)


@group("fabric")
class FlowletGapCountsFromDepartureTest(FlowletTest):
    """With BYTE_NS, an idle gap starts when the flow's packets have left at line rate, not on arrival."""

    sport = 40004

    def runTest(self) -> None:
        length = len(self.pkt(0))
        tx_s = 1.0  # each packet keeps the (slow) port busy for 1 s: length x byte_ns / 1024 us
        self.set_flowlet(GAP_US, 30_000_000, int(tx_s * 1e6 * 1024 / length))
        self.send(1, self.pkt(0))
        testutils.verify_packet(self, routed(self.pkt(0), OLD, next_hop_mac(OLD), 0), OLD)
        self.flip_version(1, 1, gradual=True)
        # 2 GAP after the arrival, but the first packet is still leaving: not a gap, no move
        time.sleep(2 * GAP_US / 1e6)
        self.send(1, self.pkt(1))
        testutils.verify_packet(self, routed(self.pkt(1), OLD, next_hop_mac(OLD), 0), OLD)
        # both have left 2 s after the first arrival; at 2.6 s GAP has passed since: the flow moves
        time.sleep(2 * tx_s)
        self.expect_routed(self.pkt(2), NEW, 1)


@group("fabric")
class FlowletMaxHoldTest(FlowletTest):
    """A flow that never pauses moves once the change has waited MAX_HOLD, and never goes back."""

    sport = 40002

    def runTest(self) -> None:
        hold_s = 0.4
        self.set_flowlet(GAP_US, int(hold_s * 1e6))
        self.send(1, self.pkt(0))
        testutils.verify_packet(self, routed(self.pkt(0), OLD, next_hop_mac(OLD), 0), OLD)
        self.flip_version(1, 1, gradual=True)
        t0, sent = time.monotonic(), []
        i = 1
        while time.monotonic() - t0 < 3 * hold_s:
            sent.append((i, time.monotonic() - t0))
            self.send(1, self.pkt(i))
            i += 1
            time.sleep(STEP_S)
        got = self.ports_of(self.collect(timeout=0.5, limit=len(sent)))
        self.assertEqual([pid for pid, _ in got], [pid for pid, _ in sent], "lost or reordered")
        ports = [port for _, port in got]
        self.assertIn(NEW, ports, "the flow never moved")
        first_new = ports.index(NEW)
        self.assertGreater(first_new, 0, "the flow moved at once, without waiting")
        self.assertEqual(set(ports[first_new:]), {NEW}, "the flow went back to the old version")
        # The flip's write and the first packet are both before t0: it moved no earlier than MAX_HOLD.
        self.assertGreaterEqual(sent[first_new][1], hold_s - 0.05, f"moved after {sent[first_new][1]:.3f} s")
        testutils.verify_no_other_packets(self)


@group("fabric")
class FlowletImmediateOverridesTest(FlowletTest):
    """An immediate set_version moves a flow at once, even with a gradual change pending."""

    sport = 40003

    def runTest(self) -> None:
        self.set_flowlet(GAP_US, 30_000_000)
        self.send(1, self.pkt(0))
        testutils.verify_packet(self, routed(self.pkt(0), OLD, next_hop_mac(OLD), 0), OLD)
        self.flip_version(1, 1, gradual=True)
        self.send(1, self.pkt(1))
        testutils.verify_packet(self, routed(self.pkt(1), OLD, next_hop_mac(OLD), 0), OLD)  # pending
        self.flip_version(1, 1)
        self.send(1, self.pkt(2))
        testutils.verify_packet(self, routed(self.pkt(2), NEW, next_hop_mac(NEW), 1), NEW)
        # The immediate write kept the flow's state in step: a gradual flip back holds it on NEW.
        self.flip_version(1, 0, gradual=True)
        self.send(1, self.pkt(3))
        testutils.verify_packet(self, routed(self.pkt(3), NEW, next_hop_mac(NEW), 1), NEW)
        self.flip_version(1, 0)
        self.expect_routed(self.pkt(4), OLD, 0)


@group("fabric")
class FlowletFailoverTest(FlowletTest):
    """Fast failover overrides the flowlet gate: a flow held on a dead version takes the other one."""

    sport = 40005

    def runTest(self) -> None:
        self.set_flowlet(30_000_000, 30_000_000)  # neither a gap nor the hold can move the flow
        self.send(1, self.pkt(0))
        testutils.verify_packet(self, routed(self.pkt(0), OLD, next_hop_mac(OLD), 0), OLD)
        self.flip_version(1, 1, gradual=True)
        self.send(1, self.pkt(1))
        testutils.verify_packet(self, routed(self.pkt(1), OLD, next_hop_mac(OLD), 0), OLD)  # held
        self.set_port_up(OLD, False)
        self.wait_until("failover to NEW", lambda: self._goes_to(self.pkt(2), NEW))
        self.set_port_up(OLD, True)
        self.wait_until("back on OLD", lambda: self._goes_to(self.pkt(3), OLD))
        testutils.verify_no_other_packets(self)

    def _goes_to(self, pkt: Ether, port: int) -> bool:
        self.send(1, pkt)
        got = self.collect(timeout=0.3)
        return bool(got) and all(p == port for p, _ in got)


@group("fabric")
class FlowletPauseUntilDrainedTest(FlowletTest):
    """With PAUSE, a pending TCP flow's ACKs reach its sender with window 0 until everything it sent is
    acknowledged, and the idle time that makes is no flowlet gap. The held ACK that leaves one segment
    sends a drain probe on the old path, right behind that segment: a zero-length segment of the flow,
    one byte before the acknowledgement, which its receiver answers at once. That answer (everything
    acknowledged) keeps its window, and the flow's next segment moves."""

    sport = 40006
    seg = 1000  # payload bytes of each data segment
    opts = [("NOP", None), ("NOP", None), ("Timestamp", (11, 22))]  # 12 bytes the probe leaves behind

    def data(self, i: int) -> Ether:
        """Data segment `i` of the flow from the host behind port 1 (sequence numbers from 1000)."""
        return (Ether(dst=port_mac(1), src=HOST_MAC) / IP(src="10.0.1.1", dst="10.0.2.2", id=i)
                / TCP(sport=self.sport, dport=80, flags="A", seq=1000 * (i + 1), ack=7) / (b"d" * self.seg))

    def ack(self, upto: int, window: int = 5000) -> Ether:
        """The receiver's ACK of segments 0..upto-1 as it arrives from the fabric on the old path, tagged
        (scapy computes its checksums, so the switch's incremental TCP checksum update is checked byte
        for byte in what it delivers)."""
        return tagged(Ether(dst=port_mac(OLD), src=next_hop_mac(OLD)) / IP(src="10.0.2.2", dst="10.0.1.1", id=upto)
                      / TCP(sport=80, dport=self.sport, flags="A", seq=7, ack=1000 * (upto + 1), window=window,
                            options=self.opts), 0)

    def delivered(self, upto: int, window: int) -> Ether:
        """That ACK as the sender gets it: untagged, routed, with `window`."""
        return routed(self.ack(upto, window), 1, HOST_MAC, None)

    def probe(self, upto: int) -> Ether:
        """The drain probe that ACK makes, as it leaves on the old path: addresses and ports swapped,
        sequence one before the acknowledgement, 40 bytes of IPv4 (checksums computed by scapy), then
        the ACK's TCP options as bytes past the IPv4 length."""
        p = (Ether(dst=next_hop_mac(OLD), src=port_mac(OLD), type=ETHERTYPE_PATH_TAG)
             / PathTag(version=0, hops=1, type=0x0800) / IP(src="10.0.1.1", dst="10.0.2.2", id=upto, ttl=63)
             / TCP(sport=self.sport, dport=80, flags="A", seq=1000 * (upto + 1) - 1, ack=7, window=5000))
        return Ether(bytes(p) + bytes(TCP(options=self.opts))[20:])

    def sent(self, i: int, port: int) -> None:
        self.send(1, self.data(i))
        testutils.verify_packet(self, routed(self.data(i), port, next_hop_mac(port), int(port == NEW)), port)

    def runTest(self) -> None:
        self.add_host("10.0.1.1/32", 1, HOST_MAC)
        self.insert(CloneSession(DRAIN_PROBE_SESSION, [Replica(self.cpu_port)]))  # as tablegen writes it
        self.set_flowlet(GAP_US, 30_000_000, 0, pause=1)  # neither a gap nor MAX_HOLD: only draining
        self.sent(0, OLD)
        self.flip_version(1, 1, gradual=True)
        self.sent(1, OLD)  # segments 0-2 in flight: the move is pending
        self.sent(2, OLD)
        self.send(OLD, self.ack(1))  # two segments unacknowledged: the sender must wait
        testutils.verify_packet(self, self.delivered(1, 0), 1)
        time.sleep(2 * GAP_US / 1e6)  # idle because it was held: the old path may still hold segments
        self.sent(3, OLD)
        self.send(OLD, self.ack(2))
        testutils.verify_packet(self, self.delivered(2, 0), 1)
        testutils.verify_no_other_packets(self)  # two segments left: the receiver ACKs them at once
        self.send(OLD, self.ack(3))  # one left, whose ACK may be delayed: held, and a probe behind it
        testutils.verify_packet(self, self.delivered(3, 0), 1)
        testutils.verify_packet(self, self.probe(3), OLD)
        self.send(OLD, self.ack(4))  # the receiver's answer: drained, the real window goes through
        testutils.verify_packet(self, self.delivered(4, 5000), 1)
        self.sent(4, NEW)
        self.send(OLD, self.ack(5))  # moved: nothing pending, ACKs pass untouched
        testutils.verify_packet(self, self.delivered(5, 5000), 1)
        testutils.verify_no_other_packets(self)


@group("fabric")
class FlowletTcpMovesByAcksTest(FlowletPauseUntilDrainedTest):
    """With PAUSE, an idle gap does not move a TCP flow that has data unacknowledged (its old path may
    be stalled for longer than GAP); the ACK of everything it sent does."""

    sport = 40007

    def runTest(self) -> None:
        self.add_host("10.0.1.1/32", 1, HOST_MAC)
        self.set_flowlet(GAP_US, 30_000_000, 0, pause=1)  # MAX_HOLD out of reach
        self.sent(0, OLD)
        self.flip_version(1, 1, gradual=True)
        self.sent(1, OLD)  # pending; segments 0-1 in flight
        time.sleep(2 * GAP_US / 1e6)  # a gap, but nothing acknowledged: 0-1 may still be on the old path
        self.sent(2, OLD)
        self.send(OLD, self.ack(3))  # everything acknowledged: nothing to hold, the window goes through
        testutils.verify_packet(self, self.delivered(3, 5000), 1)
        self.sent(3, NEW)
        testutils.verify_no_other_packets(self)
