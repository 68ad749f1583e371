"""The control-plane names of p4src/README.md that tablegen writes and its checker accepts."""

from __future__ import annotations

MODES = ("static", "ecmp", "spray")
SPRAY_KINDS = ("random", "rr")
FAILOVER = ("on", "off")

# liveness_selector member ids (p4src/README.md, port_liveness): the `port_down` sentinel has the
# lowest id and is written first; the `port_up` member of port P is LIVENESS_UP_BASE + P. The group
# of port P has group id P.
LIVENESS_SENTINEL = 1
LIVENESS_UP_BASE = 1000
# Failover off: every `port_liveness` entry points at this group, [sentinel, port_up member
# LIVENESS_UP_BASE (port 0: watches nothing)], so every port counts as up. The per-port groups keep
# their watch ports either way: failover is turned on and off by one entry write per port, never by
# changing a group (PI fails to re-activate a member whose watch port is added while the port is up).
LIVENESS_ALWAYS_UP_GROUP = 9999

# Port-watch groups (p4src/README.md, "Port status on bmv2"): every action profile holds group
# PORT_WATCH_GROUP, whose member PORT_WATCH_BASE + P watches port P. Nothing points at these groups;
# they keep each profile's port state right in PI's watch-port enforcer.
PORT_WATCH_GROUP = 10_000
PORT_WATCH_BASE = 2000
# The action each profile's watch members carry (never run: no table entry points at the group).
PORT_WATCH_ACTIONS = {"ecmp_selector": "set_next_hop", "spray_selector": "set_next_hop",
                      "liveness_selector": "port_up"}

# The gradual MBB flip (p4src/README.md, flowlet_config): with PAUSE a TCP flow moves once drained
# (everything it sent is acknowledged; its sender is held by zero-window ACKs meanwhile, and a drain
# probe asks for the last ACK), other flows after an idle gap of GAP counted from when their last
# packet left at the fabric's line rate; any flow once the change has waited MAX_HOLD.
FLOWLET_GAP_US = 8_000
FLOWLET_MAX_HOLD_US = 300_000
FLOWLET_PAUSE = 1
# fabric.p4's clone session for drain probes (p4src/include/defines.p4 DRAIN_PROBE_SESSION): pointed at
# the CPU port, where the copy never leaves (the program recirculates it)
DRAIN_PROBE_SESSION = 100
# fabric.p4's ether types (p4src/include/defines.p4): the MBB path tag and the controller's probes
ETHERTYPE_PATH_TAG = 0x88B5
ETHERTYPE_PROBE = 0x88B6

# table -> (match fields, actions allowed, action profile or None)
FABRIC_TABLES: dict[str, tuple[tuple[str, ...], tuple[str, ...], str | None]] = {
    "acl": (("ipv4_src", "ipv4_dst", "ingress_port"), ("acl_forward", "acl_drop", "acl_to_cpu"), None),
    "route": (("ipv4_dst",), ("set_path", "to_host", "route_drop"), None),
    "path_version": (("path_id",), ("set_version",), None),
    "hash_config": ((), ("set_hash_salt",), None),
    "flowlet_config": ((), ("set_flowlet",), None),
    "path": (("path_id", "version"),
             ("path_static", "path_ecmp", "path_spray_random", "path_spray_rr", "path_drop"), None),
    "ecmp_group": (("path_id", "version"), ("set_next_hop",), "ecmp_selector"),
    "spray_group": (("path_id", "version"), ("set_next_hop",), "spray_selector"),
    "port_liveness": (("port",), ("port_up", "port_down"), "liveness_selector"),
    "port_mac": (("egress_port",), ("set_smac",), None),
    # the time-sliced schedule at a ToR (p4src/README.md, "Time-flow tables")
    "schedule_config": ((), ("set_schedule", "schedule_off"), None),
    "schedule_phase": (("phase",), ("set_slot",), None),
    "slot_policy": (("path_id",), ("slot_hold", "slot_electrical"), None),
    "slot_path": (("path_id", "slot"), ("slot_port",), None),
}
OCS_TABLES: dict[str, tuple[tuple[str, ...], tuple[str, ...], str | None]] = {
    "circuit": (("ingress_port",), ("cross_connect",), None),
    "schedule_config": ((), ("set_schedule", "schedule_off"), None),
    "schedule_phase": (("phase",), ("set_slot",), None),
    "slot_circuit": (("slot", "night", "ingress_port"), ("slot_cross_connect",), None),
}
# ocs.p4's actions (not in fabric.p4)
OCS_ACTIONS = ("cross_connect", "dark", "slot_cross_connect", "slot_dark")
# the hold of a ToR's scheduled paths (p4src/include/v1model/slot_hold.p4), counters by path id
HOLD_COUNTERS = ("hold_entered", "hold_released", "hold_overflow", "hold_expired")
# the OCS's drops under a schedule, counters by ingress port: a night on a changing port, a day
# without a circuit for the port
SCHEDULE_DROP_COUNTERS = ("night_drops", "unlit_drops")

ACTION_PARAMS: dict[str, tuple[str, ...]] = {
    "acl_forward": ("port",), "acl_drop": (), "acl_to_cpu": (),
    "set_path": ("path_id",), "to_host": ("port", "dmac"), "route_drop": (),
    "set_version": ("version",), "set_hash_salt": ("salt",), "set_flowlet": ("gap_us", "max_hold_us", "byte_ns", "pause"),
    "path_static": ("port", "dmac"), "path_ecmp": (), "path_spray_random": (), "path_spray_rr": (),
    "path_drop": (),
    "set_next_hop": ("port", "dmac"), "port_up": (), "port_down": (), "set_smac": ("smac",),
    "cross_connect": ("port",), "dark": (),
    "set_schedule": ("epoch_us", "cycle_scale"), "schedule_off": (), "set_slot": ("slot", "night"),
    "slot_hold": ("max_hold_us", "depth"), "slot_electrical": (), "slot_port": ("port", "dmac"),
    "slot_cross_connect": ("port",), "slot_dark": (),
}

PROFILE_TABLE = {"ecmp_selector": "ecmp_group", "spray_selector": "spray_group",
                 "liveness_selector": "port_liveness"}
MULTIPATH_ACTIONS = {"path_ecmp": "ecmp_group", "path_spray_random": "spray_group",
                     "path_spray_rr": "spray_group"}
