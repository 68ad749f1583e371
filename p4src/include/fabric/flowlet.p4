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
// at most once per packet, each access one read-compute-write of that register alone. The target's
// flowlet_state.p4 declares them, makes this packet's accesses (FLOWLET_STATE, FLOWLET_ACK_VERSION)
// and gives the flags this control decides on (FLOW_GAP_OVER, FLOW_WAITED, FLOW_DRAINED for the
// gate; FLOW_ACK_HOLDS, FLOW_ACK_LEAVES_ONE for an ACK): v1model compares values as it reads them,
// Tofino inside its stateful ALUs and on one subtraction a stage (include/tna/flowlet_state.p4).
#ifndef P4SRC_INCLUDE_FABRIC_FLOWLET_P4_
#define P4SRC_INCLUDE_FABRIC_FLOWLET_P4_

#include "../headers.p4"
#include "../metadata.p4"

// The packet's role: an ACK on its way to a host (the sender of the flow it acknowledges), or a
// packet where its flow enters the fabric (a path, no tag yet; not held nor a failover copy).
#define FLOWLET_ACK (meta.to_host == 1 && hdr.tcp.isValid() && (hdr.tcp.flags & TCP_FLAG_ACK) != 0)
#define FLOWLET_ENTRY (meta.has_path == 1 && meta.held == 0 && meta.failover == 0 && !hdr.path_tag.isValid())
// An entering packet of the flow itself (a drain probe is not).
#define FLOWLET_GATE (FLOWLET_ENTRY && meta.drain_probe == 0)

control Flowlet(inout fabric_headers_t hdr, inout fabric_metadata_t meta) {

    DECLARE_FLOWLET_HASHES
    DECLARE_TCP_END
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

    // Hold the sender of the acknowledged flow: receive window 0, the TCP checksum updated
    // incrementally (the glue's ZERO_WINDOW: RFC 1624 in the action, or Tofino's deparser).
    action hold_sender() {
        ZERO_WINDOW();
    }

    // Ask the receiver for its ACK now: a copy of this ACK becomes the drain probe (EgressRewrite
    // make_drain_probe, then forwarded as the flow's own packet).
    action send_drain_probe() {
        meta.drain_probe = 1;
        CLONE_DRAIN_PROBE();
    }

    // Flat: every block is one step, its condition the packet's role (FLOWLET_ACK, FLOWLET_ENTRY),
    // since Tofino 1 places a block's tables before anything that follows it. The roles exclude
    // each other (route's to_host and set_path).
    apply {
        flowlet_config.apply();
        // The flow's slot, and an ACK's: that of the flow it acknowledges (the reversed 5-tuple).
        // One hash per direction, each computed in one place and for every packet (Tofino: in the
        // first stage, before routing has said which one the packet needs).
        FLOWLET_HASHES();
        // The state this packet's role reads and writes (the target's flowlet_state.p4): an ACK on
        // its way back to the sender of the flow it acknowledges (the reversed 5-tuple's slot); a
        // packet where its flow enters the fabric (no tag yet), its flowlet gate's.
        FLOWLET_STATE
        if (FLOWLET_ACK) {
            FLOWLET_ACK_VERSION
        } else if (FLOWLET_ENTRY) {
            if (meta.drain_probe == 1) {
                // The drain probe follows the flow's last segment on the version the flow is on, and
                // is no packet of the flow for its flowlet state. (Sent back to ingress, its arrival
                // time is 0 on bmv2: a gate would see MAX_HOLD long past and move the flow.)
                version_read();
            } else if (meta.gradual == 0 || FLOW_WAITED ||
                    (hdr.tcp.isValid() && meta.flowlet_pause == 1 && FLOW_DRAINED) ||
                    ((!hdr.tcp.isValid() || meta.flowlet_pause == 0) && FLOW_GAP_OVER)) {
                // Immediate; else with PAUSE a TCP flow moves by its ACKs, never on a gap (a stalled
                // old path can be slower than GAP): once everything it sent has been acknowledged,
                // none of it is left on the old path (a new flow in this slot has sent nothing:
                // also drained); other flows at a flowlet boundary; any flow once the change has
                // waited MAX_HOLD. (One condition choosing one of two actions: Tofino decides and
                // accesses the register in one stage.)
                version_move();
            } else {
                version_keep();
            }
        }
        // An ACK to the sender: hold that sender (window 0) while the flow waits to move, until it
        // is drained, except on a duplicate ACK (a loss to repair); with one segment left, ask the
        // receiver for its ACK now. MAX_HOLD ends the pause anyway.
        if (FLOWLET_ACK && meta.flowlet_pause == 1 && FLOW_ACK_HOLDS) {
            hold_sender();
            if (FLOW_ACK_LEAVES_ONE) {
                send_drain_probe();
            }
        }
    }
}

#endif  // P4SRC_INCLUDE_FABRIC_FLOWLET_P4_
