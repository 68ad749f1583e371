"""ocs.p4: one-to-one cross-connect on ingress port, frames unchanged, dark ports drop and count."""

from __future__ import annotations

from p4rt_base import P4RuntimeTest
from ptf import testutils
from ptf.testutils import group, simple_eth_packet, simple_tcp_packet

from p4rt.entities import TableEntry


class OcsTest(P4RuntimeTest):
    """P4RuntimeTest with ocs.p4's circuit table."""

    def connect(self, a: int, b: int) -> list[TableEntry]:
        """An emulated circuit a <-> b: two entries (returned, to disconnect them)."""
        entries = [TableEntry("circuit", {"ingress_port": a}, "cross_connect", {"port": b}),
                   TableEntry("circuit", {"ingress_port": b}, "cross_connect", {"port": a})]
        self.insert(*entries)
        return entries


def frames() -> list[bytes]:
    """Frames of several kinds: IPv4 TCP, a tagged frame, raw Ethernet, a bad IPv4 checksum."""
    tcp = simple_tcp_packet(ip_ttl=1)
    raw = simple_eth_packet(eth_type=0x88B5, pktlen=80)
    bad = bytearray(bytes(simple_tcp_packet()))
    bad[24] ^= 0xFF  # IPv4 header checksum
    return [bytes(tcp), bytes(raw), bytes(bad)]


@group("ocs")
class CrossConnectTest(OcsTest):
    """Frames cross the circuit unchanged, both ways, whatever their headers."""

    def runTest(self) -> None:
        self.connect(1, 2)
        self.connect(3, 4)
        for a, b in ((1, 2), (2, 1), (3, 4), (4, 3)):
            for frame in frames():
                self.send(a, frame)
                testutils.verify_packet(self, frame, b)
        testutils.verify_no_other_packets(self)


@group("ocs")
class DarkPortTest(OcsTest):
    """A port without a circuit drops everything and counts it in dark_drops."""

    def runTest(self) -> None:
        self.connect(1, 2)
        dark0, rx0 = self.read_counter("dark_drops", 3), self.read_counter("port_rx", 3)
        lit0 = self.read_counter("dark_drops", 1)
        n = 7
        for _ in range(n):
            self.send(3, frames()[0])
        testutils.verify_no_other_packets(self)
        dark = self.wait_counter("dark_drops", 3, dark0[0] + n)
        self.assertEqual(dark[0] - dark0[0], n)
        self.assertEqual(self.read_counter("port_rx", 3)[0] - rx0[0], n)
        self.send_expect(1, frames()[1], frames()[1], 2)
        self.assertEqual(self.read_counter("dark_drops", 1), lit0)


@group("ocs")
class ReconfigureTest(OcsTest):
    """Moving a circuit (delete, insert) makes the old peer dark and the new peer lit."""

    def runTest(self) -> None:
        old = self.connect(1, 2)
        frame = frames()[0]
        self.send(1, frame)
        testutils.verify_packet(self, frame, 2)
        self.delete(*old)
        self.connect(1, 3)
        self.send_expect(2, frame)
        self.send_expect(1, frame, frame, 3)


@group("ocs")
class OcsCountersTest(OcsTest):
    """port_rx, port_enq, port_deq and port_tx count packets and bytes of every port."""

    def runTest(self) -> None:
        self.connect(1, 2)
        frame = bytes(simple_tcp_packet(pktlen=200))
        rx0, tx0 = self.read_counter("port_rx", 1), self.read_counter("port_tx", 2)
        enq0, deq0 = self.read_counter("port_enq", 2), self.read_counter("port_deq", 2)
        n = 5
        for _ in range(n):
            self.send(1, frame)
            testutils.verify_packet(self, frame, 2)
        rx = self.wait_counter("port_rx", 1, rx0[0] + n)
        tx = self.wait_counter("port_tx", 2, tx0[0] + n)
        self.assertEqual((rx[0] - rx0[0], rx[1] - rx0[1]), (n, n * 200))
        self.assertEqual((tx[0] - tx0[0], tx[1] - tx0[1]), (n, n * 200))
        self.assertEqual(self.wait_counter("port_enq", 2, enq0[0] + n)[0] - enq0[0], n)
        self.assertEqual(self.wait_counter("port_deq", 2, deq0[0] + n)[0] - deq0[0], n)
