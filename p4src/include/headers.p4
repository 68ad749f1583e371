// Packet headers of fabric.p4 and ocs.p4 (both targets). The target's glue (include/<target>/glue.p4)
// defines TARGET_HEADERS: the headers only that target needs (TNA: bridged metadata, drain mark),
// and time_t (hold_mark_h).
#ifndef P4SRC_INCLUDE_HEADERS_P4_
#define P4SRC_INCLUDE_HEADERS_P4_

#include "defines.p4"

#ifndef TARGET_HEADERS
#error "include the target's glue (include/v1model/glue.p4 or include/tna/glue.p4) first"
#endif

// Packet-in: what the switch tells the controller about a packet it sends to the CPU port.
@controller_header("packet_in")
header packet_in_t {
    port_t  ingress_port;
    bit<7>  _pad;
    bit<48> timestamp;    // the switch's clock when the packet arrived (v1model: us since it
                          // started; TNA: egress time, 1.024 us units): clock probes (control/clock.py)
}

// Packet-out: the controller names the port; the frame behind it leaves there unchanged.
@controller_header("packet_out")
header packet_out_t {
    port_t  egress_port;
    bit<7>  _pad;
}

header ethernet_t {
    mac_addr_t dst_addr;
    mac_addr_t src_addr;
    bit<16>    ether_type;
}

// A packet held for its slot on its way round the hold loop (include/<target>/slot_hold.p4): its own
// ether type, then what ingress decided on its first pass; ingress removes it. `stale`: v1model's
// egress found its lit decision stale (it was not held, or had left the hold): decide afresh.
header hold_mark_h {
    bit<16>   ether_type;
    path_id_t path_id;
    version_t version;
    bit<1>    stale;
    bit<6>    _pad;
    time_t    since;      // when it was first held (the target's time_t: v1model 48 bits, TNA 32)
}

// Egress marks a packet for the hold loop (HoldLoopOut): the mark in front of the packet's own ether
// type, with its held state (Tofino keeps no metadata round the loop, v1model none out of the switch).
#define PUSH_HOLD_MARK(held_path_id, held_version, is_stale, held_since) \
    hdr.hold_mark.setValid(); \
    hdr.hold_mark.ether_type = hdr.ethernet.ether_type; \
    hdr.hold_mark.path_id = (held_path_id); \
    hdr.hold_mark.version = (held_version); \
    hdr.hold_mark.stale = (is_stale); \
    hdr.hold_mark._pad = 0; \
    hdr.hold_mark.since = (held_since); \
    hdr.ethernet.ether_type = ETHERTYPE_HOLD_MARK

// A reservation's control frame (seed 001; include/v1model/reservation_tor.p4, reservation_ocs.p4), on
// a ToR's uplink to the OCS, as a burst header travels on its own wavelength: a ToR's request (the
// burst's bytes, to the OCS port of the destination ToR) or announcement (one-way: the window it took),
// the scheduler's grant back (the window, or refused). The ToR's own fields are echoed in the grant.
// Slots are indexes in the cycle of the schedule both switches run (schedule/clock.p4).
header reservation_h {
    bit<8>    kind;       // RESV_REQUEST, RESV_GRANT, RESV_ANNOUNCE
    bit<8>    refused;    // grant: 1 when no window fits within a cycle (the ToR asks again later)
    path_id_t path_id;    // the ToR's path (echoed)
    bit<16>   dst_port;   // the OCS port of the destination ToR's uplink
    bit<16>   seq;        // the request's number at its ToR (echoed: a late grant is told apart)
    bit<16>   req_slot;   // the ToR's slot when it asked (echoed: the window's offset counts from it)
    bit<16>   start;      // grant, announce: the window's first slot
    bit<16>   slots;      // its length in slots
    bit<32>   bytes;      // request, announce: the burst
    bit<48>   asked_at;   // the ToR's time when it asked (echoed: the loop's time, on the ToR's clock)
    // The OCS's booking passes (one calendar cell a pass, include/v1model/reservation_ocs.p4): set by
    // the OCS on a frame's arrival, never taken from a port; it recirculates while `left` is not 0.
    bit<16>   in_port;    // the OCS port the request came in on (where the grant goes)
    bit<16>   cursor;     // the next cell's slot
    bit<16>   left;       // cells left to write
    bit<48>   expires;    // the next cell's end (the OCS's time)
}

// The MBB path tag: the path version decided once by the ingress switch of the packet.
header path_tag_t {
    version_t version;
    bit<7>    reserved;
    bit<8>    hops;
    bit<16>   ether_type;
}

header ipv4_t {
    bit<4>      version;
    bit<4>      ihl;
    bit<8>      dscp_ecn;
    bit<16>     total_len;
    bit<16>     identification;
    bit<3>      flags;
    bit<13>     frag_offset;
    bit<8>      ttl;
    bit<8>      protocol;
    bit<16>     hdr_checksum;
    ipv4_addr_t src_addr;
    ipv4_addr_t dst_addr;
}

header tcp_t {
    bit<16> src_port;
    bit<16> dst_port;
    bit<32> seq_no;
    bit<32> ack_no;
    bit<4>  data_offset;
    bit<4>  res;
    bit<8>  flags;
    bit<16> window;
    bit<16> checksum;
    bit<16> urgent_ptr;
}

header udp_t {
    bit<16> src_port;
    bit<16> dst_port;
    bit<16> length;
    bit<16> checksum;
}

header icmp_t {
    bit<8>  icmp_type;
    bit<8>  icmp_code;
    bit<16> checksum;
}

header arp_t {
    bit<16>     hw_type;
    bit<16>     proto_type;
    bit<8>      hw_len;
    bit<8>      proto_len;
    bit<16>     opcode;
    mac_addr_t  sender_mac;
    ipv4_addr_t sender_ip;
    mac_addr_t  target_mac;
    ipv4_addr_t target_ip;
}

struct fabric_headers_t {
    TARGET_HEADERS
    packet_out_t packet_out;
    packet_in_t  packet_in;
    ethernet_t   ethernet;
    hold_mark_h  hold_mark;
    reservation_h reservation;
    path_tag_t   path_tag;
    ipv4_t       ipv4;
    tcp_t        tcp;
    udp_t        udp;
    icmp_t       icmp;
    arp_t        arp;
}

// The OCS parses nothing but the controller header and a reservation frame: any other frame is payload.
struct ocs_headers_t {
    TARGET_OCS_HEADERS
    packet_out_t  packet_out;
    packet_in_t   packet_in;
    ethernet_t    ethernet;
    reservation_h reservation;
}

#endif  // P4SRC_INCLUDE_HEADERS_P4_
