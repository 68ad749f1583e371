"""The one circuit-spec grammar: what every CLI option, Mininet CLI command and experiment spec that
names circuits accepts.

    None              each OCS's default map (topo/FORMAT.md `default_map`; none: every port dark)
    "none"            every port dark
    "<map name>"      a map of the topology's OCS (`circuit_maps`)
    "a-b,c-d"         duplex circuits between OCS ports, on the only (or the named) OCS
    "<file.json>"     {"<ocs>": [[a, b], ...]}, or a bare [[a, b], ...] for the only (or the named) OCS
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from topo.model import Topology, circuit_list

CircuitMap = dict[str, list[tuple[int, int]]]  # OCS name -> circuits (OCS port pairs)

_PAIRS = re.compile(r"\s*\d+\s*-\s*\d+\s*(,\s*\d+\s*-\s*\d+\s*)*")


def default_circuits(topo: Topology) -> CircuitMap:
    """Each OCS's default circuit map (none when it has no default: every port dark)."""
    return {o.name: list(o.circuit_maps.get(o.default_map, [])) if o.default_map else [] for o in topo.ocs}


def resolve_circuits(topo: Topology, spec: str | None, ocs: str | None = None) -> CircuitMap:
    """The circuit map a spec names (module docstring); pairs and bare lists go to `ocs`, or to the
    only OCS. ValueError naming the spec and what it may be."""
    if spec is None:
        return default_circuits(topo)
    if spec == "none":
        return {o.name: [] for o in topo.ocs}
    if not topo.ocs:
        raise ValueError(f"circuits {spec!r}: the topology has no OCS")
    names = [o.name for o in topo.ocs]
    if ocs is not None and ocs not in names:
        raise ValueError(f"OCS {ocs!r}: expected one of {', '.join(names)}")
    known = sorted({m for o in topo.ocs for m in o.circuit_maps})
    if spec in known:
        return {o.name: list(o.circuit_maps.get(spec, [])) for o in topo.ocs}
    out: CircuitMap = {o.name: [] for o in topo.ocs}
    if _PAIRS.fullmatch(spec):
        out[_single(names, ocs, spec)] = [(int(a), int(b)) for a, b in
                                          (item.split("-") for item in spec.replace(" ", "").split(","))]
        return out
    path = Path(spec)
    if not path.is_file():
        raise ValueError(f"circuits {spec!r}: expected none, a map name ({', '.join(known)}), pairs a-b,c-d "
                         "or a JSON file")
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise ValueError(f"circuits file {spec!r}: not JSON ({exc.msg} at line {exc.lineno})") from None
    if isinstance(data, list):
        data = {_single(names, ocs, spec): data}
    if not isinstance(data, dict):
        raise ValueError(f"circuits file {spec!r}: expected {{\"<ocs>\": [[a, b], ...]}} or [[a, b], ...]")
    for name, pairs in data.items():
        if name not in out:
            raise ValueError(f"circuits file {spec!r}: OCS {name!r}: expected one of {', '.join(names)}")
        out[name] = circuit_list(pairs, f"circuits file {spec!r} OCS {name!r}")
    return out


def ocs_circuits(topo: Topology, spec: str | None, ocs: str | None = None) -> list[tuple[int, int]]:
    """The circuits a spec gives one OCS (`ocs`, or the only one)."""
    names = [o.name for o in topo.ocs]
    return resolve_circuits(topo, spec, ocs).get(_single(names, ocs, spec or "default"), [])


def _single(names: list[str], ocs: str | None, spec: str) -> str:
    """`ocs`, or the topology's only OCS."""
    if ocs is not None:
        return ocs
    if len(names) != 1:
        raise ValueError(f"circuits {spec!r}: the topology has {len(names)} OCS; name one, or use "
                         "{\"<ocs>\": [[a, b], ...]} in a JSON file")
    return names[0]
