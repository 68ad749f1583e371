// TNA flowlet state: the per-flow registers of flowlet.p4, each access a RegisterAction (one stateful
// ALU: read the register, compare it with and compute from at most two metadata fields, write it,
// return one value), and the flags flowlet.p4 decides on. Indexed by meta.flow_index. Declarations
// for the body of control Flowlet (hdr, meta in scope).
//
// What Tofino changes (p4src/README.md, "v1model and TNA"):
// - Comparisons happen inside the stateful ALUs where they can (drained, a new ACK), else on a
//   difference taken one stage before (a gateway compares a field with a constant, not two fields):
//   gap over, MAX_HOLD waited. Registers are placed so no access waits for a later one: departure,
//   acked, pending (stage k), sent_end (k + 1: it compares with acked), version (k + 2: the move).
// - flow_version holds the version the flow is on and whether it waits for another (the entry's
//   version differed when the gate kept it). The ACK path reads the flag there, where v1model reads
//   the version and compares it with the wanted one: Tofino's pending register comes before the
//   version register, so the ACK path cannot compare the two.
// - departure: max(departure, now) + the packet's time takes three values (now, now + time, time)
//   where a stateful ALU reads two. The first packet after the flow went idle counts as
//   FLOWLET_TX_FIRST (at least any packet's time), the next ones as their own: the departure is
//   exact within a burst and at most FLOWLET_TX_FIRST late after idle, so a move only waits longer.
// - A new flow in a slot is known by its SYN (sent_end restarts), not by MAX_HOLD of idle: that
//   flag would come from the departure two stages after sent_end's access.
#ifndef P4SRC_INCLUDE_TNA_FLOWLET_STATE_P4_
#define P4SRC_INCLUDE_TNA_FLOWLET_STATE_P4_

    Register<bit<8>, bit<32>>(FLOWLET_SIZE, 0) flow_version;
    Register<time_t, bit<32>>(FLOWLET_SIZE, 0) flow_departure;
    Register<flowlet_pending_t, bit<32>>(FLOWLET_SIZE, {0, 0}) flow_pending;
    Register<bit<32>, bit<32>>(FLOWLET_SIZE, 0) flow_sent_end;
    Register<bit<32>, bit<32>>(FLOWLET_SIZE, 0) flow_acked;

    // flow_departure: out now - departure (idle time, negative while the flow's backlog lasts); in
    // max(departure, now) + the packet's time (FLOWLET_TX_FIRST after idle, above).
    RegisterAction<time_t, bit<32>, time_t>(flow_departure) departure_touch_ra = {
        void apply(inout time_t departure, out time_t idle) {
            idle = meta.now - departure;
            if ((int<32>) (departure - meta.now) < 0) {
                departure = meta.now + FLOWLET_TX_FIRST;
            } else {
                departure = departure + meta.flow_tx;
            }
        }
    };

    // flow_pending {since, wanted = the entry's version + 1}: a new wanted version restarts the
    // wait now; out since when it waits. One action per wanted version (1, 2), so no field carries
    // the entry's version into the stateful ALU, which reads `now` already.
