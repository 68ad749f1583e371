"""Reachability checker: walk generated entries like the fabric program would, for host pairs.

For every checked (source, destination) pair and both path versions, it starts at the source's
switch, follows `route` (longest prefix), `path`, the ECMP/spray groups (every member), the links of
the topology and the circuits of the OCS entry documents, and requires: delivery by `to_host` to the
right host with its MAC, no loop, next-hop MACs that match the peer ports, a `port_liveness` group
and `port_mac` entry for every port used, and multipath groups holding exactly the least-cost next
hops (fat-tree: k/2 up at edge and aggregation). Static paths must use one of those next hops.
Each switch's liveness layout is checked too: one `port_down` sentinel, first and with the lowest
member id; every liveness group [sentinel without watch port, a `port_up` member watching its port
(or no port, without failover)]; no watch port on ECMP/spray group members.
"""

from __future__ import annotations

import ipaddress
import logging
import math
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from fabric.contract import (
    ACTION_PARAMS,
    FABRIC_TABLES,
    LIVENESS_SELECTOR,
    MULTIPATH_ACTIONS,
    OCS_TABLES,
    PATH,
    PATH_STATIC,
    PATH_VERSION,
    PORT_DOWN,
    PORT_LIVENESS,
    PORT_MAC,
    PORT_UP,
    PORT_WATCH_ACTIONS,
    PORT_WATCH_GROUP,
    PROFILE_TABLE,
    ROUTE_DROP,
    TO_HOST,
)
from fabric.forwarding import Forwarding, walk
from p4rt.entities import ActionProfileGroup, ActionProfileMember, TableEntry
from p4rt.state import SwitchState
from tablegen.graph import Fabric
from topo.circuits import CircuitMap
from topo.model import Topology

log = logging.getLogger(__name__)

MAX_ERRORS = 50


