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
# ... and seed 001's reservation frames (requests, grants: p4src/README.md, "Reservation loop")
ETHERTYPE_RESERVATION = 0x88B9

# The short P4 names (p4src/README.md) of fabric.p4's and ocs.p4's tables, action profiles and
# actions: the only place outside tests where the Python side spells them.
ACL, ROUTE, PATH_VERSION, PATH = "acl", "route", "path_version", "path"
HASH_CONFIG, FLOWLET_CONFIG = "hash_config", "flowlet_config"
ECMP_GROUP, SPRAY_GROUP, PORT_LIVENESS, PORT_MAC = "ecmp_group", "spray_group", "port_liveness", "port_mac"
CIRCUIT = "circuit"
ECMP_SELECTOR, SPRAY_SELECTOR, LIVENESS_SELECTOR = "ecmp_selector", "spray_selector", "liveness_selector"
ACL_FORWARD, ACL_DROP, ACL_TO_CPU = "acl_forward", "acl_drop", "acl_to_cpu"
SET_PATH, TO_HOST, ROUTE_DROP = "set_path", "to_host", "route_drop"
SET_VERSION, SET_VERSION_GRADUAL = "set_version", "set_version_gradual"
SET_HASH_SALT, SET_FLOWLET = "set_hash_salt", "set_flowlet"
PATH_STATIC, PATH_ECMP, PATH_DROP = "path_static", "path_ecmp", "path_drop"
PATH_SPRAY = {"random": "path_spray_random", "rr": "path_spray_rr"}  # by SPRAY_KINDS
SET_NEXT_HOP, PORT_UP, PORT_DOWN, SET_SMAC = "set_next_hop", "port_up", "port_down", "set_smac"
CROSS_CONNECT, DARK = "cross_connect", "dark"
# the time-flow tables (p4src/README.md, "Time-flow tables")
SCHEDULE_CONFIG, SCHEDULE_PHASE, SLOT_POLICY, SLOT_PATH = "schedule_config", "schedule_phase", "slot_policy", "slot_path"
SLOT_CIRCUIT = "slot_circuit"
SET_SCHEDULE, SCHEDULE_OFF, SET_SLOT = "set_schedule", "schedule_off", "set_slot"
SLOT_HOLD, SLOT_ELECTRICAL, SLOT_PORT = "slot_hold", "slot_electrical", "slot_port"
SLOT_CROSS_CONNECT, SLOT_DARK = "slot_cross_connect", "slot_dark"
# a switch's part of a schedule, replaced as one (SwitchState.with_tables): the clock (its default entry
# switches the schedule on), the phases, and a ToR's policies and slot routes or the OCS's slot circuits
TOR_TIME_FLOW_TABLES = (SCHEDULE_CONFIG, SCHEDULE_PHASE, SLOT_POLICY, SLOT_PATH)
# seed 001's reservation loop in the data plane (p4src/README.md, "Reservation loop"): a ToR's and the
# OCS's configuration tables and actions, the loop's modes (reservation_config's mode - 1), and the
# clone sessions that copy a ToR's requests to its uplinks (RESERVATION_SESSION_BASE + uplink port)
RESERVATION_CONFIG, GRANT_PATH, WINDOW_MORE, WINDOW_LENGTH = "reservation_config", "grant_path", "window_more", "window_length"
SET_RESERVATION, GRANT_UPLINK, SET_MORE, SET_WINDOW = "set_reservation", "grant_uplink", "set_more", "set_window"
TOR_LOOP_TABLES = (RESERVATION_CONFIG, GRANT_PATH, WINDOW_MORE, WINDOW_LENGTH)
OCS_LOOP_TABLES = (RESERVATION_CONFIG, WINDOW_LENGTH)
# The OCS's scheduler on Tofino adds times where v1model multiplies slots (include/tna/reservation_ocs.p4)
RESV_SLOT_TIMES, RESV_SPAN, RESV_START_SLOT, RESV_SLOT_PHASE = \
    "resv_slot_times", "resv_span", "resv_start_slot", "resv_slot_phase"
