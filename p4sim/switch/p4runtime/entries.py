"""Table entries, default entries, direct counters and direct meters: P4Runtime messages to Device calls.

Rules as the P4Runtime spec and PI give them: the default entry is only MODIFYed (an empty action
resets it to the program's), a const default action cannot change (PERMISSION_DENIED), a DEFAULT_ONLY
action is not allowed in an entry nor a TABLE_ONLY one as default, an indirect table takes a member,
a group or a one-shot action set, and direct resources need the table to have them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from p4sim.switch.externs import MeterConfig
from p4sim.switch.p4runtime import codec, encode
from p4sim.switch.p4runtime.binding import Binding, TableBinding, device_key
from p4sim.switch.p4runtime.errors import INTERNAL, PERMISSION_DENIED, UNIMPLEMENTED, P4RuntimeError, invalid
from p4sim.switch.p4runtime.proto import p4r
from p4sim.switch.p4runtime.schema import TableInfo
from p4sim.switch.values import ActionCall, ActionSet, EntryAction, GroupRef, MemberRef

log = logging.getLogger(__name__)

INSERT, MODIFY, DELETE = p4r.Update.INSERT, p4r.Update.MODIFY, p4r.Update.DELETE


def action_call(b: Binding, tb: TableBinding | None, action_id: int, params: list[codec.Param],
                default: bool = False) -> ActionCall:
    """Return the Device ActionCall of an action, checked against the table's action refs."""
    action = b.schema.actions.get(action_id) or b.schema.action(action_id)
    if tb is not None:
        ref = tb.info.actions.get(action_id)
        if ref is None:
            raise invalid(f"action {action.name!r} is not an action of table {tb.info.name!r}")
        if default and ref.table_only:
            raise invalid(f"action {action.name!r} is @tableonly in table {tb.info.name!r}")
        if not default and ref.default_only:
            raise invalid(f"action {action.name!r} is @defaultonly in table {tb.info.name!r}")
    return ActionCall(action.name, tuple(codec.action_args(action, params)))


@dataclass(slots=True)
class EntryMsg:
    """A TableEntry as the writer needs it; `proto` is the full message when it was parsed as one.

    action: ("action", action_id, params) | ("member", id) | ("group", id) | ("set", None) | None.
    The wire decoder (wire.py) builds these directly for plain entries, without a protobuf message.
    """

    table_id: int
    matches: list[codec.Match]
    priority: int
    action: tuple | None
    is_default: bool = False
    proto: p4r.TableEntry | None = None


def entry_msg(te: p4r.TableEntry) -> EntryMsg:
    """Return the EntryMsg of a TableEntry message."""
    which = te.action.WhichOneof("type")
    action: tuple | None
    if which == "action":
        action = ("action", te.action.action.action_id, codec.params_of(te.action.action))
    elif which == "action_profile_member_id":
        action = ("member", te.action.action_profile_member_id)
    elif which == "action_profile_group_id":
        action = ("group", te.action.action_profile_group_id)
    elif which == "action_profile_action_set":
        action = ("set", None)
    else:
        action = None
    return EntryMsg(te.table_id, [codec.match_tuple(m) for m in te.match], te.priority, action,
                    te.is_default_action, te)


def _entry_action(b: Binding, tb: TableBinding, msg: EntryMsg) -> EntryAction:
    act = msg.action
    if act is None:
        raise invalid(f"missing action in entry of table {tb.info.name!r}")
    which = act[0]
    if which == "action":
        if tb.profile is not None:
            raise invalid(f"table {tb.info.name!r} is indirect: give a member, a group or an action set")
        return action_call(b, tb, act[1], act[2])
    if tb.profile is None:
        raise invalid(f"table {tb.info.name!r} is direct: give an action, not a {which}")
    if which == "member":
        return MemberRef(act[1])
    if which == "group":
        return GroupRef(act[1])
    acts = []
    for pa in msg.proto.action.action_profile_action_set.action_profile_actions:  # type: ignore[union-attr]
        acts.append((action_call(b, tb, pa.action.action_id, codec.params_of(pa.action)), pa.weight,
                     watch_port_of(pa)))
    if not acts:
        raise invalid(f"empty action set for table {tb.info.name!r}")
    return ActionSet(tuple(acts))


