"""fabric.elephants: only the elephant hosts' traffic may take a circuit (seed 003 DT, on demand)."""

import ipaddress

import pytest

from fabric.elephants import ELEPHANT_PATH_OFFSET, differentiated
from fabric.forwarding import Forwarding
from tablegen.entries import generate_states
from topo import generators


def _ip(a: str) -> int:
    return int(ipaddress.IPv4Address(a))


@pytest.fixture(scope="module")
def states():
    topo = generators.hybrid(generators.leafspine(leaves=6, spines=2, hosts_per_leaf=2, rate_mbit=10), replace=True)
    lit = generate_states(topo, "ecmp", {"ocs": [(1, 4)]}, "random")  # leaf1 <-> leaf4 lit
    dark = generate_states(topo, "ecmp", {"ocs": []}, "random")
    return lit, dark


ELEPHANTS = ["10.0.1.2", "10.0.4.2"]  # h1_1 and h4_1


def test_only_elephants_take_the_circuit(states):
    lit, _ = states
    leaf1 = Forwarding(differentiated(lit["leaf1"], ELEPHANTS))
    # leaf1: port 3 the spine, port 4 the optical port (the spine2 uplink it replaced)
    assert leaf1.ports(_ip("10.0.4.2"), 0) == [4]  # the elephant: over the circuit
    assert leaf1.ports(_ip("10.0.4.2"), 1) == [3]  # its shadow: electrical
    assert leaf1.ports(_ip("10.0.4.3"), 0) == [3]  # a mouse to the same ToR: electrical in both versions
    assert leaf1.ports(_ip("10.0.4.3"), 1) == [3]
    assert Forwarding(lit["leaf1"]).ports(_ip("10.0.4.3"), 0) == [4]  # it was on the circuit before
    assert leaf1.path_of(_ip("10.0.4.2")) == leaf1.path_of(_ip("10.0.4.3")) + ELEPHANT_PATH_OFFSET
    # the ACKs come back the same way: leaf4 sends the elephant sender's traffic over the circuit
    leaf4 = Forwarding(differentiated(lit["leaf4"], ELEPHANTS))
    assert leaf4.ports(_ip("10.0.1.2"), 0) == [4]
    assert leaf4.ports(_ip("10.0.1.3"), 0) == [3]


def test_local_and_dark_destinations_unchanged(states):
    lit, dark = states
    d = differentiated(lit["leaf1"], ELEPHANTS)
    assert not any(e.match.get("ipv4_dst") == "10.0.1.2/32" and e.action == "set_path" for e in d.entries)
    leaf2 = Forwarding(differentiated(dark["leaf2"], ELEPHANTS))
    assert leaf2.ports(_ip("10.0.4.2"), 0) == leaf2.ports(_ip("10.0.4.3"), 0) == [3]


def test_idempotent_and_keeps_twin_of_transformed_state(states):
    lit, _ = states
    once = differentiated(lit["leaf1"], ELEPHANTS)
    assert differentiated(once, ELEPHANTS) == once
    # a transformed state whose route versions change (mbb's shadow step) keeps the twin's circuit
    # path and gives the twin the route's version
    for e in once.entries:
        if e.table.endswith("path_version") and int(e.match["path_id"]) < ELEPHANT_PATH_OFFSET:
            e.params = {"version": 1}
    again = Forwarding(differentiated(once, ELEPHANTS))
    pid = again.path_of(_ip("10.0.4.2"))
    twin_version = next(int(e.params["version"]) for e in differentiated(once, ELEPHANTS).entries
                        if e.table.endswith("path_version") and int(e.match["path_id"]) == pid)
    assert twin_version == 1 and again.ports(_ip("10.0.4.2"), 0) == [4]


def test_bad_address(states):
    lit, _ = states
    with pytest.raises(ValueError, match="elephant host 'h1_1'"):
        differentiated(lit["leaf1"], ["h1_1"])
