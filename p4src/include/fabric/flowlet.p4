// Flowlet: the flowlet-gated version change (the reorder-free MBB flip onto a new circuit).
// With `set_version_gradual(v)` in path_version, a flow at the ingress switch keeps its current
// version until a flowlet boundary: an idle gap longer than GAP (its packets on the old path have
// left the network by then), or the change has waited MAX_HOLD (a flow that never pauses still
// moves). The gap counts from the flow's departure, not its arrival: with BYTE_NS (the fabric
// port's line rate, ns per byte) each packet keeps the port busy for its length, so a burst that
// arrived faster than the port sends it is still queued during what looks idle at the ingress.
// With PAUSE a TCP flow moves by its ACKs instead of gaps: once it is drained (its receiver has
// acknowledged every byte it sent, so none of its packets is left on the old path, whatever queue or
// stall that path holds further on; a gap cannot tell). A flow that never pauses (an unlimited
// stream) is made to: while its move is pending, the ACKs its ToR delivers to the sender carry a
// zero receive window (the flow is held) until everything is acknowledged; the sender stops for
// about one round trip and its next segment takes the new path in order. A duplicate ACK (a loss
// on the old path) keeps its window. The receiver may delay the ACK of a lone last segment by 40 ms,
// so the held ACK that leaves at most one segment sends a drain probe: a copy becomes a zero-length
// segment of the flow, one byte before what the receiver acknowledged, sent back to ingress so it
// leaves on the old path right behind that last segment. An old segment is answered at once (RFC
// 9293 3.10.7.4), and that answer drains the flow. Zero window with data in flight arms no persist
// timer. GAP, MAX_HOLD, BYTE_NS and PAUSE are controller state (the keyless table flowlet_config).
//
// The per-flow state is in registers, accessed the way Tofino's stateful ALUs allow: each register
// at most once per packet, each access one read-compute-write of that register alone (the target's
// flowlet_state.p4), the decisions between them in this control. A packet at its ingress switch:
//   departure_touch, acked_read, pending_touch -> gap, staleness, held time
//   -> sent_end_update (TCP) -> drained, move -> version_gate (the packet's version)
// An ACK on its way back to the sender: version_read -> pending_read, sent_end_read, acked_swap.
// A drain probe: version_read.
#ifndef P4SRC_INCLUDE_FABRIC_FLOWLET_P4_
#define P4SRC_INCLUDE_FABRIC_FLOWLET_P4_

#include "../headers.p4"
#include "../metadata.p4"

