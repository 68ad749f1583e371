"""Table entries by P4 names (p4src/README.md): what a switch should hold, as a `SwitchState`
(its document form is tablegen/FORMAT.md).

Pure functions: a switch's route plan and a forwarding mode in, one switch state out; and a whole
network's states (`network_states`, `generate_states`: a topology, a mode and a circuit map in).
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator

from fabric.contract import (
    CIRCUIT,
    CROSS_CONNECT,
    DRAIN_PROBE_SESSION,
    ECMP_GROUP,
    ECMP_SELECTOR,
    FAILOVER,
    FLOWLET_CONFIG,
    FLOWLET_GAP_US,
    FLOWLET_MAX_HOLD_US,
    FLOWLET_PAUSE,
    HASH_CONFIG,
    LIVENESS_ALWAYS_UP_GROUP,
    LIVENESS_SELECTOR,
    LIVENESS_SENTINEL,
    LIVENESS_UP_BASE,
    MODES,
    PATH,
    PATH_DROP,
    PATH_ECMP,
    PATH_SPRAY,
    PATH_STATIC,
    PATH_VERSION,
    PORT_DOWN,
    PORT_LIVENESS,
    PORT_MAC,
    PORT_UP,
    PORT_WATCH_ACTIONS,
    PORT_WATCH_BASE,
    PORT_WATCH_GROUP,
    ROUTE,
    ROUTE_DROP,
    SET_FLOWLET,
    SET_HASH_SALT,
    SET_NEXT_HOP,
    SET_PATH,
    SET_SMAC,
    SET_VERSION,
    SPRAY_GROUP,
    SPRAY_KINDS,
    SPRAY_SELECTOR,
    TO_HOST,
)
from p4rt.entities import ActionProfileGroup, ActionProfileMember, GroupMember, TableEntry
from p4rt.resources import CloneSession, Replica
from p4rt.state import SwitchState
from tablegen.graph import Fabric
from tablegen.routing import SwitchPlan, planner
from topo.circuits import CircuitMap
from topo.model import CPU_PORT, Ocs, Topology


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


def liveness(ports: list[int], failover: bool = True) -> tuple[list[ActionProfileMember],
                                                             list[ActionProfileGroup], list[TableEntry]]:
    """The `port_liveness` provisioning of these ports: (members, groups, entries).

    The `port_down` sentinel comes first (lowest member id, never deleted), then one `port_up` member
    per port and one watching nothing; the group of port P is [sentinel, port_up of P watching P],
    and the always-up group [sentinel, unwatched port_up]. With failover on, port P's entry points at
    its own group; without failover at the always-up group, so a dead port never fails over.
    """
    members = [ActionProfileMember(LIVENESS_SELECTOR, LIVENESS_SENTINEL, PORT_DOWN),
               ActionProfileMember(LIVENESS_SELECTOR, LIVENESS_UP_BASE, PORT_UP)]
    groups: list[ActionProfileGroup] = []
    entries: list[TableEntry] = []
    for port in sorted(ports):
        up = LIVENESS_UP_BASE + port
        members.append(ActionProfileMember(LIVENESS_SELECTOR, up, PORT_UP))
        groups.append(ActionProfileGroup(LIVENESS_SELECTOR, port,
                                         [GroupMember(LIVENESS_SENTINEL), GroupMember(up, 1, port)]))
        entries.append(TableEntry(PORT_LIVENESS, {"port": port},
                                  group_id=port if failover else LIVENESS_ALWAYS_UP_GROUP))
    groups.append(ActionProfileGroup(LIVENESS_SELECTOR, LIVENESS_ALWAYS_UP_GROUP,
                                     [GroupMember(LIVENESS_SENTINEL), GroupMember(LIVENESS_UP_BASE)]))
    return members, groups, entries


def port_watch(ports: list[int]) -> tuple[list[ActionProfileMember], list[ActionProfileGroup]]:
    """The port-watch group of every action profile: (members, groups), p4src/README.md.

    On bmv2, PI keeps a port status per action profile and drops a port-down event as "unchanged"
    when a profile that never watched that port is asked first; a member watching every port in
    every profile keeps each profile's status right, whatever the forwarding mode and failover.
    """
    members: list[ActionProfileMember] = []
    groups: list[ActionProfileGroup] = []
    for profile, action in PORT_WATCH_ACTIONS.items():
        refs = []
        for port in sorted(ports):
            params = {"port": port, "dmac": "00:00:00:00:00:00"} if action == SET_NEXT_HOP else {}
            members.append(ActionProfileMember(profile, PORT_WATCH_BASE + port, action, params))
            refs.append(GroupMember(PORT_WATCH_BASE + port, 1, port))
        groups.append(ActionProfileGroup(profile, PORT_WATCH_GROUP, refs))
    return members, groups


def _default(table: str, action: str, params: dict[str, int]) -> TableEntry:
    return TableEntry(table, action=action, params=params, default=True)


def switch_state(fabric: Fabric, plan: SwitchPlan, mode: str, spray: str = "random",
                 failover: bool | str = True) -> SwitchState:
    """What one fabric switch should hold for a forwarding mode (static, ecmp or spray).

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
    profile, group_table = (ECMP_SELECTOR, ECMP_GROUP) if mode != "spray" else (SPRAY_SELECTOR, SPRAY_GROUP)
    multipath_action = PATH_ECMP if mode != "spray" else PATH_SPRAY[spray]

    members, groups, live_entries = liveness(list(sw.ports), failover)
    watch_members, watch_groups = port_watch(list(sw.ports))
    members += watch_members
    groups += watch_groups
    entries = [TableEntry(PORT_MAC, {"egress_port": port}, SET_SMAC, {"smac": mac})
               for port, mac in sorted(sw.ports.items())]
    entries.extend(live_entries)

    paths: dict[int, tuple[tuple[int, ...], tuple[int, ...]]] = {}  # path id -> ports per version
    shared: dict[tuple[tuple[int, ...], tuple[int, ...]], int] = {}
    first_shared = max((r.path_id for r in plan.routes if r.path_id is not None), default=0) + 1
    route_entries: list[TableEntry] = []
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
        route_entries.append(TableEntry(ROUTE, {"ipv4_dst": route.prefix}, SET_PATH, {"path_id": pid}))

    group_ids: dict[tuple[int, ...], int] = {}
    member_ports: set[int] = set()
    for pid, hops in sorted(paths.items()):
        for version, ports in enumerate(hops):
            match = {"path_id": pid, "version": version}
            if not ports:
                entries.append(TableEntry(PATH, match, PATH_DROP))
                continue
            if len(ports) == 1:
                entries.append(TableEntry(PATH, match, PATH_STATIC, {"port": ports[0], "dmac": peers[ports[0]].mac}))
                continue
            entries.append(TableEntry(PATH, match, multipath_action))
            gid = group_ids.get(ports)
            if gid is None:
                gid = group_ids[ports] = len(group_ids) + 1
                member_ports.update(ports)
                # no watch ports: port_liveness checks the chosen member's port (p4src/README.md)
                groups.append(ActionProfileGroup(profile, gid, [GroupMember(p) for p in ports]))
            entries.append(TableEntry(group_table, dict(match), group_id=gid))
    members += [ActionProfileMember(profile, port, SET_NEXT_HOP, {"port": port, "dmac": peers[port].mac})
                for port in sorted(member_ports)]

    entries += [TableEntry(PATH_VERSION, {"path_id": pid}, SET_VERSION, {"version": 0}) for pid in sorted(paths)]
    entries += [TableEntry(ROUTE, {"ipv4_dst": prefix}, TO_HOST, {"port": port, "dmac": mac})
                for prefix, port, mac in plan.to_host]
    entries += [TableEntry(ROUTE, {"ipv4_dst": prefix}, ROUTE_DROP) for prefix in plan.drop]
    entries += route_entries
    defaults = [_default(PATH_VERSION, SET_VERSION, {"version": 0}),
                _default(HASH_CONFIG, SET_HASH_SALT, {"salt": hash_salt(sw.device_id)}),
                _default(FLOWLET_CONFIG, SET_FLOWLET, {"gap_us": FLOWLET_GAP_US, "max_hold_us": FLOWLET_MAX_HOLD_US,
                                                       "byte_ns": byte_ns(fabric.topo, name), "pause": FLOWLET_PAUSE})]
    return SwitchState(name, "fabric", sw.device_id, members, groups, entries, defaults,
                       clones=[CloneSession(DRAIN_PROBE_SESSION, [Replica(CPU_PORT)])])


