// The reservation scheduler of seed 001 in the OCS's data plane, shaped for Tofino (TNA): the same
// loop as include/v1model/reservation_ocs.p4 (Algorithm 1 on each request, the window in the
// calendar, the grant back out of the input port), in what a Tofino pipeline does: every register
// read or written once a pass by a stateful ALU, no multiplication, 32-bit times (1.024 us units,
// compared modulo 2^32: glue.p4).
//
// Times instead of slot numbers. A horizon is the end of a port's last window (time_t); windows
// begin and end on slot boundaries, so every horizon is one. The slot arithmetic of v1model (offsets
// in slots, a window's end from d + n slots) becomes additions of times the controller writes:
//   cycle_start = now - phase             (TNA's phase is the time since the cycle began)
//   earliest    = cycle_start + resv_slot_times(cur).earliest   (slot cur + 1 + trip's start)
//   limit       = cycle_start + resv_slot_times(cur).limit      (slot cur's start one cycle on)
//   start       = the latest of earliest and both horizons still ahead (a horizon more than a cycle
//                 ahead of now is one from long ago: free)
//   end         = start + resv_span(n)    (n slots of time; n from the burst, WindowLength)
//   refused when end is after limit (the calendar holds one cycle), as v1model's d + n < cycle.
// The start's slot: resv_start_slot, an exact match on start - cycle_start (one entry per slot
// boundary of this cycle and the next).
//
// Passes, the state in a booking header (glue.p4: resv_booking_h, after reservation_h on the
// recirculation port only) whose `pass` says what the next one does. Algorithm 1 reads both horizons
// and writes both, and a stateful ALU that wrote one from the other would need both values in one
// access, so: READ (a frame from a port: both horizons as Algorithm 1 takes them, the earliest start,
// the latest end; read-only accesses), START (the latest of the three: the window's start; an
// announcement with a port busy past its slot collides), WINDOW (its end, whether it fits, its first
// slot), COMMIT (compare-and-set on each horizon: still no later than READ took it, then set to the
// window's end; either booked in between, by another request of the same port, and the request is
// refused: the ToR asks again after its retry time, and an input committed without its output keeps
// that horizon: slots left unused, never a window twice), then CELLS (one cell a pass, as on
// v1model: the calendar is a register; the last sends the grant out of the input port). A refusal is
// a pass of its own (REFUSED: counted, the grant sent back or the announcement dropped). A request of
// n slots takes n + 4 passes (v1model: n). The passes are split between the two halves of the
// pipeline a recirculated frame crosses: the ingress (OcsScheduler) sets the booking header on a
// frame from a port (the clock as it arrived), writes the calendar's cells and sends refusals and
// grants; the egress of the recirculation port (OcsBooking) runs READ, START, WINDOW and COMMIT, the
// horizons' registers and the slot tables. So the data frames' path through the ingress (the
// calendar's read, the time-flow table) waits behind the cell pass's chain only, not Algorithm 1's.
// Each pass a short chain: a subtraction or addition a step,
// identity-hash copies where a chain hands a value on (the clock's fields are sliced by the phase
// key, and an ALU reads only containers of its destination's group).
//
// Status (bf-p4c 9.13.4, `make tofino-check`'s ocs-scheduler): compiles for Tofino 2 in 13 of its 20
// stages; Tofino 1 needs the same 13 of its 12. What fills the stages is the hash distribution units
// (six a stage, shared by ingress and egress; an identity copy of 32 bits takes two): the copies of
// ~30 values between chains need 11 stages of them alone (68 units of the 120 Tofino 2 has), and the
// horizons' and the calendar's accesses fix where each chain runs. Fewer copies (values the ingress
// writes into the booking header once, in the containers the egress's ALUs read) would fit Tofino 1.
// tna/ocs.p4 leaves it out by default (NoScheduler).
//
// The calendar on Tofino: two registers of RESV_TNA_PORTS x RESV_TNA_SLOTS cells (the output port |
// first << 15, and until when the cell holds: a pair register took more stateful-ALU inputs than its
// two actions can share), indexed by the low bits of the input port and the slot: dev ports below
// RESV_TNA_PORTS (pipe 0's) and cycles of at most RESV_TNA_SLOTS slots.
#ifndef P4SRC_INCLUDE_TNA_RESERVATION_OCS_P4_
#define P4SRC_INCLUDE_TNA_RESERVATION_OCS_P4_

