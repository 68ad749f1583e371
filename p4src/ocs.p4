// ocs.p4: an emulated optical circuit switch (v1model). A one-to-one cross-connect on ingress
// port alone; frames pass unchanged; dark ports drop and count. Contract: p4src/README.md.
//
//  ingress: port_rx -> packet-out? --yes--> packet_out.egress_port
//                        | no
//                      circuit (ingress_port) --> cross_connect(port) | dark(): drop, dark_drops
//  egress:  port_tx

#include <core.p4>
#include <v1model.p4>

#include "include/sizes.p4"
#include "include/defines.p4"
#include "include/headers.p4"
#include "include/metadata.p4"
#include "include/ocs_parser.p4"
#include "include/port_counters.p4"
#include "include/circuit.p4"

control OcsIngress(inout ocs_headers_t hdr,
                   inout ocs_metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    PortRxCounter() rx_counter;
    Circuit() optical;

    apply {
        rx_counter.apply(standard_metadata);
        if (hdr.packet_out.isValid()) {
            standard_metadata.egress_spec = hdr.packet_out.egress_port;
            hdr.packet_out.setInvalid();
        } else {
            optical.apply(standard_metadata);
        }
    }
}

control OcsEgress(inout ocs_headers_t hdr,
                  inout ocs_metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    PortTxCounter() tx_counter;

    apply {
        if (standard_metadata.egress_port == CPU_PORT) {
            hdr.packet_in.setValid();
            hdr.packet_in.ingress_port = meta.ingress_port;
            hdr.packet_in._pad = 0;
        }
        tx_counter.apply(standard_metadata);
    }
}

V1Switch(OcsParser(),
         OcsVerifyChecksum(),
         OcsIngress(),
         OcsEgress(),
         OcsComputeChecksum(),
         OcsDeparser()) main;
