"""What a switch does with a packet, from its entities (p4src/README.md: route, path, the groups of
the path's version), and the one walk across switches that follows it.

`Forwarding` indexes one `SwitchState` for lookups; `walk` follows a packet from its ingress switch
through every branch (every member of a multipath group), depth first, and reports loops. The
controller uses both to find the paths a change affects (`fabric.state.affected_paths`), tablegen's
checker to verify every hop of generated entries (`tablegen.check`).
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Callable, Iterable
from typing import Any

from fabric.contract import PROFILE_TABLE, ROUTE, SET_PATH
from p4rt.entities import ActionProfileGroup, ActionProfileMember, TableEntry
from p4rt.schema import short_name
from p4rt.state import SwitchState

# Which action profile serves which table (ecmp_group -> ecmp_selector, ...). Callers with a schema
# pass the real map (the Reconfigurer does); this default is the contract's.
DEFAULT_PROFILES = {table: profile for profile, table in PROFILE_TABLE.items()}

Action = tuple[str, str, dict[str, Any]]  # (table, action, params)


class Forwarding:
    """One switch's entries indexed for forwarding: `route` by longest prefix, the entries of each
    (path id, version), and the members of the groups they point at."""

    __slots__ = ("name", "_lpm", "_plens", "_by_path", "_members", "_groups", "_profiles", "_actions")

    def __init__(self, state: SwitchState, profiles: dict[str, str] | None = None) -> None:
        self.name = state.name
        self._profiles = profiles or DEFAULT_PROFILES
        self._lpm: dict[int, dict[int, TableEntry]] = {}
        self._by_path: dict[tuple[Any, Any], list[TableEntry]] = {}
        for e in state.entries:
            if short_name(e.table) == ROUTE and "ipv4_dst" in e.match:
                net = ipaddress.IPv4Network(str(e.match["ipv4_dst"]), strict=False)
                self._lpm.setdefault(net.prefixlen, {})[int(net.network_address)] = e
            elif "path_id" in e.match and "version" in e.match:
                self._by_path.setdefault((e.match["path_id"], e.match["version"]), []).append(e)
        self._members: dict[tuple[str, int], ActionProfileMember] = {
            (short_name(m.profile), m.member_id): m for m in state.members}
        self._groups: dict[tuple[str, int], ActionProfileGroup] = {
            (short_name(g.profile), g.group_id): g for g in state.groups}
        self._actions: dict[tuple[int, int], list[Action]] = {}
        self._plens = sorted(self._lpm, reverse=True)

    def route(self, addr: int) -> TableEntry | None:
        """The `route` entry of the longest prefix holding `addr` (None: a miss)."""
        for plen in self._plens:
            hit = self._lpm[plen].get(addr >> (32 - plen) << (32 - plen) if plen else 0)
            if hit is not None:
                return hit
        return None

    def path_entries(self, path_id: int, version: int) -> list[TableEntry]:
        """The entries of (path_id, version): its `path` entry and its group table's entry."""
        return self._by_path.get((path_id, version), [])

    def members_of(self, entry: TableEntry) -> list[ActionProfileMember | None]:
        """The members an entry of a table with an action profile runs (None: an unknown member)."""
        profile = self._profiles.get(short_name(entry.table), "")
        if entry.group_id is not None:
            group = self._groups.get((profile, entry.group_id))
            ids = [m.member_id for m in group.members] if group is not None else []
        elif entry.member_id is not None:
            ids = [entry.member_id]
        else:
            return []
        return [self._members.get((profile, mid)) for mid in ids]

    def path_actions(self, path_id: int, version: int) -> list[Action]:
        """Everything (path_id, version) does here, groups expanded to their members' actions."""
        key = (path_id, version)
        if key not in self._actions:
            out: list[Action] = []
            for e in self.path_entries(path_id, version):
                table = short_name(e.table)
                if e.action is not None:
                    out.append((table, e.action, dict(e.params)))
                for m in self.members_of(e):
                    out.append((table, m.action, dict(m.params)) if m else (table, "?", {}))
            self._actions[key] = sorted(out, key=lambda t: json.dumps(t, sort_keys=True, default=str))
        return self._actions[key]

    def path_of(self, addr: int) -> int | None:
        """The path id `route` gives `addr`, if it routes it over a path."""
        route = self.route(addr)
        if route is not None and route.action == SET_PATH:
            return int(route.params["path_id"])
        return None

    def ports(self, addr: int, version: int) -> list[int]:
        """The egress ports a packet to `addr` on `version` may take here ([] when delivered or dropped)."""
        pid = self.path_of(addr)
        if pid is None:
            return []
        return sorted({int(p["port"]) for _, _, p in self.path_actions(pid, version) if "port" in p})

    def signature(self, addr: int, version: int) -> str:
        """What this switch does with a packet to `addr` on `version`, as comparable text."""
        route = self.route(addr)
        if route is None:
            return "miss"
        if route.action == SET_PATH:
            acts = self.path_actions(int(route.params["path_id"]), version)
            return "path:" + json.dumps(acts, sort_keys=True, default=str)
        return f"{route.action}{sorted(route.params.items())}"


def walk(start: str, step: Callable[[str, tuple[str, ...]], Iterable[str]],
         on_loop: Callable[[tuple[str, ...]], None] | None = None, done: set[str] | None = None) -> set[str]:
    """The switches a packet entering at `start` may cross, following every branch depth first.

    `step(switch, path)` gives the switches it forwards to (path: the switches before it, empty at
    the ingress); a switch already on the path is a loop, given to `on_loop` with the path and not
    followed. `done` holds switches whose onward walk is known (shared by walks to one destination
    and version, it spares their repetition; the ingress is always stepped).
    """
    done = set() if done is None else done
    crossed: set[str] = set()

    def visit(node: str, path: tuple[str, ...]) -> None:
        if node in path:
            if on_loop is not None:
                on_loop((*path, node))
            return
        crossed.add(node)
        if node in done and path:
            return
        for nxt in step(node, path):
            visit(nxt, (*path, node))
        done.add(node)

    visit(start, ())
    return crossed
