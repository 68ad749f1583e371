// SlotHold (v1model): holding a packet whose circuit is not lit until its slot, on unmodified bmv2
// and p4sim. A held packet goes round a loop (egress recirculates it to ingress) and SlotRoute
// decides again on every pass, with the time its last pass left egress (a recirculated packet's
// ingress_global_timestamp is 0). Bounded per path (a virtual output queue per destination ToR):
// at most `depth` packets at once (hold_depth register) and `max_hold_us` each; a packet beyond
// the depth is dropped and counted in hold_overflow, one held too long in hold_expired, apart from
// what the OCS drops in the dark. hold_entered and hold_released count the rest (by path id).
// Freshness: a pass's decision uses a time that can be old by the time egress takes the packet (the
// loop's or the queue's wait, a stalled switch process); egress sends a lit packet whose decision
// is older than the path's fresh_us back round the loop (stale, counted in hold_stale by the
// egress), and ingress decides again: it leaves at once if still lit, else it is held anew.
// The Tofino equivalent is in p4src/README.md (time-flow tables).
#ifndef P4SRC_INCLUDE_V1MODEL_SLOT_HOLD_P4_
#define P4SRC_INCLUDE_V1MODEL_SLOT_HOLD_P4_

#include "glue.p4"
#include "../defines.p4"
#include "../metadata.p4"

control SlotHold(inout fabric_metadata_t meta) {

    // Packets of each path now in the loop (data-plane state: read and written in ingress only,
    // which bmv2 runs on one thread, so the count is exact).
    register<bit<32>>(HOLD_PATHS) hold_depth;
    counter(HOLD_PATHS, CounterType.packets_and_bytes) hold_entered;
    counter(HOLD_PATHS, CounterType.packets_and_bytes) hold_released;
    counter(HOLD_PATHS, CounterType.packets_and_bytes) hold_overflow;
    counter(HOLD_PATHS, CounterType.packets_and_bytes) hold_expired;

    apply {
        bit<32> index = (bit<32>) meta.path_id;
        bit<32> depth;
        hold_depth.read(depth, index);
        if (meta.held == 0 || meta.stale == 1) {
            // A new packet, or one egress sent back because its lit decision had gone stale (it had
            // left the loop, or never been in it): it enters the hold if its slot is not lit now,
            // unless it has been held (or sent back) for longer than the bound already.
            if (meta.stale == 1 && meta.now - meta.hold_since > (time_t) meta.hold_max_us) {
                meta.slot_decision = SLOT_DROP;
                hold_expired.count(index);
            } else if (meta.slot_decision == SLOT_HOLD) {
                if (depth >= meta.hold_limit) {
                    meta.slot_decision = SLOT_DROP;
                    hold_overflow.count(index);
                } else {
                    hold_depth.write(index, depth + 1);
                    hold_entered.count(index);
                    if (meta.held == 0) {
                        meta.hold_since = meta.now;
                    }
                    meta.held = 1;
                    meta.held_path_id = meta.path_id;
                    meta.held_version = meta.version;
                }
            }
            meta.stale = 0;
        } else {
            if (meta.slot_decision == SLOT_HOLD && meta.now - meta.hold_since > (time_t) meta.hold_max_us) {
                meta.slot_decision = SLOT_DROP;
                hold_expired.count(index);
            } else if (meta.slot_decision != SLOT_HOLD) {
                hold_released.count(index);
            }
            if (meta.slot_decision != SLOT_HOLD && depth != 0) {
                hold_depth.write(index, depth - 1);
            }
        }
        if (meta.slot_decision == SLOT_HOLD) {
            meta.hold_pass = 1;
            meta.egress_port = CPU_PORT;  // any port: egress recirculates the packet before it leaves
        } else if (meta.slot_decision == SLOT_DROP) {
            meta.drop = 1;
        }
    }
}

#endif  // P4SRC_INCLUDE_V1MODEL_SLOT_HOLD_P4_
