// The thesis's priority table on Tofino (same names as v1model).
#ifndef P4SRC_TNA_INCLUDE_ACL_P4_
#define P4SRC_TNA_INCLUDE_ACL_P4_

#include <core.p4>
#include <tna.p4>
#include "sizes.p4"
#include "types.p4"

control Acl(inout tna_headers_t hdr,
            inout tna_ingress_metadata_t meta,
            in ingress_intrinsic_metadata_t ig_intr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {

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

    apply {
        acl.apply();
    }
}

#endif  // P4SRC_TNA_INCLUDE_ACL_P4_
