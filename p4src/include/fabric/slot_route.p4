// SlotRoute: a ToR's egress choice by slot of the time-sliced optical schedule. For a scheduled
// path (a destination ToR behind the OCS) the slot ScheduleClock computed from the packet's own
// timestamp picks the uplink whose circuit reaches that ToR; when none is lit (a night, or no
// circuit to it in this slot) the path's policy holds the packet for its slot (SlotHold, the
// target's glue) or leaves it to the path table (the electrical fabric, where the topology has one).
#ifndef P4SRC_INCLUDE_FABRIC_SLOT_ROUTE_P4_
#define P4SRC_INCLUDE_FABRIC_SLOT_ROUTE_P4_

#include "../headers.p4"
#include "../metadata.p4"

control SlotRoute(inout fabric_headers_t hdr, inout fabric_metadata_t meta) {

    bit<1> scheduled = 0;
    bit<1> hold = 0;

    action slot_hold(bit<32> max_hold_us, bit<32> depth, bit<32> fresh_us) {
        scheduled = 1;
        hold = 1;
        meta.hold_max_us = max_hold_us;
        meta.hold_limit = depth;
        meta.hold_fresh_us = fresh_us;
    }

    action slot_electrical() {
        scheduled = 1;
        hold = 0;
    }

    // The scheduled paths and what an unlit one does: hold (at most `depth` packets of the path
    // at once, each at most `max_hold_us`; a lit decision older than `fresh_us` when the packet
    // reaches egress is held again) or take the path table (electrical). Exact on path id; a path
    // without an entry is not scheduled.
    table slot_policy {
        key = {
            meta.path_id: exact @name("path_id");
        }
        actions = {
            slot_hold;
            slot_electrical;
            @defaultonly NoAction;
        }
        default_action = NoAction();
        size = HOLD_PATHS;
    }

    // The rest of the circuit after the current range, in phase units: after this slot's day
    // (day_more), and, in this slot's night, after the night (night_more; 0: the night is dark).
    bit<32> day_more = 0;
    bit<32> night_more = 0;
    bit<1> found = 0;
    mac_addr_t slot_dmac = 0;

    // byte_ns: ns a byte takes on the uplink (its day budget, UplinkClock; 0: no budget).
    // A window of consecutive slots on one circuit is one stretch of light: the OCS does not
    // switch between them, so the ToR sends through their nights (night_more != 0: every slot of
    // the window but the first) and its budget runs to the window's last day's end (day_more and
    // night_more: what follows the current range; 0 and 0: the slot alone).
    action slot_port(port_t port, mac_addr_t dmac, bit<32> byte_ns, bit<32> more_after_day,
                     bit<32> more_after_night) {
        found = 1;
        meta.slot_port = port;
        slot_dmac = dmac;
        meta.slot_byte_ns = byte_ns;
        day_more = more_after_day;
        night_more = more_after_night;
    }

    // Lit: out of the slot's uplink.
    action take_slot() {
        meta.slot_decision = SLOT_LIT;
        meta.egress_port = meta.slot_port;
        hdr.ethernet.dst_addr = slot_dmac;
    }

    // The time-flow table of a ToR: the uplink whose circuit reaches the path's ToR in each slot
    // (exact on path id and slot; a slot without an entry has no circuit to it).
    table slot_path {
        key = {
            meta.path_id: exact @name("path_id");
            meta.sched.slot: exact @name("slot");
        }
        actions = {
            slot_port;
            @defaultonly NoAction;
        }
        default_action = NoAction();
        size = SLOT_PATH_SIZE;
    }

    UplinkClock() uplink_clock;

    // meta.slot_decision is SLOT_PATH and meta.slot_byte_ns 0 on arrival (the target's parser);
    // meta.slot_depart (v1model) the arrival.
    apply {
        // Both tables for every packet with a path (keyed on what routing and the clock give, they
        // change nothing by themselves), and one decision on what they found (Tofino: a stage after
        // slot_path, the stage the path table waits for). Each block one step: Tofino 1 places a
        // block's tables before anything that follows it.
        if (meta.has_path == 1) {
            slot_policy.apply();
        }
        if (meta.has_path == 1) {
            slot_path.apply();
        }
#ifndef __TARGET_TOFINO__
        if (meta.grant_found == 1) {
            // A reserved path's window lights this slot (v1model's reservation loop,
            // include/v1model/reservation_tor.p4; not on TNA yet): as a slot_path entry would.
            slot_port(meta.grant_port, meta.grant_dmac, meta.grant_byte_ns, meta.grant_day_more,
                      meta.grant_night_more);
        }
#endif
        if (meta.sched.on == 1 && scheduled == 1) {
            // By day, or by night in a window (the circuit goes on from the slot before: no
            // switching): lit; meta.slot_more, the light after the current range. Else the path's
            // policy: held, or the path table (electrical).
            if (found == 1 && (meta.sched.night == 0 || night_more != 0)) {
                if (meta.sched.night == 0) {
                    meta.slot_more = day_more;
                } else {
                    meta.slot_more = night_more;
                }
                if (hold == 1 && meta.held == 0 && meta.stale == 0 && HOLD_JOINS()) {
                    // A new packet does not pass the packets its path holds: it joins them (behind
                    // them in the loop), before the budget, so it takes none of the day from them.
                    // Passing them would reorder the path's flows by a whole window; the loop
                    // itself reorders only within a round (a day starts wherever the circle is).
                    // A full queue's arrival still goes.
                    meta.slot_decision = SLOT_HOLD;
                } else if (meta.slot_byte_ns == 0) {
                    take_slot();
                } else {
                    // The day budget: only what the uplink can still send before the light ends
                    // (the day's end, or the window's: a night's `end` is where its day begins).
                    // The target's UplinkClock; over it, the path's policy decides.
                    bit<1> admitted;
                    uplink_clock.apply(meta, admitted);
                    if (admitted == 1) {
                        take_slot();
                    } else if (hold == 1) {
                        meta.slot_decision = SLOT_HOLD;
                    }
                }
            } else if (hold == 1) {
                meta.slot_decision = SLOT_HOLD;
            }
        }
    }
}

#endif  // P4SRC_INCLUDE_FABRIC_SLOT_ROUTE_P4_
