"""Shared helpers: generate the documents of a topology in memory."""

from tablegen.files import documents
from tablegen.graph import Fabric
from topo.circuits import resolve_circuits


def docs_of(topo, mode="ecmp", circuits=None, spray="random", failover=True):
    """All documents of a topology by switch name."""
    fabric = Fabric(topo, resolve_circuits(topo, circuits))
    return {d["switch"]: d for d in documents(fabric, mode, spray, failover)}
