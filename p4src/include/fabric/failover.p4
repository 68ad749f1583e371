// Failover: a packet whose chosen egress port is down is resubmitted once with the other path
// version, without waiting for the controller.
#ifndef P4SRC_INCLUDE_FABRIC_FAILOVER_P4_
#define P4SRC_INCLUDE_FABRIC_FAILOVER_P4_

#include "../headers.p4"
#include "../metadata.p4"

control Failover(inout fabric_headers_t hdr, inout fabric_metadata_t meta) {

    // Identity hash of the constant 1: the selector always takes active member 1 % n.
    DECLARE_SELECTOR_IDENTITY(liveness_selector, LIVENESS_SELECTOR_SIZE, 8, PORT_TABLE_SIZE)

    action port_up() {
        meta.port_up = LIVENESS_UP;
    }

    action port_down() {
        meta.port_up = LIVENESS_DOWN;
    }

    // Port status, kept by the target through watch ports. Every group holds two members: first
    // the `port_down` sentinel (no watch port, created before any other member of the profile, so
    // it is member 0 in bmv2's handle order and p4sim's creation order), then `port_up` watching
    // the port. The selector picks active member 1 % n: `port_up` while the port is up (n = 2),
    // the sentinel once PI deactivates `port_up` (n = 1). A group never empties: bmv2 with PI
    // divides by the number of active members (h % 0 for a group whose members are all down).
    // A port without a group misses (NoAction): port_up does not run, so it counts as down.
    table port_liveness {
        key = {
            meta.egress_port: exact @name("port");
            meta.liveness_pick: selector;
        }
        actions = {
            port_up;
            port_down;
        }
        implementation = SELECTOR(liveness_selector);
        size = PORT_TABLE_SIZE;
    }

    // The original goes nowhere; its copy comes back through the parser with the other version
    // (a constant of the caller's: Tofino ties fields in one ALU operation to one alignment). The
    // glue's RESUBMIT_FAILOVER marks the copy (meta.failover), resubmits it and drops the original
    // (TNA: the resubmit data; the end of ingress decides, on port_up itself, in the stage of this
    // decision: include/tna/intrinsics.p4; the parser marks the copy).
    action fail_over(version_t other) {
        meta.failover_version = other;
        RESUBMIT_FAILOVER(other);
    }

    apply {
        if (meta.next_hop_set == 1 || meta.probe_out == 1) {
            port_liveness.apply();
        }
        // A forwarding path action ran but no live port came out of it (dead static port, or a
        // group whose members are all dead): take the other version.
        if ((meta.next_hop_set == 1 || meta.multipath != MULTIPATH_NONE) && meta.port_up != LIVENESS_UP) {
            if (meta.failover == 1) {
                BOTH_VERSIONS_DOWN();
            } else if (meta.version == 0) {
                fail_over(1);
            } else {
                fail_over(0);
            }
        }
        // A probe the controller sends out of a port proves the path the flows will take, so it
        // leaves only while the data plane sees that port live (liveness lags the light: a probe
        // that left by a port the watch still had down let a flip move flows onto it, which then
        // failed over to the other version and back). The glue drops it (TNA: at the end of
        // ingress, on port_up, with the failover decisions).
        if (meta.probe_out == 1 && meta.port_up != LIVENESS_UP) {
            PROBE_PORT_DOWN();
        }
    }
}

#endif  // P4SRC_INCLUDE_FABRIC_FAILOVER_P4_
