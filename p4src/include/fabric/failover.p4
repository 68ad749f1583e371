// Fast failover: a packet whose chosen egress port is down is resubmitted once with the
// other path version, without waiting for the controller.
// Declarations for the body of FabricIngress: hdr, meta and standard_metadata are in scope.
#ifndef P4SRC_INCLUDE_FABRIC_FAILOVER_P4_
#define P4SRC_INCLUDE_FABRIC_FAILOVER_P4_

    // Identity hash of the constant 1: the selector always takes active member 1 % n.
    action_selector(HashAlgorithm.identity, LIVENESS_SELECTOR_SIZE, 8) liveness_selector;

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
            standard_metadata.egress_spec: exact @name("port");
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
        resubmit_preserving_field_list(FL_FAILOVER);
        mark_to_drop(standard_metadata);
    }

#endif  // P4SRC_INCLUDE_FABRIC_FAILOVER_P4_
