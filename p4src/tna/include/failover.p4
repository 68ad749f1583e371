// Fast failover on Tofino: port_liveness as on v1model; the other version by resubmit.
// Declarations for the body of FabricIngress (hdr, meta, ig_intr_md, ig_dprsr_md, ig_tm_md in scope).
#ifndef P4SRC_TNA_INCLUDE_FAILOVER_P4_
#define P4SRC_TNA_INCLUDE_FAILOVER_P4_

    // Same members as v1model: the port_down sentinel first, then port_up watching the port.
    // Tofino's selector does not take the hash modulo the number of live members, so which live
    // member the constant input picks must be checked on the target (see ../README.md).
    Hash<bit<16>>(HashAlgorithm_t.IDENTITY) liveness_hash;
    ActionProfile(LIVENESS_SELECTOR_SIZE) liveness_profile;
    ActionSelector(liveness_profile, liveness_hash, SelectorMode_t.FAIR, 2,
                   PORT_TABLE_SIZE) liveness_selector;

    action port_up() {
        meta.port_up = 1;
    }

    action port_down() {
        meta.port_up = 0;
    }

    table port_liveness {
        key = {
            ig_tm_md.ucast_egress_port: exact @name("port");
            meta.liveness_pick: selector;
        }
        actions = {
            port_up;
            port_down;
        }
        implementation = liveness_selector;
        size = PORT_TABLE_SIZE;
    }

    // The copy comes back through the parser with the other version in the resubmit header.
    action fail_over() {
        meta.resubmit.setValid();
        meta.resubmit.kind = (bit<8>) RESUBMIT_FAILOVER;
        meta.resubmit.version = ~hdr.bridged.version;
        meta.resubmit._pad = 0;
        ig_dprsr_md.resubmit_type = RESUBMIT_FAILOVER;
    }

#endif  // P4SRC_TNA_INCLUDE_FAILOVER_P4_