SET_SLOT_TIMES, SET_SPAN, SET_START_SLOT, SET_SLOT_PHASE = "set_slot_times", "set_span", "set_start_slot", "set_slot_phase"
TNA_OCS_LOOP_TABLES = (RESERVATION_CONFIG, WINDOW_LENGTH, RESV_SLOT_TIMES, RESV_SPAN, RESV_START_SLOT, RESV_SLOT_PHASE)
LOOP_MODES = ("two-way", "one-way")
RESERVATION_SESSION_BASE = 1000
# the loop's counters: a ToR's by path id (requests or announcements sent, windows granted, refused,
# grants for no request out), its forged reservation frames by port, and its loop time in 32 us
# buckets; the OCS's by input port
LOOP_TOR_COUNTERS = ("resv_requests", "resv_grants", "resv_refused", "resv_late")
RESV_FORGED, RESV_LOOP_TIME, RESV_LOOP_BUCKET_US, RESV_LOOP_BUCKETS = "resv_forged", "resv_loop_time", 32, 256
LOOP_OCS_COUNTERS = ("resv_booked", "resv_refused", "resv_collided")
OCS_TIME_FLOW_TABLES = (SCHEDULE_CONFIG, SCHEDULE_PHASE, SLOT_CIRCUIT)

# table -> (match fields, actions allowed, action profile or None)
FABRIC_TABLES: dict[str, tuple[tuple[str, ...], tuple[str, ...], str | None]] = {
    ACL: (("ipv4_src", "ipv4_dst", "ingress_port"), (ACL_FORWARD, ACL_DROP, ACL_TO_CPU), None),
    ROUTE: (("ipv4_dst",), (SET_PATH, TO_HOST, ROUTE_DROP), None),
    PATH_VERSION: (("path_id",), (SET_VERSION,), None),
    HASH_CONFIG: ((), (SET_HASH_SALT,), None),
    FLOWLET_CONFIG: ((), (SET_FLOWLET,), None),
    PATH: (("path_id", "version"), (PATH_STATIC, PATH_ECMP, *PATH_SPRAY.values(), PATH_DROP), None),
    ECMP_GROUP: (("path_id", "version"), (SET_NEXT_HOP,), ECMP_SELECTOR),
    SPRAY_GROUP: (("path_id", "version"), (SET_NEXT_HOP,), SPRAY_SELECTOR),
    PORT_LIVENESS: (("port",), (PORT_UP, PORT_DOWN), LIVENESS_SELECTOR),
    PORT_MAC: (("egress_port",), (SET_SMAC,), None),
    # the time-sliced schedule at a ToR (p4src/README.md, "Time-flow tables")
    SCHEDULE_CONFIG: ((), (SET_SCHEDULE, SCHEDULE_OFF), None),
    SCHEDULE_PHASE: (("phase",), (SET_SLOT,), None),
    SLOT_POLICY: (("path_id",), (SLOT_HOLD, SLOT_ELECTRICAL), None),
    SLOT_PATH: (("path_id", "slot"), (SLOT_PORT,), None),
}
OCS_TABLES: dict[str, tuple[tuple[str, ...], tuple[str, ...], str | None]] = {
    CIRCUIT: (("ingress_port",), (CROSS_CONNECT,), None),
    SCHEDULE_CONFIG: ((), (SET_SCHEDULE, SCHEDULE_OFF), None),
    SCHEDULE_PHASE: (("phase",), (SET_SLOT,), None),
    SLOT_CIRCUIT: (("slot", "night", "ingress_port"), (SLOT_CROSS_CONNECT,), None),
}
# ocs.p4's actions (not in fabric.p4)
OCS_ACTIONS = (CROSS_CONNECT, DARK, SLOT_CROSS_CONNECT, SLOT_DARK)
# fabric.p4's counters by port: received, handed to the port's egress queue, taken out of it (clones
# not counted), sent. port_enq - port_deq, read while the switch is idle, is what its queues dropped
# (bmv2: 64 frames a port, full when a loaded machine stalls the switch).
PORT_RX, PORT_ENQ, PORT_DEQ, PORT_TX = "port_rx", "port_enq", "port_deq", "port_tx"
PORT_COUNTERS = (PORT_RX, PORT_ENQ, PORT_DEQ, PORT_TX)
# the hold of a ToR's scheduled paths (p4src/include/v1model/slot_hold.p4), counters by path id;
# hold_stale (egress): lit decisions found stale, sent round the loop again; slot_over_budget: lit
# packets the uplink could not have sent before their day's end (UplinkClock), held or electrical
HOLD_ENTERED, HOLD_RELEASED, HOLD_EXPIRED = "hold_entered", "hold_released", "hold_expired"
HOLD_COUNTERS = (HOLD_ENTERED, HOLD_RELEASED, "hold_overflow", HOLD_EXPIRED, "hold_stale", "slot_over_budget")
# what a path's queue holds: entered less released less expired (control/reservation_agent.py)
QUEUE_COUNTERS = (HOLD_ENTERED, HOLD_RELEASED, HOLD_EXPIRED)
# the OCS's drops, counters by ingress port: a frame into a port without a circuit (p4src/include/ocs/
# circuit.p4), and under a schedule a night on a changing port or a day without a circuit for the port
DARK_DROPS, NIGHT_DROPS, UNLIT_DROPS = "dark_drops", "night_drops", "unlit_drops"
SCHEDULE_DROP_COUNTERS = (NIGHT_DROPS, UNLIT_DROPS)

