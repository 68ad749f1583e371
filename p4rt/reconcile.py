"""Reconcile: from what a switch holds and what it should hold, the ordered writes that fix it.

Pure functions over protobufs and entity objects (no I/O), so the rules are unit-tested:
- nothing already right is written again; differing entries are MODIFYed, never deleted and re-added;
- order keeps references valid: members, groups, then entries (the `late_tables`, e.g. fabric.p4's
  `route`, after the others, so a route never points at a path not yet written; a late table's default
  entry with them, so a schedule's clock starts once its phases are written), then deletions in reverse;
- stale entries (held, not desired) are deleted, unless `delete=False` (make-before-break steps);
- sentinel members (`sentinels`, e.g. fabric.p4's `port_down` of `port_liveness`) are written alone, before any
  other member of their profile, and never rewritten while the switch holds them as desired. A
  selector takes members in creation order, so a sentinel must be its profile's oldest member: when
  it is missing (or differs) while the profile holds other members, the profile is rebuilt (its
  table's entries, its groups and members deleted first, then written in order).

Both sides are first turned into an `Index` (identity key -> canonical text and protobuf). With the
pure-Python protobuf runtime, encoding is the dominant cost of a reconfiguration step: a caller that
writes the same states again indexes them once, ahead of time (`Index.of_state`, kept by the
controller's sessions for the states a procedure prepares), rather than this module memoising.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from p4rt.entities import ActionProfileGroup, ActionProfileMember, TableEntry
from p4rt.proto import p4r
from p4rt.resources import CloneSession, MulticastGroup
from p4rt.schema import P4Schema, short_name
from p4rt.state import SwitchState

log = logging.getLogger(__name__)

_INS, _MOD, _DEL = p4r.Update.INSERT, p4r.Update.MODIFY, p4r.Update.DELETE
Key = tuple[Any, ...]
Item = tuple[str, p4r.Entity]  # canonical text, entity


def _strip(b: bytes) -> bytes:
    return b.lstrip(b"\x00") or b"\x00"


def entry_key(t: p4r.TableEntry) -> Key:
    """Identity of a table entry on the switch: table, priority and match (padding ignored)."""
    fields = []
    for m in t.match:
        w = m.WhichOneof("field_match_type")
        if w == "exact":
            fields.append((m.field_id, w, _strip(m.exact.value)))
        elif w == "lpm":
            fields.append((m.field_id, w, _strip(m.lpm.value), m.lpm.prefix_len))
        elif w == "ternary":
            fields.append((m.field_id, w, _strip(m.ternary.value), _strip(m.ternary.mask)))
        elif w == "range":
            fields.append((m.field_id, w, _strip(m.range.low), _strip(m.range.high)))
        elif w == "optional":
            fields.append((m.field_id, w, _strip(m.optional.value)))
    return ("entry", t.table_id, t.priority, tuple(sorted(fields)))


def encode(schema: P4Schema, entity: Any) -> Item:
    """(canonical text, p4r.Entity) of a desired entity: the text is that of the decoded encoding, so
    it compares equal to what a switch holding the entity reads back."""
    proto = entity.to_proto(schema)
    return str(type(entity).from_proto(schema, proto)), proto


@dataclass(slots=True)
class Index:
    """Entities by identity: table entries, defaults (by table id), members, groups, and the packet
    replication engine's multicast groups and clone sessions (by ("multicast"|"clone", id))."""

    entries: dict[Key, Item] = field(default_factory=dict)
    defaults: dict[int, Item] = field(default_factory=dict)
    members: dict[Key, Item] = field(default_factory=dict)
    groups: dict[Key, Item] = field(default_factory=dict)
    pre: dict[Key, Item] = field(default_factory=dict)

    @classmethod
    def of_state(cls, schema: P4Schema, st: SwitchState) -> Index:
        """Index a desired state (every entity encoded)."""
        ix = cls()
        for m in st.members:
            text, proto = encode(schema, m)
            ix.members[("member", proto.action_profile_member.action_profile_id, m.member_id)] = (text, proto)
        for g in st.groups:
            text, proto = encode(schema, g)
            ix.groups[("group", proto.action_profile_group.action_profile_id, g.group_id)] = (text, proto)
        for e in st.entries:
            text, proto = encode(schema, e)
            key = entry_key(proto.table_entry)
            if key in ix.entries:
                raise ValueError(f"entry {text!r}: desired twice for switch {st.name!r}")
            ix.entries[key] = (text, proto)
        for d in st.defaults:
            text, proto = encode(schema, d)
            ix.defaults[proto.table_entry.table_id] = (text, proto)
        for mg in st.multicast:
            ix.pre[("multicast", mg.group_id)] = (str(mg), mg.to_proto())
        for cs in st.clones:
            ix.pre[("clone", cs.session_id)] = (str(cs), cs.to_proto())
        return ix

    @classmethod
    def of_held(cls, schema: P4Schema, held: Held) -> Index:
        """Index what was read from a switch."""
        ix = cls()
        for e in held.members:
            m = e.action_profile_member
            ix.members[("member", m.action_profile_id, m.member_id)] = (
                str(ActionProfileMember.from_proto(schema, e)), e)
        for e in held.groups:
            g = e.action_profile_group
            ix.groups[("group", g.action_profile_id, g.group_id)] = (str(ActionProfileGroup.from_proto(schema, e)), e)
        for e in held.entries:
            ix.entries[entry_key(e.table_entry)] = (str(TableEntry.from_proto(schema, e)), e)
        for e in held.defaults:
            ix.defaults[e.table_entry.table_id] = (str(TableEntry.from_proto(schema, e)), e)
        for e in held.pre:
            if e.packet_replication_engine_entry.WhichOneof("type") == "multicast_group_entry":
                mg = MulticastGroup.from_proto(schema, e)
                ix.pre[("multicast", mg.group_id)] = (str(mg), e)
            else:
                cs = CloneSession.from_proto(schema, e)
                ix.pre[("clone", cs.session_id)] = (str(cs), e)
        return ix

    def copy(self) -> Index:
        """A copy whose dicts can be changed without changing this index."""
        return Index(dict(self.entries), dict(self.defaults), dict(self.members), dict(self.groups), dict(self.pre))


