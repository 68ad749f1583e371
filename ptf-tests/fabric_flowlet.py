"""fabric.p4 gradual (flowlet-gated) flip: a flow moves to the new version only at a flowlet boundary."""

from __future__ import annotations

import time

from fabric_helpers import FabricTest, PathTag, next_hop_mac, routed, tcp_packet
from ptf import testutils
from ptf.testutils import group
from scapy.layers.inet import IP
from scapy.layers.l2 import Ether

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
    """flowlet_config's default is set_flowlet(8000 us, 300000 us, 0 ns a byte) (p4src/README.md)."""

    def runTest(self) -> None:
        dflt = self.read_default("flowlet_config")
        self.assertEqual((dflt.action, dict(dflt.params)),
                         ("set_flowlet", {"gap_us": 8000, "max_hold_us": 300000, "byte_ns": 0}))


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
        self.send(1, self.pkt(2))
        testutils.verify_packet(self, routed(self.pkt(2), NEW, next_hop_mac(NEW), 1), NEW)
        testutils.verify_no_other_packets(self)


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
        self.send(1, self.pkt(4))
        testutils.verify_packet(self, routed(self.pkt(4), OLD, next_hop_mac(OLD), 0), OLD)
        testutils.verify_no_other_packets(self)


@group("fabric")
class FlowletFailoverTest(FlowletTest):
    """Fast failover overrides the flowlet gate: a flow held on a dead version takes the other one."""

    sport = 40004

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
