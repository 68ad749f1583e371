// TNA parsers and deparsers of ocs.p4: the frame is never parsed (an optical switch ignores
// headers); only the controller header, and the ingress port bridged to egress for packet-ins. With
// the reservation scheduler (-DRESV_TNA_SCHEDULER, include/tna/reservation_ocs.p4) the Ethernet
// header too, for its ether type: a reservation frame is the scheduler's (on the recirculation port
// with its booking state).
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
#ifdef RESV_TNA_SCHEDULER
            RESV_RECIRC_PORT: parse_booking_ethernet;
            default: parse_ethernet;
#else
            default: accept;
#endif
        }
    }

    state parse_packet_out {
        packet.extract(hdr.packet_out);
        transition accept;
    }

#ifdef RESV_TNA_SCHEDULER
    state parse_ethernet {
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

    // A booking pass: only the scheduler's frames come round this port.
    state parse_booking_ethernet {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_RESERVATION: parse_booking;
            default: accept;
        }
    }

    state parse_booking {
        packet.extract(hdr.reservation);
        packet.extract(hdr.resv_booking);
        transition accept;
    }
#endif
}

control OcsIngressDeparser(packet_out packet,
                           inout ocs_headers_t hdr,
                           in ocs_metadata_t meta,
                           in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply {
        packet.emit(hdr.bridged);
#ifdef RESV_TNA_SCHEDULER
        packet.emit(hdr.ethernet);
        packet.emit(hdr.reservation);
        packet.emit(hdr.resv_booking);
#endif
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
#ifdef RESV_TNA_SCHEDULER
        transition select(eg_intr_md.egress_port) {
            RESV_RECIRC_PORT: parse_booking_ethernet;
            default: accept;
        }
#else
        transition accept;
#endif
    }

#ifdef RESV_TNA_SCHEDULER
    // A booking pass on its way round (include/tna/reservation_ocs.p4, OcsBooking): the ingress
    // gave it the booking header.
    state parse_booking_ethernet {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_RESERVATION: parse_booking;
            default: accept;
        }
    }

    state parse_booking {
        packet.extract(hdr.reservation);
        packet.extract(hdr.resv_booking);
        transition accept;
    }
#endif
}

control OcsEgressDeparser(packet_out packet,
                          inout ocs_headers_t hdr,
                          in ocs_metadata_t meta,
                          in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply {
        packet.emit(hdr.packet_in);
#ifdef RESV_TNA_SCHEDULER
        packet.emit(hdr.ethernet);
        packet.emit(hdr.reservation);
        packet.emit(hdr.resv_booking);
#endif
    }
}

#endif  // P4SRC_INCLUDE_TNA_OCS_PARSER_P4_
