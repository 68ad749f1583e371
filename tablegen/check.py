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
    MULTIPATH_ACTIONS,
    OCS_TABLES,
    PORT_WATCH_ACTIONS,
    PORT_WATCH_GROUP,
    PROFILE_TABLE,
)
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
    """One switch's entries, indexed for lookups."""

    lpm: dict[int, dict[int, tuple[str, dict[str, Any]]]]  # prefix length -> network -> action
    paths: dict[tuple[int, int], tuple[str, dict[str, Any]]]
    groups: dict[tuple[str, int, int], tuple[int, ...]]  # (group table, path id, version) -> member ports
    versions: set[int]
    has_default_version: bool
    liveness: set[int]
    port_mac: dict[int, str]


def circuits_from_docs(topo: Topology, load: Callable[[str], dict[str, Any] | None]) -> CircuitMap:
    """The circuit map the OCS entry documents configure (a->b and b->a must both be present)."""
    out: CircuitMap = {}
    for o in topo.ocs:
        doc = load(o.name)
        pairs: list[tuple[int, int]] = []
        if doc is not None:
            cross = {}
            for e in doc["table_entries"]:
                _check_names(e, OCS_TABLES, o.name)
                cross[e["match"]["ingress_port"]] = e["params"]["port"]
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


def _check_names(e: dict[str, Any], tables: dict[str, Any], where: str) -> None:
    table = e.get("table")
    if table not in tables:
        raise ValueError(f"{where}: table {table!r}: expected one of {', '.join(tables)}")
    fields, actions, _profile = tables[table]
    for k in e.get("match", {}):
        if k not in fields:
            raise ValueError(f"{where}: {table} match field {k!r}: expected one of {', '.join(fields)}")
    if "action" in e:
        if e["action"] not in actions:
            raise ValueError(f"{where}: {table} action {e['action']!r}: expected one of {', '.join(actions)}")
        if sorted(e.get("params", {})) != sorted(ACTION_PARAMS[e["action"]]):
            raise ValueError(f"{where}: {table} {e['action']} params {sorted(e.get('params', {}))}: expected "
                             f"{list(ACTION_PARAMS[e['action']])}")
        _check_params(where, f"{table} {e['action']}", e.get("params", {}))


def _liveness_groups(where: str, doc: dict[str, Any],
                     members: dict[tuple[str, int], tuple[str, dict[str, Any]]]) -> dict[int, int]:
    """Check the port_liveness layout (p4src/README.md); group id -> the port its `port_up` watches
    (-1: none, the always-up group of failover off)."""
    live = [m for m in doc.get("action_profile_members", []) if m["profile"] == "liveness_selector"]
    downs = [m["member_id"] for m in live if m["action"] == "port_down"]
    if len(downs) != 1:
        raise ValueError(f"{where}: liveness_selector has {len(downs)} port_down members: expected exactly one "
                         "sentinel")
    sentinel = downs[0]
    if live[0]["member_id"] != sentinel or sentinel != min(m["member_id"] for m in live):
        raise ValueError(f"{where}: liveness_selector member {sentinel} (port_down): expected the first member "
                         "with the lowest id")
    out: dict[int, int] = {}
    for g in doc.get("action_profile_groups", []):
        if g["profile"] != "liveness_selector" or g["group_id"] == PORT_WATCH_GROUP:
            continue
        name = f"{where}: liveness group {g['group_id']}"
        ms = g["members"]
        if len(ms) != 2 or ms[0]["member_id"] != sentinel:
            raise ValueError(f"{name}: members {[m['member_id'] for m in ms]}: expected [{sentinel} (port_down), "
                             "one port_up member]")
        if ms[0].get("watch_port") is not None:
            raise ValueError(f"{name}: the port_down sentinel watches port {ms[0]['watch_port']}, expected none")
        up = ms[1]
        if members[("liveness_selector", up["member_id"])][0] != "port_up":
            raise ValueError(f"{name}: member {up['member_id']}: expected a port_up member")
        watch = up.get("watch_port")
        out[g["group_id"]] = watch if watch is not None else -1
    return out


def _port_watch_group(where: str, g: dict[str, Any],
                      members: dict[tuple[str, int], tuple[str, dict[str, Any]]]) -> set[int]:
    """Check a port-watch group (p4src/README.md): each member watches its own port. The ports watched."""
    name = f"{where}: {g['profile']} group {g['group_id']} (port watch)"
    action = PORT_WATCH_ACTIONS.get(g["profile"])
    ports: set[int] = set()
    for gm in g["members"]:
        port = gm.get("watch_port")
        if port is None or port in ports:
            raise ValueError(f"{name}: member {gm['member_id']} watches {port}: expected one member per port, "
                             "each watching it")
        if members[(g["profile"], gm["member_id"])][0] != action:
            raise ValueError(f"{name}: member {gm['member_id']}: expected action {action}")
        ports.add(port)
    return ports