@dataclass(slots=True)
class Plan:
    """Ordered phases of updates; each phase is one Write (a later phase depends on the earlier)."""

    phases: list[list[p4r.Update]] = field(default_factory=list)
    inserts: int = 0
    modifies: int = 0
    deletes: int = 0
    lines: list[str] = field(default_factory=list)  # "+ entry", "~ entry", "- entry" for logs and tests
    rebuilt: list[str] = field(default_factory=list)  # action profiles deleted and rewritten (sentinel order)

    @property
    def empty(self) -> bool:
        """True when the switch already holds the desired state."""
        return not any(self.phases)

    def add(self, kind: int, entity: p4r.Entity, text: str) -> None:
        """Append an update to the current (last) phase."""
        self.phases[-1].append(p4r.Update(type=kind, entity=entity))
        if kind == _INS:
            self.inserts += 1
            self.lines.append("+ " + text)
        elif kind == _MOD:
            self.modifies += 1
            self.lines.append("~ " + text)
        else:
            self.deletes += 1
            self.lines.append("- " + text)

    def phase(self) -> None:
        """Start a new phase."""
        self.phases.append([])

    def __str__(self) -> str:
        return f"{self.inserts} insert, {self.modifies} modify, {self.deletes} delete"


@dataclass(slots=True)
class Held:
    """What a switch holds, as read: table entries, default entries, members, groups, multicast groups
    and clone sessions."""

    entries: list[p4r.Entity] = field(default_factory=list)
    defaults: list[p4r.Entity] = field(default_factory=list)
    members: list[p4r.Entity] = field(default_factory=list)
    groups: list[p4r.Entity] = field(default_factory=list)
    pre: list[p4r.Entity] = field(default_factory=list)

    @classmethod
    def of_state(cls, schema: P4Schema, st: SwitchState) -> Held:
        """What a switch holding exactly `st` reports (to plan between two states, e.g. in tests)."""
        return cls([e.to_proto(schema) for e in st.entries], [d.to_proto(schema) for d in st.defaults],
                   [m.to_proto(schema) for m in st.members], [g.to_proto(schema) for g in st.groups],
                   [x.to_proto(schema) for x in [*st.multicast, *st.clones]])


def sentinel_keys(schema: P4Schema, ix: Index, actions: tuple[str, ...]) -> set[Key]:
    """The member keys of `ix` whose action is a sentinel action."""
    out = set()
    for key, (_text, proto) in ix.members.items():
        aid = proto.action_profile_member.action.action_id
        action = schema.actions.by_id.get(aid)
        if action is not None and short_name(action.preamble.name) in actions:
            out.add(key)
    return out


def _rebuild(schema: P4Schema, w: Index, h: Index, out: Plan, sentinels: set[Key]) -> Index:
    """Delete the held state of every profile whose desired sentinel is not already its oldest member;
    returns `h` without it (so the rest of the plan writes that profile from scratch, sentinel first)."""
    profiles = set()
    for key in sentinels:
        if key in h.members and h.members[key][0] == w.members[key][0]:
            continue
        if any(k[1] == key[1] for k in h.members):
            profiles.add(key[1])
    if not profiles:
        return h
    tables = {t for pid in profiles for t in schema.action_profiles[pid].table_ids}
    out.rebuilt = sorted(short_name(schema.action_profiles[p].preamble.name) for p in profiles)
    log.warning("rebuilding action profiles %s: their sentinel member is missing or differs", out.rebuilt)
    kept = h.copy()
    out.phase()
    for key, (text, proto) in h.entries.items():
        if key[1] in tables:
            out.add(_DEL, _entry_key_only(proto), text)
            del kept.entries[key]
    for kind in ("groups", "members"):
        out.phase()
        for key, (text, proto) in getattr(h, kind).items():
            if key[1] in profiles:
                out.add(_DEL, proto, text)
                del getattr(kept, kind)[key]
    return kept


