// The reservation loop of seed 001 at a ToR (v1model): its virtual output queues (SlotHold, one per
// destination ToR) ask the OCS's scheduler for windows and send into the windows granted, with no
// controller in the loop (the scheduler: include/v1model/reservation_ocs.p4).
//
// A reserved path (`grant_path`: its uplink to the OCS, the next hop's MAC, the uplink's ns a byte,
// the OCS port of the destination ToR's uplink, the clone session to the uplink) holds its packets
// (slot_policy hold, no slot_path entry) until a window lights its slot. Every pass of one of its
// packets (a new one, or a held one back round the hold loop) runs `Reservation` before SlotRoute:
// - a window granted and under way in this slot: meta.grant_found, which SlotRoute takes as it takes
//   a slot_path entry (the uplink, its budget to the window's end from `window_more`: lit through
//   the window's inner nights, not the first slot's);
// - no window and no request out, and a burst ready (the queue's bytes, packets x their mean length,
//   at least `burst_bytes`, or a held packet waiting `assembly_us`: mixed timer and size; two-way:
//   also in the window's last slot, with a whole burst queued and no next window yet): two-way
//   sends a request (an ingress-to-egress copy of the packet to the uplink's clone session, which
//   egress makes a reservation frame: ReservationOut); one-way takes the window itself (the first
//   slots its uplink is free, `one_way_offset` slots ahead at the earliest) and announces it;
// - a request out longer than `retry_us` unanswered (lost, refused): it asks again (a new number).
// A grant (a reservation frame on the path's uplink, the request's number echoed) sets the window
// (resv_next while the current one is on: it takes the current's place from the slot after the current's last):
// the start slot's first occurrence after the slot the ToR asked in, on the ToR's own clock (slots
// are the schedule's, both switches run it). A grant for no request out is late (resv_late); a
// reservation frame on any other port, or of another kind, is forged (resv_forged): dropped.
// The loop's time (request sent to grant received, on the ToR's clock) is counted in resv_loop_time,
// 32 us buckets (the last: longer).
#ifndef P4SRC_INCLUDE_V1MODEL_RESERVATION_TOR_P4_
#define P4SRC_INCLUDE_V1MODEL_RESERVATION_TOR_P4_

#include "glue.p4"
#include "../defines.p4"
#include "../sizes.p4"
#include "../headers.p4"
#include "../metadata.p4"
#include "../schedule/window_length.p4"

