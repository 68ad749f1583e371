"""Topology summaries: counts by role, link rates, OCS wiring, shortest-path diversity."""

from __future__ import annotations

from collections import Counter

import networkx as nx

from topo.model import Topology

MAX_SWITCHES_FOR_PATHS = 500


def graph(topo: Topology, circuits: dict[str, list[tuple[int, int]]] | None = None) -> nx.MultiGraph:
    """The topology as a networkx multigraph (hosts, switches; lit circuits as `optical` edges)."""
    g = nx.MultiGraph()
    for s in topo.switches:
        g.add_node(s.name, kind="switch", role=s.role)
    for h in topo.hosts:
        g.add_node(h.name, kind="host")
    for lk in topo.links:
        g.add_edge(lk.a, lk.b, a_port=lk.a_port, b_port=lk.b_port, optical=False)
    for o in topo.ocs:
        attach = {p.port: (p.switch, p.switch_port) for p in o.ports}
        lit = (circuits or {}).get(o.name) if circuits is not None else o.circuit_maps.get(o.default_map or "", [])
        for a, b in lit or []:
            (sa, pa), (sb, pb) = attach[a], attach[b]
            g.add_edge(sa, sb, a_port=pa, b_port=pb, optical=True)
    return g


def shortest_paths(topo: Topology, a: str, b: str) -> int:
    """The number of distinct shortest paths (in hops, links counted separately) between two nodes."""
    g = graph(topo)
    if a not in g or b not in g:
        raise ValueError(f"nodes {a!r}, {b!r}: expected names of {topo.name}")
    count = {a: 1}
    dist = {a: 0}
    frontier = [a]
    while frontier and b not in dist:
        nxt: list[str] = []
        for u in frontier:
            for v in g.neighbors(u):
                mult = g.number_of_edges(u, v)
                if v not in dist:
                    dist[v] = dist[u] + 1
                    count[v] = 0
                    nxt.append(v)
                if dist[v] == dist[u] + 1:
                    count[v] += count[u] * mult
        frontier = nxt
    return count.get(b, 0)


def summary(topo: Topology) -> list[str]:
    """A human-readable summary, one fact per line."""
    roles = Counter(s.role for s in topo.switches)
    lines = [f"{topo.name} ({topo.kind}) params={topo.params}",
             f"switches: {len(topo.switches)} (" + ", ".join(f"{r} {n}" for r, n in roles.items()) + ")",
             f"hosts: {len(topo.hosts)}",
             f"links: {len(topo.links)}"]
    rates = Counter((lk.rate_mbit, lk.delay) for lk in topo.links)
    lines.append("link rates: " + ", ".join(f"{n} x {r:g} Mbit/s {d}" for (r, d), n in rates.most_common()))
    if topo.switches:
        ids = [s.device_id for s in topo.switches]
        ports = [s.grpc_port for s in topo.switches]
        lines.append(f"device ids {min(ids)}..{max(ids)}, gRPC ports {min(ports)}..{max(ports)}")
    for o in topo.ocs:
        lines.append(f"OCS {o.name}: device {o.device_id}, gRPC {o.grpc_port}, {len(o.ports)} ports: "
                     + " ".join(f"{p.port}={p.switch}:{p.switch_port}" for p in o.ports[:16])
                     + (" ..." if len(o.ports) > 16 else ""))
        for name, circuits in o.circuit_maps.items():
            mark = " (default)" if name == o.default_map else ""
            lines.append(f"  map {name}{mark}: " + " ".join(f"{a}-{b}" for a, b in circuits))
        if o.static_circuits:
            lines.append("  static: " + " ".join(f"{a}-{b}" for a, b in o.static_circuits))
    if topo.hosts and len(topo.switches) <= MAX_SWITCHES_FOR_PATHS:
        first, last = topo.hosts[0].name, topo.hosts[-1].name
        lines.append(f"shortest paths {first} -> {last}: {shortest_paths(topo, first, last)}")
    return lines
