"""Reconcile: from what a switch holds and what it should hold, the ordered writes that fix it.

Pure functions over protobufs and entity objects (no I/O), so the rules are unit-tested:
- nothing already right is written again; differing entries are MODIFYed, never deleted and re-added;
- order keeps references valid: members, groups, then entries (the `late_tables`, e.g. `route`,
  after the others, so a route never points at a path not yet written), then deletions in reverse;
- stale entries (held, not desired) are deleted, unless `delete=False` (make-before-break steps).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from control.entities import ActionProfileGroup, ActionProfileMember, TableEntry
from control.proto import p4r
from control.resources import MulticastGroup
from control.schema import P4Schema, short_name
from control.state import SwitchState

log = logging.getLogger(__name__)

_INS, _MOD, _DEL = p4r.Update.INSERT, p4r.Update.MODIFY, p4r.Update.DELETE


@dataclass(slots=True)
class Plan:
    """Ordered phases of updates; each phase is one Write (a later phase depends on the earlier)."""

    phases: list[list[p4r.Update]] = field(default_factory=list)
    inserts: int = 0
    modifies: int = 0
    deletes: int = 0
    lines: list[str] = field(default_factory=list)  # "+ entry", "~ entry", "- entry" for logs and tests

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
    """What a switch holds, as read: table entries, default entries, members, groups, multicast groups."""

    entries: list[p4r.Entity] = field(default_factory=list)
    defaults: list[p4r.Entity] = field(default_factory=list)
    members: list[p4r.Entity] = field(default_factory=list)
    groups: list[p4r.Entity] = field(default_factory=list)
    multicast: list[p4r.Entity] = field(default_factory=list)


def plan(schema: P4Schema, want: SwitchState, held: Held, delete: bool = True,
         late_tables: tuple[str, ...] = ("route",)) -> Plan:
    """The ordered writes that turn `held` into `want`."""
    out = Plan()
    # members and groups: keyed by (profile id, id), compared by canonical string
    have_m = {ActionProfileMember.from_proto(schema, e).key(schema): e for e in held.members}
    have_g = {ActionProfileGroup.from_proto(schema, e).key(schema): e for e in held.groups}
    want_m = {m.key(schema): m for m in want.members}
    want_g = {g.key(schema): g for g in want.groups}
    out.phase()
    for key, m in want_m.items():
        text = m.canonical(schema)
        if key not in have_m:
            out.add(_INS, m.to_proto(schema), text)
        elif str(ActionProfileMember.from_proto(schema, have_m[key])) != text:
            out.add(_MOD, m.to_proto(schema), text)
    out.phase()
    for key, g in want_g.items():
        text = g.canonical(schema)
        if key not in have_g:
            out.add(_INS, g.to_proto(schema), text)
        elif str(ActionProfileGroup.from_proto(schema, have_g[key])) != text:
            out.add(_MOD, g.to_proto(schema), text)
    # table entries keyed by (table, match, priority)
    have_e: dict[bytes, tuple[TableEntry, p4r.Entity]] = {}
    for e in held.entries:
        te = TableEntry.from_proto(schema, e)
        have_e[te.key(schema)] = (te, e)
    want_e: dict[bytes, TableEntry] = {}
    for te in want.entries:
        key = te.key(schema)
        if key in want_e:
            raise ValueError(f"entry {te.canonical(schema)!r}: desired twice for switch {want.name!r}")
        want_e[key] = te
    late = {schema.tables[t].preamble.id for t in late_tables if _has_table(schema, t)}
    for is_late in (False, True):
        out.phase()
        for key, te in want_e.items():
            if (schema.tables[te.table].preamble.id in late) != is_late:
                continue
            text = te.canonical(schema)
            if key not in have_e:
                out.add(_INS, te.to_proto(schema), text)
            elif str(have_e[key][0]) != text:
                out.add(_MOD, te.to_proto(schema), text)
        if not is_late:
            have_d = {e.table_entry.table_id: str(TableEntry.from_proto(schema, e)) for e in held.defaults}
            for d in want.defaults:
                text = d.canonical(schema)
                if have_d.get(schema.tables[d.table].preamble.id) != text:
                    out.add(_MOD, d.to_proto(schema), text)
    # multicast groups (PRE) by id
    have_mc = {e.packet_replication_engine_entry.multicast_group_entry.multicast_group_id: e
               for e in held.multicast}
    for mg in want.multicast:
        if mg.group_id not in have_mc:
            out.add(_INS, mg.to_proto(), str(mg))
        elif str(MulticastGroup.from_proto(schema, have_mc[mg.group_id])) != str(mg):
            out.add(_MOD, mg.to_proto(), str(mg))
    if delete:
        # deletions: late tables first (stop using a path before it goes), then the rest, groups, members
        for is_late in (True, False):
            out.phase()
            for key, (te, e) in have_e.items():
                if key not in want_e and (e.table_entry.table_id in late) == is_late:
                    out.add(_DEL, _entry_key_only(e), str(te))
        out.phase()
        for key, e in have_g.items():
            if key not in want_g:
                out.add(_DEL, e, str(ActionProfileGroup.from_proto(schema, e)))
        out.phase()
        for key, e in have_m.items():
            if key not in want_m:
                out.add(_DEL, e, str(ActionProfileMember.from_proto(schema, e)))
        want_mc = {mg.group_id for mg in want.multicast}
        for gid, e in have_mc.items():
            if gid not in want_mc:
                out.add(_DEL, e, f"multicast {gid}")
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
