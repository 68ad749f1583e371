// SlotHold (v1model): holding a packet whose circuit is not lit until its slot, on unmodified bmv2
// and p4sim. A held packet goes round a loop, a port pair: ingress sends it to HOLD_OUT_PORT, egress
// marks it (hold_mark_h: its path, version and since when it is held) and it leaves the switch; the
// link outside (a veth pair, paced by the kernel: emulation/holdloop.py) brings it back on
// HOLD_IN_PORT, where ingress removes the mark and SlotRoute decides again with the packet's own
// arrival time. The loop runs at the link's pace, not the switch's: a held packet costs the switch
// one pipeline pass per round, and the rounds per second are the link's. Bounded per path (a
// virtual output queue per destination ToR): at most `depth` packets at once (hold_depth register)
// and `max_hold_us` each; a packet beyond the depth is dropped and counted in hold_overflow, one held
// too long in hold_expired, apart from what the OCS drops in the dark. hold_entered and hold_released
// count the rest (by path id).
// Freshness: a pass's decision can be old by the time egress takes the packet (the queue's wait, a
// stalled switch process); egress sends a lit packet whose decision is older than the path's
// fresh_us back (stale, counted in hold_stale by the egress). v1model's egress cannot change the
// port, so it recirculates such a packet (FL_HOLD); a recirculated packet has no timestamp of its own
// (0), so ingress decides nothing on it and sends it round the loop with the mark's `stale` set; back
// on HOLD_IN_PORT it decides with its own time: out at once if still lit, else held anew (counted
// in hold_entered, as when it is too old by then and dropped: hold_entered and hold_expired).
// The Tofino equivalent is in p4src/README.md (time-flow tables).
#ifndef P4SRC_INCLUDE_V1MODEL_SLOT_HOLD_P4_
#define P4SRC_INCLUDE_V1MODEL_SLOT_HOLD_P4_

#include "glue.p4"
#include "../defines.p4"
#include "../headers.p4"
#include "../metadata.p4"
#include "../fabric/control_types.p4"

// The loop's entry, at the start of ingress, for a packet that came in marked (meta.looped: set with
// the intrinsic metadata, FabricIngressIn): a packet back on HOLD_IN_PORT has its mark taken off (the
// parser took its held state from it); a mark on any other port did not come round the loop, and its
// packet is dropped (Dispatch: HOLD_MARK_FORGED). meta.looped tells a held packet back from the loop
// from one egress recirculated (HOLD_UNMARKED).
control HoldLoopIn(inout fabric_headers_t hdr, inout fabric_metadata_t meta,
                   inout standard_metadata_t standard_metadata) {

    apply {
        if (meta.looped) {
            hdr.ethernet.ether_type = hdr.hold_mark.ether_type;
            hdr.hold_mark.setInvalid();
            if (standard_metadata.ingress_port != HOLD_IN_PORT) {
                meta.drop = 1;  // a mark that did not come round the loop: no one holds by request
            }
        }
    }
}

// hold_depth: packets of each path now in the loop (data-plane state: read and written in ingress
// only, which bmv2 runs on one thread, so the count is exact). The ingress declares it and reads it
// into meta.hold_queued before SlotRoute: a new packet of a path that holds packets joins them.
control SlotHold(inout fabric_metadata_t meta)(register<bit<32>> hold_depth) {

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
            // left the hold, or never been in it): it enters the hold if its slot is not lit now,
            // unless it has been held (or sent back) for longer than the bound already.
            if (meta.stale == 1 && meta.now - meta.hold_since > (time_t) meta.hold_max_us) {
                // It enters the books and expires at once: it was released (or never held), so
                // entered - released - expired stays what the path holds (the controller's count).
                meta.slot_decision = SLOT_DROP;
                hold_entered.count(index);
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
            meta.egress_port = HOLD_OUT_PORT;
        } else if (meta.slot_decision == SLOT_DROP) {
            meta.drop = 1;
        }
    }
}

// The loop's exit, at egress. Stale: egress takes a lit packet more than fresh_us after its uplink was
// to start sending it (its decision's time, or later by the backlog the day budget counted: a packet at
// the back of a burst is not stale for waiting behind the burst, which the budget allowed for); it is
// counted in hold_stale, held (from now, if it was not) and recirculated (egress cannot change the
// port), and ingress sends it round the loop. A hold pass leaves by HOLD_OUT_PORT with the mark. Any
// other packet takes its own egress: `rewrite` (EgressRewrite), then port_tx unless it is the drain
// probe, which goes back to ingress.
control HoldLoopOut(inout fabric_headers_t hdr, inout fabric_metadata_t meta,
                    inout standard_metadata_t standard_metadata)
                   (counter hold_stale, counter port_tx, FabricControl rewrite) {

    apply {
        bool stale = meta.slot_decision == SLOT_LIT && meta.hold_fresh_us != 0 &&
                     standard_metadata.egress_global_timestamp > meta.slot_depart + (time_t) meta.hold_fresh_us;
        if (stale) {
            hold_stale.count((bit<32>) meta.path_id);
            if (meta.held == 0) {
                meta.hold_since = meta.now;
                meta.held_path_id = meta.path_id;
                meta.held_version = meta.version;
                meta.held = 1;
            }
            meta.stale = 1;
        }
        if (stale) {
            recirculate_preserving_field_list(FL_HOLD);
        } else if (meta.hold_pass == 1) {
            PUSH_HOLD_MARK(meta.held_path_id, meta.held_version, meta.stale, meta.hold_since);
        } else {
            rewrite.apply(hdr, meta);
            if (meta.do_recirculate == 0) {  // the drain probe is sent back to ingress, not out
                port_tx.count((bit<32>) standard_metadata.egress_port);
            }
        }
    }
}

#endif  // P4SRC_INCLUDE_V1MODEL_SLOT_HOLD_P4_
