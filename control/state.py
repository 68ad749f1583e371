"""A switch's desired state (a tablegen document, tablegen/FORMAT.md) as entity objects."""

from __future__ import annotations

import copy
import ipaddress
import json
from dataclasses import dataclass, field
from typing import Any

from control.entities import ActionProfileGroup, ActionProfileMember, TableEntry
from control.resources import CloneSession, MulticastGroup
from tablegen.schema import LIVENESS_ALWAYS_UP_GROUP, PORT_WATCH_GROUP

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

    def with_failover(self, on: bool) -> SwitchState:
        """A copy whose `port_liveness` entries point at their port's watched group (on) or at the
        always-up group (off): p4src/README.md. Groups never change (a clean diff: one entry per port)."""
        st = self.copy()
        watched = {}  # port -> the liveness group whose member watches it
        for g in st.groups:
            if _short(g.profile) == "liveness_selector" and g.group_id != PORT_WATCH_GROUP:
                ports = {m.watch_port for m in g.members if m.watch_port is not None}
                if len(ports) == 1:
                    watched[ports.pop()] = g.group_id
        for e in st.entries:
            if _short(e.table) == "port_liveness" and e.group_id is not None:
                port = int(e.match["port"])
                if on and port not in watched:
                    raise ValueError(f"switch {self.name}: port {port} has no liveness group watching it; "
                                     "expected one per port (tablegen)")
                e.group_id = watched[port] if on else LIVENESS_ALWAYS_UP_GROUP
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


# Which action profile serves which table (fabric.p4: ecmp_group -> ecmp_selector, ...). Callers with
# a schema pass the real map (Reconfigurer does); this default follows p4src/README.md.
DEFAULT_PROFILES = {"ecmp_group": "ecmp_selector", "spray_group": "spray_selector",
                    "port_liveness": "liveness_selector"}


def _path_actions(st: SwitchState, path_id: int, version: int,
                  profiles: dict[str, str]) -> list[tuple[str, str, dict[str, Any]]]:
    """(table, action, params) of everything (path_id, version) does here, groups expanded to members."""
    members = {(_short(m.profile), m.member_id): m for m in st.members}
    groups = {(_short(g.profile), g.group_id): g for g in st.groups}
    out = []
    for e in st.entries:
        if e.match.get("path_id") != path_id or e.match.get("version") != version:
            continue
        table = _short(e.table)
        if e.action is not None:
            out.append((table, e.action, dict(e.params)))
        profile = profiles.get(table, "")
        ids = []
        if e.group_id is not None and (profile, e.group_id) in groups:
            ids = [m.member_id for m in groups[(profile, e.group_id)].members]
        elif e.member_id is not None:
            ids = [e.member_id]
        for mid in ids:
            m = members.get((profile, mid))
            out.append((table, m.action, dict(m.params)) if m else (table, "?", {}))
    return sorted(out, key=lambda t: json.dumps(t, sort_keys=True, default=str))


def path_signature(st: SwitchState, path_id: int, version: int,
                   profiles: dict[str, str] | None = None) -> str:
    """What (path_id, version) does at this switch: its `path` action and its group's member actions."""
    acts = _path_actions(st, path_id, version, profiles or DEFAULT_PROFILES)
    return json.dumps(acts, sort_keys=True, default=str)


def forwarding_signature(st: SwitchState, addr: int, version: int,
                         profiles: dict[str, str] | None = None) -> str:
    """What this switch does with a packet to `addr` on path version `version`."""
    route = _route_for(st.entries, addr)
    if route is None:
        return "miss"
    if route.action == "set_path":
        return "path:" + path_signature(st, int(route.params["path_id"]), version, profiles)
    return f"{route.action}{sorted(route.params.items())}"


def next_ports(st: SwitchState, addr: int, version: int, profiles: dict[str, str] | None = None) -> list[int]:
    """The egress ports a packet to `addr` on `version` may take here ([] when delivered or dropped)."""
    route = _route_for(st.entries, addr)
    if route is None or route.action != "set_path":
        return []
    acts = _path_actions(st, int(route.params["path_id"]), version, profiles or DEFAULT_PROFILES)
    return sorted({int(p["port"]) for _, _, p in acts if "port" in p})


def path_of(st: SwitchState, addr: int) -> int | None:
    """The path id this switch's route table gives `addr`, if it routes it over a path."""
    route = _route_for(st.entries, addr)
    if route is not None and route.action == "set_path":
        return int(route.params["path_id"])
    return None


Peers = dict[str, dict[int, str]]  # switch -> egress port -> the switch it reaches


def _walk(states: dict[str, SwitchState], peers: Peers, start: str, addr: int, version: int,
          profiles: dict[str, str] | None, memo: dict[tuple[int, str, int], list[int]],
          max_hops: int = 32) -> set[str]:
    """The switches a packet to `addr` from `start` may cross on `version` (every ECMP branch)."""
    seen = {start}
    frontier = [start]
    for _ in range(max_hops):
        nxt = []
        for sw in frontier:
            if sw not in states:
                continue
            key = (id(states), sw, addr)
            if key not in memo:
                memo[key] = next_ports(states[sw], addr, version, profiles)
            for port in memo[key]:
                peer = peers.get(sw, {}).get(port)
                if peer is not None and peer not in seen:
                    seen.add(peer)
                    nxt.append(peer)
        if not nxt:
            break
        frontier = nxt
    return seen


def affected_paths(old: dict[str, SwitchState], new: dict[str, SwitchState], addresses: list[int],
                   ingress: list[str], old_peers: Peers | None = None, new_peers: Peers | None = None,
                   profiles: dict[str, str] | None = None) -> dict[str, set[int]]:
    """Per ingress switch, the path ids (old and new) of destinations whose version-0 forwarding changes
    on a switch their packets from that ingress cross (any switch, when no peers are given)."""
    changed_at = {a: {s for s in old if s in new and forwarding_signature(old[s], a, 0, profiles)
                      != forwarding_signature(new[s], a, 0, profiles)} for a in addresses}
    out: dict[str, set[int]] = {}
    memo: dict[tuple[int, str, int], list[int]] = {}
    for sw in ingress:
        paths: set[int] = set()
        for a, where in changed_at.items():
            if not where:
                continue
            if old_peers is not None and new_peers is not None:
                crossed = (_walk(old, old_peers, sw, a, 0, profiles, memo)
                           | _walk(new, new_peers, sw, a, 0, profiles, memo))
                if not crossed & where:
                    continue
            for st in (old.get(sw), new.get(sw)):
                pid = path_of(st, a) if st is not None else None
                if pid is not None:
                    paths.add(pid)
        out[sw] = paths
    return out
