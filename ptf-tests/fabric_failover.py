"""fabric.p4 fast failover: a dead egress port sends the path's packets to its other version."""

from __future__ import annotations

import logging

from fabric_helpers import FabricTest, next_hop_mac, probe_frame, routed, tcp_packet
from ptf import testutils
from ptf.testutils import group

from p4rt.entities import ActionProfileGroup, ActionProfileMember, GroupMember, TableEntry

log = logging.getLogger("fabric_failover")

PRIMARY, BACKUP = 2, 3
DETECT_TIMEOUT = 5.0  # s for the target to notice a port went down or came back


class FailoverTest(FabricTest):
    """Helpers to watch where a probe flow goes while ports change state."""

    def lands_on(self, pkt, port: int) -> bool:
        """Send one packet and say whether it came out of `port` (anything else is drained)."""
        self.dataplane.flush()
        self.send(1, pkt)
        got = self.collect(timeout=0.3, limit=1)
        return bool(got) and got[0][0] == port


@group("fabric")
class FastFailoverTest(FailoverTest):
    """Version 0's port goes down: the switch itself moves the path to version 1, and back."""

    def runTest(self) -> None:
        self.add_route("10.0.2.0/24", 1)
        self.set_version(1, 0)
        self.add_static_path(1, 0, PRIMARY)
        shadow = self.add_static_path(1, 1, BACKUP)
        pkt = tcp_packet()
        self.expect_routed(pkt, PRIMARY, 0)

        self.set_port_up(PRIMARY, False)  # no controller write from here on
        took = self.wait_until("failover to the backup path", lambda: self.lands_on(pkt, BACKUP),
                               DETECT_TIMEOUT)
        log.info("failover: traffic on the backup path %.3f s after the primary port went down", took)
        self.dataplane.flush()
        rx0, shadow0 = self.read_counter("port_rx", 1), self.read_direct_counter(shadow)
        for _ in range(5):
            self.send(1, pkt)
            # The failed-over copy carries version 1, so downstream switches follow the shadow too.
            testutils.verify_packet(self, routed(pkt, BACKUP, next_hop_mac(BACKUP), 1), BACKUP)
        testutils.verify_no_other_packets(self)
        # The resubmitted copy is not counted twice; the shadow version's entry counts it.
        self.assertEqual(self.read_counter("port_rx", 1)[0] - rx0[0], 5)
        self.assertEqual(self.read_direct_counter(shadow)[0] - shadow0[0], 5)

        self.set_port_up(PRIMARY, True)
        self.wait_until("return to the primary path", lambda: self.lands_on(pkt, PRIMARY), DETECT_TIMEOUT)
        self.dataplane.flush()
        self.expect_routed(pkt, PRIMARY, 0)
        self.assertLess(took, DETECT_TIMEOUT)


@group("fabric")
class EcmpMemberDownTest(FailoverTest):
    """An ECMP version whose chosen member's port is down fails over as well."""

    def runTest(self) -> None:
        self.add_route("10.0.2.0/24", 1)
        self.set_version(1, 0)
        self.add_group_path(1, 0, "ecmp", [PRIMARY])
        self.add_static_path(1, 1, BACKUP)
        pkt = tcp_packet()
        self.expect_routed(pkt, PRIMARY, 0)
        self.set_port_up(PRIMARY, False)
        self.wait_until("failover from the ECMP group", lambda: self.lands_on(pkt, BACKUP), DETECT_TIMEOUT)
        self.dataplane.flush()
        self.expect_routed(pkt, BACKUP, 1)


@group("fabric")
class BothVersionsDownTest(FailoverTest):
    """With both versions' ports down the packet is dropped, never looped or sent to a dead port."""

    def runTest(self) -> None:
        self.add_route("10.0.2.0/24", 1)
        self.add_static_path(1, 0, PRIMARY)
        self.add_static_path(1, 1, BACKUP)
        # Ports 250 and 251 have no liveness group, so both versions of path 2 count as down.
        self.add_route("10.0.3.0/24", 2)
        self.add_static_path(2, 0, 250)
        self.add_static_path(2, 1, 251)
        self.send_expect(1, tcp_packet(ip_dst="10.0.3.3"))
        pkt = tcp_packet()
        self.expect_routed(pkt, PRIMARY, 0)


@group("fabric")
class PortFlapTest(FailoverTest):
    """After its link goes down and up again, a port receives and sends again (OCS dark periods)."""

    def runTest(self) -> None:
        self.add_host("10.0.1.1/32", 1, "00:00:0a:00:01:01")
        self.add_host("10.0.2.2/32", BACKUP, next_hop_mac(BACKUP))
        into = tcp_packet(ip_src="10.0.2.2", ip_dst="10.0.1.1", eth_src=next_hop_mac(BACKUP))
        out = tcp_packet()
        for _ in range(2):
            self.set_port_up(BACKUP, False)
            self.set_port_up(BACKUP, True)
            self.wait_until("port sends after the flap", lambda: self.lands_on(out, BACKUP), DETECT_TIMEOUT)

            def received() -> bool:
                self.dataplane.flush()
                self.send(BACKUP, into)
                got = self.collect(timeout=0.3, limit=1)
                return bool(got) and got[0][0] == 1

            self.wait_until("port receives after the flap", received, DETECT_TIMEOUT)
        self.dataplane.flush()
        self.send_expect(BACKUP, into, routed(into, 1, "00:00:0a:00:01:01", None), 1)


@group("fabric")
class ProbeWaitsForLivenessTest(FailoverTest):
    """A probe the controller sends out of a port (packet-out, how a new circuit is proven) leaves
    only while the data plane has the port live, as the flows the probe speaks for would see it: a
    target notices a link that came back some time later, and a probe that left before then let a
    flip move flows onto a port that still failed them over to the other version (and back: a
    reorder). Here the link stays up and the port's liveness group says down (as PI makes it while
    the watch port is down), then up again."""

    def runTest(self) -> None:
        frame = probe_frame(7)
        down, up, dead, live = (self.new_id() for _ in range(4))
        self.insert(ActionProfileMember("liveness_selector", down, "port_down"),
                    ActionProfileMember("liveness_selector", up, "port_up"))
        self.insert(ActionProfileGroup("liveness_selector", dead, [GroupMember(down, 1, None)]),
                    ActionProfileGroup("liveness_selector", live,
                                       [GroupMember(down, 1, None), GroupMember(up, 1, PRIMARY)]))
        try:
            self.modify(TableEntry("port_liveness", {"port": PRIMARY}, group_id=dead))
            self.packet_out(frame, egress_port=PRIMARY)
            testutils.verify_no_other_packets(self, timeout=0.5)
            self.modify(TableEntry("port_liveness", {"port": PRIMARY}, group_id=live))
            self.packet_out(frame, egress_port=PRIMARY)
            testutils.verify_packet(self, frame, PRIMARY)
            testutils.verify_no_other_packets(self)
        finally:  # the port's own group again, so that the cleanup can delete these
            self.modify(TableEntry("port_liveness", {"port": PRIMARY}, group_id=self.liveness_groups[PRIMARY]))