def watch_port_of(msg: p4r.ActionProfileAction | p4r.ActionProfileGroup.Member) -> int | None:
    """Return the watch port of a group member or one-shot action (None when it has none)."""
    kind = msg.WhichOneof("watch_kind")
    if kind == "watch_port":
        return codec.decode(msg.watch_port, 32, "watch_port")
    if kind == "watch":
        return msg.watch
    return None


def meter_config(msg: p4r.MeterConfig, kind: str = "trTCM") -> MeterConfig | None:
    """Return the Device MeterConfig of a message (None for an all-zero config: unconfigured).

    kind is the meter's P4Info MeterSpec.type: single-rate meters use cir/cburst/eburst."""
    values = (msg.cir, msg.cburst, msg.pir, msg.pburst, msg.eburst)
    if not any(values):
        return None
    if min(values) < 0:
        raise invalid(f"negative rate or burst in meter config {values}")
    if kind == "trTCM":
        return MeterConfig(msg.cir, msg.cburst, msg.pir, msg.pburst)
    return MeterConfig(msg.cir, msg.cburst, eburst=msg.eburst, kind=kind)


def _direct_meter_kind(b: Binding, info: TableInfo) -> str:
    """The meter kind of a table's direct meter."""
    dm = b.schema.direct_meters.get(info.direct_meter_id)
    return dm.meter_kind if dm else "trTCM"


def meter_to_proto(cfg: MeterConfig, msg: p4r.MeterConfig) -> None:
    """Fill a MeterConfig message."""
    msg.cir, msg.cburst, msg.pir, msg.pburst, msg.eburst = cfg.cir, cfg.cburst, cfg.pir, cfg.pburst, cfg.eburst


def write_table_entry(b: Binding, utype: int, msg: EntryMsg) -> None:
    """Apply one INSERT, MODIFY or DELETE of a table entry to the device."""
    tb = b.tables.get(msg.table_id) or b.table(msg.table_id)
    info = tb.info
    if msg.is_default:
        _write_default(b, tb, utype, msg)
        return
    if info.is_const or tb.table.info.is_const:
        raise P4RuntimeError(PERMISSION_DENIED, f"table {info.name!r} is const: its entries cannot change")
    key = device_key(tb, codec.match_key(info, msg.matches))
    prio = codec.check_priority(info, msg.priority)
    table = tb.table
    if utype == DELETE:
        if tb.extra:
            tb.extra.pop(table.get(key, prio).handle, None)
        table.delete(key, prio)
        return
    action = _entry_action(b, tb, msg)
    te = msg.proto
    if te is not None and te.idle_timeout_ns:
        if not info.idle_timeout:
            raise invalid(f"table {info.name!r} does not support idle timeout (idle_timeout_ns given)")
        raise P4RuntimeError(UNIMPLEMENTED, "idle timeout notifications are not implemented by p4sim")
    has_counter = te is not None and te.HasField("counter_data")
    if has_counter and not tb.has_direct_counter:
        raise invalid(f"table {info.name!r} has no direct counter")
    meter = None
    has_meter = te is not None and te.HasField("meter_config")
    if has_meter:
        if tb.direct_meter is None:
            raise invalid(f"table {info.name!r} has no direct meter")
        meter = meter_config(te.meter_config, _direct_meter_kind(b, info))  # type: ignore[union-attr]
    if utype == INSERT:
        e = table.insert(key, action, prio)
    elif utype == MODIFY:
        e = table.modify(key, action, prio)
    else:
        raise invalid(f"update type {utype} is not INSERT, MODIFY or DELETE")
    if te is None:
        if utype == MODIFY and tb.extra:
            tb.extra.pop(e.handle, None)
        return
    if has_counter:
        e.packets, e.bytes = te.counter_data.packet_count, te.counter_data.byte_count
    if has_meter:
        tb.direct_meter.set_config(e, meter)  # type: ignore[union-attr]
    if te.controller_metadata or te.metadata:
        tb.extra[e.handle] = (te.controller_metadata, te.metadata)
    elif utype == MODIFY:
        tb.extra.pop(e.handle, None)