control Reservation(inout fabric_headers_t hdr, inout fabric_metadata_t meta) {

    register<bit<64>>(HOLD_PATHS) resv_window;    // by path: (until << 16) | start << 8 | length
    register<bit<64>>(HOLD_PATHS) resv_next;      // by path: the window granted while one is on (as resv_window)
    register<bit<64>>(HOLD_PATHS) resv_request;   // by path: (asked at << 16) | number (asked at 0: none out)
    register<bit<32>>(HOLD_PATHS) resv_mean_len;  // by path: its packets' mean length (1/8 moving average)
    register<bit<64>>(PORT_COUNTER_SIZE) uplink_horizon;  // one-way, by uplink: (end << 16) | end slot
    counter(HOLD_PATHS, CounterType.packets) resv_requests;  // requests (two-way) or announcements sent
    counter(HOLD_PATHS, CounterType.packets) resv_grants;    // windows granted
    counter(HOLD_PATHS, CounterType.packets) resv_refused;   // refused (no window within the cycle)
    counter(HOLD_PATHS, CounterType.packets) resv_late;      // grants for no request out
    DECLARE_PORT_COUNTER(resv_forged)                        // by ingress port
    counter(RESV_LOOP_BUCKETS, CounterType.packets) resv_loop_time;
    WindowLength() window;

    bit<2>  mode = RESV_OFF;
    bit<32> burst = 0;
    bit<48> assembly_us = 0;
    bit<48> retry_us = 0;
    bit<16> cycle_slots = 0;
    bit<48> slot_us = 0;
    bit<16> offset = 1;

    // mode: RESV_TWO_WAY or RESV_ONE_WAY; the burst (bytes, and the timer); the request's timeout; the
    // schedule's slots a cycle and their length; one-way: the least slots between a burst and its window.
    action set_reservation(bit<2> loop_mode, bit<32> burst_bytes, bit<32> assembly, bit<32> retry,
                           bit<16> slots, bit<32> slot_len_us, bit<16> one_way_offset) {
        mode = loop_mode;
        burst = burst_bytes;
        assembly_us = (bit<48>) assembly;
        retry_us = (bit<48>) retry;
        cycle_slots = slots;
        slot_us = (bit<48>) slot_len_us;
        offset = one_way_offset;
    }

    table reservation_config {
        key = {}
        actions = {
            set_reservation;
            @defaultonly NoAction;
        }
        default_action = NoAction();
        size = 1;
    }

    action grant_uplink(port_t port, mac_addr_t dmac, bit<32> byte_ns, bit<16> ocs_port, bit<32> session) {
        meta.grant_path = 1;
        meta.grant_port = port;
        meta.grant_dmac = dmac;
        meta.grant_byte_ns = byte_ns;
        meta.grant_ocs_port = ocs_port;
        meta.grant_session = session;
    }

    // The reserved paths (path id: the grant's, for a reservation frame).
    path_id_t path_key = 0;
    table grant_path {
        key = {
            path_key: exact @name("path_id");
        }
        actions = {
            grant_uplink;
            @defaultonly NoAction;
        }
        default_action = NoAction();
        size = HOLD_PATHS;
    }

    // The light after the current range when `left` slots of the window follow this one (phase units,
    // as slot_port's more_after_day and more_after_night: the ToR's guarded ranges).
    bit<16> left = 0;
    action set_more(bit<32> more_after_day, bit<32> more_after_night) {
        meta.grant_day_more = more_after_day;
        meta.grant_night_more = more_after_night;
    }

    table window_more {
        key = {
            meta.sched.slot: exact @name("slot");
            left: exact @name("left");
        }
        actions = {
            set_more;
            @defaultonly NoAction;
        }
        default_action = NoAction();
        size = RESV_WINDOW_MORE_SIZE;
    }

    apply {
        reservation_config.apply();
        bool frame = hdr.reservation.isValid() && meta.bypass == 0;
        path_key = meta.path_id;
        if (frame) {
            path_key = hdr.reservation.path_id;
        }
        if (mode != RESV_OFF && (frame || meta.sched.on == 1)) {
            grant_path.apply();
        }
        bit<32> index = (bit<32>) path_key;
        time_t now = meta.now;

        if (frame) {
            if (meta.grant_path == 0 || meta.grant_port != meta.ingress_port || hdr.reservation.kind != RESV_GRANT) {
                resv_forged.count((bit<32>) meta.ingress_port);
            } else {
                bit<64> request;
                resv_request.read(request, index);
                if (request[63:16] != 0 && request[15:0] == hdr.reservation.seq) {
                    bit<48> waited = (now - hdr.reservation.asked_at) >> 5;
                    bit<32> bucket = RESV_LOOP_BUCKETS - 1;
                    if (waited < RESV_LOOP_BUCKETS - 1) {
                        bucket = (bit<32>) waited;
                    }
                    resv_loop_time.count(bucket);
                    // The window starts k slot boundaries after the slot the ToR asked in (1 <= k < cycle).
                    bit<16> k = hdr.reservation.start - hdr.reservation.req_slot;
                    if (hdr.reservation.start < hdr.reservation.req_slot) {
                        k = k + cycle_slots;
                    }
                    bit<16> n = hdr.reservation.slots;
                    if (hdr.reservation.refused != 0 || k == 0 || n == 0 || k + n >= cycle_slots) {
                        resv_refused.count(index);  // still out: asked again after retry_us
                    } else {
                        bit<48> until = hdr.reservation.asked_at + (bit<48>) (k + n) * slot_us;
                        bit<64> granted = ((bit<64>) until << 16) | ((bit<64>) hdr.reservation.start[7:0] << 8) |
                                          (bit<64>) n[7:0];
                        bit<64> current;
                        resv_window.read(current, index);
                        if (TIME_AFTER(current[63:16], now)) {
                            resv_next.write(index, granted);  // asked in the current window's last slot
                        } else {
                            resv_window.write(index, granted);
                        }
                        resv_request.write(index, (bit<64>) request[15:0]);  // answered
                        resv_grants.count(index);
                    }
                } else {
                    resv_late.count(index);
                }
            }
            meta.drop = 1;  // consumed
        } else if (meta.grant_path == 1) {
            bit<16> cur = meta.sched.slot;
            bit<64> w;
            resv_window.read(w, index);
            bit<64> nx;
            resv_next.read(nx, index);
            bool window_on = TIME_AFTER(w[63:16], now);
            bool next_on = TIME_AFTER(nx[63:16], now);
            // The current window's slots are spent from the slot after its last (rel >= n), though its
            // until, which counts from when the ToR asked (up to a slot into the asking slot), may be
            // ahead: the next window, granted in the last slot, may start right there. (A next window
            // is only asked for in the current one's last slot, so while one waits, rel >= n means
            // after the window, never before its start.)
            bit<16> w_rel = meta.sched.slot - (bit<16>) w[15:8];
            if (meta.sched.slot < (bit<16>) w[15:8]) {
                w_rel = w_rel + cycle_slots;
            }
            bool spent = w_rel >= (bit<16>) w[7:0];
            if ((!window_on || spent) && next_on) {
                // the current window is over: the one granted during it takes its place
                w = nx;
                resv_window.write(index, nx);
                resv_next.write(index, 0);
                window_on = true;
                next_on = false;
            }
            bit<48> until = w[63:16];
            bit<16> start = (bit<16>) w[15:8];
            bit<16> n = (bit<16>) w[7:0];
            bool closing = false;  // the window's last slot is under way
            // The window, from the start of its first slot: (n + 1) slots before its end at the latest.
            if (window_on && now + (bit<48>) (n + 1) * slot_us >= until) {
                bit<16> rel = cur - start;
                if (cur < start) {
                    rel = rel + cycle_slots;
                }
                if (rel < n) {
                    left = n - 1 - rel;
                    closing = left == 0;
                    meta.grant_day_more = 0;
                    meta.grant_night_more = 0;
                    window_more.apply();
                    if (rel == 0) {
                        meta.grant_night_more = 0;  // the first slot's night is the OCS switching
                    }
                    meta.grant_found = 1;
                }
            }

            // The burst: what the path holds (its packets x their mean length), this packet included.
            bit<32> mean;
            resv_mean_len.read(mean, index);
            bit<32> queued = meta.hold_queued;
            if (meta.held == 0) {
                queued = queued + 1;
                if (mean == 0) {
                    mean = meta.pkt_len;
                } else {
                    mean = mean - (mean >> 3) + (meta.pkt_len >> 3);
                }
                resv_mean_len.write(index, mean);
            }
            bit<32> ask = queued * mean;
            bit<64> request;
            resv_request.read(request, index);
            bit<48> asked_at = request[63:16];
            bool pending = asked_at != 0;
            bool aged = assembly_us == 0 || (meta.held == 1 && now - meta.hold_since >= assembly_us);
            bool due = !window_on && !pending && (ask >= burst || aged);
            // two-way asks for the next window in the current one's last slot when the queue holds a
            // whole burst (more than that slot carries: granted back to back when the ports are free,
            // the scheduler starting it at the horizon, this window's end); one-way takes its window
            // itself, so only with none on
            bool due_next = due || (closing && !next_on && !pending && ask >= burst);
            if (mode == RESV_TWO_WAY && (due_next || (pending && now - asked_at >= retry_us))) {
                bit<16> seq = request[15:0] + 1;
                resv_request.write(index, ((bit<64>) now << 16) | (bit<64>) seq);
                meta.resv_kind = RESV_REQUEST;
                meta.resv_seq = seq;
                meta.resv_slot = cur;
                meta.resv_slots = 0;
            } else if (mode == RESV_ONE_WAY && due) {
                bit<16> length;
                window.apply(ask, length);
                bit<64> h;
                uplink_horizon.read(h, (bit<32>) meta.grant_port);
                bit<16> d;
                HORIZON_OFFSET(d, h, cur, cycle_slots, now)
                if (d < offset) {
                    d = offset;
                }
                if (length != 0 && d != 0 && d + length < cycle_slots) {
                    bit<16> first;
                    SLOT_ADD(first, cur, d, cycle_slots)
                    bit<16> end;
                    SLOT_ADD(end, first, length, cycle_slots)
                    bit<48> done = now + (bit<48>) (d + length) * slot_us;
                    uplink_horizon.write((bit<32>) meta.grant_port, ((bit<64>) done << 16) | (bit<64>) end);
                    resv_window.write(index, ((bit<64>) done << 16) | ((bit<64>) first[7:0] << 8) |
                                             (bit<64>) length[7:0]);
                    meta.resv_kind = RESV_ANNOUNCE;
                    meta.resv_seq = request[15:0];
                    meta.resv_slot = first;
                    meta.resv_slots = length;
                }
            }
            if (meta.resv_kind != 0) {
                meta.resv_path_id = meta.path_id;
                meta.resv_dst_port = meta.grant_ocs_port;
                meta.resv_bytes = ask;
                meta.resv_asked_at = now;
                resv_requests.count(index);
                clone_preserving_field_list(CloneType.I2E, meta.grant_session, FL_RESERVATION);
            }
        }
    }
}

