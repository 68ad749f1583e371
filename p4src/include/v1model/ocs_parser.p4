// Parser and deparser of ocs.p4: a frame is not parsed beyond its ether type (an optical switch ignores
// headers), but for a reservation frame, which is the scheduler's.
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
        meta.recirculated = 0;
        if (standard_metadata.instance_type == INSTANCE_TYPE_RECIRCULATED) {
            meta.recirculated = 1;  // a booking pass of the reservation scheduler (ingress_port is 0)
        }
        transition select(standard_metadata.ingress_port) {
            CPU_PORT: parse_packet_out;
            default: parse_frame;
        }
    }

    state parse_packet_out {
        packet.extract(hdr.packet_out);
        transition accept;
    }

    // The Ethernet header, for its ether type: only a reservation frame is parsed further
    // (include/v1model/reservation_ocs.p4); the rest is payload, and every frame leaves as it came (the
    // deparser emits the Ethernet header unchanged). Extracted, not looked ahead at: p4sim's native
    // path takes lookaheads of at most 64 bits.
    state parse_frame {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_RESERVATION: parse_reservation;
            default: accept;
        }
    }

    state parse_reservation {
        packet.extract(hdr.reservation);
        transition accept;
    }
}

control OcsDeparser(packet_out packet, in ocs_headers_t hdr) {
    apply {
        packet.emit(hdr.packet_in);
        packet.emit(hdr.ethernet);
        packet.emit(hdr.reservation);
    }
}

control OcsVerifyChecksum(inout ocs_headers_t hdr, inout ocs_metadata_t meta) {
    apply { }
}

control OcsComputeChecksum(inout ocs_headers_t hdr, inout ocs_metadata_t meta) {
    apply { }
}

#endif  // P4SRC_INCLUDE_V1MODEL_OCS_PARSER_P4_
