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
#include "../headers.p4"
#include "../metadata.p4"
#include "../fabric/control_types.p4"

// SlotEgress's apply signature, for HoldLoopOut (it reads the headers only).
control FabricCheck(in fabric_headers_t hdr, inout fabric_metadata_t meta);

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

// The loop's exit, at egress. A lit packet's decision is checked against its real departure
// (`check`: SlotEgress, the day budget and freshness); one it sends back goes round the loop again: a
// marked copy to the recirculation port (a mirror to DRAIN_PROBE_SESSION, egress to egress: Tofino's
// egress cannot change the port), the original dropped. A hold pass leaves marked for the recirculation
// port (HOLD_RECIRC_PORT, where ingress sent it). The marked copy itself (hold_return) leaves as it is.
// Any other packet takes its own egress: `rewrite` (EgressRewrite), then port_tx, or, the drain probe,
// the drain mark for its way back to ingress through the mirror session's (recirculation) port.
control HoldLoopOut(inout fabric_headers_t hdr, inout fabric_metadata_t meta,
                    in egress_intrinsic_metadata_t eg_intr_md,
                    inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md)
                   (FabricCheck check, Counter<bit<64>, port_t> port_tx, FabricControl rewrite) {

    action mark_held(bit<1> stale) {
        PUSH_HOLD_MARK(hdr.bridged_slot.held_path_id, meta.version, stale, hdr.bridged_slot.hold_since);
    }

    apply {
        if (meta.hold_return == 1) {
            // A lit packet sent back (the mirrored copy, marked): out of the recirculation port as it is.
        } else {
            if (meta.is_clone == 0 && BRIDGED_SLOT_DECISION(hdr.bridged.flags) == SLOT_LIT) {
                check.apply(hdr, meta);
            }
            if (meta.send_back == 1) {
                mark_held(1);
                if (BRIDGED_HELD(hdr.bridged.flags) == 0) {
                    hdr.hold_mark.since = meta.now;  // never held: held from now
                }
                eg_dprsr_md.mirror_type = MIRROR_HOLD_RETURN;
                meta.mirror_session = DRAIN_PROBE_SESSION;
                meta.mirror.setValid();
                meta.mirror.kind = BRIDGED_KIND_HOLD_RETURN;
                meta.mirror.version = 0;
                meta.mirror._pad = 0;
                eg_dprsr_md.drop_ctl = 1;
            } else if (meta.hold_pass == 1) {
                mark_held(0);
            } else {
                rewrite.apply(hdr, meta);
                if (meta.do_recirculate == 1) {
                    // The drain probe: the probe's own ether type follows a drain mark, so ingress
                    // knows it when the mirror session's (recirculation) port brings it back; the TCP
                    // length of its pseudo-header is a field (a deparser checksum takes no constant
                    // but 0).
                    meta.probe_tcp_len = 20;
                    hdr.drain_mark.setValid();
                    hdr.drain_mark.ether_type = hdr.ethernet.ether_type;
                    hdr.drain_mark.version = meta.mirror.version;
                    hdr.drain_mark._pad = 0;
                    hdr.ethernet.ether_type = ETHERTYPE_DRAIN_MARK;
                } else {
                    port_tx.count(eg_intr_md.egress_port);
                }
            }
        }
    }
}

#endif  // P4SRC_INCLUDE_TNA_SLOT_HOLD_P4_
