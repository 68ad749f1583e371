"""Generators: shapes, wiring and addressing of fat-tree, leaf-spine, ucd4 and the hybrid overlay."""

import ipaddress

import pytest

from topo.generators import fattree, hybrid, leafspine, ocscore, round_robin_matchings, ucd4
from topo.model import CPU_PORT
from topo.summary import shortest_paths
from topo.validate import validate


@pytest.mark.parametrize("k", [4, 6, 8])
def test_fattree_counts(k):
    t = validate(fattree(k))
    roles = [s.role for s in t.switches]
    assert roles.count("edge") == roles.count("aggregation") == k * k // 2
    assert roles.count("core") == (k // 2) ** 2
    assert len(t.switches) == 5 * k * k // 4
    assert len(t.hosts) == k**3 // 4
    assert len(t.links) == 3 * k**3 // 4
    assert all(len(s.ports) == k for s in t.switches)


def test_fattree_k4_seed004():
    t = fattree(4)
    assert (len(t.switches), len(t.hosts), len(t.links)) == (20, 16, 48)
    hosts = t.host_map()
    assert hosts["h2_1_0"].ip == "10.2.1.2/24" and hosts["h2_1_0"].gateway == "10.2.1.1"
    assert hosts["h2_1_0"].mac == "00:00:0a:02:01:02"
    links = {(lk.a, lk.a_port): (lk.b, lk.b_port) for lk in t.links}
    assert links[("h2_1_1", 0)] == ("e2_1", 2)
    assert links[("e2_1", 4)] == ("a2_1", 2)          # edge port k/2+1+j to agg j, agg port i+1
    assert links[("a3_1", 3)] == ("c1_0", 4)          # agg i port k/2+1+j to core c<i>_<j>, core port pod+1
    assert shortest_paths(t, "h0_0_0", "h3_1_1") == 4  # (k/2)^2 between pods
    assert shortest_paths(t, "h0_0_0", "h0_1_0") == 2  # k/2 inside a pod
    assert shortest_paths(t, "h0_0_0", "h0_0_1") == 1
    sw = t.switch_map()
    assert [sw[n].device_id for n in ("e0_0", "a0_0", "c0_0", "c1_1")] == [1, 9, 17, 20]
    assert sw["e0_0"].grpc_port == 50001 and sw["c1_1"].grpc_port == 50020
    assert all(CPU_PORT not in s.ports for s in t.switches)


@pytest.mark.parametrize("k", [3, 5, 2, 0, -4, "4", True])
def test_fattree_rejects_bad_k(k):
    with pytest.raises(ValueError, match=r"^k="):
        fattree(k)


def test_leafspine_seed003():
    t = validate(leafspine(6, 2, 24))
    assert len(t.switches) == 8 and len(t.hosts) == 144
    assert len(t.links) == 144 + 12
    assert {lk.rate_mbit for lk in t.links} == {1000.0}
    sw = t.switch_map()
    assert sorted(sw["leaf3"].ports) == list(range(1, 27)) and sorted(sw["spine2"].ports) == list(range(1, 7))
    assert t.host_map()["h3_24"].ip == "10.0.3.25/24"
    assert shortest_paths(t, "h1_1", "h6_1") == 2


@pytest.mark.parametrize("args", [(1, 2, 2), (2, 0, 2), (2, 2, 0), (2, 2, 253)])
def test_leafspine_rejects(args):
    with pytest.raises(ValueError):
        leafspine(*args)


def test_ucd4_thesis_testbed():
    t = validate(ucd4())
    assert [s.name for s in t.switches] == ["s1", "s2", "s3", "s4"]
    assert [h.name for h in t.hosts] == ["h1", "h2", "h3", "h4"]
    (ocs,) = t.ocs
    assert ocs.device_id == 5 and ocs.grpc_port == 50005
    attach = {p.port: p.switch for p in ocs.ports}

    def chain(name):
        return sorted(tuple(sorted((attach[a], attach[b]))) for a, b in ocs.circuit_maps[name])

    assert chain("initial") == [("s1", "s2"), ("s1", "s4"), ("s3", "s4")]  # br2-br1-br4-br3
    assert chain("reconfigured") == [("s1", "s4"), ("s2", "s3")]            # br2-br3, br1-br4 kept
    assert ocs.static_circuits == [(2, 5)] and ocs.default_map == "initial"
    bypass = sorted(tuple(sorted((lk.a, lk.b))) for lk in t.links if lk.a.startswith("s"))
    assert bypass == [("s1", "s2"), ("s3", "s4")]


def test_ucd4_fabric_rate_applies_to_bypasses_and_fibres_only():
    t = validate(ucd4(rate_mbit=20, fabric_rate_mbit=21))
    hosts = {h.name for h in t.hosts}
    rates = {(lk.a, lk.b): lk.rate_mbit for lk in t.links}
    assert {r for (a, b), r in rates.items() if hosts & {a, b}} == {20}
    assert {r for (a, b), r in rates.items() if not hosts & {a, b}} == {21}
    assert t.ocs[0].rate_mbit == 21 and t.params["fabric_rate_mbit"] == 21
    assert ucd4(rate_mbit=20).ocs[0].rate_mbit == 20  # default: the host rate


def test_hybrid_leafspine_adds_one_optical_port_per_tor():
    t = validate(hybrid(leafspine(6, 2, 4)))
    (ocs,) = t.ocs
    assert len(ocs.ports) == 6 and ocs.device_id == 9 and ocs.grpc_port == 50009
    assert all(max(s.ports) == 7 for s in t.switches if s.role == "leaf")
    attach = {p.port: p.switch for p in ocs.ports}
    assert [(attach[a], attach[b]) for a, b in ocs.circuit_maps["pairs"]] == [
        ("leaf1", "leaf4"), ("leaf2", "leaf5"), ("leaf3", "leaf6")]


def test_hybrid_fattree_chosen_tors():
    t = validate(hybrid(fattree(4), ["e0_0", "e3_1"], uplinks=2))
    assert [(p.switch, p.switch_port) for p in t.ocs[0].ports] == [("e0_0", 5), ("e0_0", 6), ("e3_1", 5), ("e3_1", 6)]
    assert t.ocs[0].circuit_maps["pairs"] == [(1, 3)]


@pytest.mark.parametrize("tors,msg", [(["e0_0", "nope"], "nope"), (["e0_0"], "at least two"),
                                      (["e0_0", "e0_0"], "at least two")])
def test_hybrid_rejects(tors, msg):
    with pytest.raises(ValueError, match=msg):
        hybrid(fattree(4), tors)


def test_host_subnets_per_tor():
    t = fattree(6)
    nets = {ipaddress.IPv4Interface(h.ip).network for h in t.hosts}
    assert len(nets) == 6 * 3


def test_hybrid_replace_keeps_port_count():
    base = leafspine(6, 2, 4)
    t = validate(hybrid(leafspine(6, 2, 4), replace=True))
    assert len(t.links) == len(base.links) - 6
    leaf = t.switch_map()["leaf1"]
    assert sorted(leaf.ports) == sorted(base.switch_map()["leaf1"].ports)  # same ports, last one optical
    assert [(p.switch, p.switch_port) for p in t.ocs[0].ports][:2] == [("leaf1", 6), ("leaf2", 6)]
    assert sorted(t.switch_map()["spine2"].ports) == []  # every leaf's spine2 uplink became optical
    with pytest.raises(ValueError, match="needs more than 2"):
        hybrid(leafspine(2, 2, 1), uplinks=2, replace=True)


@pytest.mark.parametrize("n", [2, 3, 4, 5, 8])
def test_round_robin_meets_every_pair_once(n):
    rounds = round_robin_matchings(n)
    assert len(rounds) == (n - 1 if n % 2 == 0 else n)
    pairs = [tuple(sorted(p)) for r in rounds for p in r]
    assert len(pairs) == len(set(pairs)) == n * (n - 1) // 2
    assert all(len({x for p in r for x in p}) == 2 * len(r) for r in rounds)  # a matching: nobody twice


def test_ocscore_slots_are_round_robin_matchings():
    t = validate(ocscore(4, hosts_per_tor=2, uplinks=2))
    (ocs,) = t.ocs
    assert sorted(ocs.circuit_maps) == ["slot0", "slot1", "slot2"] and ocs.default_map == "slot0"
    tor_of = {p.port: p.switch for p in ocs.ports}
    for pairs in ocs.circuit_maps.values():
        ports = [x for p in pairs for x in p]
        assert len(ports) == len(set(ports)) == 8  # every optical port of every ToR, once
    met = {tuple(sorted((tor_of[a], tor_of[b]))) for pairs in ocs.circuit_maps.values() for a, b in pairs}
    assert len(met) == 6  # all ToR pairs


def test_ocscore_refuses_bad_sizes():
    with pytest.raises(ValueError, match="tors=1"):
        ocscore(1)
    with pytest.raises(ValueError, match="uplinks=0"):
        ocscore(4, uplinks=0)