#include "glue.p4"
#include "../defines.p4"
#include "../sizes.p4"
#include "../headers.p4"
#include "../metadata.p4"
#include "../schedule/window_length.p4"
#include "../ocs/dispatch.p4"

#define RESV_TNA_PORT_BITS 6
#define RESV_TNA_SLOT_BITS 6
#define RESV_TNA_PORTS 64
#define RESV_TNA_SLOTS 64
#define RESV_TNA_CELLS 4096
// A cell's index: the input port's low bits, then the slot's (an identity hash: a stateful ALU's
// index is a field or a hash, not an expression).
#define DECLARE_RESV_CELL Hash<bit<16>>(HashAlgorithm_t.IDENTITY) cell_hash;
#define RESV_CELL(port, slot) cell_hash.get({ (port)[RESV_TNA_PORT_BITS - 1:0], (slot)[RESV_TNA_SLOT_BITS - 1:0] })
// A booked cell's output word has this bit (an access that finds no cell holding outputs 0).
const bit<32> RESV_CELL_FIRST = 0x8000;  // the window's first slot: dark by night

// A data frame: its input's cell in this slot while it holds (by night only after the window's
// first slot), else the time-flow table.
control CalendarFlow(inout ocs_metadata_t meta)(Register<bit<32>, bit<16>> calendar_output,
                                                  Register<time_t, bit<16>> calendar_until, OcsControl time_flow) {

    DECLARE_RESV_CELL
    Hash<time_t>(HashAlgorithm_t.IDENTITY) now_hash;
    STEP(now_copy, meta.cell_time = now_hash.get({ meta.now }))
    STEP(cell_step, meta.cell_index = RESV_CELL(meta.ingress_port, meta.sched.slot))

    RegisterAction<time_t, bit<16>, bit<8>>(calendar_until) cell_holds = {
        void apply(inout time_t until, out bit<8> holds) {
            if ((int<32>) (until - meta.cell_time) > 0) {
                holds = 1;
            }
        }
    };
    RegisterAction<bit<32>, bit<16>, bit<32>>(calendar_output) cell_output = {
        void apply(inout bit<32> word, out bit<32> output) {
            output = word;
        }
    };

    apply {
        now_copy.apply();
        cell_step.apply();
        bit<8> holds = cell_holds.execute(meta.cell_index);
        bit<32> output = cell_output.execute(meta.cell_index);
        if (holds == 1 && (meta.sched.night == 0 || output[15:15] == 0)) {
            meta.egress_port = output[8:0];
        } else {
            time_flow.apply(meta);
        }
    }
}

