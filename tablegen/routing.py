"""Route plans: for each switch, which prefixes go to which next-hop ports in path versions 0 and 1.

Two planners produce the same per-switch plan:
- `plan_fattree`: a fat-tree with no lit circuit, from its structure (edge: hosts, then everything up;
  aggregation: per-edge /24 down, everything else up; core: per-pod /16 down). O(ports) per switch,
  which is what makes k=48 fast.
- `GenericPlanner`: least-cost routing (fabric.Fabric costs) from every ToR, any topology, circuits
  included. Without an OCS it aggregates the commonest next-hop set at a switch into one covering
  prefix. With an OCS the plan is stable: one route and one path id per destination ToR, the same
  under every circuit map, so a reconfiguration changes only `path` and group entries (what MBB
  rewrites in the inactive version before flipping).
Both are lazy: a plan is computed when a switch's entries are written.
"""

from __future__ import annotations

import ipaddress
import logging
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from tablegen.graph import Fabric

log = logging.getLogger(__name__)

NextHops = tuple[tuple[int, ...], tuple[int, ...]]  # ports in version 0, ports in version 1


@dataclass(slots=True)
class Route:
    """A destination prefix and its next-hop ports per path version (empty: unreachable, dropped).

    path_id pins the route's path id (stable plans); None lets routes with equal hops share one.
    """

    prefix: str
    hops: NextHops
    path_id: int | None = None


@dataclass(slots=True)
class SwitchPlan:
    """All routing state of one switch: local hosts, dropped prefixes, routed prefixes."""

    switch: str
    to_host: list[tuple[str, int, str]] = field(default_factory=list)  # (ip/32, port, host MAC)
    drop: list[str] = field(default_factory=list)
    routes: list[Route] = field(default_factory=list)


Planner = Callable[[str], SwitchPlan]


def planner(fabric: Fabric, spread: bool = False) -> Planner:
    """The fastest planner that is exact for this fabric; spread=True lists one route per destination
    prefix instead of aggregating (static mode needs it to spread destinations over ports)."""
    if fabric.topo.kind == "fattree" and not fabric.lit():
        try:
            return FatTreePlanner(fabric, spread)
        except ValueError as exc:
            log.warning("fat-tree planner not applicable (%s); using the generic planner", exc)
    return GenericPlanner(fabric, spread)


def covering_prefix(fabric: Fabric) -> ipaddress.IPv4Network:
    """The prefix of the aggregate default route: the smallest holding every host address, widened
    to a multiple of 8 bits (10.0.0.0/8 for the generated topologies)."""
    addrs = [int(ipaddress.IPv4Address(h.address)) for h in fabric.topo.hosts]
    if not addrs:
        return ipaddress.IPv4Network("0.0.0.0/0")
    lo, hi = min(addrs), max(addrs)
    plen = (32 - (lo ^ hi).bit_length()) // 8 * 8
    return ipaddress.IPv4Network((lo >> (32 - plen) << (32 - plen) if plen else 0, plen))


def _widest(edges: tuple[str, ...], nets: dict[str, ipaddress.IPv4Network], floor: int) -> ipaddress.IPv4Network:
    """The shortest prefix (not shorter than floor) covering these edges' subnets and no other's:
    10.pod.0.0/16 in a fat-tree, as in seed 004."""
    mine = [nets[e] for e in edges]
    lo = min(int(n.network_address) for n in mine)
    hi = max(int(n.broadcast_address) for n in mine)
    plen = 32 - (lo ^ hi).bit_length()
    others = [int(n.network_address) for e, n in nets.items() if e not in set(edges)]
    if any(o >> (32 - plen) == lo >> (32 - plen) for o in others):
        raise ValueError(f"pod of {edges[0]}: no prefix covers its edges' subnets alone")
    while plen > floor and not any(o >> (33 - plen) == lo >> (33 - plen) for o in others):
        plen -= 1
    return ipaddress.IPv4Network((lo >> (32 - plen) << (32 - plen), plen))


