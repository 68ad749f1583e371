"""fabric.p4 make-before-break: shadow path, one-write flip, per-packet version, transit by tag."""

from __future__ import annotations

import threading
import time

from fabric_helpers import FabricTest, PathTag, next_hop_mac, routed, tagged, tcp_packet
from ptf import testutils
from ptf.testutils import group
from scapy.layers.inet import IP
from scapy.layers.l2 import Ether

OLD, NEW = 2, 3  # ports of version 0 (old path) and version 1 (new path)


class MbbTest(FabricTest):
    """Path 1 has version 0 on port OLD and version 1 (the shadow) on port NEW."""

    def setUp(self) -> None:
        super().setUp()
        self.add_route("10.0.2.0/24", 1)
        self.add_static_path(1, 0, OLD)
        self.set_version(1, 0)
        self.add_static_path(1, 1, NEW)  # the shadow: written before the flip, used by no packet yet


@group("fabric")
class MbbFlipTest(MbbTest):
    """Old path before the flip, new path after, each stamped with its version by the ingress switch."""

    def runTest(self) -> None:
        pkt = tcp_packet()
        self.expect_routed(pkt, OLD, 0)
        self.flip_version(1, 1)
        # The flip is one entry; the switch holds exactly the new version.
        self.assertEqual([str(e) for e in self.read_table("path_version")],
                         ["path_version path_id=1 -> set_version(version=1)"])
        self.expect_routed(pkt, NEW, 1)
        self.flip_version(1, 0)
        self.expect_routed(pkt, OLD, 0)


@group("fabric")
class MbbStreamAcrossFlipTest(MbbTest):
    """A stream sent across the flip arrives whole: every packet once, old then new, never mixed."""

    def runTest(self) -> None:
        n, flip_after = 300, 100
        sent = threading.Event()
        packets = [tcp_packet(ip_id=i) for i in range(n)]

        def sender() -> None:
            for i, pkt in enumerate(packets):
                self.send(1, pkt)
                if i == flip_after:
                    sent.set()
                time.sleep(0.002)

        thread = threading.Thread(target=sender, name="mbb-stream")
        thread.start()
        try:
            self.assertTrue(sent.wait(10), "sender stalled")
            self.flip_version(1, 1)
        finally:
            thread.join()
        got = self.collect(timeout=1.5, limit=n)
        seqs: dict[int, list[int]] = {OLD: [], NEW: []}
        for port, frame in got:
            eth = Ether(frame)
            self.assertIn(port, seqs, f"packet on port {port}")
            self.assertEqual(eth[PathTag].version, 0 if port == OLD else 1, "version does not match path")
            seqs[port].append(eth[IP].id)
        everything = sorted(seqs[OLD] + seqs[NEW])
        self.assertEqual(everything, list(range(n)), f"lost or duplicated: {n - len(set(everything))} missing")
        self.assertTrue(seqs[OLD] and seqs[NEW], f"old {len(seqs[OLD])}, new {len(seqs[NEW])}")
        self.assertLess(max(seqs[OLD]), min(seqs[NEW]), "old and new paths interleaved")
        testutils.verify_no_other_packets(self)


@group("fabric")
class TransitByTagTest(MbbTest):
    """A transit switch forwards a tagged packet by its tag, even after its own version flipped."""

    def runTest(self) -> None:
        self.flip_version(1, 1)
        pkt = tcp_packet(eth_src="00:00:00:00:0b:04")
        for version, port in ((0, OLD), (1, NEW)):
            self.send(4, tagged(pkt, version, hops=1))
            testutils.verify_packet(self, routed(pkt, port, next_hop_mac(port), version, hops=2), port)
            testutils.verify_no_other_packets(self)
        # Untagged traffic entering here follows this switch's own (flipped) version.
        self.expect_routed(pkt, NEW, 1)
