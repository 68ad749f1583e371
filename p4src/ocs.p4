// ocs.p4: an emulated optical circuit switch (v1model). A one-to-one cross-connect on ingress
// port alone; frames pass unchanged (they are never parsed); dark ports drop and count.
// Control-plane contract: p4src/README.md. The cross-connect is include/ocs/circuit.p4, shared
// with tna/ocs.p4.
//
//  ingress: port_rx -> packet-out? --yes--> packet_out.egress_port
//                        | no
//                      schedule on? (ScheduleClock: schedule_config, schedule_phase on the arrival time)
//                        | no                              | yes
//                      circuit (ingress_port)            slot_circuit (slot, night, ingress_port)
//                        --> cross_connect(port)           --> slot_cross_connect(port)
//                        | dark(): drop, dark_drops        | miss: drop, night_drops / unlit_drops
//  egress:  port_tx
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

control OcsIngress(inout ocs_headers_t hdr,
                   inout ocs_metadata_t meta,
                   inout standard_metadata_t standard_metadata) {

    counter(PORT_COUNTER_SIZE, CounterType.packets_and_bytes) port_rx;
    counter(PORT_COUNTER_SIZE, CounterType.packets_and_bytes) port_enq;  // - port_deq: queue drops
    Circuit() circuit;
    ScheduleClock() clock;
    TimeFlow() time_flow;

    apply {
        meta.now = standard_metadata.ingress_global_timestamp;
        port_rx.count((bit<32>) standard_metadata.ingress_port);
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
        if (meta.drop == 1) {
            mark_to_drop(standard_metadata);
        } else {
            standard_metadata.egress_spec = meta.egress_port;
            port_enq.count((bit<32>) meta.egress_port);
        }
    }
}

control OcsEgress(inout ocs_headers_t hdr,
                  inout ocs_metadata_t meta,
                  inout standard_metadata_t standard_metadata) {

    counter(PORT_COUNTER_SIZE, CounterType.packets_and_bytes) port_deq;
    counter(PORT_COUNTER_SIZE, CounterType.packets_and_bytes) port_tx;

    apply {
        port_deq.count((bit<32>) standard_metadata.egress_port);
        if (standard_metadata.egress_port == CPU_PORT) {
            hdr.packet_in.setValid();
            hdr.packet_in.ingress_port = meta.ingress_port;
            hdr.packet_in._pad = 0;
            hdr.packet_in.timestamp = (bit<48>) meta.now;
        }
        port_tx.count((bit<32>) standard_metadata.egress_port);
    }
}

V1Switch(OcsParser(),
         OcsVerifyChecksum(),
         OcsIngress(),
         OcsEgress(),
         OcsComputeChecksum(),
         OcsDeparser()) main;
