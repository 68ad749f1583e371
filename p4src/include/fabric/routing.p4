// Routing: destination prefix to a path id or a local host, TTL, and the path version.
// Declarations for the body of FabricIngress: hdr, meta and standard_metadata are in scope.
#ifndef P4SRC_INCLUDE_FABRIC_ROUTING_P4_
#define P4SRC_INCLUDE_FABRIC_ROUTING_P4_

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

    // TTL 0 or 1 on arrival: the packet dies here and takes no path.
    action ttl_expired() {
        mark_to_drop(standard_metadata);
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

#endif  // P4SRC_INCLUDE_FABRIC_ROUTING_P4_
