// The thesis's priority table (its OpenFlow flows: nw_src, nw_dst, in_port, priority).
// Declarations for the body of FabricIngress: hdr, meta and standard_metadata are in scope.
#ifndef P4SRC_INCLUDE_FABRIC_ACL_P4_
#define P4SRC_INCLUDE_FABRIC_ACL_P4_

    // Frames leave unchanged (no TTL decrement, no MAC rewrite), like an OpenFlow output action.
    action acl_forward(port_t port) {
        standard_metadata.egress_spec = port;
        meta.acl_hit = 1;
    }

    action acl_drop() {
        mark_to_drop(standard_metadata);
        meta.acl_hit = 1;
    }

    action acl_to_cpu() {
        standard_metadata.egress_spec = CPU_PORT;
        meta.acl_hit = 1;
    }

    // Operator overrides over IPv4 source, destination and ingress port. Ternary/optional with
    // explicit priorities: the highest priority wins, so overlapping entries resolve
    // deterministically (PicOS forwarded at random on overlaps, thesis Table 2.1).
    table acl {
        key = {
            hdr.ipv4.src_addr: ternary @name("ipv4_src");
            hdr.ipv4.dst_addr: ternary @name("ipv4_dst");
            standard_metadata.ingress_port: optional @name("ingress_port");
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

#endif  // P4SRC_INCLUDE_FABRIC_ACL_P4_
