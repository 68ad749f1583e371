// Tofino egress of fabric: packet-in header, source MAC, tag push/strip, port_tx.
#ifndef P4SRC_TNA_INCLUDE_EGRESS_P4_
#define P4SRC_TNA_INCLUDE_EGRESS_P4_

#include <core.p4>
#include <tna.p4>
#include "sizes.p4"
#include "types.p4"

control FabricEgress(inout tna_headers_t hdr,
                     inout tna_egress_metadata_t meta,
                     in egress_intrinsic_metadata_t eg_intr_md,
                     in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
                     inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
                     inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {

    Counter<bit<64>, port_t>(PORT_COUNTER_SIZE, CounterType_t.PACKETS_AND_BYTES) port_tx;

    action set_smac(mac_addr_t smac) {
        hdr.ethernet.src_addr = smac;
    }

    table port_mac {
        key = {
            eg_intr_md.egress_port: exact @name("egress_port");
        }
        actions = {
            set_smac;
            @defaultonly NoAction;
        }
        const default_action = NoAction();
        size = PORT_TABLE_SIZE;
    }

    apply {
        if (eg_intr_md.egress_port == CPU_PORT) {
            hdr.packet_in.setValid();
            hdr.packet_in.ingress_port = hdr.bridged.ingress_port;
            hdr.packet_in._pad = 0;
        } else if (hdr.bridged.routed == 1) {
            port_mac.apply();
            if (hdr.bridged.to_host == 1) {
                if (hdr.path_tag.isValid()) {
                    hdr.ethernet.ether_type = hdr.path_tag.ether_type;
                    hdr.path_tag.setInvalid();
                }
            } else if (hdr.path_tag.isValid()) {
                hdr.path_tag.version = hdr.bridged.version;
                hdr.path_tag.hops = hdr.path_tag.hops + 1;
            } else {
                hdr.path_tag.setValid();
                hdr.path_tag.version = hdr.bridged.version;
                hdr.path_tag.reserved = 0;
                hdr.path_tag.hops = 1;
                hdr.path_tag.ether_type = hdr.ethernet.ether_type;
                hdr.ethernet.ether_type = ETHERTYPE_PATH_TAG;
            }
        }
        hdr.bridged.setInvalid();
        port_tx.count(eg_intr_md.egress_port);
    }
}

#endif  // P4SRC_TNA_INCLUDE_EGRESS_P4_
