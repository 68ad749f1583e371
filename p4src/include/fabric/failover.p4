// Fast failover: a packet whose chosen egress port is down is resubmitted once with the
// other path version, without waiting for the controller.
// Declarations for the body of FabricIngress: hdr, meta and standard_metadata are in scope.
#ifndef P4SRC_INCLUDE_FABRIC_FAILOVER_P4_
#define P4SRC_INCLUDE_FABRIC_FAILOVER_P4_

    action_selector(HashAlgorithm.crc16, LIVENESS_SELECTOR_SIZE, 16) liveness_selector;

    action port_up() {
        meta.port_up = 1;
    }

    // Port status, kept by the target: one group per port, one member watching that port. PI
    // deactivates the member when the port goes down. Whether the lookup then yields an empty
    // group (bmv2: no action runs), a miss (NoAction), or no entry exists, port_up does not run:
    // only a live member marks the port up. A port without a group therefore counts as down.
    table port_liveness {
        key = {
            standard_metadata.egress_spec: exact @name("port");
            meta.ingress_port: selector;  // one member per group: any input selects it
        }
        actions = {
            port_up;
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