control OcsScheduler(inout ocs_headers_t hdr, inout ocs_metadata_t meta)(Register<bit<32>, bit<16>> calendar_output,
                                                                          Register<time_t, bit<16>> calendar_until) {

    DECLARE_RESV_CELL

    RegisterAction<bit<32>, bit<16>, bit<32>>(calendar_output) write_output = {
        void apply(inout bit<32> word) {
            word = meta.cell_word;
        }
    };
    RegisterAction<time_t, bit<16>, bit<8>>(calendar_until) write_until = {
        void apply(inout time_t until) {
            until = meta.cell_time;
        }
    };
    Counter<bit<64>, bit<32>>(PORT_COUNTER_SIZE, CounterType_t.PACKETS_AND_BYTES) resv_booked;
    Counter<bit<64>, bit<32>>(PORT_COUNTER_SIZE, CounterType_t.PACKETS_AND_BYTES) resv_refused;
    Counter<bit<64>, bit<32>>(PORT_COUNTER_SIZE, CounterType_t.PACKETS_AND_BYTES) resv_collided;

    // A cell pass: one cell, then the next cell's slot and end.
    Hash<time_t>(HashAlgorithm_t.IDENTITY) next_until_hash;
    time_t next_until = 0;
    bit<16> from_last = 0;    // 0: the cursor is at the cycle's last slot
    STEP(cell_step, meta.cell_index = RESV_CELL(hdr.reservation.in_port, hdr.reservation.cursor))
    STEP(from_last_step, from_last = hdr.reservation.cursor - hdr.resv_booking.last_slot)
    STEP(next_until_step, next_until = hdr.resv_booking.until + hdr.resv_booking.slot_len)
    STEP(next_until_copy, hdr.resv_booking.until = next_until_hash.get({ next_until }))
    // One write to the reservation header an action (Tofino packs its fields into shared containers,
    // and an action writes a container from at most two sources, one contiguous run of it).
    STEP(cursor_next, hdr.reservation.cursor = hdr.reservation.cursor + 1)
    STEP(cursor_wrap, hdr.reservation.cursor = 0)
    STEP(left_down, hdr.reservation.left = hdr.reservation.left - 1)
    STEP(in_port_set, hdr.reservation.in_port = (bit<16>) meta.ingress_port)
    STEP(left_clear, hdr.reservation.left = 0)
    STEP(refused_set, hdr.reservation.refused = 1)
    STEP(slots_clear, hdr.reservation.slots = 0)

    // No window (a pass of its own, so every other pass ends in a recirculation): a request's refused
    // grant back out of its input, an announcement's collision.
    action refuse() {
        hdr.resv_booking.setInvalid();
        meta.egress_port = hdr.reservation.in_port[8:0];
        hdr.reservation.kind = RESV_GRANT;
    }

    action collide() {
        hdr.resv_booking.setInvalid();
        meta.drop = 1;
    }

    apply {
        bit<8> kind = hdr.reservation.kind;
        bit<32> in_index = (bit<32>) hdr.reservation.in_port;
        if (kind != RESV_REQUEST && kind != RESV_ANNOUNCE) {
            meta.drop = 1;  // a grant sent to the OCS, or an unknown kind: not the scheduler's
        } else if (!hdr.resv_booking.isValid()) {
            // A frame from a port: its booking state, with the clock as it arrived, for the egress's
            // read pass (OcsBooking).
            in_port_set.apply();
            left_clear.apply();
            hdr.resv_booking.setValid();
            hdr.resv_booking.pass = RESV_PASS_READ;
            hdr.resv_booking._pad = 0;
            hdr.resv_booking.sched_on = meta.sched.on;
            hdr.resv_booking.slot = meta.sched.slot;
            hdr.resv_booking.now = meta.now;
            hdr.resv_booking.phase = meta.sched.phase;
            meta.egress_port = RESV_RECIRC_PORT;
        } else if (hdr.resv_booking.pass == RESV_PASS_CELLS) {
            // A cell pass: the window's first cell is dark by night (the OCS switches in it).
            meta.cell_word = (bit<32>) hdr.reservation.dst_port[8:0];
            if (hdr.reservation.left == hdr.reservation.slots) {
                meta.cell_word = RESV_CELL_FIRST | (bit<32>) hdr.reservation.dst_port[8:0];
                resv_booked.count(in_index);  // committed: counted once, on its first cell
            }
            meta.cell_time = hdr.resv_booking.until;
            cell_step.apply();
            write_output.execute(meta.cell_index);
            write_until.execute(meta.cell_index);
            from_last_step.apply();
            if (from_last == 0) {
                cursor_wrap.apply();
            } else {
                cursor_next.apply();
            }
            next_until_step.apply();
            next_until_copy.apply();
            meta.egress_port = RESV_RECIRC_PORT;
            if (hdr.reservation.left == 1) {
                // this pass writes the last cell: the grant goes back, or the announcement ends
                hdr.resv_booking.setInvalid();
                meta.egress_port = hdr.reservation.in_port[8:0];
                if (kind == RESV_REQUEST) {
                    hdr.reservation.kind = RESV_GRANT;
                } else {
                    meta.drop = 1;  // one-way: booked, nothing to answer
                }
            }
            left_down.apply();
        } else if (hdr.resv_booking.pass == RESV_PASS_REFUSED) {
            if (kind == RESV_REQUEST) {
                resv_refused.count(in_index);
                refuse();
                refused_set.apply();
                slots_clear.apply();
            } else {
                resv_collided.count(in_index);
                collide();
            }
        } else {
            meta.egress_port = RESV_RECIRC_PORT;  // the egress's passes (OcsBooking)
        }
    }
}

