// Deparser of fabric.p4. packet_out is never emitted: ingress invalidates it.
#ifndef P4SRC_INCLUDE_V1MODEL_DEPARSER_P4_
#define P4SRC_INCLUDE_V1MODEL_DEPARSER_P4_

#include <core.p4>
#include <v1model.p4>
#include "glue.p4"
#include "../headers.p4"

control FabricDeparser(packet_out packet, in fabric_headers_t hdr) {
    apply {
        packet.emit(hdr.packet_in);
        packet.emit(hdr.ethernet);
        packet.emit(hdr.hold_mark);
        packet.emit(hdr.reservation);
        packet.emit(hdr.path_tag);
        packet.emit(hdr.ipv4);
        packet.emit(hdr.tcp);
        packet.emit(hdr.udp);
        packet.emit(hdr.icmp);
        packet.emit(hdr.arp);
    }
}

#endif  // P4SRC_INCLUDE_V1MODEL_DEPARSER_P4_
