// Egress rewrite of routed packets: source MAC of the egress port, path tag push/strip.
#ifndef P4SRC_INCLUDE_EGRESS_REWRITE_P4_
#define P4SRC_INCLUDE_EGRESS_REWRITE_P4_

#include <core.p4>
#include <v1model.p4>
#include "defines.p4"
#include "headers.p4"
#include "metadata.p4"
#include "sizes.p4"

control EgressRewrite(inout fabric_headers_t hdr,
                      inout fabric_metadata_t meta,
                      in standard_metadata_t standard_metadata) {

    action set_smac(mac_addr_t smac) {
        hdr.ethernet.src_addr = smac;
    }

    // The MAC address of each switch port. Exact on the egress port.
    table port_mac {
        key = {
            standard_metadata.egress_port: exact @name("egress_port");
        }
        actions = {
            set_smac;
            @defaultonly NoAction;
        }
        default_action = NoAction();
        size = PORT_TABLE_SIZE;
    }

    apply {
        port_mac.apply();
        if (meta.to_host == 1) {
            if (hdr.path_tag.isValid()) {
                hdr.ethernet.ether_type = hdr.path_tag.ether_type;
                hdr.path_tag.setInvalid();
            }
        } else if (hdr.path_tag.isValid()) {
            // Transit: the version changes only if this switch failed over.
            hdr.path_tag.version = meta.version;
            hdr.path_tag.hops = hdr.path_tag.hops + 1;
        } else {
            // Ingress switch of the packet: stamp the version it decided.
            hdr.path_tag.setValid();
            hdr.path_tag.version = meta.version;
            hdr.path_tag.reserved = 0;
            hdr.path_tag.hops = 1;
            hdr.path_tag.ether_type = hdr.ethernet.ether_type;
            hdr.ethernet.ether_type = ETHERTYPE_PATH_TAG;
        }
    }
}

#endif  // P4SRC_INCLUDE_EGRESS_REWRITE_P4_
