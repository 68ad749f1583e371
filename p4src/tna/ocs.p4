// ocs.p4 for Tofino (TNA): the emulated optical cross-connect, same control-plane names as
// ../ocs.p4. Frames are not parsed; dark ports drop and count. Not compiled here (no bf-p4c).
//
//  ingress: port_rx -> packet-out? -> circuit (ingress_port): cross_connect(port) | dark()
//  egress:  port_tx

#include <core.p4>
#include <tna.p4>

#include "include/sizes.p4"
#include "include/types.p4"

struct ocs_tna_metadata_t { }

parser OcsIngressParser(packet_in packet,
                        out ocs_headers_t hdr,
                        out ocs_tna_metadata_t meta,
                        out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        packet.extract(ig_intr_md);
        packet.advance(PORT_METADATA_SIZE);
        transition select(ig_intr_md.ingress_port) {
            CPU_PORT: parse_packet_out;
            default: accept;
        }
    }

    state parse_packet_out {
        packet.extract(hdr.packet_out);
        transition accept;
    }
}

control OcsIngress(inout ocs_headers_t hdr,
                   inout ocs_tna_metadata_t meta,
                   in ingress_intrinsic_metadata_t ig_intr_md,
                   in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                   inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                   inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {

    Counter<bit<64>, port_t>(PORT_COUNTER_SIZE, CounterType_t.PACKETS_AND_BYTES) port_rx;
    Counter<bit<64>, port_t>(PORT_COUNTER_SIZE, CounterType_t.PACKETS_AND_BYTES) dark_drops;

    action cross_connect(port_t port) {
        ig_tm_md.ucast_egress_port = port;
    }

    action dark() {
        ig_dprsr_md.drop_ctl = 1;
        dark_drops.count(ig_intr_md.ingress_port);
    }

    // One entry per lit input port; ports without one are dark.
    table circuit {
        key = {
            ig_intr_md.ingress_port: exact @name("ingress_port");
        }
        actions = {
            cross_connect;
            dark;
        }
        default_action = dark();
        size = CIRCUIT_TABLE_SIZE;
    }

    apply {
        port_rx.count(ig_intr_md.ingress_port);
        if (hdr.packet_out.isValid()) {
            ig_tm_md.ucast_egress_port = hdr.packet_out.egress_port;
            hdr.packet_out.setInvalid();
        } else {
            circuit.apply();
        }
    }
}

control OcsIngressDeparser(packet_out packet,
                           inout ocs_headers_t hdr,
                           in ocs_tna_metadata_t meta,
                           in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { }
}

// Egress parses nothing but its intrinsic metadata: the frame passes as payload.
parser OcsEgressParser(packet_in packet,
                       out ocs_headers_t hdr,
                       out ocs_tna_metadata_t meta,
                       out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        packet.extract(eg_intr_md);
        transition accept;
    }
}

control OcsEgress(inout ocs_headers_t hdr,
                  inout ocs_tna_metadata_t meta,
                  in egress_intrinsic_metadata_t eg_intr_md,
                  in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
                  inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
                  inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    Counter<bit<64>, port_t>(PORT_COUNTER_SIZE, CounterType_t.PACKETS_AND_BYTES) port_tx;
    apply {
        port_tx.count(eg_intr_md.egress_port);
    }
}

control OcsEgressDeparser(packet_out packet,
                          inout ocs_headers_t hdr,
                          in ocs_tna_metadata_t meta,
                          in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { }
}

Pipeline(OcsIngressParser(),
         OcsIngress(),
         OcsIngressDeparser(),
         OcsEgressParser(),
         OcsEgress(),
         OcsEgressDeparser()) pipe;

Switch(pipe) main;
