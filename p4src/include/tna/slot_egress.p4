// SlotEgress (TNA): egress's check of a lit decision (SlotRoute, SlotHold). Egress takes a packet off
// its uplink's queue when the uplink is about to send it: the real departure, which v1model's
// ingress estimates (UplinkClock). A lit packet goes out only if it finishes before the light of its
// uplink ends (the day budget: now + its time on the uplink <= light_end, byte_ns rounded up as the
// flowlet's); else egress sends it back round the hold loop (SlotHold decides it again: held for a
// later day, or electrical, by its path's policy) and counts it in slot_over_budget. Without a
// budget (byte_ns 0) the freshness check stands in: a decision older than fresh_us (0: none) is sent
// back too, counted in hold_stale. (v1model checks freshness against its estimated departure with
// the budget on as well; here the budget compares the real one.) Tofino's egress cannot change the
// port: the packet is mirrored to DRAIN_PROBE_SESSION (a recirculation port) and the original dropped.
#ifndef P4SRC_INCLUDE_TNA_SLOT_EGRESS_P4_
#define P4SRC_INCLUDE_TNA_SLOT_EGRESS_P4_

#include "glue.p4"
#include "../defines.p4"
#include "../headers.p4"
#include "../metadata.p4"

control SlotEgress(in fabric_headers_t hdr, inout fabric_metadata_t meta) {

    Counter<bit<64>, bit<32>>(HOLD_PATHS, CounterType_t.PACKETS_AND_BYTES) slot_over_budget;  // by path id
    Counter<bit<64>, bit<32>>(HOLD_PATHS, CounterType_t.PACKETS_AND_BYTES) hold_stale;        // by path id

    DECLARE_TX_SHIFT(uplink_tx, hdr.bridged_slot.byte_ns, meta.pkt_len, meta.flow_tx)

    // A subtraction a step, each in a table of its own (bf-p4c would fold plain statements into the
    // comparison, which a gateway cannot evaluate): light_end - (now + tx) < 0: over the budget;
    // fresh_us - (now - decided) < 0: stale.




    STEP(budget_at_step, meta.hold_left = meta.now + meta.flow_tx)

    STEP(budget_left_step, meta.hold_left = hdr.bridged_slot.light_end - meta.hold_left)

    STEP(fresh_age_step, meta.hold_left = meta.now - hdr.bridged_slot.decided)

    STEP(fresh_left_step, meta.hold_left = hdr.bridged_slot.fresh_us - meta.hold_left)

    apply {
        meta.send_back = 0;
        if (hdr.bridged_slot.byte_ns != 0) {
            uplink_tx.apply();
            budget_at_step.apply();
            budget_left_step.apply();
            if (TIME_NEGATIVE(meta.hold_left)) {
                meta.send_back = 1;
                slot_over_budget.count((bit<32>) hdr.bridged_slot.held_path_id);
            }
        } else if (hdr.bridged_slot.fresh_us != 0) {
            fresh_age_step.apply();
            fresh_left_step.apply();
            if (TIME_NEGATIVE(meta.hold_left)) {
                meta.send_back = 1;
                hold_stale.count((bit<32>) hdr.bridged_slot.held_path_id);
            }
        }
    }
}

#endif  // P4SRC_INCLUDE_TNA_SLOT_EGRESS_P4_
