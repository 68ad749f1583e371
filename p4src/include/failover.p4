// Fast failover: a packet whose chosen egress port is down is resubmitted once with the
// other path version, without waiting for the controller.
#ifndef P4SRC_INCLUDE_FAILOVER_P4_
#define P4SRC_INCLUDE_FAILOVER_P4_

#include <core.p4>
#include <v1model.p4>
#include "defines.p4"
#include "headers.p4"
#include "metadata.p4"
#include "sizes.p4"

control Failover(inout fabric_headers_t hdr,
                 inout fabric_metadata_t meta,
                 inout standard_metadata_t standard_metadata) {

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

    apply {
        if (meta.next_hop_set == 1) {
            port_liveness.apply();
        }
        // A forwarding path action ran (static port or a group); an empty group sets no next hop.
        bool forwarding = meta.next_hop_set == 1 || meta.multipath != MULTIPATH_NONE;
        if (forwarding && meta.port_up == 0) {
            if (meta.failover == 0) {
                meta.failover = 1;
                meta.failover_version = ~meta.version;
                resubmit_preserving_field_list(FL_FAILOVER);
            }
            // The original (or a copy whose other version is down too) goes nowhere.
            mark_to_drop(standard_metadata);
        }
    }
}

#endif  // P4SRC_INCLUDE_FAILOVER_P4_
