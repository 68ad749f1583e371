// Dispatch: what a packet is, from what the parser found, and where that sends it: a packet-out to
// its port (no table), a packet back from the hold loop to the schedule with its path kept, a probe
// to the CPU, a frame that is not IPv4 dropped, an IPv4 packet to `ipv4` (the ACL; on v1model then
// routing and the flowlet gate: include/v1model/pipeline.p4). The hold loop's own cases differ by
// target, as the loop does (the glue's HOLD_MARK_FORGED, HOLD_UNMARKED: p4src/README.md, "v1model
// and TNA"). One step of ingress on Tofino: every condition is on what the parser found (stage 0).
#ifndef P4SRC_INCLUDE_FABRIC_DISPATCH_P4_
#define P4SRC_INCLUDE_FABRIC_DISPATCH_P4_

#include "../headers.p4"
#include "../metadata.p4"
#include "control_types.p4"

control Dispatch(inout fabric_headers_t hdr, inout fabric_metadata_t meta)(FabricControl ipv4) {

    apply {
        SCHEDULED(false);
        if (HOLD_MARK_FORGED()) {
            HOLD_MARK_DROP();  // a mark that did not come round the loop: no one holds by request
        } else if (hdr.packet_out.isValid()) {
            meta.egress_port = hdr.packet_out.egress_port;
            hdr.packet_out.setInvalid();
            meta.bypass = 1;
            MARK_PROBE_OUT();  // a probe to a port not the CPU's: out only while the port is live (Failover)
        } else if (HOLD_UNMARKED()) {
            // Held, but sent back by egress, its lit decision stale (v1model: recirculated with
            // FL_HOLD, no timestamp of its own): round the loop undecided; it decides when back.
            HOLD_GO_ROUND();
        } else if (meta.held == 1) {
            // Back from the hold loop (SlotHold; the parser took its held state from the mark):
            // routed (TTL done) on its first pass, its path kept.
            meta.routed = 1;
            meta.has_path = 1;
            meta.path_id = meta.held_path_id;
            meta.version = meta.held_version;
            SCHEDULED(true);
        } else if (hdr.ethernet.isValid() && hdr.ethernet.ether_type == ETHERTYPE_PROBE) {
            meta.egress_port = CPU_PORT;
            meta.bypass = 1;
        } else if (!hdr.ipv4.isValid()) {
            meta.drop = 1;
        } else {
            meta.routable = 1;
            ipv4.apply(hdr, meta);
        }
    }
}

#endif  // P4SRC_INCLUDE_FABRIC_DISPATCH_P4_
