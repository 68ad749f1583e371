"""Table entries and action profile members/groups: the human form of tablegen/FORMAT.md <-> protobuf.

Every entity encodes to a `p4r.Entity` with a `P4Schema`, decodes back from one, and renders as a
canonical one-line string ("route ipv4_dst=10.0.1.0/24 -> set_path(path_id=3)") for tests and logs.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from p4rt import values
from p4rt.proto import p4i, p4r
from p4rt.schema import P4Schema, short_name

log = logging.getLogger(__name__)

_MT = p4i.MatchField


def human(number: int, bitwidth: int, name: str) -> int | str:
    """An integer as a human value: int unless it reads better as an address."""
    text = values.format_value(number, bitwidth, name)
    return number if text.isdigit() else text


def _check_keys(d: dict, allowed: set[str], what: str) -> None:
    extra = set(d) - allowed
    if extra:
        raise ValueError(f"{what}: unknown keys {sorted(extra)}; expected some of {sorted(allowed)}")


# -- actions ----------------------------------------------------------------------------------------


def encode_action(schema: P4Schema, action: p4i.Action, params: dict[str, Any]) -> p4r.Action:
    """Encode an action call; every parameter must be given exactly once."""
    msg = p4r.Action(action_id=action.preamble.id)
    given = dict(params)
    for p in action.params:
        key = next((k for k in given if k == p.name or p.name.endswith("." + k)), None)
        if key is None:
            raise ValueError(
                f"action {short_name(action.preamble.name)!r}: missing param {p.name!r}; "
                f"expected {[q.name for q in action.params]}"
            )
        msg.params.add(param_id=p.id, value=values.encode(given.pop(key), p.bitwidth))
    if given:
        raise ValueError(
            f"action {short_name(action.preamble.name)!r}: unknown params {sorted(given)}; "
            f"expected {[q.name for q in action.params]}"
        )
    return msg


def decode_action(schema: P4Schema, msg: p4r.Action) -> tuple[str, dict[str, int | str]]:
    """Decode an action call into (short action name, human params in P4Info order)."""
    action = schema.actions[msg.action_id]
    got = {p.param_id: p.value for p in msg.params}
    params: dict[str, int | str] = {}
    for p in action.params:
        if p.id in got:
            params[p.name] = human(values.decode(got[p.id], p.bitwidth), p.bitwidth, p.name)
    return short_name(action.preamble.name), params


def format_action(name: str, params: dict[str, Any]) -> str:
    """Render "name(p=v, ...)"."""
    return f"{name}({', '.join(f'{k}={v}' for k, v in params.items())})"


# -- match fields -----------------------------------------------------------------------------------


def encode_match(schema: P4Schema, table: p4i.Table, match: dict[str, Any]) -> list[p4r.FieldMatch]:
    """Encode human match values; wildcards (absent, /0, mask 0, full range) are omitted as the spec wants."""
    out: list[p4r.FieldMatch] = []
    seen: set[int] = set()
    for key, value in match.items():
        mf = schema.match_field(table, key)
        if mf.id in seen:
            raise ValueError(f"match field {key!r}: given twice in table {short_name(table.preamble.name)!r}")
        seen.add(mf.id)
        fm = p4r.FieldMatch(field_id=mf.id)
        bw = mf.bitwidth
        kind = mf.match_type
        if kind == _MT.EXACT:
            fm.exact.value = values.encode(value, bw)
        elif kind == _MT.LPM:
            number, plen = values.parse_lpm(value, bw)
            if plen == 0:
                continue
            fm.lpm.value, fm.lpm.prefix_len = values.to_canonical(number), plen
        elif kind == _MT.TERNARY:
            number, mask = values.parse_ternary(value, bw)
            if mask == 0:
                continue
            fm.ternary.value, fm.ternary.mask = values.to_canonical(number), values.to_canonical(mask)
        elif kind == _MT.RANGE:
            low, high = values.parse_range(value, bw)
            if low == 0 and high == (1 << bw) - 1:
                continue
            fm.range.low, fm.range.high = values.to_canonical(low), values.to_canonical(high)
        elif kind == _MT.OPTIONAL:
            fm.optional.value = values.encode(value, bw)
        else:
            raise ValueError(f"match field {mf.name!r}: unsupported match kind {kind}")
        out.append(fm)
    missing = [mf.name for mf in table.match_fields if mf.match_type == _MT.EXACT and mf.id not in seen]
    if missing:
        raise ValueError(f"table {short_name(table.preamble.name)!r}: exact fields {missing} need a value")
    out.sort(key=lambda f: f.field_id)
    return out


def decode_match(schema: P4Schema, table: p4i.Table, fields: list[p4r.FieldMatch]) -> dict[str, Any]:
    """Decode field matches into a human dict in P4Info field order."""
    by_id = {f.field_id: f for f in fields}
    match: dict[str, Any] = {}
    for mf in table.match_fields:
        f = by_id.get(mf.id)
        if f is None:
            continue
        bw, name = mf.bitwidth, mf.name
        which = f.WhichOneof("field_match_type")
        if which == "exact":
            match[name] = human(values.decode(f.exact.value, bw), bw, name)
        elif which == "optional":
            match[name] = human(values.decode(f.optional.value, bw), bw, name)
        elif which == "lpm":
            addr = values.format_value(values.decode(f.lpm.value, bw), bw, name)
            match[name] = f"{addr}/{f.lpm.prefix_len}"
        elif which == "ternary":
            match[name] = {
                "value": human(values.decode(f.ternary.value, bw), bw, name),
                "mask": human(values.decode(f.ternary.mask, bw), bw, name),
            }
        elif which == "range":
            match[name] = {
                "low": human(values.decode(f.range.low, bw), bw, name),
                "high": human(values.decode(f.range.high, bw), bw, name),
            }
    return match


def format_match_value(value: Any) -> str:
    """Render one human match value: v, a/len, v&&&m or lo..hi."""
    if isinstance(value, dict) and "mask" in value:
        return f"{value['value']}&&&{value['mask']}"
    if isinstance(value, dict) and "low" in value:
        return f"{value['low']}..{value['high']}"
    return str(value)


# -- table entries ----------------------------------------------------------------------------------


@dataclass(slots=True)
class TableEntry:
    """One table entry (or a table's default entry), in human form."""

    table: str
    match: dict[str, Any] = field(default_factory=dict)
    action: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    member_id: int | None = None
    group_id: int | None = None
    priority: int = 0
    default: bool = False
    counter: tuple[int, int] | None = None  # (packets, bytes) when read with counter data

    _KEYS = frozenset({"table", "match", "action", "params", "member_id", "group_id", "priority", "default"})

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TableEntry:
        """Build from the JSON form of tablegen/FORMAT.md."""
        if not isinstance(d, dict) or "table" not in d:
            raise ValueError(f"table entry {d!r}: expected an object with a 'table' key")
        _check_keys(d, set(cls._KEYS), f"table entry for {d['table']!r}")
        refs = [k for k in ("action", "member_id", "group_id") if d.get(k) is not None]
        if len(refs) != 1:
            raise ValueError(
                f"table entry for {d['table']!r}: has {refs or 'none'}; expected exactly one of "
                "action, member_id, group_id"
            )
        return cls(
            table=d["table"],
            match=dict(d.get("match") or {}),
            action=d.get("action"),
            params=dict(d.get("params") or {}),
            member_id=d.get("member_id"),
            group_id=d.get("group_id"),
            priority=int(d.get("priority") or 0),
            default=bool(d.get("default", False)),
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON form of tablegen/FORMAT.md."""
        d: dict[str, Any] = {"table": self.table}
        if self.default:
            d["default"] = True
        if self.match:
            d["match"] = self.match
        if self.priority:
            d["priority"] = self.priority
        if self.action is not None:
            d["action"], d["params"] = self.action, self.params
        if self.member_id is not None:
            d["member_id"] = self.member_id
        if self.group_id is not None:
            d["group_id"] = self.group_id
        return d

    def to_proto(self, schema: P4Schema) -> p4r.Entity:
        """Encode as a p4r.Entity with the widths and ids of `schema`."""
        table = schema.tables[self.table]
        msg = p4r.TableEntry(table_id=table.preamble.id)
        tname = short_name(table.preamble.name)
        if self.default:
            if self.match:
                raise ValueError(f"default entry of {tname!r}: has a match {self.match!r}; expected none")
            msg.is_default_action = True
        else:
            msg.match.extend(encode_match(schema, table, self.match))
            if schema.needs_priority(table):
                if self.priority <= 0:
                    raise ValueError(f"entry of {tname!r}: priority {self.priority}; expected a positive priority")
                msg.priority = self.priority
            elif self.priority:
                raise ValueError(f"entry of {tname!r}: priority {self.priority} given; table has no ternary/range/optional field")
        if self.action is not None:
            action = schema.table_action(table, self.action)
            msg.action.action.CopyFrom(encode_action(schema, action, self.params))
        elif self.member_id is not None:
            msg.action.action_profile_member_id = self.member_id
        elif self.group_id is not None:
            msg.action.action_profile_group_id = self.group_id
        elif not self.default:
            raise ValueError(f"entry of {tname!r}: no action, member_id or group_id")
        return p4r.Entity(table_entry=msg)

    @classmethod
    def from_proto(cls, schema: P4Schema, entity: p4r.Entity | p4r.TableEntry) -> TableEntry:
        """Decode from a p4r.Entity or p4r.TableEntry."""
        msg = entity.table_entry if isinstance(entity, p4r.Entity) else entity
        table = schema.tables[msg.table_id]
        entry = cls(
            table=short_name(table.preamble.name),
            match=decode_match(schema, table, list(msg.match)),
            priority=msg.priority,
            default=msg.is_default_action,
        )
        which = msg.action.WhichOneof("type")
        if which == "action":
            entry.action, entry.params = decode_action(schema, msg.action.action)
        elif which == "action_profile_member_id":
            entry.member_id = msg.action.action_profile_member_id
        elif which == "action_profile_group_id":
            entry.group_id = msg.action.action_profile_group_id
        if msg.HasField("counter_data"):
            entry.counter = (msg.counter_data.packet_count, msg.counter_data.byte_count)
        return entry

    def key(self, schema: P4Schema) -> bytes:
        """The identity of the entry on the switch (table, match, priority), for reconciling."""
        e = self.to_proto(schema).table_entry
        k = p4r.TableEntry(table_id=e.table_id, priority=e.priority, is_default_action=e.is_default_action)
        k.match.extend(e.match)
        return k.SerializeToString(deterministic=True)

    def canonical(self, schema: P4Schema) -> str:
        """The canonical string after a round trip through the encoding."""
        return str(TableEntry.from_proto(schema, self.to_proto(schema)))

    def __str__(self) -> str:
        head = short_name(self.table)
        if self.default:
            head += " default"
        for k, v in self.match.items():
            head += f" {short_name(k)}={format_match_value(v)}"
        if self.priority:
            head += f" priority={self.priority}"
        if self.action is not None:
            tail = format_action(short_name(self.action), {short_name(k): v for k, v in self.params.items()})
        elif self.member_id is not None:
            tail = f"member({self.member_id})"
        elif self.group_id is not None:
            tail = f"group({self.group_id})"
        else:
            tail = "?"
        return f"{head} -> {tail}"


# -- action profiles --------------------------------------------------------------------------------


@dataclass(slots=True)
class ActionProfileMember:
    """One member of an action profile or selector: an action call with an id."""

    profile: str
    member_id: int
    action: str
    params: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ActionProfileMember:
        """Build from the JSON form of tablegen/FORMAT.md."""
        _check_keys(d, {"profile", "member_id", "action", "params"}, f"action profile member {d!r}")
        try:
            return cls(d["profile"], int(d["member_id"]), d["action"], dict(d.get("params") or {}))
        except KeyError as exc:
            raise ValueError(f"action profile member {d!r}: missing key {exc.args[0]!r}") from None

    def to_dict(self) -> dict[str, Any]:
        """The JSON form of tablegen/FORMAT.md."""
        return {"profile": self.profile, "member_id": self.member_id, "action": self.action, "params": self.params}

    def to_proto(self, schema: P4Schema) -> p4r.Entity:
        """Encode as a p4r.Entity."""
        profile = schema.action_profiles[self.profile]
        action = schema.table_action(schema.profile_table(profile), self.action)
        msg = p4r.ActionProfileMember(action_profile_id=profile.preamble.id, member_id=self.member_id)
        msg.action.CopyFrom(encode_action(schema, action, self.params))
        return p4r.Entity(action_profile_member=msg)

    @classmethod
    def from_proto(cls, schema: P4Schema, entity: p4r.Entity) -> ActionProfileMember:
        """Decode from a p4r.Entity."""
        msg = entity.action_profile_member
        profile = schema.action_profiles[msg.action_profile_id]
        name, params = decode_action(schema, msg.action)
        return cls(short_name(profile.preamble.name), msg.member_id, name, params)

    def key(self, schema: P4Schema) -> tuple[int, int]:
        """Identity on the switch: (profile id, member id)."""
        return (schema.action_profiles[self.profile].preamble.id, self.member_id)

    def canonical(self, schema: P4Schema) -> str:
        """The canonical string after a round trip through the encoding."""
        return str(ActionProfileMember.from_proto(schema, self.to_proto(schema)))

    def __str__(self) -> str:
        action = format_action(short_name(self.action), {short_name(k): v for k, v in self.params.items()})
        return f"{short_name(self.profile)} member {self.member_id} -> {action}"


@dataclass(slots=True)
class GroupMember:
    """A member reference inside a group, with its weight and optional watch port."""

    member_id: int
    weight: int = 1
    watch_port: int | None = None


@dataclass(slots=True)
class ActionProfileGroup:
    """A group of an action selector (ECMP, spray, liveness)."""

    profile: str
    group_id: int
    members: list[GroupMember] = field(default_factory=list)
    max_size: int = 0

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ActionProfileGroup:
        """Build from the JSON form of tablegen/FORMAT.md."""
        _check_keys(d, {"profile", "group_id", "members", "max_size"}, f"action profile group {d!r}")
        members = []
        for m in d.get("members") or []:
            if isinstance(m, int):
                members.append(GroupMember(m))
                continue
            _check_keys(m, {"member_id", "weight", "watch_port"}, f"group member {m!r}")
            members.append(GroupMember(int(m["member_id"]), int(m.get("weight", 1)), m.get("watch_port")))
        try:
            return cls(d["profile"], int(d["group_id"]), members, int(d.get("max_size", 0)))
        except KeyError as exc:
            raise ValueError(f"action profile group {d!r}: missing key {exc.args[0]!r}") from None

    def to_dict(self) -> dict[str, Any]:
        """The JSON form of tablegen/FORMAT.md."""
        ms = []
        for m in self.members:
            md: dict[str, Any] = {"member_id": m.member_id, "weight": m.weight}
            if m.watch_port is not None:
                md["watch_port"] = m.watch_port
            ms.append(md)
        d: dict[str, Any] = {"profile": self.profile, "group_id": self.group_id, "members": ms}
        if self.max_size:
            d["max_size"] = self.max_size
        return d

    def to_proto(self, schema: P4Schema) -> p4r.Entity:
        """Encode as a p4r.Entity."""
        profile = schema.action_profiles[self.profile]
        msg = p4r.ActionProfileGroup(
            action_profile_id=profile.preamble.id, group_id=self.group_id, max_size=self.max_size
        )
        for m in self.members:
            if m.weight <= 0:
                raise ValueError(f"group {self.group_id} member {m.member_id}: weight {m.weight}; expected >= 1")
            pm = msg.members.add(member_id=m.member_id, weight=m.weight)
            if m.watch_port is not None:
                pm.watch_port = values.encode(m.watch_port, 32)
        return p4r.Entity(action_profile_group=msg)

    @classmethod
    def from_proto(cls, schema: P4Schema, entity: p4r.Entity) -> ActionProfileGroup:
        """Decode from a p4r.Entity (watch or watch_port)."""
        msg = entity.action_profile_group
        profile = schema.action_profiles[msg.action_profile_id]
        members = []
        for m in msg.members:
            which = m.WhichOneof("watch_kind")
            watch = None
            if which == "watch_port":
                watch = values.decode(m.watch_port, 32)
            elif which == "watch":
                watch = m.watch
            members.append(GroupMember(m.member_id, m.weight, watch))
        members.sort(key=lambda g: g.member_id)
        return cls(short_name(profile.preamble.name), msg.group_id, members, msg.max_size)

    def key(self, schema: P4Schema) -> tuple[int, int]:
        """Identity on the switch: (profile id, group id)."""
        return (schema.action_profiles[self.profile].preamble.id, self.group_id)

    def canonical(self, schema: P4Schema) -> str:
        """The canonical string after a round trip through the encoding."""
        return str(ActionProfileGroup.from_proto(schema, self.to_proto(schema)))

    def __str__(self) -> str:
        parts = []
        for m in self.members:
            s = f"{m.member_id}*{m.weight}"
            if m.watch_port is not None:
                s += f"@{m.watch_port}"
            parts.append(s)
        return f"{short_name(self.profile)} group {self.group_id} -> [{', '.join(parts)}]"
