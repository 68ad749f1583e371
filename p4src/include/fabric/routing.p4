// Routing: destination prefix to a path id or a local host, TTL, and the packet's path version
// (failover copy, upstream tag, or this switch's path_version entry; flowlet.p4 may hold it back).
#ifndef P4SRC_INCLUDE_FABRIC_ROUTING_P4_
#define P4SRC_INCLUDE_FABRIC_ROUTING_P4_

#include "../headers.p4"
#include "../metadata.p4"

control Routing(inout fabric_headers_t hdr, inout fabric_metadata_t meta) {

    action set_path(path_id_t path_id) {
        meta.path_id = path_id;
        meta.has_path = 1;
        meta.routed = 1;
    }

    action to_host(port_t port, mac_addr_t dmac) {
        meta.egress_port = port;
        hdr.ethernet.dst_addr = dmac;
        meta.to_host = 1;
        meta.routed = 1;
    }

    action route_drop() {
        meta.drop = 1;
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

    // TTL 0 or 1 on arrival: the packet dies here and takes no path.
    action ttl_expired() {
        meta.drop = 1;
        meta.routed = 0;
        meta.has_path = 0;
    }

    // Immediate: every packet of the path takes `version` now (flowlet.p4 keeps the per-flow
    // state in step, so a later gradual change starts from the truth).
    action set_version(version_t version) {
        meta.version = version;
        meta.gradual = 0;
    }

    // Gradual: each flow moves to `version` at its next flowlet boundary (flowlet.p4), so packets
    // on a shorter new path cannot overtake the flow's packets still on the old one.
    action set_version_gradual(version_t version) {
        meta.version = version;
        meta.gradual = 1;
    }

    // The active version of each path, read only for untagged packets (this switch is their
    // ingress switch). The MBB flip is one MODIFY of one entry. Exact: one entry per path id.
    table path_version {
        key = {
            meta.path_id: exact @name("path_id");
        }
        actions = {
            set_version;
            set_version_gradual;
        }
        default_action = set_version(0);
        size = PATH_TABLE_SIZE;
    }

    // Flat: every block below is one step (Tofino 1 places a block's tables before anything that
    // follows the block; a chain inside one would hold the whole ingress back). `routable`: the
    // caller's IPv4 packet that no ACL entry decided (a held packet, routed on its first pass, is not).
    apply {
        // TTL 0 or 1: dropped whether route hits or not, so it is not looked up.
        if (meta.routable == 1 && meta.acl_hit == 0) {
            if (hdr.ipv4.ttl <= 1) {
                ttl_expired();
            } else {
                route.apply();
            }
        }
        // One version per packet: failover copy, else the upstream tag, else this switch's entry
        // (a drain probe takes its flow's version instead: flowlet.p4).
        if (meta.routable == 1 && meta.has_path == 1) {
            if (meta.failover == 1) {
                meta.version = meta.failover_version;
            } else if (hdr.path_tag.isValid()) {
                meta.version = hdr.path_tag.version;
            } else if (meta.drain_probe == 0) {
                path_version.apply();
            }
        }
        if (meta.routable == 1 && meta.routed == 1) {
            hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
        }
    }
}

#endif  // P4SRC_INCLUDE_FABRIC_ROUTING_P4_
