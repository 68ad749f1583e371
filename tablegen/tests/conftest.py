"""Shared helpers: generate the states of a topology in memory, as states or as documents."""

import pytest

from p4rt.state import SwitchState
from tablegen.entries import network_states
from tablegen.graph import Fabric
from topo.circuits import resolve_circuits
from topo.generators import ocscore


def states_of(topo, mode="ecmp", circuits=None, spray="random", failover=True):
    """All states of a topology by switch name."""
    fabric = Fabric(topo, resolve_circuits(topo, circuits))
    return {st.name: st for st in network_states(fabric, mode, spray, failover)}


def docs_of(topo, mode="ecmp", circuits=None, spray="random", failover=True):
    """All documents (tablegen/FORMAT.md) of a topology by switch name, to edit in tests."""
    return {name: st.to_doc() for name, st in states_of(topo, mode, circuits, spray, failover).items()}


def loader(docs):
    """check()'s load function over documents."""
    return lambda name: SwitchState.from_doc(docs[name]) if name in docs else None


@pytest.fixture(scope="module")
def ocscore3():
    """ocscore with 3 ToRs (one host, one uplink each) and an electrical spine: (topology, its OCS,
    ECMP states by switch name)."""
    topo = ocscore(3, 1, uplinks=1, spines=1)
    return topo, topo.ocs[0], states_of(topo)
