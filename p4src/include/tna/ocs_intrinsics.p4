// ocs.p4's intrinsic metadata (TNA): the arrival time in (NOW_UNITS), the decisions out and the
// ingress port bridged, the packet-in header of a frame to the CPU port; the port counters are the
// top file's (their P4 names).
#ifndef P4SRC_INCLUDE_TNA_OCS_INTRINSICS_P4_
#define P4SRC_INCLUDE_TNA_OCS_INTRINSICS_P4_

#include "glue.p4"
#include "../defines.p4"
#include "../headers.p4"
#include "../metadata.p4"

control OcsIngressIn(inout ocs_metadata_t meta, in ingress_intrinsic_metadata_t ig_intr_md,
                     in ingress_intrinsic_metadata_from_parser_t ig_prsr_md)
                    (Counter<bit<64>, port_t> port_rx) {

    DECLARE_NOW(now_hash)

    apply {
        meta.now = NOW_UNITS(now_hash, ig_prsr_md.global_tstamp);
        port_rx.count(ig_intr_md.ingress_port);
    }
}

// The egress port; drop, or counted in port_enq (- port_deq: the traffic manager's drops); the
// ingress port bridged for a packet-in.
control OcsIngressOut(inout ocs_headers_t hdr, in ocs_metadata_t meta,
                      in ingress_intrinsic_metadata_t ig_intr_md,
                      inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                      inout ingress_intrinsic_metadata_for_tm_t ig_tm_md)
                     (Counter<bit<64>, port_t> port_enq) {

    apply {
        ig_tm_md.ucast_egress_port = meta.egress_port;
        if (meta.drop == 1) {
            ig_dprsr_md.drop_ctl = 1;
        } else {
            port_enq.count(meta.egress_port);
        }
        hdr.bridged.setValid();
        hdr.bridged.ingress_port = ig_intr_md.ingress_port;
    }
}

// Out of the port's queue (port_deq), a packet-in header for the CPU port (the bridged ingress port
// and egress's time: a clock probe), sent (port_tx).
control OcsEgressOut(inout ocs_headers_t hdr, in egress_intrinsic_metadata_t eg_intr_md,
                     in egress_intrinsic_metadata_from_parser_t eg_prsr_md)
                    (Counter<bit<64>, port_t> port_deq, Counter<bit<64>, port_t> port_tx) {

    DECLARE_NOW(now_hash)

    apply {
        port_deq.count(eg_intr_md.egress_port);
        if (eg_intr_md.egress_port == CPU_PORT) {
            hdr.packet_in.setValid();
            hdr.packet_in.ingress_port = hdr.bridged.ingress_port;
            hdr.packet_in._pad = 0;
            hdr.packet_in.timestamp = (bit<48>) NOW_UNITS(now_hash, eg_prsr_md.global_tstamp);
        }
        hdr.bridged.setInvalid();
        port_tx.count(eg_intr_md.egress_port);
    }
}

// No reservation scheduler (the default TNA OCS): its Tofino shape, include/tna/reservation_ocs.p4,
// is compiled with -DRESV_TNA_SCHEDULER and does not fit Tofino 1's stages yet (p4src/README.md,
// "Reservation loop"); without it the parser parses no reservation frame, so this never runs.
control NoScheduler(inout ocs_headers_t hdr, inout ocs_metadata_t meta) {
    apply {
        meta.drop = 1;
    }
}

#endif  // P4SRC_INCLUDE_TNA_OCS_INTRINSICS_P4_
