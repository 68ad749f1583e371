"""fabric.p4: priority table, LPM routing with MAC rewrite, TTL and checksum, tag strip, drops."""

from __future__ import annotations

from fabric_helpers import FabricTest, next_hop_mac, routed, tagged, tcp_packet
from ptf import testutils
from ptf.testutils import group, simple_arp_packet


@group("fabric")
class AclPriorityTest(FabricTest):
    """Overlapping ACL entries: the highest priority wins; the ACL overrides routing."""

    def runTest(self) -> None:
        self.add_route("10.0.2.0/24", 1)
        self.set_version(1, 0)
        self.add_static_path(1, 0, 4)
        # Low: everything to 10.0.2.0/24 -> port 2. High: from 10.0.1.1 to 10.0.2.2 only -> port 3.
        self.add_acl(10, "acl_forward", {"port": 2}, ipv4_dst=("10.0.2.0", "255.255.255.0"))
        self.add_acl(20, "acl_forward", {"port": 3}, ipv4_src=("10.0.1.1", "255.255.255.255"),
                     ipv4_dst=("10.0.2.2", "255.255.255.255"))
        # Both match: priority 20 wins; ACL frames leave unchanged (no TTL, no MAC rewrite).
        pkt = tcp_packet(ip_dst="10.0.2.2")
        self.send_expect(1, pkt, pkt, 3)
        # Only the low entry matches.
        pkt = tcp_packet(ip_dst="10.0.2.9")
        self.send_expect(1, pkt, pkt, 2)
        # A higher-priority drop restricted to ingress port 1 (optional match).
        self.add_acl(30, "acl_drop", ipv4_dst=("10.0.2.0", "255.255.255.0"), ingress_port=1)
        self.send_expect(1, tcp_packet(ip_dst="10.0.2.2"))
        pkt = tcp_packet(ip_dst="10.0.2.2")
        self.send_expect(2, pkt, pkt, 3)  # other ingress port: the drop does not apply, priority 20 does


@group("fabric")
class AclToCpuTest(FabricTest):
    """acl_to_cpu sends the packet to the controller with its ingress port."""

    def runTest(self) -> None:
        self.add_acl(5, "acl_to_cpu", ipv4_src=("10.9.0.0", "255.255.0.0"))
        pkt = tcp_packet(ip_src="10.9.1.1", ip_dst="10.0.2.2")
        self.send(3, pkt)
        got = self.packet_in()
        self.assertIsNotNone(got, "no packet-in for acl_to_cpu")
        self.assertEqual(got.metadata.get("ingress_port"), 3)
        self.assertEqual(got.payload, bytes(pkt))
        testutils.verify_no_other_packets(self)


@group("fabric")
class LpmRoutingTest(FabricTest):
    """Longest prefix wins; MACs rewritten, TTL decremented, checksum right, tag pushed on paths."""

    def runTest(self) -> None:
        self.add_route("10.0.0.0/8", 1)
        self.add_route("10.0.2.0/24", 2)
        self.add_host("10.0.2.5/32", 4, "00:00:0a:00:02:05")
        self.add_static_path(1, 0, 2)
        self.add_static_path(2, 0, 3)
        cases = [("10.7.7.7", 2, 0), ("10.0.2.9", 3, 0), ("10.0.2.5", 4, None)]
        for dst, port, version in cases:
            pkt = tcp_packet(ip_dst=dst, ttl=64)
            dmac = "00:00:0a:00:02:05" if version is None else next_hop_mac(port)
            self.send_expect(1, pkt, routed(pkt, port, dmac, version), port)


@group("fabric")
class TtlAndMissTest(FabricTest):
    """TTL 1 and 0 are dropped, route misses are dropped, non-IPv4 frames are dropped."""

    def runTest(self) -> None:
        self.add_route("10.0.2.0/24", 1)
        self.add_static_path(1, 0, 2)
        for ttl in (0, 1):
            self.send(1, tcp_packet(ttl=ttl))
        self.send(1, tcp_packet(ip_dst="192.168.1.1"))
        self.send_expect(1, simple_arp_packet())
        pkt = tcp_packet(ttl=2)
        self.expect_routed(pkt, 2, 0)


@group("fabric")
class TagStripAtHostTest(FabricTest):
    """The egress switch removes the path tag before the host port (any version, any hop count)."""

    def runTest(self) -> None:
        self.add_host("10.0.1.1/32", 1, "00:00:0a:00:01:01")
        for version, hops in ((0, 1), (1, 3)):
            pkt = tcp_packet(ip_src="10.0.2.2", ip_dst="10.0.1.1", eth_src="00:00:00:00:0b:02")
            self.send_expect(2, tagged(pkt, version, hops), routed(pkt, 1, "00:00:0a:00:01:01", None), 1)


@group("fabric")
class FullSizeFrameTest(FabricTest):
    """A 1514-byte frame leaves a fabric port as 1518 bytes with its tag (fabric MTU >= 1504)."""

    def runTest(self) -> None:
        self.add_route("10.0.2.0/24", 1)
        self.add_static_path(1, 0, 2)
        pkt = tcp_packet(pktlen=1514)
        expected = routed(pkt, 2, next_hop_mac(2), 0)
        self.assertEqual(len(bytes(expected)), 1518)
        self.send_expect(1, pkt, expected, 2)