class FatTreePlanner:
    """Structural routes of a fat-tree (seed 004's /32 at edge, /24 at aggregation, /16 at core)."""

    def __init__(self, fabric: Fabric, spread: bool) -> None:
        self.fabric = fabric
        self.spread = spread
        self.default = str(covering_prefix(fabric))
        self.role = {n: s.role for n, s in fabric.switches.items()}
        self.subnet: dict[str, str] = {}  # edge -> its hosts' /24
        for name, role in self.role.items():
            if role == "edge":
                nets = {fabric.hosts[p.node].network for p in fabric.peers[name].values() if p.is_host}
                if len(nets) != 1:
                    raise ValueError(f"edge {name}: hosts in {len(nets)} subnets, expected 1")
                self.subnet[name] = str(nets.pop())
        if len(set(self.subnet.values())) != len(self.subnet):
            raise ValueError("two edge switches share a subnet")
        self.pod_prefix: dict[str, str] = {}  # aggregation switch -> prefix of its pod
        edge_nets = {e: ipaddress.IPv4Network(n) for e, n in self.subnet.items()}
        floor = covering_prefix(fabric).prefixlen
        cache: dict[tuple[str, ...], str] = {}
        for name, role in self.role.items():
            if role != "aggregation":
                continue
            edges = tuple(sorted(p.node for p in fabric.peers[name].values() if self.role.get(p.node) == "edge"))
            if not edges:
                raise ValueError(f"aggregation {name}: not linked to any edge switch")
            if edges not in cache:
                cache[edges] = str(_widest(edges, edge_nets, floor))
            self.pod_prefix[name] = cache[edges]
        self.others: list[tuple[str, str]] = sorted((net, e) for e, net in self.subnet.items())
        self._check_structure()

    def _check_structure(self) -> None:
        """Raise ValueError unless every pod is a complete edge-aggregation bipartite graph and every
        core reaches exactly one aggregation switch of every pod (else least-cost sets differ)."""
        f = self.fabric

        def nbrs(sw: str, role: str) -> frozenset[str]:
            return frozenset(p.node for p in f.peers[sw].values() if not p.is_host and self.role[p.node] == role)

        pods: dict[frozenset[str], set[str]] = {}
        for sw, role in self.role.items():
            if role == "aggregation":
                pods.setdefault(nbrs(sw, "edge"), set()).add(sw)
        pod_of: dict[str, frozenset[str]] = {}
        for edges, aggs in pods.items():
            for e in edges:
                if nbrs(e, "aggregation") != aggs:
                    raise ValueError(f"edge {e}: not linked to every aggregation switch of its pod")
            for a in aggs:
                pod_of[a] = edges
        if set().union(*pods) != set(self.subnet):
            raise ValueError("an edge switch is in no pod or in two pods")
        for sw, role in self.role.items():
            if role == "core":
                seen = [pod_of[a] for a in nbrs(sw, "aggregation")]
                if len(seen) != len(set(seen)) or len(seen) != len(pods):
                    raise ValueError(f"core {sw}: not linked to exactly one aggregation switch per pod")

    def __call__(self, switch: str) -> SwitchPlan:
        """The plan of one switch."""
        f = self.fabric
        role = self.role[switch]
        plan = SwitchPlan(switch)
        up: list[int] = []
        for port, peer in sorted(f.peers[switch].items()):
            if peer.is_host:
                plan.to_host.append((f.hosts[peer.node].address + "/32", port, peer.mac))
            elif role == "edge" and self.role[peer.node] == "aggregation":
                up.append(port)
            elif role == "aggregation" and self.role[peer.node] == "core":
                up.append(port)
            elif role == "aggregation" and self.role[peer.node] == "edge":
                plan.routes.append(Route(self.subnet[peer.node], ((port,), (port,))))
            elif role == "core":
                plan.routes.append(Route(self.pod_prefix[peer.node], ((port,), (port,))))
        if role == "edge":
            plan.drop.append(self.subnet[switch])
        if up:
            hops = (tuple(up), tuple(up))
            if self.spread:
                local = {r.prefix for r in plan.routes} | set(plan.drop)
                plan.routes.extend(Route(net, hops) for net, _e in self.others if net not in local)
            else:
                plan.routes.append(Route(self.default, hops))
        return plan


class GenericPlanner:
    """Least-cost routes towards every ToR in the version-0 and version-1 graphs of a fabric."""

    def __init__(self, fabric: Fabric, spread: bool) -> None:
        self.fabric = fabric
        self.spread = spread
        self.default = str(covering_prefix(fabric))
        if len(fabric.switches) > 400:
            log.warning("generic planner on %d switches: expect it to be slow", len(fabric.switches))
        by_switch: dict[str, list[str]] = {}
        for h, (sw, _port) in fabric.host_at.items():
            by_switch.setdefault(sw, []).append(h)
        # Destination prefixes per ToR: its hosts' shared subnet when no other host is in it, else /32s.
        self.dest: dict[str, list[str]] = {}
        nets = Counter(fabric.hosts[h].network for hs in by_switch.values() for h in hs)
        for sw, hs in sorted(by_switch.items()):
            mine = {fabric.hosts[h].network for h in hs}
            net = next(iter(mine))
            if len(mine) == 1 and nets[net] == len(hs):
                self.dest[sw] = [str(net)]
            else:
                self.dest[sw] = sorted(fabric.hosts[h].address + "/32" for h in hs)
        self.stable = bool(fabric.topo.ocs)
        self.path_id = {t: i + 1 for i, t in enumerate(self.dest)}
        self.dist = {(t, v): fabric.distances(t, v) for t in self.dest for v in (0, 1)}
        self.warned: set[str] = set()

    def __call__(self, switch: str) -> SwitchPlan:
        """The plan of one switch."""
        f = self.fabric
        plan = SwitchPlan(switch)
        for port, peer in sorted(f.peers[switch].items()):
            if peer.is_host:
                plan.to_host.append((f.hosts[peer.node].address + "/32", port, peer.mac))
        routes: list[Route] = []
        for target, prefixes in self.dest.items():
            if target == switch:
                plan.drop.extend(p for p in prefixes if not p.endswith("/32"))
                continue
            h0 = f.next_hops(switch, self.dist[(target, 0)], 0)
            h1 = f.next_hops(switch, self.dist[(target, 1)], 1)
            if not h1 and h0:
                if target not in self.warned:
                    log.warning("%s: no shadow path avoiding reconfigurable circuits; version 1 = version 0",
                                target)
                    self.warned.add(target)
                h1 = h0
            if self.stable:
                routes.extend(Route(p, (h0, h1), self.path_id[target]) for p in prefixes)
                continue
            if not h0:
                plan.drop.extend(prefixes)
                continue
            routes.extend(Route(p, (h0, h1)) for p in prefixes)
        if routes and not self.spread and not self.stable:
            common, _n = Counter(r.hops for r in routes).most_common(1)[0]
            routes = [r for r in routes if r.hops != common] + [Route(self.default, common)]
        plan.routes = routes
        return plan
