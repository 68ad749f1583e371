"""The drawing of a topology: nodes ranked by role, links, fibres and the circuits an OCS can make, and
the routes (path ids) of every ingress ToR with the hosts they lead to."""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping

from fabric.contract import SET_PATH
from fabric.forwarding import Forwarding
from p4rt.state import SwitchState
from topo.model import Topology
from view.model import Edge, Graph, Node, Route

# top to bottom; an OCS sits above its ToRs when the topology has no electrical core above them
ROLE_RANK = {"core": 0, "spine": 0, "aggregation": 1, "edge": 2, "leaf": 2, "tor": 2}
HOST_RANK = 3


def link_id(a: str, a_port: int, b: str, b_port: int) -> str:
    """The edge id of a link or fibre."""
    return f"{a}:{a_port}-{b}:{b_port}"


def circuit_id(ocs: str, a: int, b: int) -> str:
    """The edge id of a circuit between two OCS ports (a < b)."""
    return f"{ocs}:{min(a, b)}={max(a, b)}"


def build(topo: Topology, states: Mapping[str, SwitchState] | None = None) -> Graph:
    """The drawing of a topology; routes from the switches' states when given."""
    ranks = [ROLE_RANK.get(s.role, 2) for s in topo.switches]
    ocs_rank = max(0, min(ranks, default=2) - 1)
    nodes = [Node(id=s.name, kind="switch", role=s.role, rank=ROLE_RANK.get(s.role, 2)) for s in topo.switches]
    nodes += [Node(id=h.name, kind="host", role="host", rank=HOST_RANK) for h in topo.hosts]
    nodes += [Node(id=o.name, kind="ocs", role="ocs", rank=ocs_rank) for o in topo.ocs]
    edges = [Edge(id=link_id(lk.a, lk.a_port, lk.b, lk.b_port), kind="link", source=lk.a, target=lk.b,
                  source_port=lk.a_port, target_port=lk.b_port, rate_mbit=lk.rate_mbit) for lk in topo.links]
    fibres: dict[int, str] = {}
    circuit_maps: dict[str, list[tuple[int, int]]] = {}
    for o in topo.ocs:
        by_port = {p.port: p for p in o.ports}
        for p in o.ports:
            fibres[p.port] = link_id(p.switch, p.switch_port, o.name, p.port)
            edges.append(Edge(id=fibres[p.port], kind="fibre", source=p.switch, target=o.name,
                              source_port=p.switch_port, target_port=p.port, rate_mbit=o.rate_mbit))
        pairs = {tuple(sorted(c)) for m in o.circuit_maps.values() for c in m} | {tuple(sorted(c)) for c in o.static_circuits}
        for a, b in sorted(pairs):
            if a in by_port and b in by_port:
                edges.append(Edge(id=circuit_id(o.name, a, b), kind="circuit", source=by_port[a].switch,
                                  target=by_port[b].switch, source_port=by_port[a].switch_port,
                                  target_port=by_port[b].switch_port, ocs_ports=(a, b)))
        circuit_maps.update({name: [tuple(c) for c in m] for name, m in o.circuit_maps.items()})
    return Graph(name=topo.name, nodes=nodes, edges=edges, routes=routes(topo, states or {}),
                 circuit_maps=circuit_maps, fibres=fibres)


def routes(topo: Topology, states: Mapping[str, SwitchState]) -> list[Route]:
    """Per switch, each path id its `route` table sends hosts' addresses to, with those hosts."""
    out = []
    for name, st in sorted(states.items()):
        fwd = Forwarding(st)
        by_path: dict[int, list[str]] = {}
        for h in topo.hosts:
            entry = fwd.route(int(ipaddress.IPv4Address(h.address)))
            if entry is not None and entry.action.rsplit(".", 1)[-1] == SET_PATH:
                by_path.setdefault(int(entry.params["path_id"]), []).append(h.name)
        out += [Route(switch=name, path=pid, hosts=hosts) for pid, hosts in sorted(by_path.items())]
    return out