def _write_default(b: Binding, tb: TableBinding, utype: int, msg: EntryMsg) -> None:
    info = tb.info
    if utype != MODIFY:
        raise invalid(f"the default entry of table {info.name!r} can only be modified, not "
                      f"{p4r.Update.Type.Name(utype)}")
    if msg.matches or msg.priority:
        raise invalid(f"default entry of table {info.name!r} must have no match key and no priority")
    if info.const_default_action_id or tb.table.default_const:
        raise P4RuntimeError(PERMISSION_DENIED, f"the default action of table {info.name!r} is const")
    if msg.action is None:
        tb.table.reset_default()
        return
    if msg.action[0] != "action":
        raise invalid(f"the default entry of table {info.name!r} takes an action, not a {msg.action[0]}")
    tb.table.set_default(action_call(b, tb, msg.action[1], msg.action[2], default=True))


def read_table_entries(b: Binding, req: p4r.TableEntry, out: list[p4r.Entity | bytes]) -> None:
    """Append the table entries a (wildcard) read request selects (as Entity messages or their bytes)."""
    if req.table_id == 0:
        if len(req.match) or req.priority:
            raise invalid("a read of all tables (table_id 0) cannot have a match key or a priority")
        tbs = list(b.tables.values())
    else:
        tbs = [b.table(req.table_id)]
    for tb in tbs:
        if req.is_default_action:
            _read_default(b, tb, out)
            continue
        key = (device_key(tb, codec.match_key(tb.info, [codec.match_tuple(m) for m in req.match]))
               if len(req.match) else None)
        want_prio = req.priority
        extras = req.HasField("counter_data") or req.HasField("meter_config")
        for e in tb.table.entries():
            if key is not None and (e.key != key or (want_prio and e.priority != want_prio)):
                continue
            if key is None and want_prio and e.priority != want_prio:
                continue
            fast = None if extras or e.handle in tb.extra else entry_entity_bytes(b, tb, e)
            if fast is not None:
                out.append(fast)
                continue
            ent = p4r.Entity()
            entry_to_proto(b, tb, e, ent.table_entry, req)
            out.append(ent)


def entry_entity_bytes(b: Binding, tb: TableBinding, e) -> bytes | None:  # noqa: ANN001
    """Return a device entry as serialized Entity bytes (encode.py), or None if it needs protobuf."""
    act = e.action
    kind = type(act)
    if kind is ActionCall:
        aid = b.schema.action_ids_by_name.get(act.name)
        if aid is None:
            return None
        info = b.schema.actions[aid]
        table_action = encode.ld(0x0A, encode.action_bytes(aid, [p.id for p in info.params], act.args))
    elif kind is MemberRef:
        table_action = b"\x10" + encode.varint(act.member_id)
    elif kind is GroupRef:
        table_action = b"\x18" + encode.varint(act.group_id)
    else:
        return None
    return encode.table_entry_entity(tb.info.id, encode.match_bytes(tb.info, e.key), table_action,
                                     e.priority, e.is_const)


def entry_to_proto(b: Binding, tb: TableBinding, e, te: p4r.TableEntry,  # noqa: ANN001
                   req: p4r.TableEntry | None = None) -> None:
    """Fill a TableEntry message from a device entry (direct resources when the request asks)."""
    te.table_id = tb.info.id
    codec.key_to_proto(tb.info, e.key, te)
    if e.priority:
        te.priority = e.priority
    _action_to_proto(b, tb, e.action, te.action)
    if e.is_const:
        te.is_const = True
    extra = tb.extra.get(e.handle)
    if extra is not None:
        te.controller_metadata, te.metadata = extra
    if req is not None and req.HasField("counter_data") and tb.has_direct_counter:
        te.counter_data.packet_count = e.packets
        te.counter_data.byte_count = e.bytes
    if req is not None and req.HasField("meter_config") and tb.direct_meter is not None:
        cfg = tb.direct_meter.config(e.meter)
        if cfg is not None:
            meter_to_proto(cfg, te.meter_config)


def _action_to_proto(b: Binding, tb: TableBinding, action: EntryAction, msg: p4r.TableAction) -> None:
    if isinstance(action, ActionCall):
        _call_to_proto(b, action, msg.action)
    elif isinstance(action, MemberRef):
        msg.action_profile_member_id = action.member_id
    elif isinstance(action, GroupRef):
        msg.action_profile_group_id = action.group_id
    else:
        for call, weight, watch in action.actions:
            pa = msg.action_profile_action_set.action_profile_actions.add(weight=weight)
            _call_to_proto(b, call, pa.action)
            if watch is not None:
                pa.watch_port = codec.encode(watch)


