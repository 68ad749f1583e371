// ocs.p4: an emulated optical circuit switch (v1model). A one-to-one cross-connect on ingress
// port alone; frames pass unchanged (only a reservation frame is parsed); dark ports drop and count.
// Control-plane contract: p4src/README.md. A manifest: the dispatch and the cross-connect are
// include/ocs/ (shared with tna/ocs.p4), v1model's intrinsic metadata include/v1model/ocs_intrinsics.p4.
// The controls are declared here and handed to the ones that apply them, so the P4 names are these
// instances' (OcsIngress.circuit.circuit).
//
//  ingress: port_rx -> packet-out? --yes--> packet_out.egress_port
//                        | no
//                      ScheduleClock (schedule_config, schedule_phase on the arrival time)
//                      reservation frame? --yes--> OcsScheduler: request: Algorithm 1 on the horizons,
//                        | no                        the window into the calendar (one cell a pass,
//                        |                           recirculated), the grant out of its input port
//                      schedule on?
//                        | no                              | yes
//                      circuit (ingress_port)            calendar cell (ingress_port, slot) while it holds,
//                                                        else slot_circuit (slot, night, ingress_port)
//                        --> cross_connect(port)           --> slot_cross_connect(port)
//                        | dark(): drop, dark_drops        | miss: drop, night_drops / unlit_drops
//           drop, or the egress port; port_enq
//  egress:  port_deq; packet_in header (CPU port); port_tx
//
// Compile: p4c-bm2-ss p4src/ocs.p4 -o ocs.json --p4runtime-files ocs.p4info.txtpb

#include <core.p4>
#include <v1model.p4>

#include "include/v1model/glue.p4"
#include "include/sizes.p4"
#include "include/defines.p4"
#include "include/headers.p4"
#include "include/metadata.p4"
#include "include/v1model/ocs_parser.p4"
#include "include/ocs/circuit.p4"
#include "include/schedule/clock.p4"
#include "include/ocs/timeflow.p4"
#include "include/ocs/dispatch.p4"
#include "include/v1model/reservation_ocs.p4"
#include "include/v1model/ocs_intrinsics.p4"

control OcsIngress(inout ocs_headers_t hdr,
                   inout ocs_metadata_t meta,
                   inout standard_metadata_t standard_metadata) {

    counter(PORT_COUNTER_SIZE, CounterType.packets_and_bytes) port_rx;
    counter(PORT_COUNTER_SIZE, CounterType.packets_and_bytes) port_enq;  // - port_deq: queue drops
    OcsIngressIn(port_rx) ingress_in;
    Circuit() circuit;
    ScheduleClock() clock;
    TimeFlow() time_flow;
    // Seed 001's reservation scheduler: requests in, grants out, the windows in the calendar, which
    // data frames take before the time-flow table (include/v1model/reservation_ocs.p4).
    register<bit<64>>(RESV_CALENDAR_SIZE) calendar;
    CalendarFlow(calendar, time_flow) calendar_flow;
    OcsScheduler(calendar) scheduler;
    OcsDispatch(clock, scheduler, calendar_flow, circuit) dispatch;
    OcsIngressOut(port_enq) ingress_out;

    apply {
        ingress_in.apply(meta, standard_metadata);
        dispatch.apply(hdr, meta);
        ingress_out.apply(meta, standard_metadata);
    }
}

control OcsEgress(inout ocs_headers_t hdr,
                  inout ocs_metadata_t meta,
                  inout standard_metadata_t standard_metadata) {

    counter(PORT_COUNTER_SIZE, CounterType.packets_and_bytes) port_deq;
    counter(PORT_COUNTER_SIZE, CounterType.packets_and_bytes) port_tx;
    OcsEgressOut(port_deq, port_tx) egress_out;

    apply {
        egress_out.apply(hdr, meta, standard_metadata);
    }
}

V1Switch(OcsParser(),
         OcsVerifyChecksum(),
         OcsIngress(),
         OcsEgress(),
         OcsComputeChecksum(),
         OcsDeparser()) main;
