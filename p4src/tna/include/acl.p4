// The thesis's priority table on Tofino (same names as v1model).
// Declarations for the body of FabricIngress (hdr, meta, ig_intr_md, ig_dprsr_md, ig_tm_md in scope).
#ifndef P4SRC_TNA_INCLUDE_ACL_P4_
#define P4SRC_TNA_INCLUDE_ACL_P4_

    action acl_forward(port_t port) {
        ig_tm_md.ucast_egress_port = port;
        meta.acl_hit = 1;
    }

    action acl_drop() {
        ig_dprsr_md.drop_ctl = 1;
        meta.acl_hit = 1;
    }

    action acl_to_cpu() {
        ig_tm_md.ucast_egress_port = CPU_PORT;
        meta.acl_hit = 1;
    }

    // Ternary/optional with explicit priorities, the highest wins. The ingress port is ternary
    // here: Tofino's compiler has no `optional` match kind (a mask of all ones = v1model's value).
    table acl {
        key = {
            hdr.ipv4.src_addr: ternary @name("ipv4_src");
            hdr.ipv4.dst_addr: ternary @name("ipv4_dst");
            ig_intr_md.ingress_port: ternary @name("ingress_port");
        }
        actions = {
            acl_forward;
            acl_drop;
            acl_to_cpu;
            @defaultonly NoAction;
        }
        const default_action = NoAction();
        size = ACL_TABLE_SIZE;
    }

#endif  // P4SRC_TNA_INCLUDE_ACL_P4_
