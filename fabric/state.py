"""What the fabric program means by a switch's entities (p4src/README.md): path versions, failover on
or off, and the paths a change affects (through `fabric.forwarding`, the one forwarding walk)."""

from __future__ import annotations

import copy

from fabric.contract import (
    LIVENESS_ALWAYS_UP_GROUP,
    LIVENESS_SELECTOR,
    PATH_VERSION,
    PORT_LIVENESS,
    PORT_WATCH_GROUP,
    SET_VERSION,
)
from fabric.forwarding import Forwarding, walk
from p4rt.entities import TableEntry
from p4rt.schema import short_name
from p4rt.state import SwitchState

Peers = dict[str, dict[int, str]]  # switch -> egress port -> the switch it reaches


def path_versions(state: SwitchState) -> dict[int, int]:
    """path_id -> version of the explicit `path_version` entries."""
    return {int(e.match["path_id"]): int(e.params["version"]) for e in state.entries
            if short_name(e.table) == PATH_VERSION}


def with_versions(state: SwitchState, versions: dict[int, int]) -> SwitchState:
    """A copy whose `path_version` entries give these paths these versions (adding entries if needed)."""
    out = state.copy()
    todo = dict(versions)
    for e in out.entries:
        if short_name(e.table) == PATH_VERSION and int(e.match["path_id"]) in todo:
            e.params = {"version": todo.pop(int(e.match["path_id"]))}
    for pid, ver in sorted(todo.items()):
        out.entries.append(TableEntry(PATH_VERSION, {"path_id": pid}, SET_VERSION, {"version": ver}))
    return out


def with_failover(state: SwitchState, on: bool) -> SwitchState:
    """A copy whose `port_liveness` entries point at their port's watched group (on) or at the
    always-up group (off): p4src/README.md. Groups never change (a clean diff: one entry per port)."""
    out = state.copy()
    watched = {}  # port -> the liveness group whose member watches it
    for g in out.groups:
        if short_name(g.profile) == LIVENESS_SELECTOR and g.group_id != PORT_WATCH_GROUP:
            ports = {m.watch_port for m in g.members if m.watch_port is not None}
            if len(ports) == 1:
                watched[ports.pop()] = g.group_id
    for e in out.entries:
        if short_name(e.table) == PORT_LIVENESS and e.group_id is not None:
            port = int(e.match["port"])
            if on and port not in watched:
                raise ValueError(f"switch {state.name}: port {port} has no liveness group watching it; "
                                 "expected one per port (tablegen)")
            e.group_id = watched[port] if on else LIVENESS_ALWAYS_UP_GROUP
    return out


def with_version_entries_from(state: SwitchState, other: SwitchState) -> SwitchState:
    """A copy of `state` whose path_version entries are those of `other` (same path set)."""
    out = state.copy()
    out.entries = [e for e in out.entries if short_name(e.table) != PATH_VERSION]
    out.entries += [copy.deepcopy(e) for e in other.entries if short_name(e.table) == PATH_VERSION]
    return out


# -- the paths a change affects ------------------------------------------------------------------


def forwarding_signature(st: SwitchState, addr: int, version: int,
                         profiles: dict[str, str] | None = None) -> str:
    """What this switch does with a packet to `addr` on path version `version`."""
    return Forwarding(st, profiles).signature(addr, version)


def affected_paths(old: dict[str, SwitchState], new: dict[str, SwitchState], addresses: list[int],
                   ingress: list[str], old_peers: Peers | None = None, new_peers: Peers | None = None,
                   profiles: dict[str, str] | None = None) -> dict[str, set[int]]:
    """Per ingress switch, the path ids (old and new) of destinations whose version-0 forwarding changes
    on a switch their packets from that ingress cross (any switch, when no peers are given)."""
    fwd_old = {name: Forwarding(st, profiles) for name, st in old.items()}
    fwd_new = {name: Forwarding(st, profiles) for name, st in new.items()}
    changed_at = {a: {s for s in fwd_old if s in fwd_new and fwd_old[s].signature(a, 0) != fwd_new[s].signature(a, 0)}
                  for a in addresses}

    def crossed(fwd: dict[str, Forwarding], peers: Peers, sw: str, addr: int) -> set[str]:
        def step(name: str, _path: tuple[str, ...]) -> list[str]:
            if name not in fwd:
                return []
            links = peers.get(name, {})
            return [links[p] for p in fwd[name].ports(addr, 0) if p in links]
        return walk(sw, step)

    out: dict[str, set[int]] = {}
    for sw in ingress:
        paths: set[int] = set()
        for a, where in changed_at.items():
            if not where:
                continue
            if old_peers is not None and new_peers is not None:
                if not (crossed(fwd_old, old_peers, sw, a) | crossed(fwd_new, new_peers, sw, a)) & where:
                    continue
            for fwd in (fwd_old.get(sw), fwd_new.get(sw)):
                pid = fwd.path_of(a) if fwd is not None else None
                if pid is not None:
                    paths.add(pid)
        out[sw] = paths
    return out