def _call_to_proto(b: Binding, call: ActionCall, msg: p4r.Action) -> None:
    ids = b.schema.action_ids_by_name
    aid = ids.get(call.name)
    if aid is None:  # an action of the JSON that P4Info does not list (p4c never does this)
        raise P4RuntimeError(INTERNAL, f"device action {call.name!r} has no P4Info id")
    codec.args_to_proto(b.schema.actions[aid], list(call.args), msg)


def _read_default(b: Binding, tb: TableBinding, out: list[p4r.Entity]) -> None:
    call = tb.table.get_default()
    ent = p4r.Entity()
    te = ent.table_entry
    te.table_id = tb.info.id
    te.is_default_action = True
    if call is not None:
        _call_to_proto(b, call, te.action.action)
    out.append(ent)


def write_direct_counter(b: Binding, utype: int, msg: p4r.DirectCounterEntry) -> None:
    """MODIFY the direct counter of one table entry."""
    if utype != MODIFY:
        raise invalid("direct counter entries can only be modified")
    tb = b.table(msg.table_entry.table_id)
    if not tb.has_direct_counter:
        raise invalid(f"table {tb.info.name!r} has no direct counter")
    key = device_key(tb, codec.match_key(tb.info, [codec.match_tuple(m) for m in msg.table_entry.match]))
    e = tb.table.get(key, codec.check_priority(tb.info, msg.table_entry.priority))
    e.packets, e.bytes = msg.data.packet_count, msg.data.byte_count


def _direct_selection(b: Binding, te: p4r.TableEntry, has: Callable[[TableBinding], bool],
                      what: str) -> Iterator[tuple[TableBinding, Any]]:
    """(table, entry) of every entry a direct read selects: one entry, all of a table, or all tables
    that have the resource (`has`; `what` names it in the error)."""
    tbs = [b.table(te.table_id)] if te.table_id else [t for t in b.tables.values() if has(t)]
    for tb in tbs:
        if not has(tb):
            raise invalid(f"table {tb.info.name!r} has no {what}")
        key = (device_key(tb, codec.match_key(tb.info, [codec.match_tuple(m) for m in te.match]))
               if len(te.match) else None)
        for e in tb.table.entries():
            if key is None or e.key == key:
                yield tb, e


def _keyed_by(b: Binding, tb: TableBinding, e: Any, msg: p4r.TableEntry) -> None:
    """Fill a direct resource's table_entry: the entry's key, without its action."""
    entry_to_proto(b, tb, e, msg)
    msg.ClearField("action")


def read_direct_counters(b: Binding, req: p4r.DirectCounterEntry, out: list[p4r.Entity]) -> None:
    """Append the direct counter entries a read selects (one entry, or all of a table, or all tables)."""
    for tb, e in _direct_selection(b, req.table_entry, lambda t: t.has_direct_counter, "direct counter"):
        ent = p4r.Entity()
        _keyed_by(b, tb, e, ent.direct_counter_entry.table_entry)
        ent.direct_counter_entry.data.packet_count, ent.direct_counter_entry.data.byte_count = e.packets, e.bytes
        out.append(ent)


def write_direct_meter(b: Binding, utype: int, msg: p4r.DirectMeterEntry) -> None:
    """MODIFY the direct meter config of one table entry."""
    if utype != MODIFY:
        raise invalid("direct meter entries can only be modified")
    tb = b.table(msg.table_entry.table_id)
    if tb.direct_meter is None:
        raise invalid(f"table {tb.info.name!r} has no direct meter")
    key = device_key(tb, codec.match_key(tb.info, [codec.match_tuple(m) for m in msg.table_entry.match]))
    e = tb.table.get(key, codec.check_priority(tb.info, msg.table_entry.priority))
    tb.direct_meter.set_config(e, meter_config(msg.config, _direct_meter_kind(b, tb.info)))


def read_direct_meters(b: Binding, req: p4r.DirectMeterEntry, out: list[p4r.Entity]) -> None:
    """Append the direct meter entries a read selects."""
    for tb, e in _direct_selection(b, req.table_entry, lambda t: t.direct_meter is not None, "direct meter"):
        ent = p4r.Entity()
        _keyed_by(b, tb, e, ent.direct_meter_entry.table_entry)
        cfg = tb.direct_meter.config(e.meter)
        if cfg is not None:
            meter_to_proto(cfg, ent.direct_meter_entry.config)
        out.append(ent)
