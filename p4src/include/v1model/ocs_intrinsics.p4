// ocs.p4's intrinsic metadata (v1model): the arrival time in, the decisions out, the packet-in header
// of a frame to the CPU port; the port counters are the top file's (their P4 names).
#ifndef P4SRC_INCLUDE_V1MODEL_OCS_INTRINSICS_P4_
#define P4SRC_INCLUDE_V1MODEL_OCS_INTRINSICS_P4_

#include "glue.p4"
#include "../defines.p4"
#include "../headers.p4"
#include "../metadata.p4"

control OcsIngressIn(inout ocs_metadata_t meta, inout standard_metadata_t standard_metadata)
                    (counter port_rx) {

    apply {
        meta.now = standard_metadata.ingress_global_timestamp;
        if (meta.recirculated == 0) {  // a booking pass was counted when it arrived
            port_rx.count((bit<32>) standard_metadata.ingress_port);
        }
    }
}

// Drop, or the egress port, counted in port_enq (- port_deq: queue drops).
control OcsIngressOut(in ocs_metadata_t meta, inout standard_metadata_t standard_metadata)
                     (counter port_enq) {

    apply {
        DROP_OR_ENQUEUE(port_enq);
    }
}

// Out of the port's queue (port_deq), a packet-in header for the CPU port (the ingress port and the
// arrival time: a clock probe), sent (port_tx).
control OcsEgressOut(inout ocs_headers_t hdr, in ocs_metadata_t meta,
                     inout standard_metadata_t standard_metadata)
                    (counter port_deq, counter port_tx) {

    apply {
        port_deq.count((bit<32>) standard_metadata.egress_port);
        if (standard_metadata.egress_port == CPU_PORT) {
            hdr.packet_in.setValid();
            hdr.packet_in.ingress_port = meta.ingress_port;
            hdr.packet_in._pad = 0;
            hdr.packet_in.timestamp = (bit<48>) meta.now;
        }
        if (hdr.reservation.isValid() && hdr.reservation.left != 0) {
            recirculate_preserving_field_list(FL_BOOKING);  // the scheduler's next booking pass
        } else {
            port_tx.count((bit<32>) standard_metadata.egress_port);
        }
    }
}

#endif  // P4SRC_INCLUDE_V1MODEL_OCS_INTRINSICS_P4_
