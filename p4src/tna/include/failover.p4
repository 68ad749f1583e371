// Fast failover on Tofino: port_liveness as on v1model; the other version by resubmit.
#ifndef P4SRC_TNA_INCLUDE_FAILOVER_P4_
#define P4SRC_TNA_INCLUDE_FAILOVER_P4_

#include <core.p4>
#include <tna.p4>
#include "sizes.p4"
#include "types.p4"

control Failover(inout tna_headers_t hdr,
                 inout tna_ingress_metadata_t meta,
                 in ingress_intrinsic_metadata_t ig_intr_md,
                 inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                 inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {

    Hash<bit<16>>(HashAlgorithm_t.CRC16) liveness_hash;
    ActionProfile(LIVENESS_SELECTOR_SIZE) liveness_profile;
    ActionSelector(liveness_profile, liveness_hash, SelectorMode_t.FAIR, 1,
                   PORT_TABLE_SIZE) liveness_selector;

    action port_up() {
        meta.port_up = 1;
    }

    // One group per port, one member watching it; only a live member runs port_up.
    table port_liveness {
        key = {
            ig_tm_md.ucast_egress_port: exact @name("port");
            ig_intr_md.ingress_port: selector;
        }
        actions = {
            port_up;
        }
        implementation = liveness_selector;
        size = PORT_TABLE_SIZE;
    }

    apply {
        if (meta.next_hop_set == 1) {
            port_liveness.apply();
        }
        if ((meta.next_hop_set == 1 || meta.multipath != MULTIPATH_NONE) && meta.port_up == 0) {
            if (meta.failover == 0) {
                meta.resubmit.setValid();
                meta.resubmit.kind = (bit<8>) RESUBMIT_FAILOVER;
                meta.resubmit.version = ~hdr.bridged.version;
                meta.resubmit._pad = 0;
                ig_dprsr_md.resubmit_type = RESUBMIT_FAILOVER;
            } else {
                ig_dprsr_md.drop_ctl = 1;
            }
        }
    }
}

#endif  // P4SRC_TNA_INCLUDE_FAILOVER_P4_
