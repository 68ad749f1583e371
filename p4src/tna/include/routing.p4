// Routing on Tofino: prefix to path or host, TTL, and the packet's path version.
// Declarations for the body of FabricIngress (hdr, meta, ig_intr_md, ig_dprsr_md, ig_tm_md in scope).
#ifndef P4SRC_TNA_INCLUDE_ROUTING_P4_
#define P4SRC_TNA_INCLUDE_ROUTING_P4_

    action set_path(path_id_t path_id) {
        meta.path_id = path_id;
        meta.has_path = 1;
        hdr.bridged.routed = 1;
    }

    action to_host(port_t port, mac_addr_t dmac) {
        ig_tm_md.ucast_egress_port = port;
        hdr.ethernet.dst_addr = dmac;
        hdr.bridged.to_host = 1;
        hdr.bridged.routed = 1;
    }

    action route_drop() {
        ig_dprsr_md.drop_ctl = 1;
    }

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
        ig_dprsr_md.drop_ctl = 1;
        hdr.bridged.routed = 0;
        meta.has_path = 0;
    }

    action set_version(version_t version) {
        hdr.bridged.version = version;
        meta.gradual = 0;
    }

    // Each flow moves to `version` at its next flowlet boundary (flowlet.p4).
    action set_version_gradual(version_t version) {
        hdr.bridged.version = version;
        meta.gradual = 1;
    }

    // The MBB flip is one MODIFY here, as on v1model.
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

#endif  // P4SRC_TNA_INCLUDE_ROUTING_P4_
