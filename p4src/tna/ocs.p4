// ocs.p4 for Tofino (TNA: `tna` for Tofino 1, `t2na` for Tofino 2): the emulated optical
// cross-connect of ../ocs.p4 (the shared control include/ocs/circuit.p4), the same control-plane
// names. Frames are not parsed; dark ports drop and count.
//
//  ingress: port_rx -> packet-out? --yes--> packet_out.egress_port
//                        | no
//                      schedule on? (ScheduleClock on global_tstamp) --no--> circuit (ingress_port)
//                        | yes                                                 cross_connect | dark
//                      slot_circuit (slot, night, ingress_port) --> slot_cross_connect | drop
//  egress:  packet_in header (CPU port); port_tx

#include "../include/tna/glue.p4"
#include "../include/sizes.p4"
#include "../include/defines.p4"
#include "../include/headers.p4"
#include "../include/metadata.p4"
#include "../include/tna/ocs_parser.p4"
#include "../include/ocs/circuit.p4"
#include "../include/schedule/clock.p4"
#include "../include/ocs/timeflow.p4"

control OcsIngress(inout ocs_headers_t hdr,
                   inout ocs_metadata_t meta,
                   in ingress_intrinsic_metadata_t ig_intr_md,
                   in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                   inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                   inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {

    DECLARE_NOW(now_hash)
    DECLARE_PORT_COUNTER(port_rx)
    DECLARE_PORT_COUNTER(port_enq)  // - port_deq: the traffic manager's drops
    Circuit() circuit;
    ScheduleClock() clock;
    TimeFlow() time_flow;

    apply {
        meta.now = NOW_UNITS(now_hash, ig_prsr_md.global_tstamp);
        port_rx.count(ig_intr_md.ingress_port);
        if (hdr.packet_out.isValid()) {
            meta.egress_port = hdr.packet_out.egress_port;
            hdr.packet_out.setInvalid();
        } else {
            clock.apply(meta.now, meta.sched);
            if (meta.sched.on == 1) {
                time_flow.apply(meta);
            } else {
                circuit.apply(meta);
            }
        }
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

control OcsEgress(inout ocs_headers_t hdr,
                  inout ocs_metadata_t meta,
                  in egress_intrinsic_metadata_t eg_intr_md,
                  in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
                  inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
                  inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {

    DECLARE_NOW(now_hash)
    DECLARE_PORT_COUNTER(port_deq)
    DECLARE_PORT_COUNTER(port_tx)

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

Pipeline(OcsIngressParser(),
         OcsIngress(),
         OcsIngressDeparser(),
         OcsEgressParser(),
         OcsEgress(),
         OcsEgressDeparser()) pipe;

Switch(pipe) main;
