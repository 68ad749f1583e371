// Flowlet-gated version change (the reorder-free MBB flip onto a new circuit).
// With `set_version_gradual(v)` in path_version, a flow at the ingress switch keeps its current
// version until a flowlet boundary: an idle gap longer than GAP (its packets on the old path have
// left the network by then), or the change has waited MAX_HOLD (a flow that never pauses still
// moves). The gap counts from the flow's departure, not its arrival: with BYTE_NS (the fabric
// port's line rate, ns per byte) each packet keeps the port busy for its length, so a burst that
// arrived faster than the port sends it is still queued during what looks idle at the ingress.
// GAP, MAX_HOLD and BYTE_NS are controller state (the keyless table flowlet_config); the per-flow
// state is data-plane state in registers (PI cannot write registers, and needs not).
// Declarations for the body of FabricIngress: hdr, meta and standard_metadata are in scope.
#ifndef P4SRC_INCLUDE_FABRIC_FLOWLET_P4_
#define P4SRC_INCLUDE_FABRIC_FLOWLET_P4_

    // Indexed by the 5-tuple hash: the flow's version, when its last packet has left, and since when a
    // change to another version has been pending (0: none). Times: ingress_global_timestamp (us).
    register<version_t>(FLOWLET_SIZE) flow_version;
    register<bit<48>>(FLOWLET_SIZE) flow_departure;
    register<bit<48>>(FLOWLET_SIZE) flow_pending_since;

    action set_flowlet(bit<32> gap_us, bit<32> max_hold_us, bit<32> byte_ns) {
        meta.flowlet_gap = gap_us;
        meta.flowlet_max_hold = max_hold_us;
        meta.flowlet_byte_ns = byte_ns;
    }

    // Keyless: only its default action, which the controller may modify.
    table flowlet_config {
        key = {}
        actions = {
            set_flowlet;
        }
        default_action = set_flowlet(FLOWLET_GAP_US, FLOWLET_MAX_HOLD_US, FLOWLET_BYTE_NS);
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
    }

    action flowlet_write() {
        flow_version.write(meta.flow_index, meta.version);
        flow_departure.write(meta.flow_index, meta.flow_departure);
        flow_pending_since.write(meta.flow_index, meta.flow_pending);
    }

#endif  // P4SRC_INCLUDE_FABRIC_FLOWLET_P4_
