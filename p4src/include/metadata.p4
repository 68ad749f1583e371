// User metadata of fabric.p4 and ocs.p4.
#ifndef P4SRC_INCLUDE_METADATA_P4_
#define P4SRC_INCLUDE_METADATA_P4_

#include "defines.p4"

struct fabric_metadata_t {
    port_t    ingress_port;
    bit<16>   l4_src_port;    // 5-tuple for the ECMP hash (0 for non-TCP/UDP)
    bit<16>   l4_dst_port;
    bit<1>    bypass;         // packet-out or probe: no forwarding table, no rewrite
    bit<1>    acl_hit;        // the ACL decided: routing is skipped
    bit<1>    routed;         // route hit: TTL decrement, checksum, source MAC rewrite
    bit<1>    to_host;        // delivered to a host: strip the path tag
    bit<1>    has_path;       // route chose a path id
    path_id_t path_id;
    version_t version;        // path version of this packet (path_version, tag, or failover)
    bit<32>   hash_mix;       // hash_config: crc32(5-tuple) * salt, in the ECMP selector key
    bit<2>    multipath;      // MULTIPATH_*: which group table picks the next hop
    bit<32>   spray_index;    // selector input of spray_group: random or round-robin counter
    bit<1>    next_hop_set;   // a path or group action chose the egress port
    bit<1>    port_up;        // set only by port_liveness's port_up action
    bit<8>    liveness_pick;  // constant 1: the selector input of port_liveness (see failover.p4)
    bit<1>    gradual;        // path_version chose set_version_gradual: move at a flowlet boundary
    bit<32>   flowlet_gap;    // flowlet_config: idle gap (us) that ends a flowlet
    bit<32>   flowlet_max_hold; // flowlet_config: longest a pending version change waits (us)
    bit<32>   flowlet_byte_ns;  // flowlet_config: fabric line rate as ns per byte (0: gaps at arrival)
    bit<1>    flowlet_pause;  // flowlet_config: pause a pending TCP flow (zero window) until drained
    bit<32>   flow_index;     // 5-tuple hash: index of the flowlet registers
    version_t flow_version;   // flowlet registers of this flow: its current version,
    bit<48>   flow_departure; // when its last packet has left at line rate (us; flowlet.p4),
    bit<48>   flow_pending;   // since when a change to another version waits (0: none),
    bit<32>   flow_sent_end;  // TCP: the sequence number after its highest data byte,
    bit<32>   flow_acked;     // TCP: the last acknowledgement its receiver sent back
    // Kept across the fast-failover resubmit. The parser must not initialise these: it runs
    // again on the resubmitted packet, after the target has restored them.
    @field_list(FL_FAILOVER)
    bit<1>    failover;       // this packet is the resubmitted copy
    @field_list(FL_FAILOVER)
    version_t failover_version;
    // Set on a held ACK that asks for a drain probe; its clone, and the probe that clone becomes, keep it.
    @field_list(FL_DRAIN_PROBE)
    bit<1>    drain_probe;
}

struct ocs_metadata_t {
    port_t ingress_port;
}

#endif  // P4SRC_INCLUDE_METADATA_P4_
