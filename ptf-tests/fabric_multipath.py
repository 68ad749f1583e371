"""fabric.p4 multipath: ECMP keeps a flow on one port and spreads flows; spray spreads packets."""

from __future__ import annotations

import logging
from collections import Counter

from fabric_helpers import FabricTest, PathTag, next_hop_mac, routed, tcp_packet
from p4rt_base import counts_by_port
from ptf import testutils
from ptf.testutils import group
from scapy.layers.inet import IP, TCP
from scapy.layers.l2 import Ether

log = logging.getLogger("fabric_multipath")

ECMP_FLOWS = 512
ECMP_TOLERANCE = 0.07    # each of 2 ports carries 50% +- 7 points of the flows
# Salts of tablegen's first two device ids (tablegen.entries.hash_salt(1), hash_salt(2)).
SALTS = (10423, 49926)
# Two independent hashes put a flow on the same one of 2 ports half the time: 50% +- 15 points
# (about 7 standard deviations at 512 flows). A salt that only XORed a constant into the hash
# would move all flows or none (polarization).
SALT_AGREEMENT = (0.35, 0.65)
SPRAY_PACKETS = 2000
SPRAY_TOLERANCE = 0.04   # each of 2 ports carries 50% +- 4 points of one flow's packets
BURST = 100              # packets in flight at once, so no queue on the way overflows


class MultipathTest(FabricTest):
    """Sends bursts and collects what comes out."""

    def send_and_collect(self, packets: list[Ether], ingress: int = 1) -> list[tuple[int, bytes]]:
        """Send packets in bursts of BURST; return every (port, frame) received."""
        got: list[tuple[int, bytes]] = []
        for start in range(0, len(packets), BURST):
            chunk = packets[start:start + BURST]
            for pkt in chunk:
                self.send(ingress, pkt)
            got.extend(self.collect(timeout=1.0, limit=len(chunk)))
        got.extend(self.collect(timeout=0.3))
        return got

    def assert_share(self, counts: dict[int, int], ports: list[int], total: int, tolerance: float) -> None:
        """Every port of `ports` got 1/len(ports) of `total` within `tolerance`, no other port got any."""
        log.info("%s: %s of %d", self.__class__.__name__, dict(sorted(counts.items())), total)
        self.assertEqual(sorted(counts), sorted(ports), f"packets arrived on ports {counts}")
        self.assertEqual(sum(counts.values()), total, f"received {counts}, sent {total}")
        for port in ports:
            share = counts[port] / total
            self.assertLessEqual(abs(share - 1 / len(ports)), tolerance,
                                 f"port {port} carried {share:.1%} ({counts})")


@group("fabric")
class EcmpTest(MultipathTest):
    """One flow stays on one port; 512 flows spread evenly over 2 ports; the rewrite is right."""

    def runTest(self) -> None:
        self.add_route("10.0.2.0/24", 1)
        self.add_group_path(1, 0, "ecmp", [2, 3])
        # One flow, 50 packets: one port, rewritten like a static path.
        flow = [tcp_packet(sport=4321, ip_id=i) for i in range(50)]
        got = self.send_and_collect(flow)
        ports = counts_by_port(got)
        self.assertEqual(len(ports), 1, f"one flow used ports {ports}")
        port = next(iter(ports))
        self.assertEqual(ports[port], len(flow))
        testutils.verify_no_other_packets(self)
        self.send(1, flow[0])
        testutils.verify_packet(self, routed(flow[0], port, next_hop_mac(port), 0), port)
        # 512 flows (source ports), one packet each.
        flows = [tcp_packet(sport=10000 + i) for i in range(ECMP_FLOWS)]
        self.assert_share(counts_by_port(self.send_and_collect(flows)), [2, 3], ECMP_FLOWS, ECMP_TOLERANCE)
        testutils.verify_no_other_packets(self)


@group("fabric")
class EcmpSaltTest(MultipathTest):
    """hash_config: each salt spreads 512 flows evenly, and two salts place them independently."""

    def flow_ports(self, flows: list[Ether]) -> dict[int, int]:
        """TCP source port of each flow -> the port it left on (one packet per flow)."""
        return {Ether(frame)[TCP].sport: port for port, frame in self.send_and_collect(flows)}

    def runTest(self) -> None:
        self.assertEqual(self.read_default("hash_config").params, {"salt": 0})
        self.add_route("10.0.2.0/24", 1)
        self.add_group_path(1, 0, "ecmp", [2, 3])
        flows = [tcp_packet(sport=20000 + i) for i in range(ECMP_FLOWS)]
        placed = []
        for salt in SALTS:
            self.set_hash_salt(salt)
            placed.append(self.flow_ports(flows))
            self.assertEqual(len(placed[-1]), ECMP_FLOWS, f"salt {salt}: received {len(placed[-1])} flows")
            self.assert_share(dict(sorted(Counter(placed[-1].values()).items())), [2, 3], ECMP_FLOWS,
                              ECMP_TOLERANCE)
        again = self.flow_ports(flows[:64])  # the last salt still in place: the same ports
        self.assertEqual(again, {sport: placed[-1][sport] for sport in again}, "a salted flow moved")
        self.assertEqual(len(again), 64)
        same = sum(placed[0][sport] == placed[1][sport] for sport in placed[0]) / ECMP_FLOWS
        log.info("EcmpSaltTest: salts %s place %.1f%% of flows on the same port", SALTS, 100 * same)
        low, high = SALT_AGREEMENT
        self.assertTrue(low <= same <= high, f"salts {SALTS}: {same:.1%} of flows on the same port")
        testutils.verify_no_other_packets(self)


@group("fabric")
class SprayRandomTest(MultipathTest):
    """Uniform random spray: the packets of a single flow spread evenly over 2 ports."""

    def runTest(self) -> None:
        self.add_route("10.0.2.0/24", 1)
        self.add_group_path(1, 0, "spray_random", [2, 3])
        flow = [tcp_packet(sport=4321, ip_id=i) for i in range(SPRAY_PACKETS)]
        got = self.send_and_collect(flow)
        self.assert_share(counts_by_port(got), [2, 3], SPRAY_PACKETS, SPRAY_TOLERANCE)
        for port, frame in got[:20]:
            self.assertEqual(Ether(frame).dst, next_hop_mac(port))
        testutils.verify_no_other_packets(self)


@group("fabric")
class SprayRoundRobinTest(MultipathTest):
    """Round-robin spray: packet i of a flow leaves on member i mod 3, exactly."""

    def runTest(self) -> None:
        self.add_route("10.0.2.0/24", 1)
        self.add_group_path(1, 0, "spray_rr", [2, 3, 4])
        n = 90
        got = self.send_and_collect([tcp_packet(sport=4321, ip_id=i) for i in range(n)])
        self.assertEqual(len(got), n, f"received {len(got)} of {n}")
        port_of = {Ether(frame)[IP].id: port for port, frame in got}
        self.assertEqual(len(port_of), n, "a packet was duplicated or lost")
        first = [port_of[i] for i in range(3)]
        self.assertEqual(sorted(first), [2, 3, 4], f"first three packets went to {first}")
        pattern = [port_of[i] for i in range(n)]
        self.assertEqual(pattern, first * (n // 3), "round robin is not exact")
        for _, frame in got:
            self.assertEqual(Ether(frame)[PathTag].version, 0)
        testutils.verify_no_other_packets(self)
