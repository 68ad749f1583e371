// The reservation scheduler of seed 001 in the OCS's data plane (v1model): Algorithm 1 on each request
// frame, no controller in the loop. A ToR's request (reservation_h, on its uplink: the burst's bytes
// and the OCS port of the destination ToR) arrives on input port `in`; the scheduler keeps a horizon
// per input and per output port (registers: from which slot the port is free) and gives the window
//
//   start = max(h_in[in], h_out[dst], now + 1 + trip) in whole slots (the next slot boundary at the
//           earliest: its night is the switching, T_sw), length from the burst (WindowLength),
//
// refused when it would not end within the cycle (the calendar holds one cycle); both horizons move
// to the window's end. It writes the window into its calendar (a register, one cell per input port
// and slot: the output and until when the cell holds), one cell a pass (the frame recirculates while
// it has cells left: the state rides in its own header), then sends the grant back out of `in`. Data frames take the calendar's cell of their
// input and slot while it holds (CalendarFlow), before the time-flow table; the first slot of a window
// is dark by night (the OCS switches), its later slots are lit through theirs.
// One-way (RESV_ANNOUNCE): the ToR took the window itself; the OCS books it only if both ports are
// free by its start, else it counts a collision (resv_collided) and the burst meets a dark port.
//
// Times are the OCS's own (us); a horizon is (end << 16) | end slot: the port is free once its end slot
// has begun, which is certain from `end` (the booking's time plus the window's slots; the slot began at
// most a slot earlier) and, in the slot before, told by the slot index (HORIZON_OFFSET). A cell is
// (until << 16) | first << 15 | output: a frame of its input in its slot is switched while until is
// ahead (the cell's slot occurs once between the booking and until: windows end within a cycle).
#ifndef P4SRC_INCLUDE_V1MODEL_RESERVATION_OCS_P4_
#define P4SRC_INCLUDE_V1MODEL_RESERVATION_OCS_P4_

#include "glue.p4"
#include "../defines.p4"
#include "../sizes.p4"
#include "../headers.p4"
#include "../metadata.p4"
#include "../schedule/window_length.p4"
#include "../ocs/dispatch.p4"

// A data frame: its input's calendar cell in this slot while it holds (by night only after the
// window's first slot), else the time-flow table (`time_flow`, which counts what stays dark).
control CalendarFlow(inout ocs_metadata_t meta)(register<bit<64>> calendar, OcsControl time_flow) {

    apply {
        bit<64> cell;
        calendar.read(cell, (bit<32>) meta.ingress_port * RESV_SLOTS + (bit<32>) meta.sched.slot);
        if (cell[63:16] > (bit<48>) meta.now && (meta.sched.night == 0 || cell[15:15] == 0)) {
            meta.egress_port = cell[8:0];
        } else {
            time_flow.apply(meta);
        }
    }
}

