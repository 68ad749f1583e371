// SlotHold (TNA): holding a packet whose circuit is not lit until its slot, as include/v1model/
// slot_hold.p4 does on bmv2 and p4sim: a held packet goes round a loop and SlotRoute decides again on
// every pass. On Tofino the loop is a recirculation port (HOLD_RECIRC_PORT): ingress sends the
// packet there, egress marks it with a hold_mark header (its path, version and since when it is
// held: Tofino carries no metadata round the loop) and it re-enters ingress, which removes the mark.
// A recirculated packet has a real timestamp on Tofino. Bounded per path as on v1model: at most
// `depth` packets at once (hold_depth, one stateful-ALU access per packet: admit on arrival, release
// on leaving) and `max_hold_us` each (in 1.024 us units here: 2.4% longer); overflow and expiry are
// counted apart from the OCS's dark drops. A lit packet egress sends back (SlotEgress: over the day
// budget, or its decision stale) comes round with the mark's `stale` set and enters the books anew,
// as on v1model. A new lit packet of a path that holds packets joins them, as on v1model, but here
// (hold_join) rather than in SlotRoute: v1model reads hold_depth there and writes it here, two
// accesses in one pass where Tofino allows one; here the one access decides and counts it.
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
    // A new lit packet joins the packets its path holds (v1model's HOLD_JOINS, decided here, in the
    // one access of the pass): some are held, and the hold has room for one more.
    RegisterAction<bit<32>, bit<32>, bit<1>>(hold_depth) hold_join = {
        void apply(inout bit<32> depth, out bit<1> joined) {
            joined = 0;
            if (depth != 0 && depth < meta.hold_limit) {
                depth = depth + 1;
                joined = 1;
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

    // Held longer than max_hold_us: max_hold_us - (now - since) < 0, a subtraction a step (a table
    // each, so bf-p4c keeps them apart; a gateway compares the result with 0).
    STEP(hold_age_step, meta.hold_left = meta.hold_now - meta.hold_since)
    STEP(hold_left_step, meta.hold_left = meta.hold_max_us - meta.hold_left)

    // Round the loop: out of the recirculation port (egress marks it), or gone (overflow, expiry).
    // Flags of the hold's own, which the end of ingress applies: SlotRoute's decision, the egress
    // port and the drop stay the path table's and failover's to write (Tofino: they do not wait for
    // this, nor this for them).
    action go_round() {
        meta.hold_pass = 1;
    }

    // Held from now on (its route and version kept for the loop), round the loop.
    action enter_hold() {
        meta.held = 1;
        meta.held_path_id = meta.path_id;
        meta.held_version = meta.version;
        meta.hold_pass = 1;
    }

    action hold_drop() {
        meta.hold_drop = 1;
    }

    // v1model's decisions in two blocks of one step each (Tofino 1 places a block's tables before
    // anything after it): the register's one access (admit a packet entering the books, release
    // one leaving them), then what its answer and the path's state decide.
    apply {
        bit<32> index = (bit<32>) meta.path_id;
        bit<1> admitted = 0;
        bit<1> joined = 0;
        hold_age_step.apply();
        hold_left_step.apply();
        if (meta.slot_decision == SLOT_HOLD && (meta.held == 0 || meta.stale == 1) &&
                !(meta.stale == 1 && TIME_NEGATIVE(meta.hold_left))) {
            admitted = hold_admit.execute(index);
        } else if (meta.slot_decision == SLOT_LIT && meta.held == 0 && meta.stale == 0) {
            joined = hold_join.execute(index);  // only a path with a hold policy has a hold_limit
        } else if (meta.held == 1 && meta.stale == 0 &&
                (meta.slot_decision != SLOT_HOLD || TIME_NEGATIVE(meta.hold_left))) {
            hold_release.execute(index);
        }
        if (meta.held == 0 || meta.stale == 1) {
            // Entering the books: a new packet, or a lit one egress sent back (stale), already held
            // since hold_since if it had been (held); expired, or held again.
            if (meta.stale == 1 && TIME_NEGATIVE(meta.hold_left)) {
                hold_drop();
                hold_entered.count(index);
                hold_expired.count(index);
            } else if (meta.slot_decision == SLOT_HOLD) {
                if (admitted == 0) {
                    hold_drop();
                    hold_overflow.count(index);
                } else if (meta.held == 0) {
                    hold_entered.count(index);
                    meta.hold_since = meta.hold_now;
                    enter_hold();
                } else {
                    hold_entered.count(index);
                    enter_hold();
                }
            } else if (joined == 1) {
                // Lit, but behind the packets its path holds: held from now, as v1model's SlotRoute
                // decides before the budget (SlotRoute took the slot; the loop ignores its port).
                meta.slot_decision = SLOT_HOLD;
                hold_entered.count(index);
                meta.hold_since = meta.hold_now;
                enter_hold();
            }
            meta.stale = 0;
        } else if (meta.slot_decision == SLOT_HOLD) {
            if (TIME_NEGATIVE(meta.hold_left)) {
                hold_drop();
                hold_expired.count(index);
            } else {
                go_round();
            }
        } else {
            hold_released.count(index);
        }
    }
}

#endif  // P4SRC_INCLUDE_TNA_SLOT_HOLD_P4_
