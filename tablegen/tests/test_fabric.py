"""Fabric view: peers through links and circuits, version graphs, circuit map resolution."""


import pytest

from tablegen.graph import ELECTRICAL_COST, OPTICAL_COST, Fabric
from topo.circuits import resolve_circuits
from topo.generators import fattree, hybrid, leafspine, ucd4


def test_peers_and_hosts():
    f = Fabric(fattree(4))
    assert f.host_at["h0_0_1"] == ("e0_0", 2)
    peer = f.peers["e0_0"][3]
    assert (peer.node, peer.port, peer.mac, peer.optical) == ("a0_0", 1, "02:00:00:09:00:01", False)
    assert f.peers["e0_0"][1].is_host and f.peers["e0_0"][1].mac == "00:00:0a:00:00:02"
    assert f.versions_equal() and not f.lit()


def test_ucd4_circuits_and_versions():
    t = ucd4()
    f = Fabric(t)  # default map: initial
    p = f.peers["s2"][2]
    assert (p.node, p.port, p.optical, p.static) == ("s1", 2, True, False)
    assert f.peers["s1"][3].static and f.peers["s1"][3].node == "s4"
    assert not f.versions_equal()
    assert ("s1", 2) in f.optical_ports
    # version 0 prefers the circuit s2-s1, version 1 only has the bypass link
    assert f.neighbours("s2", 0) == [(2, "s1", OPTICAL_COST), (3, "s1", ELECTRICAL_COST)]
    assert f.neighbours("s2", 1) == [(3, "s1", ELECTRICAL_COST)]
    d0, d1 = f.distances("s3", 0), f.distances("s3", 1)
    assert d0["s2"] == 3 * OPTICAL_COST
    assert d1["s2"] == 2 * ELECTRICAL_COST + OPTICAL_COST
    assert f.next_hops("s2", d0, 0) == (2,) and f.next_hops("s2", d1, 1) == (3,)
    r = Fabric(t, resolve_circuits(t, "reconfigured"))
    assert r.peers["s2"][2].node == "s3" and 2 not in r.peers["s1"]  # s1:2 is dark


def test_circuits_checked(tmp_path):
    t = ucd4()
    with pytest.raises(ValueError, match="port 3 is in two circuits"):
        Fabric(t, {"ocs": [(3, 4), (3, 1)]})
    with pytest.raises(ValueError, match="OCS 'other'"):
        Fabric(t, {"other": []})


def test_hybrid_default_pairs_are_lit():
    t = hybrid(leafspine(4, 2, 1))
    f = Fabric(t)
    assert f.peers["leaf1"][4].node == "leaf3" and f.peers["leaf1"][4].optical
    assert Fabric(t, resolve_circuits(t, "none")).peers["leaf1"].get(4) is None
