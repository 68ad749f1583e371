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

    // flow_version: the entry's version when the gate opens (meta.flow_move); out the version after.
    action version_gate() {
        flow_version.read(meta.flow_version, meta.flow_index);
        if (meta.flow_move == 1) {
            meta.flow_version = (bit<8>) meta.version;
        }
        flow_version.write(meta.flow_index, meta.flow_version);
    }

    action version_read() {
        flow_version.read(meta.flow_version, meta.flow_index);
    }

#endif  // P4SRC_INCLUDE_V1MODEL_FLOWLET_STATE_P4_
