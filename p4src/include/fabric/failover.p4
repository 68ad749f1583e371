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
        meta.port_up = 1;
    }

    action port_down() {
        meta.port_up = 0;
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
        implementation = liveness_selector;
        size = PORT_TABLE_SIZE;
    }

    // The original goes nowhere; its copy comes back through the parser with the other version.
    action fail_over() {
        meta.failover = 1;
        meta.failover_version = ~meta.version;
        RESUBMIT_FAILOVER();
        meta.drop = 1;
    }

    apply {
        if (meta.next_hop_set == 1) {
            port_liveness.apply();
        }
        // A forwarding path action ran but no live port came out of it (dead static port, or a
        // group whose members are all dead): take the other version.
        if ((meta.next_hop_set == 1 || meta.multipath != MULTIPATH_NONE) && meta.port_up == 0) {
            if (meta.failover == 0) {
                fail_over();
            } else {
                meta.drop = 1;  // both versions are down
            }
        }
    }
}

#endif  // P4SRC_INCLUDE_FABRIC_FAILOVER_P4_