// The passes that read and move the horizons, in the egress of the recirculation port (a booking
// frame's way back to the ingress): READ, START, WINDOW, COMMIT; each sets the next pass, REFUSED
// where no window fits.
control OcsBooking(inout ocs_headers_t hdr) {

    // The horizons' stateful ALUs take two inputs each, whichever action runs: to read, now and a
    // cycle ahead of now; to commit, the horizon the first pass took and the window's end.
    time_t in_ref = 0;
    time_t in_arg = 0;
    time_t out_ref = 0;
    time_t out_arg = 0;
    Register<time_t, bit<32>>(RESV_TNA_PORTS, 0) horizon_in;   // by OCS port: its last window's end
    Register<time_t, bit<32>>(RESV_TNA_PORTS, 0) horizon_out;
    // A port's horizon as Algorithm 1 takes it: its value while ahead of now by at most a cycle, else
    // now (free). The commit compares with this, so a horizon found stale commits as well.
    RegisterAction<time_t, bit<32>, time_t>(horizon_in) read_in = {
        void apply(inout time_t h, out time_t seen) {
            if ((int<32>) (h - in_ref) > 0 && (int<32>) (h - in_arg) <= 0) {
                seen = h;
            } else {
                seen = in_ref;
            }
        }
    };
    RegisterAction<time_t, bit<32>, time_t>(horizon_out) read_out = {
        void apply(inout time_t h, out time_t seen) {
            if ((int<32>) (h - out_ref) > 0 && (int<32>) (h - out_arg) <= 0) {
                seen = h;
            } else {
                seen = out_ref;
            }
        }
    };
    // The commit: the horizon is no later than the first pass took it (nobody booked the port since:
    // a booking only moves a horizon past its own now): the window's end, 1; else 0.
    RegisterAction<time_t, bit<32>, bit<8>>(horizon_in) commit_in = {
        void apply(inout time_t h, out bit<8> ok) {
            ok = 0;
            if ((int<32>) (h - in_ref) <= 0) {
                h = in_arg;
                ok = 1;
            }
        }
    };
    RegisterAction<time_t, bit<32>, bit<8>>(horizon_out) commit_out = {
        void apply(inout time_t h, out bit<8> ok) {
            ok = 0;
            if ((int<32>) (h - out_ref) <= 0) {
                h = out_arg;
                ok = 1;
            }
        }
    };
    WindowLength() window;

    time_t slot_time = 0;
    time_t cycle_time = 0;    // copies of one length for each chain that adds it (an ALU reads
    time_t cycle_time_b = 0;  // only containers of its destination's group)

    // The schedule's slots a cycle, a slot's and the cycle's length (time_t units: the cycle's is the
    // schedule's mask + 1). Trip slots are in resv_slot_times' earliest.
    action set_reservation(bit<16> slots, time_t slot_len, time_t cycle_len) {
        slot_time = slot_len;
        hdr.resv_booking.last_slot = slots - 1;  // for the cell passes (ingress)
        hdr.resv_booking.slot_len = slot_len;
        cycle_time = cycle_len;
        cycle_time_b = cycle_len;
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

    // From the cycle's start: where the earliest window starts when asked in this slot (slot
    // cur + 1 + trip's start; beyond the cycle's length when that is in the next cycle), and the
    // latest a window may end (slot cur's start, one cycle on).
    time_t earliest_phase = 0;
    time_t limit_phase = 0;
    action set_slot_times(time_t earliest, time_t limit) {
        earliest_phase = earliest;
        limit_phase = limit;
    }

    table resv_slot_times {
        key = {
            hdr.resv_booking.slot: exact @name("slot");
        }
        actions = {
            set_slot_times;
            @defaultonly NoAction;
        }
        default_action = NoAction();
        size = RESV_TNA_SLOTS;
    }

    // An announced window's start (one-way): its slot's start from the cycle's start, this cycle's
    // and the next's (taken when the slot is not ahead of the current one).
    time_t announced = 0;
    time_t announced_next = 0;
    action set_slot_phase(time_t phase, time_t next) {
        announced = phase;
        announced_next = next;
    }

    table resv_slot_phase {
        key = {
            hdr.reservation.start: exact @name("slot");
        }
        actions = {
            set_slot_phase;
            @defaultonly NoAction;
        }
        default_action = NoAction();
        size = RESV_TNA_SLOTS;
    }

    // n slots of time (no multiplier): one entry per window length.
    time_t span = 0;
    action set_span(time_t length) {
        span = length;
    }

    table resv_span {
        key = {
            hdr.reservation.slots: exact @name("slots");
        }
        actions = {
            set_span;
            @defaultonly NoAction;
        }
        default_action = NoAction();
        size = RESV_TNA_SLOTS;
    }

    // The slot that begins at a boundary (its time from the cycle's start: this cycle's and the next's).
    time_t start_phase = 0;
    bit<16> start_slot = 0;
    bit<1> on_boundary = 0;
    action set_start_slot(bit<16> slot) {
        start_slot = slot;
        on_boundary = 1;
    }

    table resv_start_slot {
        key = {
            start_phase: exact @name("phase");
        }
        actions = {
            set_start_slot;
            @defaultonly NoAction;
        }
        default_action = NoAction();
        size = RESV_TNA_SLOTS * 2;
    }

    // Algorithm 1 in times, a subtraction or addition a step (a table each: bf-p4c keeps them apart);
    // a gateway tests a difference's sign (TIME_NEGATIVE). Identity hashes copy a value into a
    // container of its own where a chain hands it on (as glue.p4's DECLARE_NOW): the clock's fields
    // are sliced by the schedule's 20-bit phase key, and an ALU reads only containers of its
    // destination's group. An action takes 32 bits of hash output: a copy a step.
    //
    // The read pass: both horizons as Algorithm 1 takes them, the cycle's start, the earliest start
    // (or the announced one) and the latest end, into the booking header.
    Hash<time_t>(HashAlgorithm_t.IDENTITY) now_in_hash;
    Hash<time_t>(HashAlgorithm_t.IDENTITY) now_out_hash;
    Hash<time_t>(HashAlgorithm_t.IDENTITY) now_hash;
    Hash<time_t>(HashAlgorithm_t.IDENTITY) phase_hash;
    Hash<time_t>(HashAlgorithm_t.IDENTITY) seen_in_hash;
    Hash<time_t>(HashAlgorithm_t.IDENTITY) seen_out_hash;
    Hash<time_t>(HashAlgorithm_t.IDENTITY) earliest_hash;
    Hash<time_t>(HashAlgorithm_t.IDENTITY) cycle_start_hash;
    Hash<time_t>(HashAlgorithm_t.IDENTITY) limit_hash;
    time_t now = 0;
    time_t phase = 0;
    time_t cycle_start = 0;
    time_t first = 0;         // from the cycle's start: the earliest window's start, or the announced one
    time_t earliest = 0;
    time_t limit = 0;
    time_t h_in = 0;
    time_t h_out = 0;
    bit<16> announced_ahead = 0;  // the announced slot - the current one (0 or negative: not ahead)
    STEP(now_in_copy, in_ref = now_in_hash.get({ hdr.resv_booking.now }))
    STEP(now_out_copy, out_ref = now_out_hash.get({ hdr.resv_booking.now }))
    STEP(now_copy, now = now_hash.get({ hdr.resv_booking.now }))
    STEP(phase_copy, phase = phase_hash.get({ hdr.resv_booking.phase }))
    STEP(in_ahead_step, in_arg = in_ref + cycle_time)
    STEP(out_ahead_step, out_arg = out_ref + cycle_time_b)
    STEP(announced_ahead_step, announced_ahead = hdr.reservation.start - hdr.resv_booking.slot)
    STEP(cycle_start_step, cycle_start = now - phase)
    STEP(earliest_step, earliest = cycle_start + first)
    STEP(limit_step, limit = cycle_start + limit_phase)
    STEP(seen_in_copy, hdr.resv_booking.seen_in = seen_in_hash.get({ h_in }))
    STEP(seen_out_copy, hdr.resv_booking.seen_out = seen_out_hash.get({ h_out }))
    STEP(earliest_copy, hdr.resv_booking.earliest = earliest_hash.get({ earliest }))
    STEP(cycle_start_copy, hdr.resv_booking.cycle_start = cycle_start_hash.get({ cycle_start }))
    STEP(limit_copy, hdr.resv_booking.limit = limit_hash.get({ limit }))

    // The window pass: its start (the latest of the earliest and both horizons), end, first slot,
    // whether it fits; no register.
    Hash<time_t>(HashAlgorithm_t.IDENTITY) h_in_hash;
    Hash<time_t>(HashAlgorithm_t.IDENTITY) h_out_hash;
    Hash<time_t>(HashAlgorithm_t.IDENTITY) earliest_back_hash;
    Hash<time_t>(HashAlgorithm_t.IDENTITY) start_hash;
    Hash<time_t>(HashAlgorithm_t.IDENTITY) start_end_hash;
    Hash<time_t>(HashAlgorithm_t.IDENTITY) start_phase_hash;
    Hash<time_t>(HashAlgorithm_t.IDENTITY) limit_back_hash;
    Hash<time_t>(HashAlgorithm_t.IDENTITY) cycle_start_back_hash;
    Hash<time_t>(HashAlgorithm_t.IDENTITY) end_hash;
    Hash<time_t>(HashAlgorithm_t.IDENTITY) until_hash;
    time_t h_in_b = 0;
    time_t h_out_b = 0;
    time_t earliest_b = 0;
    time_t in_late = 0;       // positive: the input is busy past the earliest start
    time_t out_late = 0;
    time_t out_after_in = 0;  // positive: the output's horizon is the later
    time_t start = 0;
    time_t start_end = 0;
    time_t start_b = 0;
    time_t limit_b = 0;
    time_t cycle_start_b = 0;
    time_t end = 0;
    time_t margin = 0;        // negative: the window ends beyond the limit
    time_t first_until = 0;
    STEP(h_in_copy, h_in_b = h_in_hash.get({ hdr.resv_booking.seen_in }))
    STEP(h_out_copy, h_out_b = h_out_hash.get({ hdr.resv_booking.seen_out }))
    STEP(earliest_back, earliest_b = earliest_back_hash.get({ hdr.resv_booking.earliest }))
    STEP(in_late_step, in_late = h_in_b - earliest_b)
    STEP(out_late_step, out_late = h_out_b - earliest_b)
    STEP(out_after_in_step, out_after_in = h_out_b - h_in_b)
    STEP(start_copy, hdr.resv_booking.start = start_hash.get({ start }))
    STEP(start_end_copy, start_end = start_end_hash.get({ hdr.resv_booking.start }))
    STEP(start_b_copy, start_b = start_phase_hash.get({ hdr.resv_booking.start }))
    STEP(limit_back, limit_b = limit_back_hash.get({ hdr.resv_booking.limit }))
    STEP(cycle_start_back, cycle_start_b = cycle_start_back_hash.get({ hdr.resv_booking.cycle_start }))
    STEP(end_step, end = start_end + span)
    STEP(margin_step, margin = limit_b - end)
    STEP(start_phase_step, start_phase = start_b - cycle_start_b)
    STEP(first_until_step, first_until = start_b + slot_time)
    STEP(end_copy, hdr.resv_booking.end = end_hash.get({ end }))
    STEP(first_until_copy, hdr.resv_booking.until = until_hash.get({ first_until }))

    // The commit pass: both horizons moved to the window's end, unless either changed since read.
    Hash<time_t>(HashAlgorithm_t.IDENTITY) seen_in_back_hash;
    Hash<time_t>(HashAlgorithm_t.IDENTITY) seen_out_back_hash;
    Hash<time_t>(HashAlgorithm_t.IDENTITY) end_in_hash;
    Hash<time_t>(HashAlgorithm_t.IDENTITY) end_out_hash;
    STEP(seen_in_back, in_ref = seen_in_back_hash.get({ hdr.resv_booking.seen_in }))
    STEP(seen_out_back, out_ref = seen_out_back_hash.get({ hdr.resv_booking.seen_out }))
    STEP(end_in_back, in_arg = end_in_hash.get({ hdr.resv_booking.end }))
    STEP(end_out_back, out_arg = end_out_hash.get({ hdr.resv_booking.end }))

    apply {
        reservation_config.apply();
        bit<8> kind = hdr.reservation.kind;
        bit<32> in_index = (bit<32>) hdr.reservation.in_port;
        bit<32> out_index = (bit<32>) hdr.reservation.dst_port;
        bit<8> pass = hdr.resv_booking.pass;
        if (pass == RESV_PASS_READ) {
            // A frame from a port (the ingress set its booking state, never taken from a port): both
            // horizons read (not yet written), the earliest start and the latest end.
            now_in_copy.apply();
            now_out_copy.apply();
            now_copy.apply();
            phase_copy.apply();
            announced_ahead_step.apply();
            resv_slot_times.apply();
            bit<16> n;
            if (kind == RESV_ANNOUNCE) {
                n = hdr.reservation.slots;
                resv_slot_phase.apply();
                first = announced_next;  // its slot's next occurrence, unless it is ahead in this cycle
                if (announced_ahead != 0 && !SLOT_NEGATIVE(announced_ahead)) {
                    first = announced;
                }
            } else {
                window.apply(hdr.reservation.bytes, n);
                first = earliest_phase;
            }
            in_ahead_step.apply();
            out_ahead_step.apply();
            cycle_start_step.apply();
            h_in = read_in.execute(in_index);
            h_out = read_out.execute(out_index);
            earliest_step.apply();
            limit_step.apply();
            seen_in_copy.apply();
            seen_out_copy.apply();
            earliest_copy.apply();
            cycle_start_copy.apply();
            limit_copy.apply();
            hdr.reservation.slots = n;
            hdr.reservation.left = n;
            hdr.resv_booking.pass = RESV_PASS_START;
            if (n == 0 || hdr.resv_booking.sched_on == 0 || out_index >= RESV_TNA_PORTS) {
                hdr.resv_booking.pass = RESV_PASS_REFUSED;
            }
        } else if (pass == RESV_PASS_START) {
            // The window's start: the latest of the earliest and both horizons (an announcement
            // takes its slots or none: a port busy past its start is a collision).
            h_in_copy.apply();
            h_out_copy.apply();
            earliest_back.apply();
            in_late_step.apply();
            out_late_step.apply();
            out_after_in_step.apply();
            bit<1> in_busy = 0;
            bit<1> out_busy = 0;
            if (in_late != 0 && !TIME_NEGATIVE(in_late)) {
                in_busy = 1;
            }
            if (out_late != 0 && !TIME_NEGATIVE(out_late)) {
                out_busy = 1;
            }
            start = earliest_b;
            if (out_busy == 1 && (in_busy == 0 || (out_after_in != 0 && !TIME_NEGATIVE(out_after_in)))) {
                start = h_out_b;
            } else if (in_busy == 1) {
                start = h_in_b;
            }
            start_copy.apply();
            hdr.resv_booking.pass = RESV_PASS_WINDOW;
            if (kind == RESV_ANNOUNCE && (in_busy == 1 || out_busy == 1)) {
                hdr.resv_booking.pass = RESV_PASS_REFUSED;
            }
        } else if (pass == RESV_PASS_WINDOW) {
            // Its end, whether it fits in the cycle, its first slot, its first cell's end.
            start_end_copy.apply();
            start_b_copy.apply();
            limit_back.apply();
            cycle_start_back.apply();
            resv_span.apply();
            end_step.apply();
            start_phase_step.apply();
            first_until_step.apply();
            margin_step.apply();
            resv_start_slot.apply();
            end_copy.apply();
            first_until_copy.apply();
            hdr.reservation.start = start_slot;
            hdr.reservation.cursor = start_slot;
            hdr.resv_booking.pass = RESV_PASS_COMMIT;
            if (on_boundary == 0 || span == 0 || TIME_NEGATIVE(margin)) {
                hdr.resv_booking.pass = RESV_PASS_REFUSED;
            }
        } else if (pass == RESV_PASS_COMMIT) {
            // Both horizons to the window's end, unless either changed since the read.
            seen_in_back.apply();
            seen_out_back.apply();
            end_in_back.apply();
            end_out_back.apply();
            hdr.resv_booking.pass = RESV_PASS_REFUSED;
            if (commit_in.execute(in_index) == 1) {
                if (commit_out.execute(out_index) == 1) {
                    hdr.resv_booking.pass = RESV_PASS_CELLS;
                }
            }
        }
    }
}

#endif  // P4SRC_INCLUDE_TNA_RESERVATION_OCS_P4_
