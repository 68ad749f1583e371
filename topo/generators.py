"""Topology generators: k-ary fat-tree (seed 004), leaf-spine (seed 003), the thesis's ucd4 testbed
(seed 000), ToRs around one OCS with round-robin circuit maps (seeds 001, 002), and a hybrid overlay
that attaches ToR ports to an optical circuit switch."""

from __future__ import annotations

import logging

from topo.model import (
    DEFAULT_GRPC_BASE,
    TOR_ROLES,
    Host,
    Link,
    Ocs,
    OcsPort,
    Topology,
    host_mac,
    new_switch,
    switch_mac,
)

log = logging.getLogger(__name__)


def _host(name: str, net: str, index: int) -> Host:
    """Host number `index` (2, 3, ...) of a /24 `net` given as "a.b.c"; the gateway is net.1."""
    ip = f"{net}.{index}"
    return Host(name, host_mac(ip), f"{ip}/24", f"{net}.1")


def fattree(k: int = 4, rate_mbit: float = 20.0, delay: str = "0.1ms",
            grpc_base: int = DEFAULT_GRPC_BASE) -> Topology:
    """A k-ary fat-tree with seed 004's wiring and addressing (hosts 10.pod.edge.(j+2)/24).

    Edge e<pod>_<i>: ports 1..k/2 hosts, k/2+1+j aggregation a<pod>_<j>. Aggregation a<pod>_<i>:
    ports 1..k/2 edges, k/2+1+j core c<i>_<j>. Core c<i>_<j>: port pod+1. Device ids: edges, then
    aggregation, then core switches, from 1.
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 4 or k % 2:
        raise ValueError(f"k={k!r}: expected an even integer >= 4")
    if k > 254:
        raise ValueError(f"k={k}: expected k <= 254 (10.pod.edge.host addressing)")
    half = k // 2
    topo = Topology(name=f"fattree-k{k}", kind="fattree",
                    params={"k": k, "rate_mbit": rate_mbit, "delay": delay})
    tiers = [(f"e{pod}_{i}", "edge") for pod in range(k) for i in range(half)]
    tiers += [(f"a{pod}_{i}", "aggregation") for pod in range(k) for i in range(half)]
    tiers += [(f"c{i}_{j}", "core") for i in range(half) for j in range(half)]
    topo.switches += [new_switch(name, role, dev, k, grpc_base) for dev, (name, role) in enumerate(tiers, 1)]
    for pod in range(k):
        for i in range(half):
            for j in range(half):
                h = _host(f"h{pod}_{i}_{j}", f"10.{pod}.{i}", j + 2)
                topo.hosts.append(h)
                topo.links.append(Link(h.name, 0, f"e{pod}_{i}", j + 1, rate_mbit, delay))
    for pod in range(k):
        for i in range(half):
            for j in range(half):
                topo.links.append(Link(f"e{pod}_{i}", half + 1 + j, f"a{pod}_{j}", i + 1, rate_mbit, delay))
    for pod in range(k):
        for i in range(half):
            for j in range(half):
                topo.links.append(Link(f"a{pod}_{i}", half + 1 + j, f"c{i}_{j}", pod + 1, rate_mbit, delay))
    return topo


def leafspine(leaves: int = 6, spines: int = 2, hosts_per_leaf: int = 24, rate_mbit: float = 1000.0,
              delay: str = "0.1ms", grpc_base: int = DEFAULT_GRPC_BASE) -> Topology:
    """A two-tier leaf-spine (seed 003: 6 leaves, 2 spines, 24 hosts per leaf, 1 Gbit/s).

    Leaf<l>: ports 1..hosts_per_leaf hosts h<l>_<j> (10.0.l.(j+1)/24), then one port per spine.
    Spine<s>: port l goes to leaf<l>. Device ids: leaves, then spines.
    """
    for name, value, lo, hi in (("leaves", leaves, 2, 255), ("spines", spines, 1, 253),
                                ("hosts_per_leaf", hosts_per_leaf, 1, 253)):
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            raise ValueError(f"{name}={value!r}: expected an integer in {lo}..{hi}")
    if hosts_per_leaf + spines > 254:
        raise ValueError(f"hosts_per_leaf+spines={hosts_per_leaf + spines}: expected at most 254 leaf ports")
    topo = Topology(name=f"leafspine-{leaves}x{spines}x{hosts_per_leaf}", kind="leafspine",
                    params={"leaves": leaves, "spines": spines, "hosts_per_leaf": hosts_per_leaf,
                            "rate_mbit": rate_mbit, "delay": delay})
    for leaf in range(1, leaves + 1):
        topo.switches.append(new_switch(f"leaf{leaf}", "leaf", leaf, hosts_per_leaf + spines, grpc_base))
    for s in range(1, spines + 1):
        topo.switches.append(new_switch(f"spine{s}", "spine", leaves + s, leaves, grpc_base))
    for leaf in range(1, leaves + 1):
        for j in range(1, hosts_per_leaf + 1):
            h = _host(f"h{leaf}_{j}", f"10.0.{leaf}", j + 1)
            topo.hosts.append(h)
            topo.links.append(Link(h.name, 0, f"leaf{leaf}", j, rate_mbit, delay))
    for leaf in range(1, leaves + 1):
        for s in range(1, spines + 1):
            topo.links.append(Link(f"leaf{leaf}", hosts_per_leaf + s, f"spine{s}", leaf, rate_mbit, delay))
    return topo


# ucd4 OCS wiring: OCS port -> (switch, switch port). s1 and s4 have two optical ports each.
UCD4_OCS_PORTS = ((1, "s1", 2), (2, "s1", 3), (3, "s2", 2), (4, "s3", 2), (5, "s4", 2), (6, "s4", 3))
# Circuits as OCS port pairs: initially br2-br1 (3-1), br1-br4 (2-5), br4-br3 (6-4), so h2<->h3 runs
# s2-s1-s4-s3; the reconfiguration gives br2-br3 (3-4) and keeps br1-br4 for the static h1<->h4 stream.
UCD4_MAPS = {"initial": [(3, 1), (2, 5), (6, 4)], "reconfigured": [(3, 4), (2, 5)]}
UCD4_STATIC = [(2, 5)]


def ucd4(rate_mbit: float = 1000.0, delay: str = "0.1ms", grpc_base: int = DEFAULT_GRPC_BASE,
         fabric_rate_mbit: float | None = None) -> Topology:
    """The thesis testbed (seed 000, R1): h1..h4 on ToRs s1..s4, inter-ToR circuits through one OCS,
    and the two electrical bypass links MBB needs (s2-s1 and s4-s3).

    While s2-s1 and s4-s3 circuits are torn down, the temporary route s2-s1-s4-s3 runs over the bypass
    links and the untouched s1-s4 circuit. Circuit maps `initial` and `reconfigured` are in the OCS entry.
    Host links run at `rate_mbit`; the bypass links and OCS fibres at `fabric_rate_mbit` (default the same).
    """
    fabric = rate_mbit if fabric_rate_mbit is None else fabric_rate_mbit
    topo = Topology(name="ucd4", kind="ucd4", params={"rate_mbit": rate_mbit, "delay": delay,
                                                     "fabric_rate_mbit": fabric})
    nports = {"s1": 4, "s2": 3, "s3": 3, "s4": 4}
    for i in range(1, 5):
        topo.switches.append(new_switch(f"s{i}", "tor", i, nports[f"s{i}"], grpc_base))
    for i in range(1, 5):
        h = _host(f"h{i}", f"10.0.{i}", 2)
        topo.hosts.append(h)
        topo.links.append(Link(h.name, 0, f"s{i}", 1, rate_mbit, delay))
    topo.links.append(Link("s2", 3, "s1", 4, fabric, delay))  # bypass 1
    topo.links.append(Link("s4", 4, "s3", 3, fabric, delay))  # bypass 2
    topo.ocs.append(Ocs("ocs", 5, grpc_base + 5, [OcsPort(p, s, sp) for p, s, sp in UCD4_OCS_PORTS],
                        fabric, delay, {k: list(v) for k, v in UCD4_MAPS.items()}, "initial",
                        list(UCD4_STATIC)))
    return topo


def hybrid(topo: Topology, tors: list[str] | None = None, uplinks: int = 1, name: str = "ocs",
           rate_mbit: float | None = None, delay: str | None = None, replace: bool = False) -> Topology:
    """Attach `uplinks` optical ports of each chosen ToR (default: every ToR) to a new OCS.

    By default the optical ports are new ports. With replace=True they are the ToR's last `uplinks`
    switch-facing ports, whose electrical links are removed (seed 003 R2: the optical port connects to
    the OCS instead of a spine, so per-ToR capacity and the number of fabric ports stay the same).

    The OCS gets the next device id. Its circuit map `pairs` joins the first half of the ToRs to the
    second half (ToR i <-> ToR i + n/2 on their first optical port, seed 003's A_i <-> B_i) and is
    the default map. Modifies and returns `topo`.
    """
    smap = topo.switch_map()
    if tors is None:
        tors = [s.name for s in topo.switches if s.role in TOR_ROLES]
    for t in tors:
        if t not in smap:
            raise ValueError(f"ToR {t!r}: not a switch of {topo.name}")
    if len(set(tors)) != len(tors) or len(tors) < 2:
        raise ValueError(f"tors={tors!r}: expected at least two distinct switches")
    if isinstance(uplinks, bool) or not isinstance(uplinks, int) or uplinks < 1:
        raise ValueError(f"uplinks={uplinks!r}: expected an integer >= 1")
    if any(o.name == name for o in topo.ocs) or name in smap:
        raise ValueError(f"OCS name {name!r}: already used in {topo.name}")
    rate = rate_mbit if rate_mbit is not None else float(topo.params.get("rate_mbit", 1000.0))
    dly = delay if delay is not None else str(topo.params.get("delay", "0.1ms"))
    device_id = max([s.device_id for s in topo.switches] + [o.device_id for o in topo.ocs]) + 1
    grpc = max([s.grpc_port for s in topo.switches] + [o.grpc_port for o in topo.ocs]) + 1
    ocs = Ocs(name, device_id, grpc, rate_mbit=rate, delay=dly)
    first_port: dict[str, int] = {}
    for t in tors:
        sw = smap[t]
        if replace:
            ups = sorted((lk.a_port if lk.a == t else lk.b_port, i) for i, lk in enumerate(topo.links)
                         if t in (lk.a, lk.b) and lk.a in smap and lk.b in smap)
            if len(ups) <= uplinks:
                raise ValueError(f"ToR {t!r}: has {len(ups)} switch links; --replace needs more than {uplinks}")
            chosen = ups[-uplinks:]
            for _port, i in chosen:
                lk = topo.links[i]
                peer, peer_port = (lk.b, lk.b_port) if lk.a == t else (lk.a, lk.a_port)
                del smap[peer].ports[peer_port]
            drop = {i for _p, i in chosen}
            topo.links[:] = [lk for i, lk in enumerate(topo.links) if i not in drop]
            ports = [p for p, _i in chosen]
        else:
            ports = []
            for _u in range(uplinks):
                port = max(sw.ports) + 1
                if port >= 255:
                    raise ValueError(f"ToR {t!r}: no free port below the CPU port 255")
                sw.ports[port] = switch_mac(sw.device_id, port)
                ports.append(port)
        for u, port in enumerate(ports):
            ocs.ports.append(OcsPort(len(ocs.ports) + 1, t, port))
            if u == 0:
                first_port[t] = len(ocs.ports)
    half = len(tors) // 2
    ocs.circuit_maps["pairs"] = [(first_port[tors[i]], first_port[tors[i + half]]) for i in range(half)]
    ocs.default_map = "pairs"
    topo.ocs.append(ocs)
    topo.params["hybrid"] = {"ocs": name, "tors": tors, "uplinks": uplinks, "replace": replace}
    topo.name += "-hybrid"
    log.info("attached %d ToR ports to OCS %s", len(ocs.ports), name)
    return topo


def round_robin_matchings(n: int) -> list[list[tuple[int, int]]]:
    """Pairings of items 0..n-1 in which every pair meets once (the circle method): n-1 rounds for an
    even n, n rounds for an odd n (one item sits out each round)."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 2:
        raise ValueError(f"round robin of {n!r}: expected an integer >= 2")
    items: list[int | None] = list(range(n)) + ([None] if n % 2 else [])
    m = len(items)
    rounds = []
    for _r in range(m - 1):
        pairs = [(items[i], items[m - 1 - i]) for i in range(m // 2)]
        rounds.append([(a, b) for a, b in pairs if a is not None and b is not None])
        items = [items[0], items[-1], *items[1:-1]]
    return rounds


def ocscore(tors: int = 4, hosts_per_tor: int = 2, uplinks: int = 1, spines: int = 0,
            rate_mbit: float = 100.0, delay: str = "0.1ms", grpc_base: int = DEFAULT_GRPC_BASE,
            spine_mbit: float | None = None) -> Topology:
    """N ToRs around one OCS (seeds 001 and 002: a single-hop optical core), with `spines` electrical
    spines as well when > 0 (a hybrid leaf-spine; its ToR-spine links at `spine_mbit`, default
    `rate_mbit`: below it, an electrical fabric oversubscribed against the optical core).

    ToR<t>: ports 1..hosts_per_tor hosts h<t>_<j> (10.0.t.(j+1)/24), then one port per spine, then
    `uplinks` optical ports. The OCS's circuit maps are the slots of a round robin: `slot<s>` joins
    the ToR pairs of round s on optical port u = 0 and of rounds s+1, ... on ports u = 1, ... (every
    ToR pair meets once per cycle); `slot0` is the default. Without spines a host reaches only the
    ToRs its slot's circuits join (`tablegen --check` reports the other pairs as dropped).
    """
    for name, value, lo, hi in (("tors", tors, 2, 250), ("hosts_per_tor", hosts_per_tor, 1, 200),
                                ("uplinks", uplinks, 1, 16), ("spines", spines, 0, 16)):
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            raise ValueError(f"{name}={value!r}: expected an integer in {lo}..{hi}")
    if spines:
        topo = leafspine(tors, spines, hosts_per_tor, rate_mbit, delay, grpc_base)
        topo.params["spine_mbit"] = rate_mbit if spine_mbit is None else spine_mbit
        for link in topo.links:
            if link.b.startswith("spine"):
                link.rate_mbit = topo.params["spine_mbit"]
    else:
        topo = Topology(name="", kind="", params={"rate_mbit": rate_mbit, "delay": delay})
        for t in range(1, tors + 1):
            topo.switches.append(new_switch(f"leaf{t}", "leaf", t, hosts_per_tor, grpc_base))
            for j in range(1, hosts_per_tor + 1):
                h = _host(f"h{t}_{j}", f"10.0.{t}", j + 1)
                topo.hosts.append(h)
                topo.links.append(Link(h.name, 0, f"leaf{t}", j, rate_mbit, delay))
    topo.name, topo.kind = f"ocscore-{tors}x{hosts_per_tor}" + (f"-{spines}spines" if spines else ""), "ocscore"
    topo.params.update({"tors": tors, "hosts_per_tor": hosts_per_tor, "uplinks": uplinks, "spines": spines})
    hybrid(topo, [f"leaf{t}" for t in range(1, tors + 1)], uplinks, rate_mbit=rate_mbit, delay=delay)
    topo.name = topo.name.removesuffix("-hybrid")
    ocs = topo.ocs[-1]
    rounds = round_robin_matchings(tors)
    slot_port = {(p.switch, u): p.port for u in range(uplinks)
                 for p in [q for q in ocs.ports if (q.port - 1) % uplinks == u]}
    ocs.circuit_maps = {
        f"slot{s}": [(slot_port[(f"leaf{a + 1}", u)], slot_port[(f"leaf{b + 1}", u)])
                     for u in range(uplinks) for a, b in rounds[(s + u) % len(rounds)]]
        for s in range(len(rounds))}
    ocs.default_map = "slot0"
    return topo
