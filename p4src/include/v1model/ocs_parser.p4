// Parser and deparser of ocs.p4: the frame is never parsed (an optical switch ignores headers).
#ifndef P4SRC_INCLUDE_V1MODEL_OCS_PARSER_P4_
#define P4SRC_INCLUDE_V1MODEL_OCS_PARSER_P4_

#include <core.p4>
#include <v1model.p4>
#include "glue.p4"
#include "../defines.p4"
#include "../headers.p4"
#include "../metadata.p4"

parser OcsParser(packet_in packet,
                 out ocs_headers_t hdr,
                 inout ocs_metadata_t meta,
                 inout standard_metadata_t standard_metadata) {
    state start {
        meta.ingress_port = standard_metadata.ingress_port;
        meta.egress_port = 0;
        meta.drop = 0;
        transition select(standard_metadata.ingress_port) {
            CPU_PORT: parse_packet_out;
            default: accept;
        }
    }

    state parse_packet_out {
        packet.extract(hdr.packet_out);
        transition accept;
    }
}

control OcsDeparser(packet_out packet, in ocs_headers_t hdr) {
    apply {
        packet.emit(hdr.packet_in);
    }
}

control OcsVerifyChecksum(inout ocs_headers_t hdr, inout ocs_metadata_t meta) {
    apply { }
}

control OcsComputeChecksum(inout ocs_headers_t hdr, inout ocs_metadata_t meta) {
    apply { }
}

#endif  // P4SRC_INCLUDE_V1MODEL_OCS_PARSER_P4_
