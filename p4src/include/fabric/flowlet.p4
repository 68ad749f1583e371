// Flowlet-gated version change (the reorder-free MBB flip onto a new circuit).
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
// segment of the flow, one byte before what the receiver acknowledged, recirculated so it leaves on
// the old path right behind that last segment. An old segment is answered at once (RFC 9293
// 3.10.7.4), and that answer drains the flow. Zero window with data in flight arms no persist timer.
// GAP, MAX_HOLD, BYTE_NS and PAUSE are controller state (the keyless table flowlet_config); the
// per-flow state is data-plane state in registers (PI cannot write registers, and needs not).
// Declarations for the body of FabricIngress: hdr, meta and standard_metadata are in scope.
#ifndef P4SRC_INCLUDE_FABRIC_FLOWLET_P4_
#define P4SRC_INCLUDE_FABRIC_FLOWLET_P4_

    // Indexed by the 5-tuple hash: the flow's version, when its last packet has left, and since when a
    // change to another version has been pending (0: none). Times: ingress_global_timestamp (us).
    register<version_t>(FLOWLET_SIZE) flow_version;
    register<bit<48>>(FLOWLET_SIZE) flow_departure;
    register<bit<48>>(FLOWLET_SIZE) flow_pending_since;
    // TCP only: the sequence number after the flow's highest data byte (at its ingress switch), and
    // the last acknowledgement of its receiver (at the same switch, on the way back to the sender).
    register<bit<32>>(FLOWLET_SIZE) flow_sent_end;
    register<bit<32>>(FLOWLET_SIZE) flow_acked;

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

    action flowlet_read() {
        hash(meta.flow_index, HashAlgorithm.crc32, 32w0,
             { hdr.ipv4.src_addr, hdr.ipv4.dst_addr, hdr.ipv4.protocol,
               meta.l4_src_port, meta.l4_dst_port },
             (bit<32>) FLOWLET_SIZE);
        flow_version.read(meta.flow_version, meta.flow_index);
        flow_departure.read(meta.flow_departure, meta.flow_index);
        flow_pending_since.read(meta.flow_pending, meta.flow_index);
        flow_sent_end.read(meta.flow_sent_end, meta.flow_index);
        flow_acked.read(meta.flow_acked, meta.flow_index);
    }

    action flowlet_write() {
        flow_version.write(meta.flow_index, meta.version);
        flow_departure.write(meta.flow_index, meta.flow_departure);
        flow_pending_since.write(meta.flow_index, meta.flow_pending);
        flow_sent_end.write(meta.flow_index, meta.flow_sent_end);
    }

    // An ACK on its way to the sender: the flowlet state of the flow it acknowledges (the reversed
    // 5-tuple hashes to that flow's index), and its acknowledgement recorded there.
    action flowlet_read_acked_flow() {
        hash(meta.flow_index, HashAlgorithm.crc32, 32w0,
             { hdr.ipv4.dst_addr, hdr.ipv4.src_addr, hdr.ipv4.protocol,
               meta.l4_dst_port, meta.l4_src_port },
             (bit<32>) FLOWLET_SIZE);
        flow_pending_since.read(meta.flow_pending, meta.flow_index);
        flow_sent_end.read(meta.flow_sent_end, meta.flow_index);
        flow_acked.read(meta.flow_acked, meta.flow_index);
        flow_acked.write(meta.flow_index, hdr.tcp.ack_no);
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

    // Ask the receiver for its ACK now: a copy of this ACK becomes the drain probe (FabricEgress
    // make_drain_probe, then forwarded as the flow's own packet).
    action send_drain_probe() {
        meta.drain_probe = 1;
        clone_preserving_field_list(CloneType.I2E, DRAIN_PROBE_SESSION, FL_DRAIN_PROBE);
    }

#endif  // P4SRC_INCLUDE_FABRIC_FLOWLET_P4_