def ocs_state(ocs: Ocs, circuits: list[tuple[int, int]]) -> SwitchState:
    """What an OCS should hold: a circuit a<->b is two `circuit` entries, a->b and b->a."""
    entries = [TableEntry(CIRCUIT, {"ingress_port": x}, CROSS_CONNECT, {"port": y})
               for a, b in circuits for x, y in ((a, b), (b, a))]
    return SwitchState(ocs.name, "ocs", ocs.device_id, entries=entries)


def ocs_states(fabric: Fabric, circuits: CircuitMap | None = None) -> list[SwitchState]:
    """The states of every OCS of a fabric under its (or the given) circuit map."""
    cmap = fabric.circuits if circuits is None else circuits
    return [ocs_state(o, cmap.get(o.name, [])) for o in fabric.topo.ocs]


def network_states(fabric: Fabric, mode: str, spray: str = "random", failover: bool | str = True) -> Iterator[SwitchState]:
    """Every switch's state, then every OCS's, computed one at a time."""
    plan = planner(fabric, spread=(mode == "static"))
    for name in fabric.switches:
        yield switch_state(fabric, plan(name), mode, spray, failover)
    yield from ocs_states(fabric)


def generate_states(topo: Topology, mode: str, circuits: CircuitMap | None = None, spray: str = "random",
                    failover: bool = True) -> dict[str, SwitchState]:
    """The fabric switches' states by name for a topology, a mode and a circuit map (None: each OCS's
    default map); what the controller installs. failover=False: no port_liveness member watches its port."""
    return {st.name: st for st in network_states(Fabric(topo, circuits), mode, spray, failover) if st.program == "fabric"}