ACTION_PARAMS: dict[str, tuple[str, ...]] = {
    ACL_FORWARD: ("port",), ACL_DROP: (), ACL_TO_CPU: (),
    SET_PATH: ("path_id",), TO_HOST: ("port", "dmac"), ROUTE_DROP: (),
    SET_VERSION: ("version",), SET_HASH_SALT: ("salt",), SET_FLOWLET: ("gap_us", "max_hold_us", "byte_ns", "pause"),
    PATH_STATIC: ("port", "dmac"), PATH_ECMP: (), **{a: () for a in PATH_SPRAY.values()}, PATH_DROP: (),
    SET_NEXT_HOP: ("port", "dmac"), PORT_UP: (), PORT_DOWN: (), SET_SMAC: ("smac",),
    CROSS_CONNECT: ("port",), DARK: (),
    SET_SCHEDULE: ("epoch_us", "cycle_scale"), SCHEDULE_OFF: (), SET_SLOT: ("slot", "night", "end"),
    SLOT_HOLD: ("max_hold_us", "depth", "fresh_us"), SLOT_ELECTRICAL: (),
    SLOT_PORT: ("port", "dmac", "byte_ns", "more_after_day", "more_after_night"),
    SLOT_CROSS_CONNECT: ("port",), SLOT_DARK: (),
}

PROFILE_TABLE = {ECMP_SELECTOR: ECMP_GROUP, SPRAY_SELECTOR: SPRAY_GROUP, LIVENESS_SELECTOR: PORT_LIVENESS}
MULTIPATH_ACTIONS = {PATH_ECMP: ECMP_GROUP, **{a: SPRAY_GROUP for a in PATH_SPRAY.values()}}
# Tables whose entries are per (path id, version): what the MBB shadow and a flip change
VERSIONED_TABLES = (PATH, ECMP_GROUP, SPRAY_GROUP)
# Reconcile: the members written first and alone in their profile (p4src/README.md, port_liveness),
# and the tables written after the others (a route never points at a path not yet written; a schedule's
# clock is switched on once its phases and slots are written)
SENTINEL_ACTIONS = (PORT_DOWN,)
LATE_TABLES = (ROUTE, SCHEDULE_CONFIG)
# The action each profile's port-watch members carry (never run: no table entry points at the group).
PORT_WATCH_ACTIONS = {ECMP_SELECTOR: SET_NEXT_HOP, SPRAY_SELECTOR: SET_NEXT_HOP, LIVENESS_SELECTOR: PORT_UP}
