// IPv4 header checksum: recomputed only for packets whose TTL this switch decremented, so
// packet-outs and ACL-forwarded frames leave exactly as they came. TCP: only for drain probes.
#ifndef P4SRC_INCLUDE_V1MODEL_CHECKSUM_P4_
#define P4SRC_INCLUDE_V1MODEL_CHECKSUM_P4_

#include <core.p4>
#include <v1model.p4>
#include "glue.p4"
#include "../headers.p4"
#include "../metadata.p4"

control FabricVerifyChecksum(inout fabric_headers_t hdr, inout fabric_metadata_t meta) {
    apply { }
}

control FabricComputeChecksum(inout fabric_headers_t hdr, inout fabric_metadata_t meta) {
    apply {
        update_checksum(
            hdr.ipv4.isValid() && meta.routed == 1,
            { hdr.ipv4.version,
              hdr.ipv4.ihl,
              hdr.ipv4.dscp_ecn,
              hdr.ipv4.total_len,
              hdr.ipv4.identification,
              hdr.ipv4.flags,
              hdr.ipv4.frag_offset,
              hdr.ipv4.ttl,
              hdr.ipv4.protocol,
              hdr.ipv4.src_addr,
              hdr.ipv4.dst_addr },
            hdr.ipv4.hdr_checksum,
            HashAlgorithm.csum16);
        // A drain probe (fabric.p4): a bare 20-byte TCP header, its checksum computed whole. The ACK it
        // was copied from has the flag too; if that ACK is 40 bytes, the sum is the same as its own.
        update_checksum(
            hdr.tcp.isValid() && meta.drain_probe == 1 && hdr.ipv4.total_len == 40,
            { hdr.ipv4.src_addr,
              hdr.ipv4.dst_addr,
              8w0,
              hdr.ipv4.protocol,
              16w20,
              hdr.tcp.src_port,
              hdr.tcp.dst_port,
              hdr.tcp.seq_no,
              hdr.tcp.ack_no,
              hdr.tcp.data_offset,
              hdr.tcp.res,
              hdr.tcp.flags,
              hdr.tcp.window,
              hdr.tcp.urgent_ptr },
            hdr.tcp.checksum,
            HashAlgorithm.csum16);
    }
}

#endif  // P4SRC_INCLUDE_V1MODEL_CHECKSUM_P4_