def compile_doc(doc: dict[str, Any], failover: bool | None = None) -> Compiled:
    """Index a fabric switch document; raises ValueError on names outside the p4src contract or a
    broken liveness/group layout. failover True/False also requires watched/unwatched port_up members."""
    where = doc["switch"]
    members: dict[tuple[str, int], tuple[str, dict[str, Any]]] = {}
    for m in doc.get("action_profile_members", []):
        if m["profile"] not in PROFILE_TABLE:
            raise ValueError(f"{where}: profile {m['profile']!r}: expected one of {', '.join(PROFILE_TABLE)}")
        _check_params(where, f"member {m['profile']}/{m['member_id']} {m['action']}", m["params"])
        members[(m["profile"], m["member_id"])] = (m["action"], m["params"])
    groups: dict[tuple[str, int], list[int]] = {}
    watched: dict[str, set[int]] = {}
    for g in doc.get("action_profile_groups", []):
        if g["group_id"] == PORT_WATCH_GROUP:
            watched[g["profile"]] = _port_watch_group(where, g, members)
            continue
        ports = []
        for gm in g["members"]:
            key = (g["profile"], gm["member_id"])
            if key not in members:
                raise ValueError(f"{where}: group {g['profile']}/{g['group_id']}: unknown member {gm['member_id']}")
            if g["profile"] != "liveness_selector":
                if gm.get("watch_port") is not None:
                    raise ValueError(f"{where}: group {g['profile']}/{g['group_id']}: member {gm['member_id']} "
                                     f"watches port {gm['watch_port']}, expected no watch port")
                ports.append(members[key][1]["port"])
        groups[(g["profile"], g["group_id"])] = ports
    live = _liveness_groups(where, doc, members)
    ports = {e["match"]["egress_port"] for e in doc["table_entries"] if e["table"] == "port_mac"}
    for profile in PORT_WATCH_ACTIONS:
        if missing := ports - watched.get(profile, set()):
            raise ValueError(f"{where}: {profile} group {PORT_WATCH_GROUP} (port watch) lacks ports {sorted(missing)}: "
                             "expected a member watching every port (p4src/README.md)")
    c = Compiled({}, {}, {}, set(), False, set(), {})
    for e in doc["table_entries"]:
        _check_names(e, FABRIC_TABLES, where)
        t, match = e["table"], e.get("match", {})
        if t == "route":
            net = ipaddress.IPv4Network(match["ipv4_dst"])
            c.lpm.setdefault(net.prefixlen, {})[int(net.network_address)] = (e["action"], e["params"])
        elif t == "path":
            c.paths[(match["path_id"], match["version"])] = (e["action"], e["params"])
        elif t in ("ecmp_group", "spray_group", "port_liveness"):
            profile = FABRIC_TABLES[t][2]
            if (profile, e.get("group_id")) not in groups:
                raise ValueError(f"{where}: {t} entry {match}: unknown group {e.get('group_id')}")
            if t == "port_liveness":
                watch = live[e["group_id"]]
                if watch not in (match["port"], -1):
                    raise ValueError(f"{where}: port_liveness port={match['port']}: group {e['group_id']} "
                                     f"watches port {watch}")
                if failover is True and watch == -1:
                    raise ValueError(f"{where}: port_liveness port={match['port']}: group {e['group_id']} "
                                     "watches no port (failover on)")
                if failover is False and watch != -1:
                    raise ValueError(f"{where}: port_liveness port={match['port']}: group {e['group_id']} "
                                     f"watches port {watch} (failover off)")
                c.liveness.add(match["port"])
            else:
                c.groups[(t, match["path_id"], match["version"])] = tuple(sorted(groups[(profile, e["group_id"])]))
        elif t == "path_version":
            if e.get("default"):
                c.has_default_version = True
            else:
                c.versions.add(match["path_id"])
        elif t == "port_mac":
            c.port_mac[match["egress_port"]] = e["params"]["smac"]
    return c


def _lookup(c: Compiled, addr: int) -> tuple[str, dict[str, Any]] | None:
    for plen in sorted(c.lpm, reverse=True):
        hit = c.lpm[plen].get(addr >> (32 - plen) << (32 - plen) if plen else 0)
        if hit is not None:
            return hit
    return None


