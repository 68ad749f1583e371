// User metadata of fabric.p4 and ocs.p4, the same on both targets. The forwarding controls
// (include/fabric/) read and write only headers and this struct, and call the glue's primitives
// (RESUBMIT_FAILOVER, CLONE_DRAIN_PROBE, RECIRCULATE_DRAIN_PROBE); the target's intrinsics.p4 copies
// its intrinsic metadata in (ingress port, time, length) and the egress port and drop out.
// TARGET_METADATA (glue) adds what only that target needs.
#ifndef P4SRC_INCLUDE_METADATA_P4_
#define P4SRC_INCLUDE_METADATA_P4_

#include "defines.p4"

#ifndef TARGET_METADATA
#error "include the target's glue (include/v1model/glue.p4 or include/tna/glue.p4) first"
#endif

// What the schedule clock says about now (schedule/clock.p4).
struct schedule_t {
    bit<1>  on;               // a schedule is installed and has started
    time_t  t;                // now - the epoch (set_schedule)
    bit<1>  night;            // a night (OCS: changing ports are dark; ToR: nothing optical is sent)
    slot_t  slot;
    bit<32> phase;            // position in the cycle (v1model: 2^-SCHEDULE_PHASE_BITS cycles)
    bit<32> end;              // a day: where it ends; a night: where its slot's day begins (same units)
    SCHEDULE_SCALE_T scale;   // set_schedule's: a time into phase units (SCHEDULE_UNITS)
}

