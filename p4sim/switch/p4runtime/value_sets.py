"""ValueSetEntry writes and reads: the members of a parser value set (P4Runtime spec, 9.8)."""

from __future__ import annotations

from p4sim.switch.p4runtime import codec
from p4sim.switch.p4runtime.binding import Binding
from p4sim.switch.p4runtime.entries import MODIFY
from p4sim.switch.p4runtime.errors import RESOURCE_EXHAUSTED, P4RuntimeError, invalid
from p4sim.switch.p4runtime.proto import p4r


def write_value_set(b: Binding, utype: int, msg: p4r.ValueSetEntry) -> None:
    """MODIFY a value set: its members become exactly the given ones (the only update type allowed)."""
    info = b.schema.value_set(msg.value_set_id)
    if utype != MODIFY:
        raise invalid(f"value set {info.name!r}: only MODIFY is allowed, found update type {utype}")
    if len(msg.members) > info.size:
        raise P4RuntimeError(RESOURCE_EXHAUSTED, f"value set {info.name!r} holds at most {info.size} members, "
                             f"found {len(msg.members)}")
    values = []
    for member in msg.members:
        by_id = {m.field_id: m for m in member.match}
        if len(by_id) != len(member.match) or set(by_id) != set(range(1, len(info.widths) + 1)):
            raise invalid(f"value set {info.name!r}: a member needs match fields 1..{len(info.widths)} once each")
        v = 0
        for fid, w in enumerate(info.widths, 1):
            m = by_id[fid]
            if m.WhichOneof("field_match_type") != "exact":
                raise invalid(f"value set {info.name!r}: match field {fid} must be exact")
            v = (v << w) | codec.decode(m.exact.value, w, f"value set {info.name!r} field {fid}")
        values.append(v)
    b.value_sets[info.id].set_members(values)


def read_value_sets(b: Binding, req: p4r.ValueSetEntry, out: list[p4r.Entity]) -> None:
    """Append the value set entries a (wildcard) read selects: each with all its members."""
    ids = [b.schema.value_set(req.value_set_id).id] if req.value_set_id else list(b.value_sets)
    for vid in ids:
        info = b.schema.value_sets[vid]
        ent = p4r.Entity()
        ve = ent.value_set_entry
        ve.value_set_id = vid
        for v in b.value_sets[vid].entries():
            member = ve.members.add()
            shift = sum(info.widths)
            for fid, w in enumerate(info.widths, 1):
                shift -= w
                fm = member.match.add()
                fm.field_id = fid
                fm.exact.value = codec.encode((v >> shift) & ((1 << w) - 1))
        out.append(ent)
