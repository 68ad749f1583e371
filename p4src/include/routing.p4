// Routing: destination prefix to a path id or a local host, TTL, and the path version.
#ifndef P4SRC_INCLUDE_ROUTING_P4_
#define P4SRC_INCLUDE_ROUTING_P4_

#include <core.p4>
#include <v1model.p4>
#include "defines.p4"
#include "headers.p4"
#include "metadata.p4"
#include "sizes.p4"

control Routing(inout fabric_headers_t hdr,
                inout fabric_metadata_t meta,
                inout standard_metadata_t standard_metadata) {

    action set_path(path_id_t path_id) {
        meta.path_id = path_id;
        meta.has_path = 1;
        meta.routed = 1;
    }

    action to_host(port_t port, mac_addr_t dmac) {
        standard_metadata.egress_spec = port;
        hdr.ethernet.dst_addr = dmac;
        meta.to_host = 1;
        meta.routed = 1;
    }

    action route_drop() {
        mark_to_drop(standard_metadata);
    }

    // Destination prefixes: a path id (forwarded by `path`) or a directly attached host.
    // LPM so a ToR can hold host /32s next to aggregate prefixes.
    table route {
        key = {
            hdr.ipv4.dst_addr: lpm @name("ipv4_dst");
        }
        actions = {
            set_path;
            to_host;
            route_drop;
        }
        default_action = route_drop();
        size = ROUTE_TABLE_SIZE;
    }

    action set_version(version_t version) {
        meta.version = version;
    }

    // The active version of each path, read only for untagged packets (this switch is their
    // ingress switch). The MBB flip is one MODIFY of one entry. Exact: one entry per path id.
    table path_version {
        key = {
            meta.path_id: exact @name("path_id");
        }
        actions = {
            set_version;
        }
        default_action = set_version(0);
        size = PATH_TABLE_SIZE;
    }

    apply {
        route.apply();
        if (meta.routed == 1) {
            if (hdr.ipv4.ttl <= 1) {
                mark_to_drop(standard_metadata);
                meta.routed = 0;
                meta.has_path = 0;
            } else {
                hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
            }
        }
        if (meta.has_path == 1) {
            // One version per packet: failover copy > tag from upstream > local active version.
            if (meta.failover == 1) {
                meta.version = meta.failover_version;
            } else if (hdr.path_tag.isValid()) {
                meta.version = hdr.path_tag.version;
            } else {
                path_version.apply();
            }
        }
    }
}

#endif  // P4SRC_INCLUDE_ROUTING_P4_
