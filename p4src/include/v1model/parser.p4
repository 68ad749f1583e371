// v1model parser of fabric.p4: metadata initialised, the controller header on the CPU port, then
// the shared FabricPacketParser.
#ifndef P4SRC_INCLUDE_V1MODEL_PARSER_P4_
#define P4SRC_INCLUDE_V1MODEL_PARSER_P4_

#include "glue.p4"
#include "../fabric/parser.p4"

parser FabricParser(packet_in packet,
                    out fabric_headers_t hdr,
                    inout fabric_metadata_t meta,
                    inout standard_metadata_t standard_metadata) {

    FabricPacketParser() packet_parser;

    state start {
        // Everything but the failover field list, which survives a resubmit (see metadata.p4).
        meta.ingress_port = standard_metadata.ingress_port;
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
        meta.routed = 0;
        meta.to_host = 0;
        meta.has_path = 0;
        meta.path_id = 0;
        meta.version = 0;
        meta.multipath = MULTIPATH_NONE;
        meta.spray_index = 0;
        meta.next_hop_set = 0;
        meta.port_up = LIVENESS_DOWN;
        meta.liveness_pick = 1;
        meta.slot_decision = SLOT_PATH;
        meta.slot_byte_ns = 0;
        meta.grant_path = 0;
        meta.grant_found = 0;
        transition select(standard_metadata.ingress_port) {
            CPU_PORT: parse_packet_out;
            default: parse_packet;
        }
    }

    state parse_packet_out {
        packet.extract(hdr.packet_out);
        transition parse_packet;
    }

    state parse_packet {
        packet_parser.apply(packet, hdr, meta);
        transition accept;
    }
}

#endif  // P4SRC_INCLUDE_V1MODEL_PARSER_P4_
