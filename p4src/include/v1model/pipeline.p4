// v1model's order of the forwarding controls: each runs only for the packets that need it. An IPv4
// packet is routed and gated only if the ACL did not decide it, and the schedule (SlotRoute, SlotHold)
// and the path table run only for a packet with a path. Tofino runs the same controls flat, each
// guarding itself, since it places a block's tables before anything after the block (tna/fabric.p4;
// p4src/README.md, "Laid out for Tofino"). The controls are the top file's instances, given as
// constructor arguments (include/fabric/control_types.p4), so their P4 names are the top file's.
#ifndef P4SRC_INCLUDE_V1MODEL_PIPELINE_P4_
#define P4SRC_INCLUDE_V1MODEL_PIPELINE_P4_

#include "glue.p4"
#include "../defines.p4"
#include "../headers.p4"
#include "../metadata.p4"
#include "../fabric/control_types.p4"
#include "../schedule/clock.p4"

// Dispatch's IPv4 packet: the ACL, then, unless it decided, routing and the flowlet gate; on to the
// schedule if routing found a path.
control Forwarding(inout fabric_headers_t hdr, inout fabric_metadata_t meta)
                  (FabricControl acl, FabricControl routing, FabricControl flowlet) {

    apply {
        acl.apply(hdr, meta);
        if (meta.acl_hit == 0) {
            routing.apply(hdr, meta);
            flowlet.apply(hdr, meta);
            SCHEDULED(meta.has_path == 1);
        }
    }
}

// A packet with a path (meta.scheduled): the slot of the schedule, the path's reservation (a window
// granted, a request to send), the path's policy (SlotRoute),
// the hold (SlotHold), and for what they leave to it the path table and failover. hold_depth is
// SlotHold's register: SlotRoute reads it (meta.hold_queued) so a new packet of a path that holds
// packets joins them.
control Scheduling(inout fabric_headers_t hdr, inout fabric_metadata_t meta)
                  (register<bit<32>> hold_depth, ClockControl clock, FabricControl reservation,
                   FabricControl slot_route, FabricMetaControl slot_hold, FabricControl path_select,
                   FabricControl failover) {

    apply {
        if (meta.scheduled) {
            hold_depth.read(meta.hold_queued, (bit<32>) meta.path_id);
            clock.apply(meta.now, meta.sched);
        }
        // Seed 001's reservation loop (include/v1model/reservation_tor.p4): a path's window and its
        // requests, and a grant (a reservation frame, which Dispatch dropped).
        if (meta.scheduled || hdr.reservation.isValid()) {
            reservation.apply(hdr, meta);
        }
        if (meta.scheduled) {
            slot_route.apply(hdr, meta);
            slot_hold.apply(meta);
            if (meta.slot_decision == SLOT_PATH) {
                path_select.apply(hdr, meta);
            }
        }
        // A probe packet-out (Dispatch marks it) meets Failover too: out only while its port is live.
        if ((meta.scheduled && meta.slot_decision == SLOT_PATH) || meta.probe_out == 1) {
            failover.apply(hdr, meta);
        }
    }
}

#endif  // P4SRC_INCLUDE_V1MODEL_PIPELINE_P4_
