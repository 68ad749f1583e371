"""Table entries by P4 names (p4src/README.md) in the file format of tablegen/FORMAT.md.

Pure functions: a switch's route plan and a forwarding mode in, one switch document out.
"""

from __future__ import annotations

import zlib
from typing import Any

from fabric.contract import (
    DRAIN_PROBE_SESSION,
    FAILOVER,
    FLOWLET_GAP_US,
    FLOWLET_MAX_HOLD_US,
    FLOWLET_PAUSE,
    LIVENESS_ALWAYS_UP_GROUP,
    LIVENESS_SENTINEL,
    LIVENESS_UP_BASE,
    MODES,
    PORT_WATCH_ACTIONS,
    PORT_WATCH_BASE,
    PORT_WATCH_GROUP,
    SPRAY_KINDS,
)
from tablegen.graph import Fabric
from tablegen.routing import SwitchPlan
from topo.circuits import CircuitMap
from topo.model import CPU_PORT, Ocs, Topology

Doc = dict[str, Any]


def hash_salt(device_id: int) -> int:
    """The `hash_config` salt of a switch: a 16-bit mixing (murmur3 finaliser) of its device id, never 0."""
    if device_id < 0:
        raise ValueError(f"device_id={device_id}: expected a non-negative integer")
    x = device_id & 0xFFFFFFFF
    x ^= x >> 16
    x = (x * 0x85EBCA6B) & 0xFFFFFFFF
    x ^= x >> 13
    x = (x * 0xC2B2AE35) & 0xFFFFFFFF
    x ^= x >> 16
    return (x & 0xFFFF) or 1


def byte_ns(topo: Topology, switch: str) -> int:
    """ns a byte takes on the switch's slowest fabric port (links to switches, OCS fibres); 0 if none."""
    hosts = topo.host_map()
    rates = [lk.rate_mbit for lk in topo.links if switch in (lk.a, lk.b) and not {lk.a, lk.b} & set(hosts)]
    rates += [o.rate_mbit for o in topo.ocs for p in o.ports if p.switch == switch]
    rates = [r for r in rates if r > 0]
    return max(1, round(8000 / min(rates))) if rates else 0


def pick(ports: tuple[int, ...], key: str, salt: int = 0) -> tuple[int, ...]:
    """Static mode: one port of an equal-cost set, chosen by a stable hash of the destination and the
    switch's salt (so switches of successive layers do not all pick the same rank of port)."""
    if len(ports) <= 1:
        return ports
    return (ports[zlib.crc32(f"{key}#{salt}".encode()) % len(ports)],)


def failover_flag(value: bool | str) -> bool:
    """A failover option as a bool: True/False, or "on"/"off" (the CLI spelling)."""
    if isinstance(value, bool):
        return value
    if value not in FAILOVER:
        raise ValueError(f"failover={value!r}: expected one of {', '.join(FAILOVER)}")
    return value == "on"


def liveness(ports: list[int], failover: bool = True) -> tuple[list[Doc], list[Doc], list[Doc]]:
    """The `port_liveness` provisioning of these ports: (members, groups, entries).

    The `port_down` sentinel comes first (lowest member id, never deleted), then one `port_up` member
    per port and one watching nothing; the group of port P is [sentinel, port_up of P watching P],
    and the always-up group [sentinel, unwatched port_up]. With failover on, port P's entry points at
    its own group; without failover at the always-up group, so a dead port never fails over.
    """
    members: list[Doc] = [{"profile": "liveness_selector", "member_id": LIVENESS_SENTINEL, "action": "port_down",
                           "params": {}},
                          {"profile": "liveness_selector", "member_id": LIVENESS_UP_BASE, "action": "port_up",
                           "params": {}}]
    groups: list[Doc] = []
    entries: list[Doc] = []
    for port in sorted(ports):
        up = LIVENESS_UP_BASE + port
        members.append({"profile": "liveness_selector", "member_id": up, "action": "port_up", "params": {}})
        groups.append({"profile": "liveness_selector", "group_id": port,
                       "members": [{"member_id": LIVENESS_SENTINEL, "weight": 1},
                                   {"member_id": up, "weight": 1, "watch_port": port}]})
        entries.append({"table": "port_liveness", "match": {"port": port},
                        "group_id": port if failover else LIVENESS_ALWAYS_UP_GROUP})
    groups.append({"profile": "liveness_selector", "group_id": LIVENESS_ALWAYS_UP_GROUP,
                   "members": [{"member_id": LIVENESS_SENTINEL, "weight": 1},
                               {"member_id": LIVENESS_UP_BASE, "weight": 1}]})
    return members, groups, entries


def port_watch(ports: list[int]) -> tuple[list[Doc], list[Doc]]:
    """The port-watch group of every action profile: (members, groups), p4src/README.md.

    On bmv2, PI keeps a port status per action profile and drops a port-down event as "unchanged"
    when a profile that never watched that port is asked first; a member watching every port in
    every profile keeps each profile's status right, whatever the forwarding mode and failover.
    """
    members: list[Doc] = []
    groups: list[Doc] = []
    for profile, action in PORT_WATCH_ACTIONS.items():
        refs = []
        for port in sorted(ports):
            params = {"port": port, "dmac": "00:00:00:00:00:00"} if action == "set_next_hop" else {}
            members.append({"profile": profile, "member_id": PORT_WATCH_BASE + port, "action": action,
                            "params": params})
            refs.append({"member_id": PORT_WATCH_BASE + port, "weight": 1, "watch_port": port})
        groups.append({"profile": profile, "group_id": PORT_WATCH_GROUP, "members": refs})
    return members, groups


