"""What one device should hold, as P4Runtime entity objects, and its JSON document form
(tablegen/FORMAT.md). Program-agnostic: what the fabric means by these entities is in `fabric.state`."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from p4rt.entities import ActionProfileGroup, ActionProfileMember, TableEntry
from p4rt.resources import CloneSession, MulticastGroup

Doc = dict[str, Any]


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

    def copy(self) -> SwitchState:
        """A deep copy (states are edited by the procedures)."""
        return copy.deepcopy(self)
