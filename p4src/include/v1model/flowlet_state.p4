// v1model flowlet state: the per-flow registers of flowlet.p4 and the accesses the gate makes,
// each one read, compute, write of one register (include/tna/flowlet_state.p4 has the same
// accesses as Tofino RegisterActions, one stateful ALU each, with the same names and meaning).
// Indexed by meta.flow_index. Declarations for the body of control Flowlet (hdr, meta in scope).
#ifndef P4SRC_INCLUDE_V1MODEL_FLOWLET_STATE_P4_
#define P4SRC_INCLUDE_V1MODEL_FLOWLET_STATE_P4_

    // The flow's version; when its last packet has left at line rate; the pending change
    // {since, wanted = the entry's version + 1}; TCP: the end of its highest data, the receiver's
    // last acknowledgement. Registers are data-plane state: PI cannot write them, and needs not.
    register<bit<8>>(FLOWLET_SIZE) flow_version;
    register<time_t>(FLOWLET_SIZE) flow_departure;
    register<time_t>(FLOWLET_SIZE) flow_pending_since;
    register<bit<8>>(FLOWLET_SIZE) flow_pending_wanted;
    register<bit<32>>(FLOWLET_SIZE) flow_sent_end;
    register<bit<32>>(FLOWLET_SIZE) flow_acked;

    // flow_departure: out the stored time; in max(stored, now) + this packet's flow_tx.
    action departure_touch() {
        flow_departure.read(meta.flow_departure, meta.flow_index);
        time_t start = meta.flow_departure;
        if (TIME_AFTER(meta.now, start)) {
            start = meta.now;
        }
        flow_departure.write(meta.flow_index, start + meta.flow_tx);
    }

    // flow_pending: a new wanted version restarts the wait now; out since when it waits.
    action pending_touch() {
        bit<8> wanted;
        flow_pending_wanted.read(wanted, meta.flow_index);
        flow_pending_since.read(meta.flow_pending, meta.flow_index);
        if (wanted != meta.flow_wanted) {
            meta.flow_pending = meta.now;
        }
        flow_pending_wanted.write(meta.flow_index, meta.flow_wanted);
        flow_pending_since.write(meta.flow_index, meta.flow_pending);
    }

    // ACK path (meta.flow_wanted = the flow's version + 1): since when its change waits, 0 if it
    // waits for none (nothing wanted yet, or the flow is on the wanted version).
    action pending_read() {
        bit<8> wanted;
        flow_pending_wanted.read(wanted, meta.flow_index);
        flow_pending_since.read(meta.flow_pending, meta.flow_index);
        if (wanted == 0 || wanted == meta.flow_wanted) {
            meta.flow_pending = 0;
        }
    }

    // flow_sent_end: out the stored end; in this segment's end if later (new data) or the slot is stale.
    action sent_end_update() {
        flow_sent_end.read(meta.flow_sent_end, meta.flow_index);
        bit<32> stored = meta.flow_sent_end;
        if (meta.flow_end - meta.flow_sent_end < HALF_32) {
            stored = meta.flow_end;
        }
        if (meta.flow_stale == 1) {
            stored = meta.flow_end;
        }
        flow_sent_end.write(meta.flow_index, stored);
    }

    action sent_end_read() {
        flow_sent_end.read(meta.flow_sent_end, meta.flow_index);
    }

    action acked_read() {
        flow_acked.read(meta.flow_acked, meta.flow_index);
    }

    // ACK path: out the previous acknowledgement; in this one.
    action acked_swap() {
        flow_acked.read(meta.flow_acked, meta.flow_index);
        flow_acked.write(meta.flow_index, hdr.tcp.ack_no);
    }

    // flow_version: the gate opens, the flow takes the entry's version (meta.version, kept); or it
    // stays, and the packet takes the flow's.
    action version_move() {
        flow_version.write(meta.flow_index, (bit<8>) meta.version);
    }

    action version_keep() {
        flow_version.read(meta.flow_version, meta.flow_index);
        meta.version = (version_t) meta.flow_version;
    }

    // A drain probe: the flow's version; the ACK path: the acknowledged flow's (below).
    action version_read() {
        flow_version.read(meta.flow_version, meta.flow_index);
        meta.version = (version_t) meta.flow_version;
    }

    // A packet at its ingress switch: departure_touch, acked_read, pending_touch, then (TCP) stale
    // (idle past MAX_HOLD: a new flow may have taken the slot, its first segment sets the flow's end)
    // and sent_end_update. Gap over: idle longer than GAP after the flow's departure; waited: the
    // change has waited MAX_HOLD; drained: everything the flow sent was acknowledged.
#define FLOWLET_GATE_STATE \
    FLOWLET_TX(); \
    meta.flow_wanted = (bit<8>) meta.version + 1; \
    departure_touch(); \
    acked_read(); \
    pending_touch(); \
    if (hdr.tcp.isValid()) { \
        meta.flow_stale = 0; \
        if (TIME_AFTER(meta.now, meta.flow_departure + (time_t) meta.flowlet_max_hold)) { \
            meta.flow_stale = 1; \
        } \
        sent_end_update(); \
    }
#define FLOW_GAP_OVER TIME_AFTER(meta.now, meta.flow_departure + (time_t) meta.flowlet_gap)
#define FLOW_WAITED !TIME_AFTER(meta.flow_pending + (time_t) meta.flowlet_max_hold, meta.now)
#define FLOW_DRAINED (meta.flow_acked == meta.flow_sent_end)

    // An ACK on its way back (the acknowledged flow's slot): its version -> pending_read (since when
    // it waits to move; 0: it waits for none), sent_end_read, acked_swap. It holds the sender when
    // the flow waits, this ACK acknowledges new data (not a duplicate) but not everything
    // (0 < unacked < 2^31), and MAX_HOLD has not passed; it leaves one segment (a drain probe) at
    // most FLOWLET_DRAIN_SLACK bytes.
#define FLOWLET_ACK_STATE \
    meta.flow_index = meta.ack_index; \
    flow_version.read(meta.flow_version, meta.flow_index); \
    meta.flow_wanted = meta.flow_version + 1; \
    pending_read(); \
    sent_end_read(); \
    acked_swap(); \
    meta.flow_unacked = meta.flow_sent_end - hdr.tcp.ack_no;
#define FLOW_ACK_HOLDS (meta.flow_pending != 0 && hdr.tcp.ack_no != meta.flow_acked && \
                        meta.flow_unacked != 0 && meta.flow_unacked < HALF_32 && \
                        TIME_AFTER(meta.flow_pending + (time_t) meta.flowlet_max_hold, meta.now))
#define FLOW_ACK_LEAVES_ONE (meta.flow_unacked <= FLOWLET_DRAIN_SLACK)

    // This packet's accesses by its role (flowlet.p4), in one block: v1model has no stages to
    // spread them over. The ACK's version was read above.
#define FLOWLET_STATE \
    if (FLOWLET_ACK) { \
        FLOWLET_ACK_STATE \
    } else if (FLOWLET_GATE) { \
        if (hdr.tcp.isValid()) { \
            TCP_END(meta.flow_end); \
        } \
        FLOWLET_GATE_STATE \
    }
#define FLOWLET_ACK_VERSION

#endif  // P4SRC_INCLUDE_V1MODEL_FLOWLET_STATE_P4_