#define PENDING_TOUCH(name, wanted_version) \
    RegisterAction<flowlet_pending_t, bit<32>, time_t>(flow_pending) name = { \
        void apply(inout flowlet_pending_t p, out time_t since) { \
            if (p.wanted != wanted_version) { \
                p.since = meta.now; \
                p.wanted = wanted_version; \
            } \
            since = p.since; \
        } \
    };
    PENDING_TOUCH(pending_touch_v0_ra, 1)
    PENDING_TOUCH(pending_touch_v1_ra, 2)

    RegisterAction<flowlet_pending_t, bit<32>, time_t>(flow_pending) pending_since_ra = {
        void apply(inout flowlet_pending_t p, out time_t since) {
            since = p.since;
        }
    };

    RegisterAction<bit<32>, bit<32>, bit<32>>(flow_acked) acked_read_ra = {
        void apply(inout bit<32> acked, out bit<32> before) {
            before = acked;
        }
    };

    // ACK path: in this acknowledgement; out 1 when it differs from the last one (not a duplicate).
    RegisterAction<bit<32>, bit<32>, bit<1>>(flow_acked) acked_swap_ra = {
        void apply(inout bit<32> acked, out bit<1> fresh) {
            fresh = 0;
            if (acked != hdr.tcp.ack_no) {
                fresh = 1;
            }
            acked = hdr.tcp.ack_no;
        }
    };

    // flow_sent_end: out 1 when it equals the last acknowledgement (drained, before this segment);
    // in this segment's end if later (new data).
    RegisterAction<bit<32>, bit<32>, bit<8>>(flow_sent_end) sent_end_update_ra = {
        void apply(inout bit<32> sent_end, out bit<8> drained) {
            drained = 0;
            if (sent_end == meta.flow_acked) {
                drained = 1;
            }
            if ((int<32>) (meta.flow_end - sent_end) >= 0) {
                sent_end = meta.flow_end;
            }
        }
    };

    // A SYN: a new connection in the slot; its end replaces the old flow's.
    RegisterAction<bit<32>, bit<32>, bit<8>>(flow_sent_end) sent_end_restart_ra = {
        void apply(inout bit<32> sent_end, out bit<8> drained) {
            drained = 0;
            if (sent_end == meta.flow_acked) {
                drained = 1;
            }
            sent_end = meta.flow_end;
        }
    };

    // ACK path: what this acknowledgement leaves of the flow unacknowledged (sequence order: none,
    // or the ACK is ahead of the sent end, counts as nothing): out ACK_LEAVES_NONE, ACK_LEAVES_SOME
    // (more than FLOWLET_DRAIN_SLACK bytes) or ACK_LEAVES_LAST (at most one segment: drain probe).
    // (The ACK's number comes in meta.flow_acked: a stateful ALU reads at most two fields over all
    // its actions, and the gate's read flow_end and flow_acked.)
    RegisterAction<bit<32>, bit<32>, bit<8>>(flow_sent_end) sent_end_unacked_ra = {
        void apply(inout bit<32> sent_end, out bit<8> leaves) {
            leaves = ACK_LEAVES_NONE;
            if ((int<32>) (sent_end - meta.flow_acked) > 0) {
                leaves = ACK_LEAVES_SOME;
                if ((int<32>) (sent_end - meta.flow_acked) <= FLOWLET_DRAIN_SLACK) {
                    leaves = ACK_LEAVES_LAST;
                }
            }
        }
    };

    // flow_version: the version the flow is on (bit 0), and FLOW_PENDING while it waits for another
    // (bit 1). The gate opens: the flow takes the entry's version (meta.version, which the packet
    // keeps); or it stays, left waiting when the entry's differs, and the packet takes its version.
    RegisterAction<bit<8>, bit<32>, bit<8>>(flow_version) version_move_ra = {
        void apply(inout bit<8> state) {
            state = (bit<8>) meta.version;
        }
    };

    RegisterAction<bit<8>, bit<32>, bit<8>>(flow_version) version_keep_ra = {
        void apply(inout bit<8> state, out bit<8> before) {
            before = state;
            if (state != (bit<8>) meta.version && state != (bit<8>) meta.version + FLOW_PENDING) {
                state = state | FLOW_PENDING;
            } else {
                state = (bit<8>) meta.version;
            }
        }
    };

    RegisterAction<bit<8>, bit<32>, bit<8>>(flow_version) version_read_ra = {
        void apply(inout bit<8> state, out bit<8> before) {
            before = state;
        }
    };

    // A drain probe's version: its flow's, which the held ACK read and the probe carries in its
    // drain mark (include/tna/glue.p4), so flow_version has one reader less in its stage.
    action version_read() {
        meta.version = hdr.drain_mark.version;
    }

    action version_move() {
        version_move_ra.execute(meta.flow_index);
    }

    // (The state also to flow_version, where the ACK path reads it: the stateful ALU's output goes
    // to one place for all the tables that share it in a stage.)
    action version_keep() {
        bit<8> state = version_keep_ra.execute(meta.flow_index);
        meta.flow_version = state;
        meta.version = (version_t) state;
    }

    // Each difference the gate compares, a step of its own (glue's STEP), for every packet (the
    // ACK path takes the last two as well): gap - idle < 0: idle longer than GAP; now - MAX_HOLD:
    // a change pending since then waited MAX_HOLD; that - since >= 0: waited MAX_HOLD.
    STEP(flow_gap_left_step, meta.flow_gap_left = meta.flowlet_gap - meta.flow_idle)
    STEP(flow_hold_start_step, meta.flow_hold_start = meta.now - meta.flowlet_max_hold)
    STEP(flow_wait_left_step, meta.flow_wait_left = meta.flow_hold_start - meta.flow_pending)

    // This packet's time on the fabric port (BYTE_NS rounded up: glue's DECLARE_TX_SHIFT).
    DECLARE_TX_SHIFT(flowlet_tx, meta.flowlet_byte_ns, meta.pkt_len, meta.flow_tx)

    // The accesses of both roles (flowlet.p4), each register's in one block of its own, in the
    // stage its inputs are ready: a gate's (v1model's conditions on Tofino's accesses and
    // differences, above); an ACK's, since when the acknowledged flow waits (flow_pending),
    // whether this ACK is new (flow_acked), what it leaves unacknowledged (flow_sent_end) and, in
    // FLOWLET_ACK_VERSION with the gate's access, the flow's pending flag (flow_version). What
    // only prepares (the TCP end, the packet's time, the steps) runs for every packet.
