// Tofino parsers and deparsers of fabric (ingress and egress each parse the packet).
#ifndef P4SRC_TNA_INCLUDE_PARSER_P4_
#define P4SRC_TNA_INCLUDE_PARSER_P4_

#include <core.p4>
#include <tna.p4>
#include "types.p4"

parser FabricIngressParser(packet_in packet,
                           out tna_headers_t hdr,
                           out tna_ingress_metadata_t meta,
                           out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        packet.extract(ig_intr_md);
        meta.l4_src_port = 0;
        meta.l4_dst_port = 0;
        meta.acl_hit = 0;
        meta.has_path = 0;
        meta.path_id = 0;
        meta.multipath = MULTIPATH_NONE;
        meta.spray_index = 0;
        meta.next_hop_set = 0;
        meta.port_up = 0;
        meta.liveness_pick = 1;
        meta.failover = 0;
        transition select(ig_intr_md.resubmit_flag) {
            1: parse_resubmit;
            default: parse_port_metadata;
        }
    }

    state parse_resubmit {
        packet.extract(meta.resubmit);
        meta.failover = 1;
        transition parse_front;
    }

    state parse_port_metadata {
        packet.advance(PORT_METADATA_SIZE);
        transition parse_front;
    }

    state parse_front {
        transition select(ig_intr_md.ingress_port) {
            CPU_PORT: parse_packet_out;
            default: parse_ethernet;
        }
    }

    state parse_packet_out {
        packet.extract(hdr.packet_out);
        transition parse_ethernet;
    }

    state parse_ethernet {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_PATH_TAG: parse_path_tag;
            ETHERTYPE_IPV4: parse_ipv4;
            ETHERTYPE_ARP: parse_arp;
            default: accept;
        }
    }

    state parse_path_tag {
        packet.extract(hdr.path_tag);
        transition select(hdr.path_tag.ether_type) {
            ETHERTYPE_IPV4: parse_ipv4;
            default: accept;
        }
    }

    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        transition select(hdr.ipv4.ihl, hdr.ipv4.frag_offset, hdr.ipv4.protocol) {
            (4w5, 13w0, IP_PROTO_TCP): parse_tcp;
            (4w5, 13w0, IP_PROTO_UDP): parse_udp;
            (4w5, 13w0, IP_PROTO_ICMP): parse_icmp;
            default: accept;
        }
    }

    state parse_tcp {
        packet.extract(hdr.tcp);
        meta.l4_src_port = hdr.tcp.src_port;
        meta.l4_dst_port = hdr.tcp.dst_port;
        transition accept;
    }

    state parse_udp {
        packet.extract(hdr.udp);
        meta.l4_src_port = hdr.udp.src_port;
        meta.l4_dst_port = hdr.udp.dst_port;
        transition accept;
    }

    state parse_icmp {
        packet.extract(hdr.icmp);
        transition accept;
    }

    state parse_arp {
        packet.extract(hdr.arp);
        transition accept;
    }
}

control FabricIngressDeparser(packet_out packet,
                              inout tna_headers_t hdr,
                              in tna_ingress_metadata_t meta,
                              in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    Checksum() ipv4_checksum;
    Resubmit() resubmit;

    apply {
        if (hdr.bridged.routed == 1) {
            hdr.ipv4.hdr_checksum = ipv4_checksum.update({
                hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.dscp_ecn, hdr.ipv4.total_len,
                hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset, hdr.ipv4.ttl,
                hdr.ipv4.protocol, hdr.ipv4.src_addr, hdr.ipv4.dst_addr });
        }
        if (ig_dprsr_md.resubmit_type == RESUBMIT_FAILOVER) {
            resubmit.emit(meta.resubmit);
        }
        packet.emit(hdr.bridged);
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
                          out tna_headers_t hdr,
                          out tna_egress_metadata_t meta,
                          out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        packet.extract(eg_intr_md);
        packet.extract(hdr.bridged);
        transition parse_ethernet;
    }

    state parse_ethernet {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_PATH_TAG: parse_path_tag;
            default: accept;  // egress edits only Ethernet and the tag
        }
    }

    state parse_path_tag {
        packet.extract(hdr.path_tag);
        transition accept;
    }
}

control FabricEgressDeparser(packet_out packet,
                             inout tna_headers_t hdr,
                             in tna_egress_metadata_t meta,
                             in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply {
        packet.emit(hdr.packet_in);
        packet.emit(hdr.ethernet);
        packet.emit(hdr.path_tag);
    }
}

#endif  // P4SRC_TNA_INCLUDE_PARSER_P4_
