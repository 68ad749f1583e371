"""fabric.p4 controller I/O and counters: probe packet-out/packet-in, port and path counters."""

from __future__ import annotations

from fabric_helpers import FabricTest, next_hop_mac, probe_frame, routed, tcp_packet
from ptf import testutils
from ptf.testutils import group, simple_arp_packet


@group("fabric")
class PacketOutTest(FabricTest):
    """A packet-out leaves unchanged on the port it names, bypassing every table."""

    def runTest(self) -> None:
        self.add_acl(1, "acl_drop", ipv4_dst=("0.0.0.0", "0.0.0.0"))  # would drop any routed IPv4
        frame = probe_frame(7)
        self.packet_out(frame, egress_port=2)
        testutils.verify_packet(self, frame, 2)
        ip = bytes(tcp_packet(ttl=1))  # TTL 1 and an ACL drop: still sent as is
        self.packet_out(ip, egress_port=3)
        testutils.verify_packet(self, ip, 3)
        testutils.verify_no_other_packets(self)


@group("fabric")
class ProbePacketInTest(FabricTest):
    """A probe received on a port reaches the controller with that ingress port."""

    def runTest(self) -> None:
        for port in (2, 4):
            frame = probe_frame(port)
            self.send(port, frame)
            got = self.packet_in()
            self.assertIsNotNone(got, f"no packet-in for the probe on port {port}")
            self.assertEqual(got.metadata.get("ingress_port"), port)
            self.assertEqual(got.payload, frame)
        testutils.verify_no_other_packets(self)
        self.assertEqual(self.drain_packet_ins(), 0)


@group("fabric")
class ProbeRoundTripTest(FabricTest):
    """Packet-out on one port, looped back into another port, packet-in: how a new circuit is proven."""

    def runTest(self) -> None:
        frame = probe_frame(42)
        self.packet_out(frame, egress_port=2)
        testutils.verify_packet(self, frame, 2)
        self.send(3, frame)  # the "circuit" from port 2's far end into port 3
        got = self.packet_in()
        self.assertIsNotNone(got)
        self.assertEqual((got.metadata.get("ingress_port"), got.payload), (3, frame))


@group("fabric")
class CountersTest(FabricTest):
    """port_rx, port_enq, port_deq, port_tx and the path's direct counter count packets and bytes; a
    dropped packet is received but never enqueued."""

    def runTest(self) -> None:
        self.add_route("10.0.2.0/24", 1)
        path = self.add_static_path(1, 0, 2)
        rx0, tx0 = self.read_counter("port_rx", 1), self.read_counter("port_tx", 2)
        enq0, deq0 = self.read_counter("port_enq", 2), self.read_counter("port_deq", 2)
        path0 = self.read_direct_counter(path)
        self.assertEqual(path0, (0, 0))
        n = 10
        pkt = tcp_packet(pktlen=100)
        for _ in range(n):
            self.send(1, pkt)
            testutils.verify_packet(self, routed(pkt, 2, next_hop_mac(2), 0), 2)
        testutils.verify_no_other_packets(self)
        rx = self.wait_counter("port_rx", 1, rx0[0] + n)
        tx = self.wait_counter("port_tx", 2, tx0[0] + n)
        self.assertEqual((rx[0] - rx0[0], rx[1] - rx0[1]), (n, n * 100))
        # bmv2 counts a packet's ingress length, in egress too: the pushed tag is not counted.
        self.assertEqual((tx[0] - tx0[0], tx[1] - tx0[1]), (n, n * 100))
        packets, octets = self.read_direct_counter(path)
        self.assertEqual(packets, n)
        self.assertEqual(octets, n * 100)
        # handed to port 2's queue and taken out of it: equal while nothing overflows
        self.assertEqual(self.wait_counter("port_enq", 2, enq0[0] + n)[0] - enq0[0], n)
        self.assertEqual(self.wait_counter("port_deq", 2, deq0[0] + n)[0] - deq0[0], n)
        # not IPv4: dropped in ingress, so counted received and never enqueued on any port
        ports = (1, 2, 3, self.cpu_port)
        enq = [self.read_counter("port_enq", p)[0] for p in ports]
        self.send_expect(1, bytes(simple_arp_packet()))
        self.wait_counter("port_rx", 1, rx[0] + 1)
        self.assertEqual([self.read_counter("port_enq", p)[0] for p in ports], enq)