def reported_as_pi_does(want: p4r.Entity, read: p4r.Entity) -> bool:
    """True when `read` is the group `want` as PI (bmv2's P4Runtime server) reports it.

    PI reports the watch port of a group's last member for every member of the group (a sentinel
    without one included), though it enforces each member's own (measured; p4src/README.md): read
    back, a group with members watching different ports never equals what was written. Such a read
    is taken to hold the written group, since no read can tell more.
    """
    w, r = want.action_profile_group.members, read.action_profile_group.members
    if not w or len(w) != len(r):
        return False
    last = w[-1].watch_port
    return all(a.member_id == b.member_id and a.weight == b.weight and b.watch_port == last
               for a, b in zip(w, r, strict=True))


def plan(schema: P4Schema, want: SwitchState | Index, held: Held | Index, delete: bool = True,
         late_tables: tuple[str, ...] = (), sentinels: tuple[str, ...] = ()) -> Plan:
    """The ordered writes that turn `held` into `want`: the entries of `late_tables` after the others,
    the members whose action is one of `sentinels` first and alone (the program's names)."""
    w = want if isinstance(want, Index) else Index.of_state(schema, want)
    h = held if isinstance(held, Index) else Index.of_held(schema, held)
    out = Plan()
    first = sentinel_keys(schema, w, sentinels) if sentinels else set()
    if first:
        h = _rebuild(schema, w, h, out, first)
        out.phase()  # sentinels alone, before every other member
        for key in first:
            if key not in h.members:
                text, proto = w.members[key]
                out.add(_INS, proto, text)
    for kind in ("members", "groups"):
        out.phase()
        have = getattr(h, kind)
        for key, (text, proto) in getattr(w, kind).items():
            if key in first:
                continue
            if key not in have:
                out.add(_INS, proto, text)
            elif have[key][0] != text and not (kind == "groups" and reported_as_pi_does(proto, have[key][1])):
                out.add(_MOD, proto, text)
    late = {schema.tables[t].preamble.id for t in late_tables if _has_table(schema, t)}
    for is_late in (False, True):
        out.phase()
        for key, (text, proto) in w.entries.items():
            if (key[1] in late) != is_late:
                continue
            if key not in h.entries:
                out.add(_INS, proto, text)
            elif h.entries[key][0] != text:
                out.add(_MOD, proto, text)
        for tid, (text, proto) in w.defaults.items():
            if (tid in late) == is_late and h.defaults.get(tid, ("",))[0] != text:
                out.add(_MOD, proto, text)
        if not is_late:
            for key, (text, proto) in w.pre.items():
                if key not in h.pre:
                    out.add(_INS, proto, text)
                elif h.pre[key][0] != text:
                    out.add(_MOD, proto, text)
    if delete:
        # late tables first (stop using a path before it goes), then the rest, then groups, members
        for is_late in (True, False):
            out.phase()
            for key, (text, proto) in h.entries.items():
                if key not in w.entries and (key[1] in late) == is_late:
                    out.add(_DEL, _entry_key_only(proto), text)
        for kind in ("groups", "members"):
            out.phase()
            want_kind = getattr(w, kind)
            for key, (text, proto) in getattr(h, kind).items():
                if key not in want_kind:
                    out.add(_DEL, proto, text)
        for key, (text, proto) in h.pre.items():
            if key not in w.pre:
                out.add(_DEL, proto, text)
    out.phases = [p for p in out.phases if p]
    return out


def _has_table(schema: P4Schema, name: str) -> bool:
    try:
        schema.tables[name]
    except ValueError:
        return False
    return True


def _entry_key_only(e: p4r.Entity) -> p4r.Entity:
    """A DELETE needs only the key; drop counter data and the like that reads add."""
    t = e.table_entry
    k = p4r.TableEntry(table_id=t.table_id, priority=t.priority)
    k.match.extend(t.match)
    return p4r.Entity(table_entry=k)


def tables_with_defaults(schema: P4Schema, want: SwitchState) -> list[str]:
    """The tables whose default entry `want` sets (to read them back)."""
    return sorted({short_name(schema.tables[d.table].preamble.name) for d in want.defaults})