control Flowlet(inout fabric_headers_t hdr, inout fabric_metadata_t meta) {

    DECLARE_FLOW_HASHES
#ifdef __TARGET_TOFINO__
#include "../tna/flowlet_state.p4"
#else
#include "../v1model/flowlet_state.p4"
#endif

    action set_flowlet(bit<32> gap_us, bit<32> max_hold_us, bit<32> byte_ns, bit<1> pause) {
        meta.flowlet_gap = gap_us;
        meta.flowlet_max_hold = max_hold_us;
        meta.flowlet_byte_ns = byte_ns;
        meta.flowlet_pause = pause;
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

    // Hold the sender of the acknowledged flow: receive window 0, with the TCP checksum updated
    // incrementally (RFC 1624: HC' = ~(~HC + ~m + m')).
    action hold_sender() {
        bit<32> sum = (bit<32>) (~hdr.tcp.checksum) + (bit<32>) (~hdr.tcp.window);
        sum = (sum & 32w0xffff) + (sum >> 16);
        sum = (sum & 32w0xffff) + (sum >> 16);
        hdr.tcp.checksum = ~((bit<16>) sum);
        hdr.tcp.window = 0;
    }

    // Ask the receiver for its ACK now: a copy of this ACK becomes the drain probe (EgressRewrite
    // make_drain_probe, then forwarded as the flow's own packet).
    action send_drain_probe() {
        meta.drain_probe = 1;
        CLONE_DRAIN_PROBE();
    }

    apply {
        // The gate runs where a flow enters the fabric (no tag yet); the ACKs of a TCP flow pass
        // the same switch on their way back to its sender.
        bool local = meta.has_path == 1 && meta.failover == 0 && !hdr.path_tag.isValid();
        bool gate = local && meta.drain_probe == 0;
        bool ack_back = meta.to_host == 1 && hdr.tcp.isValid() && (hdr.tcp.flags & TCP_FLAG_ACK) != 0;
        if (gate || ack_back) {
            flowlet_config.apply();
        }
        // The flow's slot: an ACK's is that of the flow it acknowledges (the reversed 5-tuple).
        // One hash per direction, each computed in one place (a Tofino hash unit each).
        if (ack_back) {
            ACK_HASH(meta.flow_index, (bit<32>) FLOWLET_SIZE);
        } else if (local) {
            FLOW_HASH(meta.flow_index, (bit<32>) FLOWLET_SIZE);
        }
        if (ack_back) {
            // The acknowledged flow (the reversed 5-tuple's slot) waits to move: hold its sender
            // (window 0) until it is drained, except on a duplicate ACK (a loss to repair); with
            // one segment left, ask the receiver for its ACK now. MAX_HOLD ends the pause anyway.
            version_read();
            meta.flow_wanted = meta.flow_version + 1;  // the flow waits unless this is wanted
            pending_read();
            sent_end_read();
            acked_swap();
            bit<32> unacked = meta.flow_sent_end - hdr.tcp.ack_no;  // modulo 2^32
            if (meta.flowlet_pause == 1 && meta.flow_pending != 0 && hdr.tcp.ack_no != meta.flow_acked &&
                    unacked != 0 && unacked < HALF_32 &&
                    TIME_AFTER(meta.flow_pending + (time_t) meta.flowlet_max_hold, meta.now)) {
                hold_sender();
                if (unacked <= FLOWLET_DRAIN_SLACK) {
                    send_drain_probe();
                }
            }
        } else if (local && meta.drain_probe == 1) {
            // The drain probe follows the flow's last segment on the version the flow is on, and
            // is no packet of the flow for its flowlet state. (Sent back to ingress, its arrival
            // time is 0 on bmv2: a gate would see MAX_HOLD long past and move the flow.)
            version_read();
            meta.version = (version_t) meta.flow_version;
        } else if (gate) {
            FLOWLET_TX();
            meta.flow_wanted = (bit<8>) meta.version + 1;
            departure_touch();
            acked_read();
            pending_touch();
            // Idle longer than GAP after the flow's departure; idle past MAX_HOLD (a new flow
            // may have taken the slot: its first segment sets the flow's end).
            bool gap_over = TIME_AFTER(meta.now, meta.flow_departure + (time_t) meta.flowlet_gap);
            meta.flow_stale = (bit<1>) TIME_AFTER(meta.now, meta.flow_departure + (time_t) meta.flowlet_max_hold);
            bool by_acks = hdr.tcp.isValid() && meta.flowlet_pause == 1;
            if (hdr.tcp.isValid()) {
                // New data moves the flow's end on, a retransmission does not (sequence order
                // modulo 2^32).
                meta.flow_end = hdr.tcp.seq_no + (bit<32>) (hdr.ipv4.total_len - 16w20 -
                                                            ((bit<16>) hdr.tcp.data_offset << 2));
                sent_end_update();
            }
            // With PAUSE a TCP flow moves by its ACKs, never on a gap (a stalled old path can be
            // slower than GAP): once everything it sent has been acknowledged, none of it is left
            // on the old path (a new flow in this slot has sent nothing: also drained).
            bool drained = by_acks && meta.flow_acked == meta.flow_sent_end;
            // Immediate, or a flowlet boundary, or drained, or the change has waited MAX_HOLD.
            meta.flow_move = (bit<1>) (meta.gradual == 0 || (!by_acks && gap_over) || drained ||
                                       !TIME_AFTER(meta.flow_pending + (time_t) meta.flowlet_max_hold, meta.now));
            version_gate();
            meta.version = (version_t) meta.flow_version;
        }
    }
}

#endif  // P4SRC_INCLUDE_FABRIC_FLOWLET_P4_