@dataclass(slots=True)
class CheckReport:
    """The outcome of a check; ok when errors is empty."""

    pairs: int = 0
    walks: int = 0
    switches_loaded: int = 0
    groups_checked: int = 0
    max_hops: int = 0
    errors: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether no error was found."""
        return not self.errors

    def error(self, msg: str) -> None:
        """Record an error (the first MAX_ERRORS are kept)."""
        if len(self.errors) < MAX_ERRORS:
            self.errors.append(msg)
        elif len(self.errors) == MAX_ERRORS:
            self.errors.append("... more errors not shown")


@dataclass(slots=True)
class Compiled:
    """One checked switch: its forwarding index and what the checks of a hop need besides."""

    fwd: Forwarding
    versions: set[int]  # path ids with an explicit `path_version` entry
    has_default_version: bool
    liveness: set[int]  # ports with a `port_liveness` entry
    port_mac: dict[int, str]


Load = Callable[[str], SwitchState | None]


def circuits_from_states(topo: Topology, load: Load) -> CircuitMap:
    """The circuit map the OCS states configure (a->b and b->a must both be present)."""
    out: CircuitMap = {}
    for o in topo.ocs:
        st = load(o.name)
        pairs: list[tuple[int, int]] = []
        if st is not None:
            cross = {}
            for e in st.entries:
                _check_names(e, OCS_TABLES, o.name)
                cross[e.match["ingress_port"]] = e.params["port"]
            for a, b in cross.items():
                if cross.get(b) != a:
                    raise ValueError(f"OCS {o.name}: circuit {a}->{b} has no reverse entry {b}->{a}")
                if a < b:
                    pairs.append((a, b))
        out[o.name] = pairs
    return out


_MAC = re.compile(r"^[0-9a-fA-F]{2}(:[0-9a-fA-F]{2}){5}$")
_MAC_PARAMS = ("smac", "dmac")


def _check_params(where: str, what: str, params: dict[str, Any]) -> None:
    """Parameter values of the kind the program takes: MACs for smac/dmac, integers >= 0 otherwise."""
    for k, v in params.items():
        if k in _MAC_PARAMS:
            if not isinstance(v, str) or not _MAC.match(v):
                raise ValueError(f"{where}: {what} {k}={v!r}: expected a MAC aa:bb:cc:dd:ee:ff")
        elif isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise ValueError(f"{where}: {what} {k}={v!r}: expected an integer >= 0")


def _check_names(e: TableEntry, tables: dict[str, Any], where: str) -> None:
    if e.table not in tables:
        raise ValueError(f"{where}: table {e.table!r}: expected one of {', '.join(tables)}")
    fields, actions, _profile = tables[e.table]
    for k in e.match:
        if k not in fields:
            raise ValueError(f"{where}: {e.table} match field {k!r}: expected one of {', '.join(fields)}")
    if e.action is not None:
        if e.action not in actions:
            raise ValueError(f"{where}: {e.table} action {e.action!r}: expected one of {', '.join(actions)}")
        if sorted(e.params) != sorted(ACTION_PARAMS[e.action]):
            raise ValueError(f"{where}: {e.table} {e.action} params {sorted(e.params)}: expected "
                             f"{list(ACTION_PARAMS[e.action])}")
        _check_params(where, f"{e.table} {e.action}", e.params)


Members = dict[tuple[str, int], ActionProfileMember]


def _liveness_groups(where: str, st: SwitchState, members: Members) -> dict[int, int]:
    """Check the port_liveness layout (p4src/README.md); group id -> the port its `port_up` watches
    (-1: none, the always-up group of failover off)."""
    live = [m for m in st.members if m.profile == LIVENESS_SELECTOR]
    downs = [m.member_id for m in live if m.action == PORT_DOWN]
    if len(downs) != 1:
        raise ValueError(f"{where}: {LIVENESS_SELECTOR} has {len(downs)} {PORT_DOWN} members: expected exactly one "
                         "sentinel")
    sentinel = downs[0]
    if live[0].member_id != sentinel or sentinel != min(m.member_id for m in live):
        raise ValueError(f"{where}: {LIVENESS_SELECTOR} member {sentinel} ({PORT_DOWN}): expected the first member "
                         "with the lowest id")
    out: dict[int, int] = {}
    for g in st.groups:
        if g.profile != LIVENESS_SELECTOR or g.group_id == PORT_WATCH_GROUP:
            continue
        name = f"{where}: liveness group {g.group_id}"
        ms = g.members
        if len(ms) != 2 or ms[0].member_id != sentinel:
            raise ValueError(f"{name}: members {[m.member_id for m in ms]}: expected [{sentinel} ({PORT_DOWN}), "
                             f"one {PORT_UP} member]")
        if ms[0].watch_port is not None:
            raise ValueError(f"{name}: the {PORT_DOWN} sentinel watches port {ms[0].watch_port}, expected none")
        up = ms[1]
        if members[(LIVENESS_SELECTOR, up.member_id)].action != PORT_UP:
            raise ValueError(f"{name}: member {up.member_id}: expected a {PORT_UP} member")
        out[g.group_id] = up.watch_port if up.watch_port is not None else -1
    return out


def _port_watch_group(where: str, g: ActionProfileGroup, members: Members) -> set[int]:
    """Check a port-watch group (p4src/README.md): each member watches its own port. The ports watched."""
    name = f"{where}: {g.profile} group {g.group_id} (port watch)"
    action = PORT_WATCH_ACTIONS.get(g.profile)
    ports: set[int] = set()
    for gm in g.members:
        port = gm.watch_port
        if port is None or port in ports:
            raise ValueError(f"{name}: member {gm.member_id} watches {port}: expected one member per port, "
                             "each watching it")
        if members[(g.profile, gm.member_id)].action != action:
            raise ValueError(f"{name}: member {gm.member_id}: expected action {action}")
        ports.add(port)
    return ports


def _check_liveness_entry(where: str, e: TableEntry, watch: int, failover: bool | None) -> None:
    port = e.match["port"]
    if watch not in (port, -1):
        raise ValueError(f"{where}: {PORT_LIVENESS} port={port}: group {e.group_id} watches port {watch}")
    if failover is True and watch == -1:
        raise ValueError(f"{where}: {PORT_LIVENESS} port={port}: group {e.group_id} watches no port (failover on)")
    if failover is False and watch != -1:
        raise ValueError(f"{where}: {PORT_LIVENESS} port={port}: group {e.group_id} watches port {watch} "
                         "(failover off)")


def compile_state(st: SwitchState, failover: bool | None = None) -> Compiled:
    """Check and index a fabric switch's state; raises ValueError on names outside the p4src contract
    or a broken liveness/group layout. failover True/False also requires watched/unwatched port_up members."""
    where = st.name
    members: Members = {}
    for m in st.members:
        if m.profile not in PROFILE_TABLE:
            raise ValueError(f"{where}: profile {m.profile!r}: expected one of {', '.join(PROFILE_TABLE)}")
        _check_params(where, f"member {m.profile}/{m.member_id} {m.action}", m.params)
        members[(m.profile, m.member_id)] = m
    groups: set[tuple[str, int]] = set()
    watched: dict[str, set[int]] = {}
    for g in st.groups:
        if g.group_id == PORT_WATCH_GROUP:
            watched[g.profile] = _port_watch_group(where, g, members)
            continue
        for gm in g.members:
            if (g.profile, gm.member_id) not in members:
                raise ValueError(f"{where}: group {g.profile}/{g.group_id}: unknown member {gm.member_id}")
            if g.profile != LIVENESS_SELECTOR and gm.watch_port is not None:
                raise ValueError(f"{where}: group {g.profile}/{g.group_id}: member {gm.member_id} "
                                 f"watches port {gm.watch_port}, expected no watch port")
        groups.add((g.profile, g.group_id))
    live = _liveness_groups(where, st, members)
    ports = {e.match["egress_port"] for e in st.entries if e.table == PORT_MAC}
    for profile in PORT_WATCH_ACTIONS:
        if missing := ports - watched.get(profile, set()):
            raise ValueError(f"{where}: {profile} group {PORT_WATCH_GROUP} (port watch) lacks ports {sorted(missing)}: "
                             "expected a member watching every port (p4src/README.md)")
    c = Compiled(Forwarding(st), set(), False, set(), {})
    for e in st.entries + st.defaults:
        _check_names(e, FABRIC_TABLES, where)
        profile = FABRIC_TABLES[e.table][2]
        if profile is not None:
            if (profile, e.group_id) not in groups:
                raise ValueError(f"{where}: {e.table} entry {e.match}: unknown group {e.group_id}")
            if e.table == PORT_LIVENESS:
                _check_liveness_entry(where, e, live[e.group_id], failover)
                c.liveness.add(e.match["port"])
        elif e.table == PATH_VERSION:
            if e.default:
                c.has_default_version = True
            else:
                c.versions.add(e.match["path_id"])
        elif e.table == PORT_MAC:
            c.port_mac[e.match["egress_port"]] = e.params["smac"]
    return c


def check(topo: Topology, load: Load, max_pairs: int = 4096, seed: int = 1, mode: str | None = None,
          failover: bool | None = None) -> CheckReport:
    """Walk the entries of `load(name)` (a switch's or OCS's state, None if absent) for host pairs:
    all ordered pairs when there are at most max_pairs, else a seeded random sample of max_pairs.
    failover True/False also requires the liveness groups of that setting (None: either)."""
    report = CheckReport()
    fabric = Fabric(topo, circuits_from_states(topo, load))
    compiled: dict[str, Compiled | None] = {}
    refs: dict[tuple[str, int], dict[str, int]] = {}
    least: dict[tuple[str, str, int], set[int]] = {}
    done: dict[tuple[str, int], set[str]] = {}
    smap = topo.switch_map()

    def switch(name: str) -> Compiled | None:
        if name not in compiled:
            st = load(name)
            if st is None:
                report.error(f"{name}: no entry document")
                compiled[name] = None
                return None
            c = compiled[name] = compile_state(st, failover)
            ports = smap[name].ports if name in smap else {}
            for port, mac in sorted(c.port_mac.items()):
                if ports.get(port, "").lower() != mac.lower():
                    report.error(f"{name}: port_mac egress_port={port} smac={mac}: expected the topology's "
                                 f"{ports.get(port, 'no such port')}")
        return compiled[name]

    for src, dst in sample_pairs(sorted(fabric.host_at), max_pairs, seed):
        report.pairs += 1
        for version in (0, 1):
            report.walks += 1
            hop = _Hop(fabric, switch, refs, least, report, dst, version, mode, f"{src}->{dst} v{version}")
            walk(fabric.host_at[src][0], hop.step, hop.loop, done.setdefault((dst, version), set()))
    report.switches_loaded = sum(1 for c in compiled.values() if c is not None)
    return report


def sample_pairs(hosts: list[str], max_pairs: int, seed: int = 1) -> list[tuple[str, str]]:
    """All ordered host pairs if there are at most max_pairs, else a seeded sample: about
    sqrt(max_pairs) destinations with as many random sources each (destinations share their work)."""
    n = len(hosts)
    if n * (n - 1) <= max_pairs:
        return [(a, b) for a in hosts for b in hosts if a != b]
    rng = random.Random(seed)
    ndst = max(1, min(n, math.isqrt(max_pairs)))
    pairs: list[tuple[str, str]] = []
    for i, dst in enumerate(rng.sample(hosts, ndst)):
        want = max_pairs // ndst + (1 if i < max_pairs % ndst else 0)
        while want:
            src = rng.choice(hosts)
            if src != dst:
                pairs.append((src, dst))
                want -= 1
    return pairs


class _Hop:
    """The checks of every hop of one walk (source, destination, version), as `walk`'s step."""

    def __init__(self, fabric: Fabric, switch: Callable[[str], Compiled | None],
                 refs: dict[tuple[str, int], dict[str, int]], least: dict[tuple[str, str, int], set[int]],
                 report: CheckReport, dst: str, version: int, mode: str | None, tag: str) -> None:
        self.fabric, self.switch, self.least, self.report = fabric, switch, least, report
        self.dst_host = fabric.hosts[dst]
        self.dst_sw, self.dst_port = fabric.host_at[dst]
        self.addr = int(ipaddress.IPv4Address(self.dst_host.address))
        ref_key = (self.dst_sw, 0 if fabric.versions_equal() else version)
        if ref_key not in refs:
            refs[ref_key] = fabric.distances(self.dst_sw, version)
        self.dist = refs[ref_key]
        self.version, self.mode, self.tag = version, mode, tag

    def loop(self, path: tuple[str, ...]) -> None:
        """A switch met again on its own path."""
        self.report.error(f"{self.tag}: loop {' '.join(path)}")

    def step(self, name: str, on_path: tuple[str, ...]) -> list[str]:
        """Check what `name` does with the packet; the switches it sends it to."""
        report, tag, version = self.report, self.tag, self.version
        report.max_hops = max(report.max_hops, len(on_path) + 1)
        c = self.switch(name)
        if c is None:
            return []
        route = c.fwd.route(self.addr)
        if route is None or route.action == ROUTE_DROP:
            report.error(f"{tag}: {'no route' if route is None else 'dropped'} at {name}")
            return []
        if route.action == TO_HOST:
            port, dmac = route.params["port"], route.params["dmac"]
            if (name, port) != (self.dst_sw, self.dst_port) or dmac != self.dst_host.mac:
                report.error(f"{tag}: {name} delivers to port {port} dmac {dmac}")
            return []
        pid = route.params["path_id"]
        if not on_path and pid not in c.versions and not c.has_default_version:
            report.error(f"{tag}: {name} has no path_version for path {pid}")
        entries = {e.table: e for e in c.fwd.path_entries(pid, version)}
        path = entries.get(PATH)
        if path is None:
            report.error(f"{tag}: {name} has no path entry ({pid}, v{version})")
            return []
        key = (name, self.dst_sw, version)
        least = self.least.get(key)
        if least is None:
            least = self.least[key] = set(self.fabric.next_hops(name, self.dist, version))
        if path.action == PATH_STATIC:
            ports: list[int] = [path.params["port"]]
            if ports[0] not in least:
                report.error(f"{tag}: {name} path {pid} port {ports[0]} is not a least-cost next hop {sorted(least)}")
            if self.mode in ("ecmp", "spray") and len(least) > 1:
                report.error(f"{tag}: {name} path {pid} is static but {sorted(least)} are equal-cost")
        elif path.action in MULTIPATH_ACTIONS:
            group = entries.get(MULTIPATH_ACTIONS[path.action])
            if group is None:
                report.error(f"{tag}: {name} {path.action} path {pid} v{version} has no group entry")
                return []
            ports = sorted(m.params["port"] for m in c.fwd.members_of(group) if m is not None)
            report.groups_checked += 1
            if set(ports) != least:
                report.error(f"{tag}: {name} group of path {pid} v{version} = {ports}, "
                             f"least-cost next hops = {sorted(least)}")
        else:
            report.error(f"{tag}: {name} path {pid} v{version}: {path.action}")
            return []
        out = []
        for port in ports:
            peer = self.fabric.peers[name].get(port)
            if peer is None:
                report.error(f"{tag}: {name} port {port} leads nowhere (dark or unwired)")
                continue
            if port not in c.liveness or port not in c.port_mac:
                report.error(f"{tag}: {name} port {port} lacks a port_liveness group or port_mac entry")
            if peer.is_host:
                report.error(f"{tag}: {name} sends a transit packet to host {peer.node}")
                continue
            if path.action == PATH_STATIC and path.params["dmac"] != peer.mac:
                report.error(f"{tag}: {name} port {port} dmac {path.params['dmac']}, peer {peer.node} has {peer.mac}")
            out.append(peer.node)
        return out
