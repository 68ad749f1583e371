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

    bit<1> hold = 0;

    action slot_hold(bit<32> max_hold_us, bit<32> depth, bit<32> fresh_us) {
        hold = 1;
        meta.hold_max_us = max_hold_us;
        meta.hold_limit = depth;
        meta.hold_fresh_us = fresh_us;
    }

    action slot_electrical() {
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

    // byte_ns: ns a byte takes on the uplink (its day budget, UplinkClock; 0: no budget).
    // A window of consecutive slots on one circuit is one stretch of light: the OCS does not
    // switch between them, so the ToR sends through their nights (night_more != 0: every slot of
    // the window but the first) and its budget runs to the window's last day's end (day_more and
    // night_more: what follows the current range; 0 and 0: the slot alone).
    action slot_port(port_t port, mac_addr_t dmac, bit<32> byte_ns, bit<32> more_after_day,
                     bit<32> more_after_night) {
        meta.egress_port = port;
        hdr.ethernet.dst_addr = dmac;
        meta.slot_byte_ns = byte_ns;
        day_more = more_after_day;
        night_more = more_after_night;
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

    apply {
        meta.slot_decision = SLOT_PATH;
        meta.slot_byte_ns = 0;
        meta.slot_depart = meta.now;
        if (meta.sched.on == 1) {
            if (slot_policy.apply().hit) {
                bool lit = false;
                bit<32> more = 0;
                if (slot_path.apply().hit) {
                    if (meta.sched.night == 0) {
                        lit = true;
                        more = day_more;
                    } else if (night_more != 0) {
                        lit = true;  // the circuit goes on from the slot before: no switching
                        more = night_more;
                    }
                }
                if (lit && hold == 1 && meta.held == 0 && meta.stale == 0 && meta.hold_queued != 0 &&
                        meta.hold_queued < meta.hold_limit) {
                    // A new packet does not pass the packets its path holds: it joins them (behind
                    // them in the loop), before the budget, so it takes none of the day from them.
                    // Passing them would reorder the path's flows by a whole window; the loop
                    // itself reorders only within a round (a day starts wherever the circle is).
                    // A full queue's arrival still goes.
                    lit = false;
                }
                if (lit && meta.slot_byte_ns != 0) {
                    // The day budget: only what the uplink can still send before the light ends
                    // (the day's end, or the window's: a night's `end` is where its day begins).
                    time_t tx;
                    SLOT_TX(tx, meta.pkt_len, meta.slot_byte_ns);
                    bit<32> left = meta.sched.end - meta.sched.phase + more;  // in phase units
                    bit<1> admitted;
                    uplink_clock.apply(meta.egress_port, meta.path_id, meta.now, tx, left, meta.sched.scale,
                                       admitted, meta.slot_depart);
                    if (admitted == 0) {
                        lit = false;  // held for a later day, or electrical, by the path's policy
                    }
                }
                if (lit) {
                    meta.slot_decision = SLOT_LIT;
                } else if (hold == 1) {
                    meta.slot_decision = SLOT_HOLD;
                }
            }
        }
    }
}

#endif  // P4SRC_INCLUDE_FABRIC_SLOT_ROUTE_P4_
