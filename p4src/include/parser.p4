// Parser of fabric.p4: controller header on the CPU port, then Ethernet, path tag, IPv4, L4, ARP.
#ifndef P4SRC_INCLUDE_PARSER_P4_
#define P4SRC_INCLUDE_PARSER_P4_

#include <core.p4>
#include <v1model.p4>
#include "defines.p4"
#include "headers.p4"
#include "metadata.p4"

parser FabricParser(packet_in packet,
                    out fabric_headers_t hdr,
                    inout fabric_metadata_t meta,
                    inout standard_metadata_t standard_metadata) {

    state start {
        // Everything but the failover field list, which survives a resubmit (see metadata.p4).
        meta.ingress_port = standard_metadata.ingress_port;
        meta.l4_src_port = 0;
        meta.l4_dst_port = 0;
        meta.bypass = 0;
        meta.acl_hit = 0;
        meta.routed = 0;
        meta.to_host = 0;
        meta.has_path = 0;
        meta.path_id = 0;
        meta.version = 0;
        meta.multipath = MULTIPATH_NONE;
        meta.spray_index = 0;
        meta.next_hop_set = 0;
        meta.port_up = 0;
        meta.liveness_pick = 1;
        transition select(standard_metadata.ingress_port) {
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
            default: accept;  // probes (ETHERTYPE_PROBE) are recognised by the ether type alone
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
        // Only option-less first fragments carry the L4 header right after IPv4.
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

#endif  // P4SRC_INCLUDE_PARSER_P4_
