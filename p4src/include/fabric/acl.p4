// Acl: the thesis's priority table (its OpenFlow flows: nw_src, nw_dst, in_port, priority).
#ifndef P4SRC_INCLUDE_FABRIC_ACL_P4_
#define P4SRC_INCLUDE_FABRIC_ACL_P4_

#include "../headers.p4"
#include "../metadata.p4"

control Acl(inout fabric_headers_t hdr, inout fabric_metadata_t meta) {

    // Frames leave unchanged (no TTL decrement, no MAC rewrite), like an OpenFlow output action.
    action acl_forward(port_t port) {
        meta.egress_port = port;
        meta.acl_hit = 1;
    }

    action acl_drop() {
        meta.drop = 1;
        meta.acl_hit = 1;
    }

    action acl_to_cpu() {
        meta.egress_port = CPU_PORT;
        meta.acl_hit = 1;
    }

    // Operator overrides over IPv4 source, destination and ingress port. Ternary/optional with
    // explicit priorities: the highest priority wins, so overlapping entries resolve
    // deterministically (PicOS forwarded at random on overlaps, thesis Table 2.1). TNA has no
    // `optional`: its ingress_port is ternary (give a full mask).
    table acl {
        key = {
            hdr.ipv4.src_addr: ternary @name("ipv4_src");
            hdr.ipv4.dst_addr: ternary @name("ipv4_dst");
            meta.ingress_port: MATCH_OPTIONAL @name("ingress_port");
        }
        actions = {
            acl_forward;
            acl_drop;
            acl_to_cpu;
            @defaultonly NoAction;
        }
        default_action = NoAction();
        size = ACL_TABLE_SIZE;
    }

    apply {
        acl.apply();
    }
}

#endif  // P4SRC_INCLUDE_FABRIC_ACL_P4_
