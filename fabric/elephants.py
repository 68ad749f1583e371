"""Differentiated traffic (seed 003 DT and on demand): only elephants may use a reconfigurable circuit.

Classification by address: an elephant is a transfer to or from one of the `elephant` hosts (seed
003 ran one VM per host, so the migration manager knows which hosts move elephants). In a state that
tablegen generated for some circuits, every route's version-0 path may cross a circuit and its
version-1 (shadow) path is electrical (tablegen's stable plans, p4src/README.md). `differentiated`
gives every such route a twin path for the elephant hosts, path id + ELEPHANT_PATH_OFFSET, that keeps
both versions and follows the route's own path version; the route itself (everything else, the mice)
is pinned to its electrical shadow in both versions. A /32 route sends each remote elephant host to
the twin. So a procedure that flips the route's version (bbm, mbb) moves the elephants and nothing
else, and the mice never see a circuit appear or go dark.
"""

from __future__ import annotations

import copy
import ipaddress
from collections.abc import Iterable

from fabric.contract import PATH_VERSION, ROUTE, SET_PATH, TO_HOST, VERSIONED_TABLES
from p4rt.entities import TableEntry
from p4rt.schema import short_name
from p4rt.state import SwitchState

# path_id is bit<16> (p4src/include/defines.p4); tablegen numbers one path per destination ToR from 1;
# below HOLD_PATHS (1024, p4src/include/sizes.p4), the largest array a path id indexes
ELEPHANT_PATH_OFFSET = 512


def _pid(e: TableEntry) -> int:
    return int(e.match["path_id"])


def _same(a: TableEntry, b: TableEntry) -> bool:
    return (a.action, a.params, a.member_id, a.group_id) == (b.action, b.params, b.member_id, b.group_id)


def _pinned(entries: list[TableEntry], pid: int) -> bool:
    """True when every versioned entry of path pid forwards the same in version 0 and 1."""
    by = {(short_name(e.table), int(e.match.get("version", 0))): e for e in entries
          if short_name(e.table) in VERSIONED_TABLES and _pid(e) == pid}
    return all(_same(e, by[(t, 1)]) for (t, v), e in by.items() if v == 0 and (t, 1) in by)


def differentiated(state: SwitchState, elephants: Iterable[str]) -> SwitchState:
    """A copy of a fabric switch's state in which only traffic to the `elephants` (IPv4 addresses) can
    take a circuit; idempotent, and it keeps the twins' paths of a state it already transformed."""
    hosts = []
    for a in elephants:
        try:
            hosts.append(ipaddress.IPv4Address(a))
        except ValueError:
            raise ValueError(f"elephant host {a!r}: expected an IPv4 address") from None
    out = state.copy()
    entries = out.entries
    local = {ipaddress.IPv4Network(e.match["ipv4_dst"]) for e in entries
             if short_name(e.table) == ROUTE and e.action == TO_HOST}
    routes = [(ipaddress.IPv4Network(e.match["ipv4_dst"]), _pid_of(e)) for e in entries
              if short_name(e.table) == ROUTE and e.action == SET_PATH]
    targets: dict[int, list[str]] = {}  # the route's path id -> the elephant /32s it carries
    for h in hosts:
        if any(h in n for n in local):
            continue
        covering = [(n, pid) for n, pid in routes if h in n and pid < ELEPHANT_PATH_OFFSET]
        if covering:
            _net, pid = max(covering, key=lambda r: r[0].prefixlen)
            targets.setdefault(pid, []).append(f"{h}/32")
    old_twins = {_pid(e): e for e in entries
                 if short_name(e.table) in VERSIONED_TABLES and _pid(e) >= ELEPHANT_PATH_OFFSET}
    kept: list[TableEntry] = []
    twins: list[TableEntry] = []
    for pid in sorted(targets):
        twin = pid + ELEPHANT_PATH_OFFSET
        mine = [e for e in entries if short_name(e.table) in VERSIONED_TABLES and _pid(e) == pid]
        if not _pinned(entries, pid) or twin not in old_twins:
            source = mine  # a generated state: the twin takes the route's circuit path
        else:
            source = [e for e in entries if short_name(e.table) in VERSIONED_TABLES and _pid(e) == twin]
        for e in source:
            t = copy.deepcopy(e)
            t.match = {**t.match, "path_id": twin}
            twins.append(t)
        v1 = {short_name(e.table): e for e in mine if int(e.match.get("version", 0)) == 1}
        for e in mine:  # the route itself: version 0 = its electrical shadow
            if int(e.match.get("version", 0)) == 0 and short_name(e.table) in v1:
                src = v1[short_name(e.table)]
                e.action, e.params = src.action, dict(src.params)
                e.member_id, e.group_id = src.member_id, src.group_id
        ver = next((e for e in entries if short_name(e.table) == PATH_VERSION and _pid(e) == pid), None)
        if ver is not None:
            t = copy.deepcopy(ver)
            t.match = {"path_id": twin}
            twins.append(t)
        twins += [TableEntry(ROUTE, {"ipv4_dst": p}, SET_PATH, {"path_id": twin}) for p in sorted(targets[pid])]
    for e in entries:
        table = short_name(e.table)
        if table in (*VERSIONED_TABLES, PATH_VERSION) and _pid(e) >= ELEPHANT_PATH_OFFSET:
            continue  # replaced by this call's twins
        if table == ROUTE and e.action == SET_PATH and _pid_of(e) >= ELEPHANT_PATH_OFFSET:
            continue
        kept.append(e)
    out.entries = kept + twins
    return out


def _pid_of(route: TableEntry) -> int:
    return int(route.params["path_id"])