def switch_doc(fabric: Fabric, plan: SwitchPlan, mode: str, spray: str = "random",
               failover: bool | str = True) -> Doc:
    """The entry document of one fabric switch for a forwarding mode (static, ecmp or spray).

    With failover off, every `port_liveness` entry points at the always-up group (no data-plane fast
    failover).
    """
    failover = failover_flag(failover)
    if mode not in MODES:
        raise ValueError(f"mode={mode!r}: expected one of {', '.join(MODES)}")
    if spray not in SPRAY_KINDS:
        raise ValueError(f"spray={spray!r}: expected one of {', '.join(SPRAY_KINDS)}")
    name = plan.switch
    sw = fabric.switches[name]
    peers = fabric.peers[name]
    profile, group_table = ("ecmp_selector", "ecmp_group") if mode != "spray" else ("spray_selector", "spray_group")
    multipath_action = "path_ecmp" if mode != "spray" else f"path_spray_{spray}"

    members, groups, live_entries = liveness(list(sw.ports), failover)
    watch_members, watch_groups = port_watch(list(sw.ports))
    members += watch_members
    groups += watch_groups
    entries: list[Doc] = []
    for port, mac in sorted(sw.ports.items()):
        entries.append({"table": "port_mac", "match": {"egress_port": port}, "action": "set_smac",
                        "params": {"smac": mac}})
    entries.extend(live_entries)

    paths: dict[int, tuple[tuple[int, ...], tuple[int, ...]]] = {}  # path id -> ports per version
    shared: dict[tuple[tuple[int, ...], tuple[int, ...]], int] = {}
    first_shared = max((r.path_id for r in plan.routes if r.path_id is not None), default=0) + 1
    route_entries: list[Doc] = []
    for route in plan.routes:
        hops = route.hops
        if mode == "static":
            salt = hash_salt(sw.device_id)
            hops = (pick(hops[0], route.prefix, salt), pick(hops[1], route.prefix, salt))
        if route.path_id is not None:
            pid = route.path_id
        else:
            pid = shared.setdefault(hops, first_shared + len(shared))
        paths[pid] = hops
        route_entries.append({"table": "route", "match": {"ipv4_dst": route.prefix}, "action": "set_path",
                              "params": {"path_id": pid}})

    group_ids: dict[tuple[int, ...], int] = {}
    member_ports: set[int] = set()
    path_entries: list[Doc] = []
    for pid, hops in sorted(paths.items()):
        for version, ports in enumerate(hops):
            match = {"path_id": pid, "version": version}
            if not ports:
                path_entries.append({"table": "path", "match": match, "action": "path_drop", "params": {}})
                continue
            if len(ports) == 1:
                port = ports[0]
                path_entries.append({"table": "path", "match": match, "action": "path_static",
                                     "params": {"port": port, "dmac": peers[port].mac}})
                continue
            path_entries.append({"table": "path", "match": match, "action": multipath_action, "params": {}})
            gid = group_ids.get(ports)
            if gid is None:
                gid = group_ids[ports] = len(group_ids) + 1
                member_ports.update(ports)
                # no watch ports: port_liveness checks the chosen member's port (p4src/README.md)
                groups.append({"profile": profile, "group_id": gid,
                               "members": [{"member_id": p, "weight": 1} for p in ports]})
            path_entries.append({"table": group_table, "match": match, "group_id": gid})
    for port in sorted(member_ports):
        members.append({"profile": profile, "member_id": port, "action": "set_next_hop",
                        "params": {"port": port, "dmac": peers[port].mac}})

    entries.extend(path_entries)
    for pid in sorted(paths):
        entries.append({"table": "path_version", "match": {"path_id": pid}, "action": "set_version",
                        "params": {"version": 0}})
    entries.append({"table": "path_version", "default": True, "action": "set_version", "params": {"version": 0}})
    entries.append({"table": "hash_config", "default": True, "action": "set_hash_salt",
                    "params": {"salt": hash_salt(sw.device_id)}})
    entries.append({"table": "flowlet_config", "default": True, "action": "set_flowlet",
                    "params": {"gap_us": FLOWLET_GAP_US, "max_hold_us": FLOWLET_MAX_HOLD_US,
                               "byte_ns": byte_ns(fabric.topo, name), "pause": FLOWLET_PAUSE}})
    for prefix, port, mac in plan.to_host:
        entries.append({"table": "route", "match": {"ipv4_dst": prefix}, "action": "to_host",
                        "params": {"port": port, "dmac": mac}})
    for prefix in plan.drop:
        entries.append({"table": "route", "match": {"ipv4_dst": prefix}, "action": "route_drop", "params": {}})
    entries.extend(route_entries)
    return {"switch": name, "device_id": sw.device_id, "program": "fabric",
            "action_profile_members": members, "action_profile_groups": groups, "table_entries": entries,
            "clone_sessions": [{"session_id": DRAIN_PROBE_SESSION, "replicas": [{"port": CPU_PORT}]}]}


def ocs_doc(ocs: Ocs, circuits: list[tuple[int, int]]) -> Doc:
    """The entry document of an OCS: a circuit a<->b is two `circuit` entries, a->b and b->a."""
    entries = []
    for a, b in circuits:
        for x, y in ((a, b), (b, a)):
            entries.append({"table": "circuit", "match": {"ingress_port": x}, "action": "cross_connect",
                            "params": {"port": y}})
    return {"switch": ocs.name, "device_id": ocs.device_id, "program": "ocs",
            "action_profile_members": [], "action_profile_groups": [], "table_entries": entries}


def ocs_docs(fabric: Fabric, circuits: CircuitMap | None = None) -> list[Doc]:
    """The entry documents of every OCS of a fabric under its (or the given) circuit map."""
    cmap = fabric.circuits if circuits is None else circuits
    return [ocs_doc(o, cmap.get(o.name, [])) for o in fabric.topo.ocs]
