"""Route plans: the fat-tree planner's aggregation, and its agreement with the generic planner."""

import ipaddress

import pytest

from tablegen.graph import Fabric
from tablegen.routing import FatTreePlanner, GenericPlanner, covering_prefix, planner
from topo.generators import fattree, leafspine, ucd4


def _lookup(plan, addr):
    """(kind, ports per version) that a plan gives an address, by longest prefix."""
    best = None
    ip = ipaddress.IPv4Address(addr)
    cands = [(p, ("host", ((port,), (port,)))) for p, port, _mac in plan.to_host]
    cands += [(p, ("drop", ((), ()))) for p in plan.drop]
    cands += [(r.prefix, ("route", r.hops)) for r in plan.routes]
    for prefix, what in cands:
        net = ipaddress.IPv4Network(prefix)
        if ip in net and (best is None or net.prefixlen > best[0]):
            best = (net.prefixlen, what)
    return best[1] if best else None


def test_fattree_k4_structure():
    f = Fabric(fattree(4))
    plan = planner(f)
    assert isinstance(plan, FatTreePlanner)
    e = plan("e1_0")
    assert e.to_host == [("10.1.0.2/32", 1, "00:00:0a:01:00:02"), ("10.1.0.3/32", 2, "00:00:0a:01:00:03")]
    assert e.drop == ["10.1.0.0/24"]
    assert [(r.prefix, r.hops) for r in e.routes] == [("10.0.0.0/8", ((3, 4), (3, 4)))]
    a = plan("a1_1")
    assert [(r.prefix, r.hops[0]) for r in a.routes] == [
        ("10.1.0.0/24", (1,)), ("10.1.1.0/24", (2,)), ("10.0.0.0/8", (3, 4))]
    c = plan("c1_0")
    assert [(r.prefix, r.hops[0]) for r in c.routes] == [(f"10.{p}.0.0/16", (p + 1,)) for p in range(4)]
    assert str(covering_prefix(f)) == "10.0.0.0/8"


def test_static_spreads_destinations():
    f = Fabric(fattree(4))
    plan = planner(f, spread=True)
    assert len(plan("e0_0").routes) == 7  # every other edge's /24


@pytest.mark.parametrize("k", [4, 8])
def test_fattree_planner_agrees_with_generic(k):
    f = Fabric(fattree(k))
    fast, slow = FatTreePlanner(f, False), GenericPlanner(f, False)
    for sw in f.switches:
        pf, ps = fast(sw), slow(sw)
        for h in f.topo.hosts:
            assert _lookup(pf, h.address) == _lookup(ps, h.address), (sw, h.name)


def test_generic_aggregates_leafspine():
    f = Fabric(leafspine(4, 3, 2))
    plan = planner(f)
    assert isinstance(plan, GenericPlanner)
    leaf = plan("leaf2")
    assert [(r.prefix, r.hops) for r in leaf.routes] == [("10.0.0.0/16", ((3, 4, 5), (3, 4, 5)))]
    spine = plan("spine1")
    assert sorted(r.prefix for r in spine.routes) == ["10.0.0.0/16", "10.0.2.0/24", "10.0.3.0/24", "10.0.4.0/24"]


def test_ucd4_stable_plan_versions():
    f = Fabric(ucd4())
    plan = planner(f)
    s2 = plan("s2")
    by_prefix = {r.prefix: r for r in s2.routes}
    assert sorted(by_prefix) == ["10.0.1.0/24", "10.0.3.0/24", "10.0.4.0/24"]
    r3 = by_prefix["10.0.3.0/24"]
    assert r3.path_id == 3 and r3.hops == ((2,), (3,))  # optical port 2; shadow: bypass port 3
    s1 = plan("s1")
    r4 = {r.prefix: r for r in s1.routes}["10.0.4.0/24"]
    assert r4.hops == ((3,), (3,))  # the static s1-s4 circuit serves both versions


def test_broken_fattree_falls_back_to_generic():
    from topo.generators import hybrid

    t = hybrid(fattree(4), replace=True)  # each edge's last uplink now goes to the OCS
    dark = Fabric(t, {"ocs": []})
    with pytest.raises(ValueError, match="not linked to"):
        FatTreePlanner(dark, False)
    assert isinstance(planner(dark), GenericPlanner)


def test_topology_without_hosts():
    t = leafspine(2, 1, 1)
    t.hosts.clear()
    t.links = [lk for lk in t.links if not lk.a.startswith("h")]
    f = Fabric(t)
    assert str(covering_prefix(f)) == "0.0.0.0/0"
    assert planner(f)("leaf1").routes == []
