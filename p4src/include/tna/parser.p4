// TNA parsers and deparsers of fabric.p4: ingress and egress each parse the packet (the shared
// FabricPacketParser), with Tofino's intrinsic metadata, resubmit data, bridged metadata and
// mirror headers around it; checksums are computed in the deparsers.
#ifndef P4SRC_INCLUDE_TNA_PARSER_P4_
#define P4SRC_INCLUDE_TNA_PARSER_P4_

#include "glue.p4"
#include "../fabric/parser.p4"

parser FabricIngressParser(packet_in packet,
                           out fabric_headers_t hdr,
                           out fabric_metadata_t meta,
                           out ingress_intrinsic_metadata_t ig_intr_md) {

    FabricPacketParser() packet_parser;

    state start {
        packet.extract(ig_intr_md);
        // Valid from the parser on: bf-p4c then copies each bridged field at the end of ingress
        // rather than keeping it in its metadata's container (which many actions write).
        hdr.bridged.setValid();
        hdr.bridged.kind = BRIDGED_KIND_NORMAL;
        hdr.bridged._pad = 0;
        hdr.bridged_slot.setValid();
        meta.ingress_port = ig_intr_md.ingress_port;
        meta.egress_port = 0;
        meta.drop = 0;
        meta.do_clone = 0;
        meta.do_recirculate = 0;
        meta.is_clone = 0;
        meta.l4_src_port = 0;
        meta.l4_dst_port = 0;
        meta.bypass = 0;
        meta.probe_out = 0;
        meta.acl_hit = 0;
        meta.routable = 0;
        meta.routed = 0;
        meta.to_host = 0;
        meta.has_path = 0;
        meta.path_id = 0;
        meta.version = 0;
        meta.gradual = 0;
        meta.multipath = MULTIPATH_NONE;
        meta.spray_index = 0;
        meta.next_hop_set = 0;
        meta.port_up = LIVENESS_DOWN;
        meta.liveness_pick = 1;
        meta.failover = 0;
        meta.failover_version = 0;
        meta.drain_probe = 0;
        meta.zero_window = 0;
        meta.flow_sent = 0;
        meta.slot_decision = SLOT_PATH;
        meta.hold_pass = 0;
        meta.hold_drop = 0;
        meta.held = 0;  // a held packet's hold_mark sets it (fabric/parser.p4)
        meta.hold_since = 0;
        meta.held_path_id = 0;
        meta.held_version = 0;
        meta.stale = 0;
        meta.hold_fresh_us = 0;
        meta.hold_limit = 0;  // slot_policy's slot_hold sets it: 0, no hold to join (SlotHold)
        meta.slot_byte_ns = 0;
        meta.light_end = 0;
        transition select(ig_intr_md.resubmit_flag) {
            1: parse_resubmit;
            default: parse_port_metadata;
        }
    }

    // Fast failover's copy: the other version comes in the resubmit data.
    state parse_resubmit {
        packet.extract(meta.resubmit);
        meta.failover = 1;
        meta.failover_version = meta.resubmit.version;
        transition parse_front;
    }

    state parse_port_metadata {
        packet.advance(PORT_METADATA_SIZE);
        transition parse_front;
    }

    state parse_front {
        transition select(ig_intr_md.ingress_port) {
            CPU_PORT: parse_packet_out;
            default: parse_packet;
        }
    }

    // A probe packet-out to a port not the CPU's is sent only while that port is live (Failover):
    // told here, from the frame behind the header, so ingress spends no stage on it.
    state parse_packet_out {
        packet.extract(hdr.packet_out);
        transition select(hdr.packet_out.egress_port, packet.lookahead<ethernet_t>().ether_type) {
            (CPU_PORT, _): parse_packet;
            (_, ETHERTYPE_PROBE): parse_probe_out;
            default: parse_packet;
        }
    }

    state parse_probe_out {
        meta.probe_out = 1;
        transition parse_packet;
    }

    state parse_packet {
        packet_parser.apply(packet, hdr, meta);
        transition accept;
    }
}

control FabricIngressDeparser(packet_out packet,
                              inout fabric_headers_t hdr,
                              in fabric_metadata_t meta,
                              in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    Checksum() ipv4_checksum;
    Checksum() tcp_checksum;
    Resubmit() resubmit;
    Mirror() mirror;

    apply {
        // Routed packets: this switch decremented the TTL.
        if (meta.routed == 1) {
            hdr.ipv4.hdr_checksum = ipv4_checksum.update({
                hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.dscp_ecn, hdr.ipv4.total_len,
                hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset, hdr.ipv4.ttl,
                hdr.ipv4.protocol, hdr.ipv4.src_addr, hdr.ipv4.dst_addr });
        }
        // A held ACK (ZERO_WINDOW): the new window added to what the parser left of the old sum.
        if (meta.zero_window == 1) {
            hdr.tcp.checksum = tcp_checksum.update({ hdr.tcp.window, meta.tcp_residual });
        }
        // Mirror() and Resubmit() without their type: each emits under an `if` on it (bf-p4c 9.13.4
        // reports "Inconsistent mirror selectors" for a typed Mirror in an ingress deparser).
        if (ig_dprsr_md.resubmit_type == RESUBMIT_TYPE_FAILOVER) {
            resubmit.emit(meta.resubmit);
        }
        if (ig_dprsr_md.mirror_type == MIRROR_DRAIN_PROBE) {
            mirror.emit<mirror_h>(meta.mirror_session, { meta.mirror.kind, meta.mirror._pad, meta.mirror.version });
        }
        packet.emit(hdr.bridged);
        packet.emit(hdr.bridged_slot);
        packet.emit(hdr.ethernet);
        packet.emit(hdr.path_tag);
        packet.emit(hdr.ipv4);
        packet.emit(hdr.tcp);
        packet.emit(hdr.udp);
        packet.emit(hdr.icmp);
        packet.emit(hdr.arp);
    }
}

