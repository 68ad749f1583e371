"""Action profile members and groups, counters, meters, registers and PRE entries, to Device calls.

Counters, meters and registers exist at every index, so they only take MODIFY (INSERT and DELETE are
INVALID_ARGUMENT, as in PI). Reads without an ID or index are wildcards over all of them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, TypeVar

from p4sim.switch.p4runtime import codec
from p4sim.switch.p4runtime.binding import Binding
from p4sim.switch.p4runtime.entries import (
    DELETE,
    INSERT,
    MODIFY,
    action_call,
    meter_config,
    meter_to_proto,
    watch_port_of,
)
from p4sim.switch.p4runtime.errors import OUT_OF_RANGE, P4RuntimeError, invalid
from p4sim.switch.p4runtime.proto import p4r
from p4sim.switch.p4runtime.schema import ResourceInfo
from p4sim.switch.pre import CloneSession, Pre

if TYPE_CHECKING:
    from p4sim.switch.profiles import ActionProfile, Group, Member

log = logging.getLogger(__name__)
A = TypeVar("A")  # a device array: CounterArray, MeterArray or RegisterArray
P = TypeVar("P", "Member", "Group")


def _index(msg: p4r.Index, size: int, what: str) -> int:
    if msg.index < 0:
        raise invalid(f"negative index {msg.index} of {what}")
    if msg.index >= size:
        raise P4RuntimeError(OUT_OF_RANGE, f"index {msg.index} of {what} is not in 0..{size - 1}")
    return msg.index


def _indices(msg: p4r.CounterEntry | p4r.MeterEntry | p4r.RegisterEntry, info: ResourceInfo) -> list[int] | range:
    """The indices an entry selects: its index (checked), or every index when it gives none."""
    return [_index(msg.index, info.size, info.name)] if msg.HasField("index") else range(info.size)


def _modified(utype: int, what: str, lookup: Callable[[int], ResourceInfo], array_id: int,
              arrays: dict[int, A]) -> tuple[ResourceInfo, A]:
    """The info and device array a counter, meter or register write changes (they only take MODIFY)."""
    if utype != MODIFY:
        raise invalid(f"{what} entries can only be modified, not {p4r.Update.Type.Name(utype)}")
    info = lookup(array_id)
    return info, arrays[info.id]


def _cells(req: p4r.CounterEntry | p4r.MeterEntry | p4r.RegisterEntry, array_id: int,
           lookup: Callable[[int], ResourceInfo], infos: dict[int, ResourceInfo],
           arrays: dict[int, A]) -> Iterator[tuple[int, ResourceInfo, A, int]]:
    """(array id, info, device array, index) of every cell a (wildcard) read selects."""
    for aid in [lookup(array_id).id] if array_id else list(arrays):
        info = infos[aid]
        for i in _indices(req, info):
            yield aid, info, arrays[aid], i


# --- action profiles ----------------------------------------------------------------------------

def write_member(b: Binding, utype: int, msg: p4r.ActionProfileMember) -> None:
    """INSERT, MODIFY or DELETE an action profile member."""
    info = b.schema.action_profile(msg.action_profile_id)
    profile = b.profiles[info.id]
    if utype == DELETE:
        profile.delete_member(msg.member_id)
        return
    if not msg.HasField("action"):
        raise invalid(f"member {msg.member_id} of {info.name!r} has no action")
    tb = b.tables.get(info.table_ids[0]) if info.table_ids else None
    call = action_call(b, tb, msg.action.action_id, codec.params_of(msg.action))
    if utype == INSERT:
        profile.insert_member(msg.member_id, call)
    else:
        profile.modify_member(msg.member_id, call)


def write_group(b: Binding, utype: int, msg: p4r.ActionProfileGroup) -> None:
    """INSERT, MODIFY or DELETE an action selector group."""
    info = b.schema.action_profile(msg.action_profile_id)
    profile = b.profiles[info.id]
    if utype == DELETE:
        profile.delete_group(msg.group_id)
        return
    if not info.with_selector:
        raise invalid(f"action profile {info.name!r} has no selector: groups are not allowed")
    if info.max_group_size and msg.max_size > info.max_group_size:
        raise invalid(f"group max_size {msg.max_size} is above the profile's max_group_size {info.max_group_size}")
    members = [(m.member_id, m.weight, watch_port_of(m)) for m in msg.members]
    if utype == INSERT:
        profile.insert_group(msg.group_id, members, msg.max_size or info.max_group_size)
    else:
        profile.modify_group(msg.group_id, members)


def _selected(b: Binding, profile_id: int, items: Callable[[ActionProfile], dict[int, P]],
              item_id: int) -> Iterator[tuple[int, P]]:
    """(profile id, member or group) of each one a (wildcard) read selects: `items` of the profile named
    (checked) or of every profile, the one of `item_id` when it is not 0."""
    if profile_id:
        b.schema.action_profile(profile_id)
    for pid in [profile_id] if profile_id else list(b.profiles):
        for x in list(items(b.profiles[pid]).values()):
            if not item_id or x.id == item_id:
                yield pid, x


def read_members(b: Binding, req: p4r.ActionProfileMember, out: list[p4r.Entity]) -> None:
    """Append the members a (wildcard) read selects."""
    for pid, m in _selected(b, req.action_profile_id, lambda p: p.members, req.member_id):
        ent = p4r.Entity()
        msg = ent.action_profile_member
        msg.action_profile_id, msg.member_id = pid, m.id
        aid = b.schema.action_ids_by_name[m.action.name]
        codec.args_to_proto(b.schema.actions[aid], list(m.args), msg.action)
        out.append(ent)


def read_groups(b: Binding, req: p4r.ActionProfileGroup, out: list[p4r.Entity]) -> None:
    """Append the groups a (wildcard) read selects."""
    for pid, g in _selected(b, req.action_profile_id, lambda p: p.groups, req.group_id):
        ent = p4r.Entity()
        msg = ent.action_profile_group
        msg.action_profile_id, msg.group_id, msg.max_size = pid, g.id, g.max_size
        for m, weight, watch in g.members:
            gm = msg.members.add(member_id=m.id, weight=weight)
            if watch is not None:
                gm.watch_port = codec.encode(watch)
        out.append(ent)


# --- counters, meters, registers ----------------------------------------------------------------

def write_counter(b: Binding, utype: int, msg: p4r.CounterEntry) -> None:
    """MODIFY one index of a counter (or every index when none is given)."""
    info, arr = _modified(utype, "counter", b.schema.counter, msg.counter_id, b.counters)
    data = msg.data
    for i in _indices(msg, info):
        arr.write(i, data.packet_count, data.byte_count)


def read_counters(b: Binding, req: p4r.CounterEntry, out: list[p4r.Entity]) -> None:
    """Append the counter entries a (wildcard) read selects."""
    for cid, info, arr, i in _cells(req, req.counter_id, b.schema.counter, b.schema.counters, b.counters):
        ent = p4r.Entity()
        ce = ent.counter_entry
        ce.counter_id, ce.index.index = cid, i
        packets, nbytes = arr.read(i)
        if info.unit in ("packets", "both"):
            ce.data.packet_count = packets
        if info.unit in ("bytes", "both"):
            ce.data.byte_count = nbytes
        out.append(ent)


def write_meter(b: Binding, utype: int, msg: p4r.MeterEntry) -> None:
    """MODIFY one index of a meter (an all-zero or absent config unconfigures it)."""
    info, arr = _modified(utype, "meter", b.schema.meter, msg.meter_id, b.meters)
    cfg = meter_config(msg.config, info.meter_kind) if msg.HasField("config") else None
    for i in _indices(msg, info):
        arr.set_config(i, cfg)


def read_meters(b: Binding, req: p4r.MeterEntry, out: list[p4r.Entity]) -> None:
    """Append the meter entries a (wildcard) read selects."""
    for mid, _, arr, i in _cells(req, req.meter_id, b.schema.meter, b.schema.meters, b.meters):
        ent = p4r.Entity()
        me = ent.meter_entry
        me.meter_id, me.index.index = mid, i
        cfg = arr.get_config(i)
        if cfg is not None:
            meter_to_proto(cfg, me.config)
        out.append(ent)


def write_register(b: Binding, utype: int, msg: p4r.RegisterEntry) -> None:
    """MODIFY one index of a register (or every index when none is given)."""
    info, arr = _modified(utype, "register", b.schema.register, msg.register_id, b.registers)
    if msg.data.WhichOneof("data") != "bitstring":
        raise invalid(f"register {info.name!r} holds bit<{info.bitwidth}>: give a bitstring")
    value = codec.decode(msg.data.bitstring, info.bitwidth, f"register {info.name!r}")
    for i in _indices(msg, info):
        arr.write(i, value)


def read_registers(b: Binding, req: p4r.RegisterEntry, out: list[p4r.Entity]) -> None:
    """Append the register entries a (wildcard) read selects."""
    for rid, _, arr, i in _cells(req, req.register_id, b.schema.register, b.schema.registers, b.registers):
        ent = p4r.Entity()
        re_ = ent.register_entry
        re_.register_id, re_.index.index = rid, i
        re_.data.bitstring = codec.encode(arr.read(i))
        out.append(ent)


# --- packet replication engine ------------------------------------------------------------------

def _replicas(replicas, what: str) -> list[tuple[int, int]]:  # noqa: ANN001
    out = []
    for r in replicas:
        kind = r.WhichOneof("port_kind")
        port = codec.decode(r.port, 32, f"{what} replica port") if kind == "port" else r.egress_port
        out.append((port, r.instance))
    return out


def write_pre(pre: Pre, utype: int, msg: p4r.PacketReplicationEngineEntry) -> None:
    """INSERT, MODIFY or DELETE a multicast group or a clone session."""
    which = msg.WhichOneof("type")
    if which == "multicast_group_entry":
        g = msg.multicast_group_entry
        if utype == DELETE:
            pre.delete_group(g.multicast_group_id)
        elif utype == INSERT:
            pre.insert_group(g.multicast_group_id, _replicas(g.replicas, "multicast group"))
        else:
            pre.modify_group(g.multicast_group_id, _replicas(g.replicas, "multicast group"))
    elif which == "clone_session_entry":
        c = msg.clone_session_entry
        if utype == DELETE:
            pre.delete_session(c.session_id)
            return
        session = CloneSession(tuple(_replicas(c.replicas, "clone session")), c.class_of_service,
                               c.packet_length_bytes)
        if utype == INSERT:
            pre.insert_session(c.session_id, session)
        else:
            pre.modify_session(c.session_id, session)
    else:
        raise invalid("packet replication engine entry without a multicast group or clone session")


def read_pre(pre: Pre, req: p4r.PacketReplicationEngineEntry, out: list[p4r.Entity]) -> None:
    """Append the multicast groups or clone sessions a (wildcard) read selects."""
    which = req.WhichOneof("type")
    if which in ("multicast_group_entry", None):
        want = req.multicast_group_entry.multicast_group_id
        for gid, reps in sorted(pre.groups.items()):
            if want and gid != want:
                continue
            ent = p4r.Entity()
            g = ent.packet_replication_engine_entry.multicast_group_entry
            g.multicast_group_id = gid
            for port, rid in reps:
                g.replicas.add(egress_port=port, instance=rid)
            out.append(ent)
    if which in ("clone_session_entry", None):
        want = req.clone_session_entry.session_id
        for sid, s in sorted(pre.sessions.items()):
            if want and sid != want:
                continue
            ent = p4r.Entity()
            c = ent.packet_replication_engine_entry.clone_session_entry
            c.session_id, c.class_of_service, c.packet_length_bytes = sid, s.class_of_service, s.packet_length_bytes
            for port, rid in s.replicas:
                c.replicas.add(egress_port=port, instance=rid)
            out.append(ent)
