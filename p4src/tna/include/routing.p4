// Routing on Tofino: prefix to path or host, TTL, and the packet's path version.
#ifndef P4SRC_TNA_INCLUDE_ROUTING_P4_
#define P4SRC_TNA_INCLUDE_ROUTING_P4_

#include <core.p4>
#include <tna.p4>
#include "sizes.p4"
#include "types.p4"

control Routing(inout tna_headers_t hdr,
                inout tna_ingress_metadata_t meta,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {

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

    action set_version(version_t version) {
        hdr.bridged.version = version;
    }

    // The MBB flip is one MODIFY here, as on v1model.
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
        if (hdr.bridged.routed == 1) {
            if (hdr.ipv4.ttl <= 1) {
                ig_dprsr_md.drop_ctl = 1;
                hdr.bridged.routed = 0;
                meta.has_path = 0;
            } else {
                hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
            }
        }
        if (meta.has_path == 1) {
            if (meta.failover == 1) {
                hdr.bridged.version = meta.resubmit.version;
            } else if (hdr.path_tag.isValid()) {
                hdr.bridged.version = hdr.path_tag.version;
            } else {
                path_version.apply();
            }
        }
    }
}

#endif  // P4SRC_TNA_INCLUDE_ROUTING_P4_