// Egress: a request's copy becomes the reservation frame (Ethernet and reservation_h alone, the
// packet's own headers and payload cut off) on the uplink.
control ReservationOut(inout fabric_headers_t hdr, in fabric_metadata_t meta) {

    apply {
        hdr.ethernet.setValid();
        hdr.ethernet.dst_addr = 0xFFFFFFFFFFFF;
        hdr.ethernet.src_addr = 0;
        hdr.ethernet.ether_type = ETHERTYPE_RESERVATION;
        hdr.reservation.setValid();
        hdr.reservation.kind = meta.resv_kind;
        hdr.reservation.refused = 0;
        hdr.reservation.path_id = meta.resv_path_id;
        hdr.reservation.dst_port = meta.resv_dst_port;
        hdr.reservation.seq = meta.resv_seq;
        hdr.reservation.req_slot = 0;
        hdr.reservation.start = 0;
        if (meta.resv_kind == RESV_REQUEST) {
            hdr.reservation.req_slot = meta.resv_slot;
        } else {
            hdr.reservation.start = meta.resv_slot;
        }
        hdr.reservation.slots = meta.resv_slots;
        hdr.reservation.bytes = meta.resv_bytes;
        hdr.reservation.asked_at = meta.resv_asked_at;
        hdr.reservation.in_port = 0;
        hdr.reservation.cursor = 0;
        hdr.reservation.left = 0;
        hdr.reservation.expires = 0;
        hdr.hold_mark.setInvalid();
        hdr.path_tag.setInvalid();
        hdr.ipv4.setInvalid();
        hdr.tcp.setInvalid();
        hdr.udp.setInvalid();
        hdr.icmp.setInvalid();
        hdr.arp.setInvalid();
        truncate(RESV_FRAME_BYTES);
    }
}

#endif  // P4SRC_INCLUDE_V1MODEL_RESERVATION_TOR_P4_