def check(topo: Topology, load: Callable[[str], dict[str, Any] | None], max_pairs: int = 4096,
          seed: int = 1, mode: str | None = None, failover: bool | None = None) -> CheckReport:
    """Walk the entries of `load(name)` (a switch or OCS document, None if absent) for host pairs:
    all ordered pairs when there are at most max_pairs, else a seeded random sample of max_pairs.
    failover True/False also requires the liveness groups of that setting (None: either)."""
    report = CheckReport()
    fabric = Fabric(topo, circuits_from_docs(topo, load))
    compiled: dict[str, Compiled] = {}
    refs: dict[tuple[str, int], dict[str, int]] = {}
    least: dict[tuple[str, str, int], set[int]] = {}
    done: set[tuple[str, str, int]] = set()
    hosts = sorted(fabric.host_at)
    smap = topo.switch_map()

    def switch(name: str) -> Compiled | None:
        if name not in compiled:
            doc = load(name)
            if doc is None:
                report.error(f"{name}: no entry document")
                return None
            compiled[name] = compile_doc(doc, failover)
            ports = smap[name].ports if name in smap else {}
            for port, mac in sorted(compiled[name].port_mac.items()):
                if ports.get(port, "").lower() != mac.lower():
                    report.error(f"{name}: port_mac egress_port={port} smac={mac}: expected the topology's "
                                 f"{ports.get(port, 'no such port')}")
        return compiled[name]

    pairs = sample_pairs(hosts, max_pairs, seed)
    for src, dst in pairs:
        report.pairs += 1
        for version in (0, 1):
            _walk(fabric, switch, refs, least, done, report, src, dst, version, mode)
    report.switches_loaded = len(compiled)
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


def _walk(fabric: Fabric, switch: Callable[[str], Compiled | None], refs: dict[tuple[str, int], dict[str, int]],
          least_cache: dict[tuple[str, str, int], set[int]], done: set[tuple[str, str, int]],
          report: CheckReport, src: str, dst: str, version: int, mode: str | None) -> None:
    report.walks += 1
    dst_host = fabric.hosts[dst]
    dst_sw, dst_port = fabric.host_at[dst]
    addr = int(ipaddress.IPv4Address(dst_host.address))
    ref_key = (dst_sw, 0 if fabric.versions_equal() else version)
    if ref_key not in refs:
        refs[ref_key] = fabric.distances(dst_sw, version)
    dist = refs[ref_key]
    tag = f"{src}->{dst} v{version}"

    def visit(name: str, on_path: tuple[str, ...], first: bool) -> None:
        key = (name, dst, version)
        if key in done and not first:
            return
        if name in on_path:
            report.error(f"{tag}: loop {' '.join(on_path)} {name}")
            return
        report.max_hops = max(report.max_hops, len(on_path) + 1)
        c = switch(name)
        if c is None:
            return
        hit = _lookup(c, addr)
        if hit is None or hit[0] == "route_drop":
            report.error(f"{tag}: {'no route' if hit is None else 'dropped'} at {name}")
            return
        action, params = hit
        if action == "to_host":
            if (name, params["port"]) != (dst_sw, dst_port) or params["dmac"] != dst_host.mac:
                report.error(f"{tag}: {name} delivers to port {params['port']} dmac {params['dmac']}")
            done.add(key)
            return
        pid = params["path_id"]
        if first and pid not in c.versions and not c.has_default_version:
            report.error(f"{tag}: {name} has no path_version for path {pid}")
        path = c.paths.get((pid, version))
        if path is None:
            report.error(f"{tag}: {name} has no path entry ({pid}, v{version})")
            return
        p_action, p_params = path
        least = least_cache.get((name, dst_sw, version))
        if least is None:
            least = least_cache[(name, dst_sw, version)] = set(fabric.next_hops(name, dist, version))
        if p_action == "path_static":
            ports: tuple[int, ...] = (p_params["port"],)
            if p_params["port"] not in least:
                report.error(f"{tag}: {name} path {pid} port {p_params['port']} is not a least-cost next hop "
                             f"{sorted(least)}")
            if mode in ("ecmp", "spray") and len(least) > 1:
                report.error(f"{tag}: {name} path {pid} is static but {sorted(least)} are equal-cost")
        elif p_action in MULTIPATH_ACTIONS:
            group = c.groups.get((MULTIPATH_ACTIONS[p_action], pid, version))
            if group is None:
                report.error(f"{tag}: {name} {p_action} path {pid} v{version} has no group entry")
                return
            ports = group
            report.groups_checked += 1
            if set(group) != least:
                report.error(f"{tag}: {name} group of path {pid} v{version} = {list(group)}, "
                             f"least-cost next hops = {sorted(least)}")
        else:
            report.error(f"{tag}: {name} path {pid} v{version}: {p_action}")
            return
        for port in ports:
            peer = fabric.peers[name].get(port)
            if peer is None:
                report.error(f"{tag}: {name} port {port} leads nowhere (dark or unwired)")
                continue
            if port not in c.liveness or port not in c.port_mac:
                report.error(f"{tag}: {name} port {port} lacks a port_liveness group or port_mac entry")
            if peer.is_host:
                report.error(f"{tag}: {name} sends a transit packet to host {peer.node}")
                continue
            if p_action == "path_static" and p_params["dmac"] != peer.mac:
                report.error(f"{tag}: {name} port {port} dmac {p_params['dmac']}, peer {peer.node} has {peer.mac}")
            visit(peer.node, (*on_path, name), False)
        done.add(key)

    visit(fabric.host_at[src][0], (), True)
