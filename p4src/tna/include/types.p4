// Tofino glue: CPU port, the resubmit and bridged headers, metadata. Header types are shared
// with v1model (../../include/headers.p4), so packets and controller headers are identical.
#ifndef P4SRC_TNA_INCLUDE_TYPES_P4_
#define P4SRC_TNA_INCLUDE_TYPES_P4_

// The PCIe CPU port depends on the chip and board (192 on 2-pipe Tofino, 320 on 4-pipe).
#ifndef CPU_PORT
#define CPU_PORT 192
#endif

#include "../../include/defines.p4"
#include "../../include/headers.p4"

const bit<3> RESUBMIT_FAILOVER = 1;  // ig_dprsr_md.resubmit_type

// Resubmit data is 64 bits on Tofino (PORT_METADATA_SIZE).
header resubmit_h {
    bit<8>    kind;
    version_t version;
    bit<55>   _pad;
}

// Ingress state the egress pipeline needs (Tofino does not carry user metadata across).
header bridged_h {
    port_t    ingress_port;
    bit<1>    bypass;
    bit<1>    routed;
    bit<1>    to_host;
    version_t version;
    bit<3>    _pad;
}

struct tna_headers_t {
    bridged_h    bridged;
    packet_out_t packet_out;
    packet_in_t  packet_in;
    ethernet_t   ethernet;
    path_tag_t   path_tag;
    ipv4_t       ipv4;
    tcp_t        tcp;
    udp_t        udp;
    icmp_t       icmp;
    arp_t        arp;
}

struct tna_ingress_metadata_t {
    resubmit_h resubmit;       // valid only on the resubmitted copy
    bit<16>    l4_src_port;
    bit<16>    l4_dst_port;
    bit<1>     acl_hit;
    bit<1>     has_path;
    path_id_t  path_id;
    bit<32>    hash_mix;       // hash_config: crc32(5-tuple) & salt, in the ECMP selector key
    bit<2>     multipath;
    bit<16>    spray_index;
    bit<1>     next_hop_set;
    bit<1>     port_up;
    bit<8>     liveness_pick;  // constant 1: the selector input of port_liveness
    bit<1>     failover;       // this packet is the resubmitted copy
    bit<1>     gradual;        // path_version chose set_version_gradual (flowlet.p4)
    bit<32>    flowlet_gap;    // flowlet_config (us)
    bit<32>    flowlet_max_hold;
    bit<16>    flow_index;     // 5-tuple hash: index of the flowlet registers
    bit<32>    now_us;         // global_tstamp in ~us
    bit<32>    wanted;         // target version + 1 (0: none)
    bit<32>    flow_idle;      // time since the flow was last seen
    bit<32>    flow_held;      // time the change has waited
    bit<1>     flow_move;      // the flow moves to the target version now
    bit<8>     flow_current;   // the flow's version after the gate
}

// Flowlet register pair (flowlet.p4): since when a change to version `wanted - 1` waits.
struct flowlet_pending_t {
    bit<32> since;
    bit<32> wanted;
}

struct tna_egress_metadata_t { }

#endif  // P4SRC_TNA_INCLUDE_TYPES_P4_
