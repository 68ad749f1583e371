// Controller packet I/O: packet-out (sent unchanged on the named port, no table applies),
// probes (any probe frame from a front-panel port goes to the controller), packet-in header.
#ifndef P4SRC_INCLUDE_PACKET_IO_P4_
#define P4SRC_INCLUDE_PACKET_IO_P4_

#include <core.p4>
#include <v1model.p4>
#include "defines.p4"
#include "headers.p4"
#include "metadata.p4"

control PacketIoIngress(inout fabric_headers_t hdr,
                        inout fabric_metadata_t meta,
                        inout standard_metadata_t standard_metadata) {
    apply {
        if (hdr.packet_out.isValid()) {
            standard_metadata.egress_spec = hdr.packet_out.egress_port;
            hdr.packet_out.setInvalid();
            meta.bypass = 1;
        } else if (hdr.ethernet.isValid() && hdr.ethernet.ether_type == ETHERTYPE_PROBE) {
            standard_metadata.egress_spec = CPU_PORT;
            meta.bypass = 1;
        }
    }
}

control PacketIoEgress(inout fabric_headers_t hdr,
                       in fabric_metadata_t meta,
                       in standard_metadata_t standard_metadata) {
    apply {
        if (standard_metadata.egress_port == CPU_PORT) {
            hdr.packet_in.setValid();
            hdr.packet_in.ingress_port = meta.ingress_port;
            hdr.packet_in._pad = 0;
        }
    }
}

#endif  // P4SRC_INCLUDE_PACKET_IO_P4_
