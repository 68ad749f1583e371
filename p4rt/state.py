"""What one device should hold, as P4Runtime entity objects, and its JSON document form
(tablegen/FORMAT.md) both ways. Program-agnostic: what the fabric means by these entities is in
`fabric.state`."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from json.encoder import JSONEncoder, c_make_encoder, encode_basestring_ascii
from typing import Any

from p4rt.entities import ActionProfileGroup, ActionProfileMember, TableEntry
from p4rt.resources import CloneSession, MulticastGroup
from p4rt.schema import short_name

Doc = dict[str, Any]

# json's C encoder, called directly: half the cost of json.dumps per entity (as topo.model writes
# topologies); allow_nan False, so a NaN is refused, never written as non-standard JSON
_C_ENCODER = c_make_encoder(None, JSONEncoder().default, encode_basestring_ascii, None, ": ", ", ",
                            False, False, False) if c_make_encoder else None


def encode(obj: Any) -> str:
    """One JSON value on one line, exactly as json.dumps(obj) writes it."""
    return "".join(_C_ENCODER(obj, 0)) if _C_ENCODER is not None else json.dumps(obj, allow_nan=False)


_ENTITY_KEYS = ("action_profile_members", "action_profile_groups", "table_entries")
_PRE_KEYS = ("multicast_groups", "clone_sessions")


@dataclass(slots=True)
class SwitchState:
    """What one switch should hold: members, groups, table entries and default entries."""

    name: str
    program: str
    device_id: int = 0
    members: list[ActionProfileMember] = field(default_factory=list)
    groups: list[ActionProfileGroup] = field(default_factory=list)
    entries: list[TableEntry] = field(default_factory=list)
    defaults: list[TableEntry] = field(default_factory=list)
    multicast: list[MulticastGroup] = field(default_factory=list)
    clones: list[CloneSession] = field(default_factory=list)

    @classmethod
    def from_doc(cls, doc: Doc) -> SwitchState:
        """Parse a tablegen document; raises ValueError naming the bad part."""
        if not isinstance(doc, dict) or "switch" not in doc or "program" not in doc:
            raise ValueError(f"entry document {str(doc)[:60]!r}: expected an object with 'switch' and 'program'")
        st = cls(doc["switch"], doc["program"], int(doc.get("device_id", 0)))
        st.members = [ActionProfileMember.from_dict(m) for m in doc.get("action_profile_members", [])]
        st.groups = [ActionProfileGroup.from_dict(g) for g in doc.get("action_profile_groups", [])]
        for e in doc.get("table_entries", []):
            entry = TableEntry.from_dict(e)
            (st.defaults if entry.default else st.entries).append(entry)
        st.multicast = [MulticastGroup.from_dict(m) for m in doc.get("multicast_groups", [])]
        st.clones = [CloneSession.from_dict(c) for c in doc.get("clone_sessions", [])]
        return st

    def to_doc(self) -> Doc:
        """The document of tablegen/FORMAT.md: members, groups, table entries (each table's default
        entry after the other entries), then multicast groups and clone sessions when there are any."""
        doc: Doc = {"switch": self.name, "device_id": self.device_id, "program": self.program,
                    "action_profile_members": [m.to_dict() for m in self.members],
                    "action_profile_groups": [g.to_dict() for g in self.groups],
                    "table_entries": [e.to_dict() for e in self.entries + self.defaults]}
        if self.multicast:
            doc["multicast_groups"] = [m.to_dict() for m in self.multicast]
        if self.clones:
            doc["clone_sessions"] = [c.to_dict() for c in self.clones]
        return doc

    @classmethod
    def from_json(cls, text: str, where: str = "entry document") -> SwitchState:
        """Parse the JSON text of a document; `where` names it in the one-line error."""
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{where}: not JSON ({exc.msg} at line {exc.lineno})") from None
        for key in ("switch", "program", "table_entries"):
            if not isinstance(doc, dict) or key not in doc:
                raise ValueError(f"{where}: missing {key!r}")
        try:
            return cls.from_doc(doc)
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{where}: {exc}") from None

    def to_json(self) -> str:
        """The document as JSON text with one entity per line (the entry files of tablegen)."""
        doc = self.to_doc()
        parts = [f'  "{k}": {encode(doc[k])}' for k in ("switch", "device_id", "program")]
        for key in _ENTITY_KEYS + _PRE_KEYS:
            if key not in doc:
                continue
            items = doc[key]
            body = ",\n".join("    " + encode(x) for x in items)
            parts.append(f'  "{key}": [\n{body}\n  ]' if items else f'  "{key}": []')
        return "{\n" + ",\n".join(parts) + "\n}\n"

    def lines(self) -> list[str]:
        """Every entity as its canonical line, in install order (tests, diffs and logs)."""
        items = [*self.members, *self.groups, *self.entries, *self.defaults, *self.multicast, *self.clones]
        return [str(x) for x in items]

    def copy(self) -> SwitchState:
        """A deep copy (states are edited by the procedures)."""
        return copy.deepcopy(self)

    def with_tables(self, tables: Iterable[str], entries: Iterable[TableEntry]) -> SwitchState:
        """A copy whose entries and default entries of these tables (short names) are `entries` (one
        part of a switch's state replaced: a schedule's tables, say); the other entities are shared."""
        names = set(tables)
        given = list(entries)
        strays = sorted({e.table for e in given if short_name(e.table) not in names})
        if strays:
            raise ValueError(f"entries of tables {strays}: expected only tables {sorted(names)}")
        out = copy.copy(self)
        out.entries = [e for e in self.entries if short_name(e.table) not in names] + [e for e in given if not e.default]
        out.defaults = [e for e in self.defaults if short_name(e.table) not in names] + [e for e in given if e.default]
        return out