parser FabricEgressParser(packet_in packet,
                          out fabric_headers_t hdr,
                          out fabric_metadata_t meta,
                          out egress_intrinsic_metadata_t eg_intr_md) {

    FabricPacketParser() packet_parser;

    state start {
        packet.extract(eg_intr_md);
        meta.egress_port = eg_intr_md.egress_port;
        meta.is_clone = 0;
        meta.hold_return = 0;
        meta.do_recirculate = 0;
        meta.l4_src_port = 0;
        meta.l4_dst_port = 0;
        meta.send_back = 0;
        transition select(packet.lookahead<bit<8>>()) {
            BRIDGED_KIND_DRAIN_PROBE: parse_probe_mirror;
            BRIDGED_KIND_HOLD_RETURN: parse_hold_return;
            default: parse_bridged;
        }
    }

    state parse_bridged {
        packet.extract(hdr.bridged);
        packet.extract(hdr.bridged_slot);
        meta.ingress_port = 0;  // FabricEgress copies it from the bridged header (a rotation)
        meta.routed = BRIDGED_ROUTED(hdr.bridged.flags);
        meta.to_host = BRIDGED_TO_HOST(hdr.bridged.flags);
        meta.version = BRIDGED_VERSION(hdr.bridged.flags);
        meta.drain_probe = BRIDGED_DRAIN_PROBE(hdr.bridged.flags);
        meta.hold_pass = BRIDGED_HOLD_PASS(hdr.bridged.flags);
        transition parse_packet;
    }

    // The held ACK's mirrored copy: egress turns it into the drain probe.
    state parse_probe_mirror {
        packet.extract(meta.mirror);
        meta.is_clone = 1;
        meta.drain_probe = 1;
        meta.hold_pass = 0;
        meta.routed = 0;
        meta.to_host = 0;
        transition parse_packet;
    }

    // A lit packet egress sent back (SlotEgress): marked already, it leaves for the recirculation port.
    state parse_hold_return {
        packet.extract(meta.mirror);
        meta.is_clone = 1;
        meta.hold_return = 1;
        meta.drain_probe = 0;
        meta.hold_pass = 0;
        meta.routed = 0;
        meta.to_host = 0;
        transition parse_packet;
    }

    state parse_packet {
        packet_parser.apply(packet, hdr, meta);
        transition accept;
    }
}

control FabricEgressDeparser(packet_out packet,
                             inout fabric_headers_t hdr,
                             in fabric_metadata_t meta,
                             in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    Checksum() ipv4_checksum;
    Checksum() tcp_checksum;
    Mirror() mirror;

    apply {
        // The drain probe: addresses swapped, a bare 40-byte TCP/IPv4 segment, both sums whole.
        if (meta.do_recirculate == 1) {
            hdr.ipv4.hdr_checksum = ipv4_checksum.update({
                hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.dscp_ecn, hdr.ipv4.total_len,
                hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset, hdr.ipv4.ttl,
                hdr.ipv4.protocol, hdr.ipv4.src_addr, hdr.ipv4.dst_addr });
            hdr.tcp.checksum = tcp_checksum.update({
                hdr.ipv4.src_addr, hdr.ipv4.dst_addr, 8w0, hdr.ipv4.protocol, meta.probe_tcp_len,
                hdr.tcp.src_port, hdr.tcp.dst_port, hdr.tcp.seq_no, hdr.tcp.ack_no,
                hdr.tcp.data_offset, hdr.tcp.res, hdr.tcp.flags, hdr.tcp.window, hdr.tcp.urgent_ptr });
        }
        if (eg_dprsr_md.mirror_type == MIRROR_HOLD_RETURN) {
            mirror.emit<mirror_h>(meta.mirror_session, { meta.mirror.kind, meta.mirror._pad, meta.mirror.version });
        }
        packet.emit(hdr.packet_in);
        packet.emit(hdr.ethernet);
        packet.emit(hdr.drain_mark);
        packet.emit(hdr.hold_mark);
        packet.emit(hdr.path_tag);
        packet.emit(hdr.ipv4);
        packet.emit(hdr.tcp);
        packet.emit(hdr.udp);
        packet.emit(hdr.icmp);
        packet.emit(hdr.arp);
    }
}

#endif  // P4SRC_INCLUDE_TNA_PARSER_P4_
