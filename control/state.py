"""A switch's desired state (a tablegen document, tablegen/FORMAT.md) as entity objects."""

from __future__ import annotations

import copy
import ipaddress
import json
from dataclasses import dataclass, field
from typing import Any

from control.entities import ActionProfileGroup, ActionProfileMember, TableEntry
from control.resources import CloneSession, MulticastGroup

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

    def path_versions(self) -> dict[int, int]:
        """path_id -> version of the explicit `path_version` entries."""
        return {int(e.match["path_id"]): int(e.params["version"]) for e in self.entries
                if _short(e.table) == "path_version"}

    def with_versions(self, versions: dict[int, int]) -> SwitchState:
        """A copy whose `path_version` entries give these paths these versions (adding entries if needed)."""
        st = self.copy()
        todo = dict(versions)
        for e in st.entries:
            if _short(e.table) == "path_version" and int(e.match["path_id"]) in todo:
                e.params = {"version": todo.pop(int(e.match["path_id"]))}
        for pid, ver in sorted(todo.items()):
            st.entries.append(TableEntry("path_version", {"path_id": pid}, "set_version", {"version": ver}))
        return st

    def with_version_entries_from(self, other: SwitchState) -> SwitchState:
        """A copy of `self` whose path_version entries are those of `other` (same path set)."""
        st = self.copy()
        st.entries = [e for e in st.entries if _short(e.table) != "path_version"]
        st.entries += [copy.deepcopy(e) for e in other.entries if _short(e.table) == "path_version"]
        return st


def _short(name: str) -> str:
    return name.rsplit(".", 1)[-1]


# -- what a document does with a destination address (for finding the paths a change affects) ----


def _route_for(doc_entries: list[TableEntry], addr: int) -> TableEntry | None:
    best, best_len = None, -1
    for e in doc_entries:
        if _short(e.table) != "route" or "ipv4_dst" not in e.match:
            continue
        net = ipaddress.IPv4Network(str(e.match["ipv4_dst"]), strict=False)
        if (addr & int(net.netmask)) == int(net.network_address) and net.prefixlen > best_len:
            best, best_len = e, net.prefixlen
    return best


def path_signature(st: SwitchState, path_id: int, version: int) -> str:
    """What (path_id, version) does at this switch: its `path` action and any group's member actions."""
    members = {(m.profile, m.member_id): f"{m.action}{sorted(m.params.items())}" for m in st.members}
    groups = {(g.profile, g.group_id): g for g in st.groups}
    parts = []
    for e in st.entries:
        if e.match.get("path_id") != path_id or e.match.get("version") != version:
            continue
        if e.action is not None:
            parts.append(f"{_short(e.table)}:{e.action}{sorted(e.params.items())}")
        for g in groups.values():
            if e.group_id is not None and g.group_id == e.group_id:
                acts = sorted(members.get((g.profile, m.member_id), "?") for m in g.members)
                parts.append(f"{_short(e.table)}:group{acts}")
        if e.member_id is not None:
            parts.append(f"{_short(e.table)}:" + json.dumps([v for (p, mid), v in members.items()
                                                          if mid == e.member_id]))
    return "|".join(sorted(parts))


def forwarding_signature(st: SwitchState, addr: int, version: int) -> str:
    """What this switch does with a packet to `addr` on path version `version`."""
    route = _route_for(st.entries, addr)
    if route is None:
        return "miss"
    if route.action == "set_path":
        return "path:" + path_signature(st, int(route.params["path_id"]), version)
    return f"{route.action}{sorted(route.params.items())}"


def path_of(st: SwitchState, addr: int) -> int | None:
    """The path id this switch's route table gives `addr`, if it routes it over a path."""
    route = _route_for(st.entries, addr)
    if route is not None and route.action == "set_path":
        return int(route.params["path_id"])
    return None


def affected_paths(old: dict[str, SwitchState], new: dict[str, SwitchState], addresses: list[int],
                   ingress: list[str]) -> dict[str, set[int]]:
    """Per ingress switch, the path ids whose version-0 forwarding changes for some destination anywhere."""
    changed = [a for a in addresses
               if any(forwarding_signature(old[s], a, 0) != forwarding_signature(new[s], a, 0)
                      for s in old if s in new)]
    out: dict[str, set[int]] = {}
    for sw in ingress:
        paths = set()
        for a in changed:
            for st in (old.get(sw), new.get(sw)):
                pid = path_of(st, a) if st is not None else None
                if pid is not None:
                    paths.add(pid)
        out[sw] = paths
    return out
