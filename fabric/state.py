"""What the fabric program means by a switch's entities (p4src/README.md): path versions, failover on
or off, and what a switch does with a destination address; plus the one forwarding walk across
switches that finds the paths a change affects."""

from __future__ import annotations

import copy
import ipaddress
import json
from typing import Any

from fabric.contract import LIVENESS_ALWAYS_UP_GROUP, PORT_WATCH_GROUP, PROFILE_TABLE
from p4rt.entities import TableEntry
from p4rt.schema import short_name
from p4rt.state import SwitchState

Peers = dict[str, dict[int, str]]  # switch -> egress port -> the switch it reaches

# Which action profile serves which table (ecmp_group -> ecmp_selector, ...). Callers with a schema
# pass the real map (the Reconfigurer does); this default is the contract's.
DEFAULT_PROFILES = {table: profile for profile, table in PROFILE_TABLE.items()}


def path_versions(state: SwitchState) -> dict[int, int]:
    """path_id -> version of the explicit `path_version` entries."""
    return {int(e.match["path_id"]): int(e.params["version"]) for e in state.entries
            if short_name(e.table) == "path_version"}


def with_versions(state: SwitchState, versions: dict[int, int]) -> SwitchState:
    """A copy whose `path_version` entries give these paths these versions (adding entries if needed)."""
    out = state.copy()
    todo = dict(versions)
    for e in out.entries:
        if short_name(e.table) == "path_version" and int(e.match["path_id"]) in todo:
            e.params = {"version": todo.pop(int(e.match["path_id"]))}
    for pid, ver in sorted(todo.items()):
        out.entries.append(TableEntry("path_version", {"path_id": pid}, "set_version", {"version": ver}))
    return out


def with_failover(state: SwitchState, on: bool) -> SwitchState:
    """A copy whose `port_liveness` entries point at their port's watched group (on) or at the
    always-up group (off): p4src/README.md. Groups never change (a clean diff: one entry per port)."""
    out = state.copy()
    watched = {}  # port -> the liveness group whose member watches it
    for g in out.groups:
        if short_name(g.profile) == "liveness_selector" and g.group_id != PORT_WATCH_GROUP:
            ports = {m.watch_port for m in g.members if m.watch_port is not None}
            if len(ports) == 1:
                watched[ports.pop()] = g.group_id
    for e in out.entries:
        if short_name(e.table) == "port_liveness" and e.group_id is not None:
            port = int(e.match["port"])
            if on and port not in watched:
                raise ValueError(f"switch {state.name}: port {port} has no liveness group watching it; "
                                 "expected one per port (tablegen)")
            e.group_id = watched[port] if on else LIVENESS_ALWAYS_UP_GROUP
    return out


def with_version_entries_from(state: SwitchState, other: SwitchState) -> SwitchState:
    """A copy of `state` whose path_version entries are those of `other` (same path set)."""
    out = state.copy()
    out.entries = [e for e in out.entries if short_name(e.table) != "path_version"]
    out.entries += [copy.deepcopy(e) for e in other.entries if short_name(e.table) == "path_version"]
    return out


# -- what a document does with a destination address (for finding the paths a change affects) ----


def _route_for(doc_entries: list[TableEntry], addr: int) -> TableEntry | None:
    best, best_len = None, -1
    for e in doc_entries:
        if short_name(e.table) != "route" or "ipv4_dst" not in e.match:
            continue
        net = ipaddress.IPv4Network(str(e.match["ipv4_dst"]), strict=False)
        if (addr & int(net.netmask)) == int(net.network_address) and net.prefixlen > best_len:
            best, best_len = e, net.prefixlen
    return best


def _path_actions(st: SwitchState, path_id: int, version: int,
                  profiles: dict[str, str]) -> list[tuple[str, str, dict[str, Any]]]:
    """(table, action, params) of everything (path_id, version) does here, groups expanded to members."""
    members = {(short_name(m.profile), m.member_id): m for m in st.members}
    groups = {(short_name(g.profile), g.group_id): g for g in st.groups}
    out = []
    for e in st.entries:
        if e.match.get("path_id") != path_id or e.match.get("version") != version:
            continue
        table = short_name(e.table)
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
