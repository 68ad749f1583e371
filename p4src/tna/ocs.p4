// ocs.p4 for Tofino (TNA: `tna` for Tofino 1, `t2na` for Tofino 2): the emulated optical
// cross-connect of ../ocs.p4 (the shared control include/ocs/circuit.p4), the same control-plane
// names. Frames are not parsed; dark ports drop and count. A manifest, as ../ocs.p4 (the dispatch
// include/ocs/dispatch.p4, Tofino's intrinsic metadata include/tna/ocs_intrinsics.p4).
//
//  ingress: port_rx -> packet-out? --yes--> packet_out.egress_port
//                        | no
//                      schedule on? (ScheduleClock on global_tstamp) --no--> circuit (ingress_port)
//                        | yes                                                 cross_connect | dark
//                      slot_circuit (slot, night, ingress_port) --> slot_cross_connect | drop
//           drop, or the egress port; port_enq; the ingress port bridged
//  egress:  port_deq; packet_in header (CPU port); port_tx

#include "../include/tna/glue.p4"
#include "../include/sizes.p4"
#include "../include/defines.p4"
#include "../include/headers.p4"
#include "../include/metadata.p4"
#include "../include/tna/ocs_parser.p4"
#include "../include/ocs/circuit.p4"
#include "../include/schedule/clock.p4"
#include "../include/ocs/timeflow.p4"
#include "../include/ocs/dispatch.p4"
#ifdef RESV_TNA_SCHEDULER
#include "../include/tna/reservation_ocs.p4"
#endif
#include "../include/tna/ocs_intrinsics.p4"

control OcsIngress(inout ocs_headers_t hdr,
                   inout ocs_metadata_t meta,
                   in ingress_intrinsic_metadata_t ig_intr_md,
                   in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                   inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                   inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {

    DECLARE_PORT_COUNTER(port_rx)
    DECLARE_PORT_COUNTER(port_enq)  // - port_deq: the traffic manager's drops
    OcsIngressIn(port_rx) ingress_in;
    Circuit() circuit;
    ScheduleClock() clock;
    TimeFlow() time_flow;
#ifdef RESV_TNA_SCHEDULER
    // Seed 001's reservation scheduler (include/tna/reservation_ocs.p4): the windows in the calendar,
    // which data frames take before the time-flow table. Not by default: it needs 13 of Tofino 1's
    // 12 stages yet (Tofino 2: 13 of 20; p4src/README.md, "Reservation loop").
    Register<bit<32>, bit<16>>(RESV_TNA_CELLS) calendar_output;  // a cell: its output, first << 15
    Register<time_t, bit<16>>(RESV_TNA_CELLS) calendar_until;    // and until when it holds
    CalendarFlow(calendar_output, calendar_until, time_flow) calendar_flow;
    OcsScheduler(calendar_output, calendar_until) scheduler;
    OcsDispatch(clock, scheduler, calendar_flow, circuit) dispatch;
#else
    NoScheduler() scheduler;
    OcsDispatch(clock, scheduler, time_flow, circuit) dispatch;
#endif
    OcsIngressOut(port_enq) ingress_out;

    apply {
        ingress_in.apply(meta, ig_intr_md, ig_prsr_md);
        dispatch.apply(hdr, meta);
        ingress_out.apply(hdr, meta, ig_intr_md, ig_dprsr_md, ig_tm_md);
    }
}

control OcsEgress(inout ocs_headers_t hdr,
                  inout ocs_metadata_t meta,
                  in egress_intrinsic_metadata_t eg_intr_md,
                  in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
                  inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
                  inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {

    DECLARE_PORT_COUNTER(port_deq)
    DECLARE_PORT_COUNTER(port_tx)
    OcsEgressOut(port_deq, port_tx) egress_out;
#ifdef RESV_TNA_SCHEDULER
    OcsBooking() booking;  // the scheduler's passes that read and move the horizons
#endif

    apply {
#ifdef RESV_TNA_SCHEDULER
        if (hdr.resv_booking.isValid()) {
            booking.apply(hdr);
        }
#endif
        egress_out.apply(hdr, eg_intr_md, eg_prsr_md);
    }
}

Pipeline(OcsIngressParser(),
         OcsIngress(),
         OcsIngressDeparser(),
         OcsEgressParser(),
         OcsEgress(),
         OcsEgressDeparser()) pipe;

Switch(pipe) main;
