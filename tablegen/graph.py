"""A compact, routing-ready view of a topology under one circuit map.

Every switch port maps to its peer (switch or host, port, MAC). Optical ports reach their peer only
while a circuit lights them. Two graphs are defined over the switches: version 0 (active) uses every
electrical link and every lit circuit; version 1 (the MBB shadow) uses electrical links and static
circuits only, so it never crosses a circuit that a reconfiguration may tear down.
"""

from __future__ import annotations

import heapq
import logging
from dataclasses import dataclass

from topo.circuits import CircuitMap, default_circuits
from topo.model import Topology
from topo.validate import check_circuits

log = logging.getLogger(__name__)

ELECTRICAL_COST = 1000
OPTICAL_COST = 999  # a lit circuit is preferred over an electrical hop of the same length



@dataclass(slots=True)
class Peer:
    """What a switch port reaches: a host or a switch port, directly or through a lit circuit."""

    node: str
    port: int
    mac: str
    is_host: bool
    optical: bool
    static: bool  # optical through a static circuit (usable by shadow paths)


class Fabric:
    """Switch adjacency of a topology with a circuit map applied (version 0 and 1 graphs)."""

    __slots__ = ("topo", "circuits", "peers", "host_at", "hosts", "switches", "optical_ports", "_adj", "_same")

    def __init__(self, topo: Topology, circuits: CircuitMap | None = None) -> None:
        self.topo = topo
        self.circuits: CircuitMap = circuits if circuits is not None else default_circuits(topo)
        self.switches = topo.switch_map()
        self.hosts = topo.host_map()
        self.peers: dict[str, dict[int, Peer]] = {s: {} for s in self.switches}
        self.host_at: dict[str, tuple[str, int]] = {}
        self.optical_ports: set[tuple[str, int]] = set()
        for lk in topo.links:
            for x, xp, y, yp in ((lk.a, lk.a_port, lk.b, lk.b_port), (lk.b, lk.b_port, lk.a, lk.a_port)):
                if x not in self.switches:
                    continue
                if y in self.hosts:
                    self.peers[x][xp] = Peer(y, yp, self.hosts[y].mac, True, False, False)
                    self.host_at[y] = (x, xp)
                else:
                    self.peers[x][xp] = Peer(y, yp, self.switches[y].ports[yp], False, False, False)
        ocs_map = topo.ocs_map()
        for name, pairs in self.circuits.items():
            if name not in ocs_map:
                raise ValueError(f"circuit map for OCS {name!r}: expected one of {sorted(ocs_map)}")
            ocs = ocs_map[name]
            attach = {p.port: (p.switch, p.switch_port) for p in ocs.ports}
            check_circuits(name, set(attach), pairs, "given")
            static = {frozenset(c) for c in ocs.static_circuits}
            for a, b in pairs:
                (sa, pa), (sb, pb) = attach[a], attach[b]
                st = frozenset((a, b)) in static
                self.peers[sa][pa] = Peer(sb, pb, self.switches[sb].ports[pb], False, True, st)
                self.peers[sb][pb] = Peer(sa, pa, self.switches[sa].ports[pa], False, True, st)
        for ocs in topo.ocs:
            for p in ocs.ports:
                self.optical_ports.add((p.switch, p.switch_port))
        self._adj: list[dict[str, list[tuple[int, str, int]]] | None] = [None, None]
        self._same = all(p.static for ports in self.peers.values() for p in ports.values() if p.optical)

    def versions_equal(self) -> bool:
        """Whether both versions use the same graph (no lit circuit outside the static ones)."""
        return self._same

    def neighbours(self, switch: str, version: int) -> list[tuple[int, str, int]]:
        """(port, neighbour switch, cost) of a switch in the version-0 or version-1 graph."""
        return self.adjacency(version)[switch]

    def adjacency(self, version: int) -> dict[str, list[tuple[int, str, int]]]:
        """The switch graph of a version, built once."""
        v = 0 if version == 1 and self.versions_equal() else version
        adj = self._adj[v]
        if adj is None:
            adj = {}
            for sw, ports in self.peers.items():
                out = []
                for port, peer in sorted(ports.items()):
                    if peer.is_host or (peer.optical and v == 1 and not peer.static):
                        continue
                    out.append((port, peer.node, OPTICAL_COST if peer.optical else ELECTRICAL_COST))
                adj[sw] = out
            self._adj[v] = adj
            self._adj[version] = adj
        return adj

    def distances(self, target: str, version: int) -> dict[str, int]:
        """Path cost from every switch to `target` in the version's graph (links are symmetric)."""
        adj = self.adjacency(version)
        if not self.lit():  # one cost everywhere: breadth-first search
            dist = {target: 0}
            frontier = [target]
            d = 0
            while frontier:
                d += ELECTRICAL_COST
                nxt = []
                for node in frontier:
                    for _port, nbr, _cost in adj[node]:
                        if nbr not in dist:
                            dist[nbr] = d
                            nxt.append(nbr)
                frontier = nxt
            return dist
        dist = {target: 0}
        heap = [(0, target)]
        while heap:
            d, node = heapq.heappop(heap)
            if d > dist[node]:
                continue
            for _port, nbr, cost in adj[node]:
                nd = d + cost
                if nd < dist.get(nbr, 1 << 62):
                    dist[nbr] = nd
                    heapq.heappush(heap, (nd, nbr))
        return dist

    def next_hops(self, switch: str, dist: dict[str, int], version: int) -> tuple[int, ...]:
        """The ports of `switch` on a least-cost path towards the target of `dist` (sorted)."""
        here = dist.get(switch)
        if here is None:
            return ()
        return tuple(p for p, nbr, cost in self.adjacency(version)[switch]
                     if nbr in dist and dist[nbr] + cost == here)

    def lit(self) -> bool:
        """Whether any circuit is lit."""
        return any(self.circuits.values())