control OcsScheduler(inout ocs_headers_t hdr, inout ocs_metadata_t meta)(register<bit<64>> calendar) {

    register<bit<64>>(PORT_COUNTER_SIZE) horizon_in;   // by OCS port: (end << 16) | end slot
    register<bit<64>>(PORT_COUNTER_SIZE) horizon_out;
    DECLARE_PORT_COUNTER(resv_booked)    // by input port: windows booked
    DECLARE_PORT_COUNTER(resv_refused)   // two-way: requests whose window would not end within the cycle
    DECLARE_PORT_COUNTER(resv_collided)  // one-way: announced windows whose ports were not free
    WindowLength() window;

    bit<16> cycle_slots = 0;
    bit<48> slot_us = 0;
    bit<16> trip_slots = 0;

    // The schedule's slots a cycle and their length (the OCS's schedule_config/schedule_phase give
    // the current slot), and the slots a grant takes to reach a ToR and be acted on beyond the next
    // boundary (Algorithm 1's T_proc + T_oh, rounded up; 0: the next slot).
    action set_reservation(bit<16> slots, bit<32> slot_len_us, bit<16> trip) {
        cycle_slots = slots;
        slot_us = (bit<48>) slot_len_us;
        trip_slots = trip;
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

    apply {
        reservation_config.apply();
        bit<8> kind = hdr.reservation.kind;
        if (kind != RESV_REQUEST && kind != RESV_ANNOUNCE) {
            meta.drop = 1;  // a grant sent to the OCS, or an unknown kind: not the scheduler's
        } else if (meta.recirculated == 0) {
            // A frame from a port: its booking state (cursor, left, expires) is set here, never taken.
            bit<16> cur = meta.sched.slot;
            bit<16> in_port = (bit<16>) meta.ingress_port;
            bit<32> dst = (bit<32>) hdr.reservation.dst_port;
            hdr.reservation.in_port = in_port;
            hdr.reservation.left = 0;
            bit<64> h_in;
            bit<64> h_out;
            horizon_in.read(h_in, (bit<32>) in_port);
            horizon_out.read(h_out, dst);
            bit<16> d_in;
            bit<16> d_out;
            HORIZON_OFFSET(d_in, h_in, cur, cycle_slots, meta.now)
            HORIZON_OFFSET(d_out, h_out, cur, cycle_slots, meta.now)
            bit<16> n = hdr.reservation.slots;
            bit<16> d = 1 + trip_slots;
            if (kind == RESV_REQUEST) {
                window.apply(hdr.reservation.bytes, n);
                if (d_in > d) {
                    d = d_in;
                }
                if (d_out > d) {
                    d = d_out;
                }
            } else if (hdr.reservation.start >= cur) {
                d = hdr.reservation.start - cur;  // the ToR's window, as an offset from now
            } else {
                d = hdr.reservation.start + cycle_slots - cur;
            }
            bool fits = meta.sched.on == 1 && cycle_slots != 0 && n != 0 && d != 0 && d + n < cycle_slots &&
                        dst < PORT_COUNTER_SIZE && d_in <= d && d_out <= d;
            if (fits) {
                bit<16> start;
                SLOT_ADD(start, cur, d, cycle_slots)
                bit<16> end;
                SLOT_ADD(end, start, n, cycle_slots)
                bit<64> horizon = ((bit<64>) (meta.now + (bit<48>) (d + n) * slot_us) << 16) | (bit<64>) end;
                horizon_in.write((bit<32>) in_port, horizon);
                horizon_out.write(dst, horizon);
                resv_booked.count((bit<32>) in_port);
                hdr.reservation.start = start;
                hdr.reservation.slots = n;
                hdr.reservation.cursor = start;
                hdr.reservation.left = n;
                hdr.reservation.expires = meta.now + (bit<48>) (d + 1) * slot_us;
            } else if (kind == RESV_REQUEST) {
                resv_refused.count((bit<32>) in_port);
                hdr.reservation.kind = RESV_GRANT;
                hdr.reservation.refused = 1;
                hdr.reservation.slots = 0;
                meta.egress_port = meta.ingress_port;
            } else {
                resv_collided.count((bit<32>) in_port);
                meta.drop = 1;
            }
        }

        // A booking pass (the window's first, or one recirculated): one calendar cell; the last turns a
        // request into its grant, or ends an announcement; the others recirculate (OcsEgressOut: cells left).
        if (hdr.reservation.left != 0 && meta.drop == 0) {
            bit<64> first = 0;
            if (hdr.reservation.left == hdr.reservation.slots) {
                first = 1;
            }
            calendar.write((bit<32>) hdr.reservation.in_port * RESV_SLOTS + (bit<32>) hdr.reservation.cursor,
                           ((bit<64>) hdr.reservation.expires << 16) | (first << 15) |
                           (bit<64>) hdr.reservation.dst_port[8:0]);
            bit<16> next;
            SLOT_ADD(next, hdr.reservation.cursor, 1, cycle_slots)
            hdr.reservation.cursor = next;
            hdr.reservation.expires = hdr.reservation.expires + slot_us;
            hdr.reservation.left = hdr.reservation.left - 1;
            meta.egress_port = hdr.reservation.in_port[8:0];
            if (hdr.reservation.left == 0) {
                if (kind == RESV_REQUEST) {
                    hdr.reservation.kind = RESV_GRANT;
                } else {
                    meta.drop = 1;  // one-way: booked, nothing to answer
                }
            }
        }
    }
}

#endif  // P4SRC_INCLUDE_V1MODEL_RESERVATION_OCS_P4_