struct fabric_metadata_t {
    TARGET_METADATA
    // In from the target (glue), at the start of ingress (egress: egress_port, is_clone).
    port_t    ingress_port;
    time_t    now;            // arrival time (v1model: us; TNA: global_tstamp >> 10, 1.024 us)
    bit<32>   pkt_len;        // the packet's length as received
    bit<1>    is_clone;       // egress: this is the copy of a held ACK (the drain probe to make)
    // Out to the target (glue), at the end of ingress or egress.
    port_t    egress_port;    // ingress: the chosen output port; egress: the port it leaves on
    bit<1>    drop;
    bit<1>    do_clone;       // TNA: the drain probe's mirror (v1model clones where decided)
    bit<1>    do_recirculate; // egress: the drain probe goes back to ingress (not counted in port_tx)
    // Forwarding state.
    bit<16>   l4_src_port;    // 5-tuple for the ECMP hash (0 for non-TCP/UDP)
    bit<16>   l4_dst_port;
    bit<1>    bypass;         // packet-out or probe: no forwarding table, no rewrite
    bit<1>    probe_out;      // a probe packet-out to a port not the CPU's (Failover; TNA: the parser)
    bit<1>    acl_hit;        // the ACL decided: routing is skipped
    bit<1>    routable;       // an IPv4 packet for the forwarding tables (Routing runs unless acl_hit)
    bit<1>    routed;         // route hit: TTL decrement, checksum, source MAC rewrite
    bit<1>    to_host;        // delivered to a host: strip the path tag
    bit<1>    has_path;       // route chose a path id
    path_id_t path_id;
    version_t version;        // path version of this packet (path_version, tag, or failover)
    bit<32>   hash_mix;       // hash_config: crc32(5-tuple) mixed with the salt, in the ECMP selector key
    bit<2>    multipath;      // MULTIPATH_*: which group table picks the next hop
    bit<32>   spray_index;    // selector input of spray_group: random or round-robin counter
    bit<1>    next_hop_set;   // a path or group action chose the egress port
    liveness_t port_up;       // LIVENESS_UP set only by port_liveness's port_up action
    bit<8>    liveness_pick;  // constant 1: the selector input of port_liveness (see failover.p4)
    bit<1>    gradual;        // path_version chose set_version_gradual: move at a flowlet boundary
    // Flowlet gate (flowlet.p4): flowlet_config, then this flow's registers.
    bit<32>   flowlet_gap;    // flowlet_config: idle gap (us) that ends a flowlet
    bit<32>   flowlet_max_hold; // flowlet_config: longest a pending version change waits (us)
    bit<32>   flowlet_byte_ns;  // flowlet_config: fabric line rate as ns per byte (0: gaps at arrival)
    bit<1>    flowlet_pause;  // flowlet_config: pause a pending TCP flow (zero window) until drained
    bit<32>   flow_index;     // 5-tuple hash: index of the flowlet registers
    bit<32>   ack_index;      // the reversed 5-tuple's: an ACK's flow
    time_t    flow_tx;        // this packet's time on the fabric port (length x BYTE_NS)
    bit<8>    flow_wanted;    // the entry's version + 1 (flow_pending's tag of the change)
    bit<8>    flow_version;   // flowlet registers of this flow: its version (after the gate),
    time_t    flow_departure; // when its earlier packets have left at line rate (before this one),
    time_t    flow_pending;   // since when a change to another version waits (ACK path: 0 if none),
    bit<32>   flow_sent_end;  // TCP: the sequence number after its highest data byte,
    bit<32>   flow_acked;     // TCP: the last acknowledgement its receiver sent back
    bit<32>   flow_end;       // TCP: the sequence number after this segment's data
    bit<1>    flow_stale;     // the slot idled past MAX_HOLD (a new flow may have taken it)
    bit<32>   flow_unacked;   // ACK path: the flow's bytes this ACK leaves unacknowledged (modulo 2^32)
    // Kept across the fast-failover resubmit. The parser must not initialise these: it runs
    // again on the resubmitted packet, after the target has restored them.
    @field_list(FL_FAILOVER)
    bit<1>    failover;       // this packet is the resubmitted copy
    @field_list(FL_FAILOVER)
    version_t failover_version;
    // Set on a held ACK that asks for a drain probe; its clone, and the probe that clone becomes, keep it.
    @field_list(FL_DRAIN_PROBE)
    bit<1>    drain_probe;
    // Time-sliced optical schedule at a ToR (slot_route.p4).
    schedule_t sched;
    bit<2>    slot_decision;  // SLOT_*: the path table, the slot's uplink, hold, or drop
    bit<1>    hold_pass;      // this pass goes round the hold loop (egress marks it: hold_mark_h)
    bit<32>   hold_max_us;    // slot_policy: the longest a packet of the path is held
    bit<32>   hold_limit;     // slot_policy: at most this many packets of the path held at once
    bit<32>   slot_byte_ns;   // slot_port: ns a byte takes on the slot's uplink (0: no day budget)
    port_t    slot_port;      // slot_port: the slot's uplink (lit: the egress port)
    bit<32>   slot_more;      // slot_port: the light after the current range, phase units (a window)
    bit<32>   hold_fresh_us;  // slot_policy: a lit decision older than this when egress takes the
                              // packet is stale: it goes round the hold loop again (0: never stale)
    time_t    slot_depart;    // a lit packet: when its uplink starts sending it (after the backlog the day
                              // budget counts; else its arrival): freshness counts from then
    bit<32>   hold_queued;    // packets of the path held now, when a new packet arrives (v1model:
                              // SlotHold's depth; TNA: 0): a lit one joins them (SlotRoute)
    // A held packet's state: from its hold_mark (the parser sets these), or kept by the recirculation
    // of a lit packet v1model's egress found stale (FL_HOLD; the v1model parser must not set them).
    @field_list(FL_HOLD)
    bit<1>    held;           // this packet is held for its slot
    @field_list(FL_HOLD)
    time_t    hold_since;     // when it was first held
    @field_list(FL_HOLD)
    path_id_t held_path_id;   // its route, decided on arrival
    @field_list(FL_HOLD)
    version_t held_version;
    @field_list(FL_HOLD)
    bit<1>    stale;          // egress found its lit decision stale: ingress decides again
    // Seed 001's reservation at a ToR (include/v1model/reservation_tor.p4): the path's uplink to the
    // OCS (grant_path), and the granted window when it lights this slot (SlotRoute takes it as it
    // takes a slot_path entry).
    bit<1>     grant_path;     // the path is reserved (grant_path hit)
    port_t     grant_port;
    mac_addr_t grant_dmac;
    bit<32>    grant_byte_ns;
    bit<16>    grant_ocs_port; // the OCS port of the destination ToR's uplink
    bit<32>    grant_session;  // the clone session to the uplink (a request's copy leaves there)
    bit<1>     grant_found;    // a window lights this slot
    bit<32>    grant_day_more;
    bit<32>    grant_night_more;
    // The reservation frame a request's clone becomes at egress (ReservationOut); 0: none.
    @field_list(FL_RESERVATION)
    bit<8>     resv_kind;
    @field_list(FL_RESERVATION)
    path_id_t  resv_path_id;
    @field_list(FL_RESERVATION)
    bit<16>    resv_dst_port;
    @field_list(FL_RESERVATION)
    bit<16>    resv_seq;
    @field_list(FL_RESERVATION)
    bit<16>    resv_slot;      // request: the ToR's slot; announce: the window's first
    @field_list(FL_RESERVATION)
    bit<16>    resv_slots;     // announce: the window's length
    @field_list(FL_RESERVATION)
    bit<32>    resv_bytes;
    @field_list(FL_RESERVATION)
    bit<48>    resv_asked_at;
    // v1model's order of the controls (include/v1model/): the packet came round the hold loop
    // (HoldLoopIn: its mark was on), and goes on to the schedule (Scheduling runs only for a packet
    // with a path). Tofino runs every control, flat, and uses neither.
    bool      looped;
    bool      scheduled;
}

struct ocs_metadata_t {
    port_t ingress_port;
    port_t egress_port;
    bit<1> drop;
    time_t now;               // arrival time (schedule clock)
    schedule_t sched;
    @field_list(FL_BOOKING)
    bit<1> recirculated;      // v1model: a booking pass of the reservation scheduler (reservation_ocs.p4)
    TARGET_OCS_METADATA
}

#endif  // P4SRC_INCLUDE_METADATA_P4_
