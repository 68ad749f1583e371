// fabric.p4's intrinsic metadata (v1model): standard_metadata in at the start of ingress and egress,
// the decisions out at the end of ingress. The forwarding controls read and write fabric_metadata_t
// only (include/metadata.p4); the port counters are the top file's (their P4 names).
#ifndef P4SRC_INCLUDE_V1MODEL_INTRINSICS_P4_
#define P4SRC_INCLUDE_V1MODEL_INTRINSICS_P4_

#include "glue.p4"
#include "../defines.p4"
#include "../headers.p4"
#include "../metadata.p4"
#include "slot_hold.p4"

// The time and length, and whether the packet came in marked by the hold loop; the loop's entry
// (HoldLoopIn: the mark off); port_rx, which a resubmitted, recirculated or held copy passed already.
control FabricIngressIn(inout fabric_headers_t hdr, inout fabric_metadata_t meta,
                        inout standard_metadata_t standard_metadata)(counter port_rx) {

    HoldLoopIn() hold_loop_in;

    apply {
        meta.now = standard_metadata.ingress_global_timestamp;
        meta.pkt_len = standard_metadata.packet_length;
        meta.slot_depart = meta.now;  // a lit decision's freshness counts from here (UplinkClock may move it)
        meta.looped = hdr.hold_mark.isValid();
        hold_loop_in.apply(hdr, meta, standard_metadata);
        if (meta.failover == 0 && meta.drain_probe == 0 && meta.held == 0) {
            port_rx.count((bit<32>) standard_metadata.ingress_port);  // a resubmitted copy was counted
        }
    }
}

// The decisions: drop, or the egress port, counted in port_enq (resubmit and clone were called where
// decided).
control FabricIngressOut(in fabric_metadata_t meta, inout standard_metadata_t standard_metadata)
                        (counter port_enq) {

    apply {
        DROP_OR_ENQUEUE(port_enq);
    }
}

// The egress port, and whether this is the clone of a held ACK (the drain probe to make); port_deq
// counts what left the port's queue (not the clones).
control FabricEgressIn(inout fabric_metadata_t meta, inout standard_metadata_t standard_metadata)
                      (counter port_deq) {

    apply {
        meta.egress_port = standard_metadata.egress_port;
        meta.is_clone = 0;
        if (standard_metadata.instance_type == INSTANCE_TYPE_INGRESS_CLONE) {
            meta.is_clone = 1;
        } else {
            port_deq.count((bit<32>) standard_metadata.egress_port);
        }
    }
}

#endif  // P4SRC_INCLUDE_V1MODEL_INTRINSICS_P4_
