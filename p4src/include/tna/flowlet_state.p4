// TNA flowlet state: the per-flow registers of flowlet.p4 and the accesses the gate makes, each a
// RegisterAction (one stateful ALU: read the register, compute from it and from metadata, write it,
// return one value), with the names and meaning of include/v1model/flowlet_state.p4. A register
// pair needs no subtraction of its own (bf-p4c allows it only when written back): the held time
// is computed from the returned `since` outside. Indexed by meta.flow_index.
// Declarations for the body of control Flowlet (hdr, meta in scope).
#ifndef P4SRC_INCLUDE_TNA_FLOWLET_STATE_P4_
#define P4SRC_INCLUDE_TNA_FLOWLET_STATE_P4_

    Register<bit<8>, bit<32>>(FLOWLET_SIZE, 0) flow_version;
    Register<time_t, bit<32>>(FLOWLET_SIZE, 0) flow_departure;
    Register<flowlet_pending_t, bit<32>>(FLOWLET_SIZE, {32w0, 32w0}) flow_pending;
    Register<bit<32>, bit<32>>(FLOWLET_SIZE, 0) flow_sent_end;
    Register<bit<32>, bit<32>>(FLOWLET_SIZE, 0) flow_acked;

    // flow_departure: out the stored time; in max(stored, now) + this packet's flow_tx
    // (meta.now_tx = now + flow_tx, added before: one ALU operation per branch).
    RegisterAction<time_t, bit<32>, time_t>(flow_departure) departure_touch_ra = {
        void apply(inout time_t departure, out time_t before) {
            before = departure;
            if (TIME_AFTER(meta.now, departure)) {
                departure = meta.now_tx;
            } else {
                departure = departure + meta.flow_tx;
            }
        }
    };

    // flow_pending: a new wanted version restarts the wait now; out since when it waits.
    RegisterAction<flowlet_pending_t, bit<32>, time_t>(flow_pending) pending_touch_ra = {
        void apply(inout flowlet_pending_t p, out time_t since) {
            if (p.wanted != (bit<32>) meta.flow_wanted) {
                p.since = meta.now;
                p.wanted = (bit<32>) meta.flow_wanted;
            }
            since = p.since;
        }
    };

    // ACK path (meta.flow_wanted = the flow's version + 1): since when its change waits, 0 if none.
    RegisterAction<flowlet_pending_t, bit<32>, time_t>(flow_pending) pending_read_ra = {
        void apply(inout flowlet_pending_t p, out time_t since) {
            since = 0;
            if (p.wanted != 0 && p.wanted != (bit<32>) meta.flow_wanted) {
                since = p.since;
            }
        }
    };

    // flow_sent_end: out the stored end; in this segment's end if later (new data) or the slot is stale.
    RegisterAction<bit<32>, bit<32>, bit<32>>(flow_sent_end) sent_end_update_ra = {
        void apply(inout bit<32> sent_end, out bit<32> before) {
            before = sent_end;
            if (meta.flow_end - sent_end < HALF_32 || meta.flow_stale == 1) {
                sent_end = meta.flow_end;
            }
        }
    };

    RegisterAction<bit<32>, bit<32>, bit<32>>(flow_sent_end) sent_end_read_ra = {
        void apply(inout bit<32> sent_end, out bit<32> before) {
            before = sent_end;
        }
    };

    RegisterAction<bit<32>, bit<32>, bit<32>>(flow_acked) acked_read_ra = {
        void apply(inout bit<32> acked, out bit<32> before) {
            before = acked;
        }
    };

    // ACK path: out the previous acknowledgement; in this one.
    RegisterAction<bit<32>, bit<32>, bit<32>>(flow_acked) acked_swap_ra = {
        void apply(inout bit<32> acked, out bit<32> before) {
            before = acked;
            acked = hdr.tcp.ack_no;
        }
    };

    // flow_version: the entry's version when the gate opens (meta.flow_move); out the version after.
    RegisterAction<bit<8>, bit<32>, bit<8>>(flow_version) version_gate_ra = {
        void apply(inout bit<8> version, out bit<8> after) {
            if (meta.flow_move == 1) {
                version = meta.flow_wanted - 1;
            }
            after = version;
        }
    };

    RegisterAction<bit<8>, bit<32>, bit<8>>(flow_version) version_read_ra = {
        void apply(inout bit<8> version, out bit<8> before) {
            before = version;
        }
    };

    action departure_touch() {
        meta.flow_departure = departure_touch_ra.execute(meta.flow_index);
    }

    action pending_touch() {
        meta.flow_pending = pending_touch_ra.execute(meta.flow_index);
    }

    action pending_read() {
        meta.flow_pending = pending_read_ra.execute(meta.flow_index);
    }

    action sent_end_update() {
        meta.flow_sent_end = sent_end_update_ra.execute(meta.flow_index);
    }

    action sent_end_read() {
        meta.flow_sent_end = sent_end_read_ra.execute(meta.flow_index);
    }

    action acked_read() {
        meta.flow_acked = acked_read_ra.execute(meta.flow_index);
    }

    action acked_swap() {
        meta.flow_acked = acked_swap_ra.execute(meta.flow_index);
    }

    action version_gate() {
        meta.flow_version = version_gate_ra.execute(meta.flow_index);
    }

    action version_read() {
        meta.flow_version = version_read_ra.execute(meta.flow_index);
    }

    // length x BYTE_NS >> 10 without a multiplier: BYTE_NS rounded up to a power of two 2^k
    // (at most twice the real time on the port: a gap then counts from a later departure, which
    // only delays a move), so the product is a shift of the length. Program constants, hidden
    // from the control plane (not in P4Info). BYTE_NS 0: no departure estimate (gaps from arrival).
    action tx_none() {
        meta.flow_tx = 0;
    }

    action tx_shift_0() {
        meta.flow_tx = meta.pkt_len >> 10;
    }

    action tx_shift_1() {
        meta.flow_tx = meta.pkt_len >> 9;
    }

    action tx_shift_2() {
        meta.flow_tx = meta.pkt_len >> 8;
    }

    action tx_shift_3() {
        meta.flow_tx = meta.pkt_len >> 7;
    }

    action tx_shift_4() {
        meta.flow_tx = meta.pkt_len >> 6;
    }

    action tx_shift_5() {
        meta.flow_tx = meta.pkt_len >> 5;
    }

    action tx_shift_6() {
        meta.flow_tx = meta.pkt_len >> 4;
    }

    action tx_shift_7() {
        meta.flow_tx = meta.pkt_len >> 3;
    }

    action tx_shift_8() {
        meta.flow_tx = meta.pkt_len >> 2;
    }

    action tx_shift_9() {
        meta.flow_tx = meta.pkt_len >> 1;
    }

    action tx_shift_10() {
        meta.flow_tx = meta.pkt_len;
    }

    action tx_shift_11() {
        meta.flow_tx = meta.pkt_len << 1;
    }

    action tx_shift_12() {
        meta.flow_tx = meta.pkt_len << 2;
    }

    action tx_shift_13() {
        meta.flow_tx = meta.pkt_len << 3;
    }

    @hidden
    table flowlet_tx {
        key = {
            meta.flowlet_byte_ns: ternary;
        }
        actions = {
            tx_none;
            tx_shift_0;
            tx_shift_1;
            tx_shift_2;
            tx_shift_3;
            tx_shift_4;
            tx_shift_5;
            tx_shift_6;
            tx_shift_7;
            tx_shift_8;
            tx_shift_9;
            tx_shift_10;
            tx_shift_11;
            tx_shift_12;
            tx_shift_13;
        }
        const default_action = tx_none();
        const entries = {
            32w0 &&& 32w0xFFFFFFFF: tx_none();
            32w1 &&& 32w0xFFFFFFFF: tx_shift_0();
            32w2 &&& 32w0xFFFFFFFF: tx_shift_1();
            32w4 &&& 32w0xFFFFFFFF: tx_shift_2();
            32w8 &&& 32w0xFFFFFFFF: tx_shift_3();
            32w16 &&& 32w0xFFFFFFFF: tx_shift_4();
            32w32 &&& 32w0xFFFFFFFF: tx_shift_5();
            32w64 &&& 32w0xFFFFFFFF: tx_shift_6();
            32w128 &&& 32w0xFFFFFFFF: tx_shift_7();
            32w256 &&& 32w0xFFFFFFFF: tx_shift_8();
            32w512 &&& 32w0xFFFFFFFF: tx_shift_9();
            32w1024 &&& 32w0xFFFFFFFF: tx_shift_10();
            32w2048 &&& 32w0xFFFFFFFF: tx_shift_11();
            32w4096 &&& 32w0xFFFFFFFF: tx_shift_12();
            32w2 &&& 32w0xFFFFFFFE: tx_shift_2();
            32w4 &&& 32w0xFFFFFFFC: tx_shift_3();
            32w8 &&& 32w0xFFFFFFF8: tx_shift_4();
            32w16 &&& 32w0xFFFFFFF0: tx_shift_5();
            32w32 &&& 32w0xFFFFFFE0: tx_shift_6();
            32w64 &&& 32w0xFFFFFFC0: tx_shift_7();
            32w128 &&& 32w0xFFFFFF80: tx_shift_8();
            32w256 &&& 32w0xFFFFFF00: tx_shift_9();
            32w512 &&& 32w0xFFFFFE00: tx_shift_10();
            32w1024 &&& 32w0xFFFFFC00: tx_shift_11();
            32w2048 &&& 32w0xFFFFF800: tx_shift_12();
            32w0 &&& 32w0: tx_shift_13();
        }
    }

#endif  // P4SRC_INCLUDE_TNA_FLOWLET_STATE_P4_
