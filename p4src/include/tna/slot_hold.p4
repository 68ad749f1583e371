// SlotHold (TNA): holding a packet whose circuit is not lit until its slot, as include/v1model/
// slot_hold.p4 does on bmv2 and p4sim: a held packet goes round a loop and SlotRoute decides again on
// every pass. On Tofino the loop is a recirculation port (HOLD_RECIRC_PORT): ingress sends the
// packet there, egress marks it with a hold_mark header (its path, version and since when it is
// held: Tofino carries no metadata round the loop) and it re-enters ingress, which removes the mark.
// A recirculated packet has a real timestamp on Tofino. Bounded per path as on v1model: at most
// `depth` packets at once (hold_depth, one stateful-ALU access per packet: admit on arrival, release
// on leaving) and `max_hold_us` each (in 1.024 us units here: 2.4% longer); overflow and expiry are
// counted apart from the OCS's dark drops. Unlike v1model, a new lit packet of a path that holds
// packets does not join them (meta.hold_queued is 0): that would read hold_depth before SlotRoute
// and write it here, two accesses in one pass. The path's order is the queue-based alternative's
// (Tofino 2's advanced flow control pausing a per-ToR queue per slot, FIFO), in p4src/README.md.
#ifndef P4SRC_INCLUDE_TNA_SLOT_HOLD_P4_
#define P4SRC_INCLUDE_TNA_SLOT_HOLD_P4_

#include "glue.p4"
#include "../defines.p4"
#include "../metadata.p4"

control SlotHold(inout fabric_metadata_t meta) {

    Register<bit<32>, bit<32>>(HOLD_PATHS, 0) hold_depth;
    // One more held packet of the path, unless `depth` already are: 1 when admitted.
    RegisterAction<bit<32>, bit<32>, bit<1>>(hold_depth) hold_admit = {
        void apply(inout bit<32> depth, out bit<1> admitted) {
            admitted = 0;
            if (depth < meta.hold_limit) {
                depth = depth + 1;
                admitted = 1;
            }
        }
    };
    RegisterAction<bit<32>, bit<32>, bit<1>>(hold_depth) hold_release = {
        void apply(inout bit<32> depth) {
            if (depth != 0) {
                depth = depth - 1;
            }
        }
    };
    Counter<bit<64>, bit<32>>(HOLD_PATHS, CounterType_t.PACKETS_AND_BYTES) hold_entered;
    Counter<bit<64>, bit<32>>(HOLD_PATHS, CounterType_t.PACKETS_AND_BYTES) hold_released;
    Counter<bit<64>, bit<32>>(HOLD_PATHS, CounterType_t.PACKETS_AND_BYTES) hold_overflow;
    Counter<bit<64>, bit<32>>(HOLD_PATHS, CounterType_t.PACKETS_AND_BYTES) hold_expired;

    apply {
        bit<32> index = (bit<32>) meta.path_id;
        if (meta.held == 0) {
            if (meta.slot_decision == SLOT_HOLD) {
                if (hold_admit.execute(index) == 0) {
                    meta.slot_decision = SLOT_DROP;
                    hold_overflow.count(index);
                } else {
                    hold_entered.count(index);
                    meta.held = 1;
                    meta.hold_since = meta.now;
                    meta.held_path_id = meta.path_id;
                    meta.held_version = meta.version;
                }
            }
        } else {
            time_t waited = meta.now - meta.hold_since;
            if (meta.slot_decision == SLOT_HOLD && waited > meta.hold_max_us) {
                meta.slot_decision = SLOT_DROP;
                hold_expired.count(index);
            } else if (meta.slot_decision != SLOT_HOLD) {
                hold_released.count(index);
            }
            if (meta.slot_decision != SLOT_HOLD) {
                hold_release.execute(index);
            }
        }
        if (meta.slot_decision == SLOT_HOLD) {
            meta.hold_pass = 1;
            meta.egress_port = HOLD_RECIRC_PORT;
        } else if (meta.slot_decision == SLOT_DROP) {
            meta.drop = 1;
        }
    }
}

#endif  // P4SRC_INCLUDE_TNA_SLOT_HOLD_P4_
