"""The route entries the P4Runtime benchmarks write (10.x.y.z/32, one of eight ports, a next-hop MAC),
added to a WriteRequest of whichever protobuf runtime imported it: no project import, so a benchmark
can run it in another environment too (scripts/bench/proto_runtime.py)."""

from __future__ import annotations

from typing import Any


def add_routes(req: Any, table: Any, action: Any, start: int, stop: int, utype: int) -> None:
    """Updates of type `utype` for routes start..stop-1 of the P4Info `table` with its `action`."""
    for i in range(start, stop):
        te = req.updates.add(type=utype).entity.table_entry
        te.table_id = table.preamble.id
        fm = te.match.add(field_id=table.match_fields[0].id)
        fm.lpm.value = (0x0A000000 + i).to_bytes(4, "big")
        fm.lpm.prefix_len = 32
        te.action.action.action_id = action.preamble.id
        te.action.action.params.add(param_id=action.params[0].id, value=bytes([1 + i % 8]))
        te.action.action.params.add(param_id=action.params[1].id, value=(i + 1).to_bytes(6, "big"))
