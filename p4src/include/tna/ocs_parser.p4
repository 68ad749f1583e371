// TNA parsers and deparsers of ocs.p4: the frame is never parsed (an optical switch ignores
// headers); only the controller header, and the ingress port bridged to egress for packet-ins.
#ifndef P4SRC_INCLUDE_TNA_OCS_PARSER_P4_
#define P4SRC_INCLUDE_TNA_OCS_PARSER_P4_

#include "glue.p4"
#include "../headers.p4"
#include "../metadata.p4"

parser OcsIngressParser(packet_in packet,
                        out ocs_headers_t hdr,
                        out ocs_metadata_t meta,
                        out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        packet.extract(ig_intr_md);
        packet.advance(PORT_METADATA_SIZE);
        meta.ingress_port = ig_intr_md.ingress_port;
        meta.egress_port = 0;
        meta.drop = 0;
        transition select(ig_intr_md.ingress_port) {
            CPU_PORT: parse_packet_out;
            default: accept;
        }
    }

    state parse_packet_out {
        packet.extract(hdr.packet_out);
        transition accept;
    }
}

control OcsIngressDeparser(packet_out packet,
                           inout ocs_headers_t hdr,
                           in ocs_metadata_t meta,
                           in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply {
        packet.emit(hdr.bridged);
    }
}

parser OcsEgressParser(packet_in packet,
                       out ocs_headers_t hdr,
                       out ocs_metadata_t meta,
                       out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        packet.extract(eg_intr_md);
        packet.extract(hdr.bridged);
        meta.ingress_port = 0;  // ocs.p4's egress reads hdr.bridged (bf-p4c aligns it like packet_in_t's port)
        meta.egress_port = eg_intr_md.egress_port;
        meta.drop = 0;
        transition accept;
    }
}

control OcsEgressDeparser(packet_out packet,
                          inout ocs_headers_t hdr,
                          in ocs_metadata_t meta,
                          in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply {
        packet.emit(hdr.packet_in);
    }
}

#endif  // P4SRC_INCLUDE_TNA_OCS_PARSER_P4_