#define FLOWLET_STATE \
    TCP_END(meta.flow_end); \
    flowlet_tx.apply(); \
    flow_hold_start_step.apply(); \
    if (FLOWLET_ACK) { \
        meta.flow_acked = hdr.tcp.ack_no; \
    } \
    if (FLOWLET_GATE) { \
        meta.flow_idle = departure_touch_ra.execute(meta.flow_index); \
    } \
    if (FLOWLET_ACK) { \
        meta.flow_ack_new = acked_swap_ra.execute(meta.ack_index); \
    } else if (FLOWLET_GATE) { \
        meta.flow_acked = acked_read_ra.execute(meta.flow_index); \
    } \
    if (FLOWLET_ACK) { \
        meta.flow_pending = pending_since_ra.execute(meta.ack_index); \
    } else if (FLOWLET_GATE && meta.version == 0) { \
        meta.flow_pending = pending_touch_v0_ra.execute(meta.flow_index); \
    } else if (FLOWLET_GATE) { \
        meta.flow_pending = pending_touch_v1_ra.execute(meta.flow_index); \
    } \
    flow_gap_left_step.apply(); \
    flow_wait_left_step.apply(); \
    if (FLOWLET_ACK) { \
        meta.flow_sent = sent_end_unacked_ra.execute(meta.ack_index); \
    } else if (FLOWLET_GATE && hdr.tcp.isValid() && (hdr.tcp.flags & TCP_FLAG_SYN) != 0) { \
        meta.flow_sent = sent_end_restart_ra.execute(meta.flow_index); \
    } else if (FLOWLET_GATE && hdr.tcp.isValid()) { \
        meta.flow_sent = sent_end_update_ra.execute(meta.flow_index); \
    }
#define FLOW_GAP_OVER TIME_NEGATIVE(meta.flow_gap_left)
#define FLOW_WAITED !TIME_NEGATIVE(meta.flow_wait_left)
#define FLOW_DRAINED (meta.flow_sent == 1)
#define FLOWLET_ACK_VERSION meta.flow_version = version_read_ra.execute(meta.ack_index);
#define FLOW_ACK_HOLDS ((meta.flow_version & FLOW_PENDING) != 0 && meta.flow_ack_new == 1 && \
                        meta.flow_sent != ACK_LEAVES_NONE && TIME_NEGATIVE(meta.flow_wait_left))
#define FLOW_ACK_LEAVES_ONE (meta.flow_sent == ACK_LEAVES_LAST)

#endif  // P4SRC_INCLUDE_TNA_FLOWLET_STATE_P4_
