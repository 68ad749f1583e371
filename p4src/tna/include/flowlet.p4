// Flowlet-gated version change on Tofino: the same behaviour as ../../include/fabric/flowlet.p4,
// with one stateful ALU access per register per packet (RegisterActions).
// Declarations for the body of FabricIngress (hdr, meta, ig_intr_md, ig_prsr_md in scope).
//
// Per flow (5-tuple hash): when it was last seen; the version it is on; and a pair {since, wanted}:
// the time a change to version `wanted - 1` started waiting. An immediate set_version rewrites the
// pair to the current version; a gradual one restarts `since` only when `wanted` changes, which is
// the v1model program's "pending" state without a second access to clear it.
// Times are ig_prsr_md.global_tstamp (ns) >> 10, units of 1.024 us, compared with the table's us
// values (2.4% longer; 32 bits wrap after 73 minutes, which at worst delays a move to MAX_HOLD).
// Not compiled here (no bf-p4c): bf-p4c may need the gap comparisons split over stages.
#ifndef P4SRC_TNA_INCLUDE_FLOWLET_P4_
#define P4SRC_TNA_INCLUDE_FLOWLET_P4_

    Hash<bit<16>>(HashAlgorithm_t.CRC32) flowlet_hash;

    Register<bit<32>, bit<16>>(FLOWLET_SIZE, 0) flow_last_seen;
    // idle time of the flow; the flow is seen now
    RegisterAction<bit<32>, bit<16>, bit<32>>(flow_last_seen) flowlet_touch = {
        void apply(inout bit<32> last, out bit<32> idle) {
            idle = meta.now_us - last;
            last = meta.now_us;
        }
    };

    Register<flowlet_pending_t, bit<16>>(FLOWLET_SIZE, {0, 0}) flow_pending_since;
    // gradual: how long the change to meta.version has been waiting (starts now if it is new)
    RegisterAction<flowlet_pending_t, bit<16>, bit<32>>(flow_pending_since) flowlet_pending = {
        void apply(inout flowlet_pending_t p, out bit<32> held) {
            if (p.wanted != meta.wanted) {
                p.since = meta.now_us;
                p.wanted = meta.wanted;
            }
            held = meta.now_us - p.since;
        }
    };
    // immediate: nothing waits; the flow is on meta.version
    RegisterAction<flowlet_pending_t, bit<16>, bit<32>>(flow_pending_since) flowlet_settled = {
        void apply(inout flowlet_pending_t p) {
            p.since = meta.now_us;
            p.wanted = meta.wanted;
        }
    };

    Register<bit<8>, bit<16>>(FLOWLET_SIZE, 0) flow_version;
    // the flow's version: moved to meta.version when the gate opens, else kept
    RegisterAction<bit<8>, bit<16>, bit<8>>(flow_version) flowlet_gate = {
        void apply(inout bit<8> v, out bit<8> current) {
            if (meta.flow_move == 1) {
                v = (bit<8>) hdr.bridged.version;
            }
            current = v;
        }
    };

    // byte_ns is in the signature so both programs share one P4Runtime contract, but Tofino counts
    // the gap from arrival: the departure estimate multiplies two variables, which its ALUs cannot.
    // On hardware a host cannot send faster than its line rate, so a same-rate fabric port keeps
    // no standing queue and arrival gaps are departure gaps; the estimate is for emulated links.
    // pause (hold a pending TCP flow with zero-window ACKs until drained) is in the signature for the
    // same reason and not implemented here yet: a flow that never pauses moves after MAX_HOLD.
    action set_flowlet(bit<32> gap_us, bit<32> max_hold_us, bit<32> byte_ns, bit<1> pause) {
        meta.flowlet_gap = gap_us;
        meta.flowlet_max_hold = max_hold_us;
    }

    // Keyless: only its default action, which the controller may modify.
    table flowlet_config {
        key = {}
        actions = {
            set_flowlet;
        }
        default_action = set_flowlet(FLOWLET_GAP_US, FLOWLET_MAX_HOLD_US, FLOWLET_BYTE_NS, FLOWLET_PAUSE);
        size = 1;
    }

    // After path_version: hdr.bridged.version is the target version, meta.gradual how to reach it.
    // Leaves in hdr.bridged.version the version this packet takes.
    action flowlet_prepare() {
        meta.flow_index = flowlet_hash.get({hdr.ipv4.src_addr, hdr.ipv4.dst_addr, hdr.ipv4.protocol,
                                            meta.l4_src_port, meta.l4_dst_port}) & (bit<16>) (FLOWLET_SIZE - 1);
        meta.now_us = ig_prsr_md.global_tstamp[41:10];
        meta.wanted = (bit<8>) hdr.bridged.version + 1;
    }

#endif  // P4SRC_TNA_INCLUDE_FLOWLET_P4_
