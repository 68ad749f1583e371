// EgressRewrite: routed packets get the source MAC of their egress port and the path tag pushed,
// updated or stripped; packets to the CPU get the packet-in header; the copy of a held ACK becomes
// the drain probe (flowlet.p4).
#ifndef P4SRC_INCLUDE_FABRIC_EGRESS_REWRITE_P4_
#define P4SRC_INCLUDE_FABRIC_EGRESS_REWRITE_P4_

#include "../headers.p4"
#include "../metadata.p4"

control EgressRewrite(inout fabric_headers_t hdr, inout fabric_metadata_t meta) {

    action set_smac(mac_addr_t smac) {
        hdr.ethernet.src_addr = smac;
    }

    // The MAC address of each switch port. Exact on the egress port.
    table port_mac {
        key = {
            meta.egress_port: exact @name("egress_port");
        }
        actions = {
            set_smac;
            @defaultonly NoAction;
        }
        default_action = NoAction();
        size = PORT_TABLE_SIZE;
    }

    // Ingress switch of the packet: stamp the version it decided.
    action push_tag() {
        hdr.path_tag.setValid();
        hdr.path_tag.version = meta.version;
        hdr.path_tag.reserved = 0;
        hdr.path_tag.hops = 1;
        hdr.path_tag.ether_type = hdr.ethernet.ether_type;
        hdr.ethernet.ether_type = ETHERTYPE_PATH_TAG;
    }

    // Transit switch: the version changes only if this switch failed over.
    action update_tag() {
        hdr.path_tag.version = meta.version;
        hdr.path_tag.hops = hdr.path_tag.hops + 1;
    }

    // Egress switch: the host gets the frame as its sender built it.
    action strip_tag() {
        hdr.ethernet.ether_type = hdr.path_tag.ether_type;
        hdr.path_tag.setInvalid();
    }

    // A copy of a held ACK (flowlet.p4 send_drain_probe) becomes a zero-length segment of the flow it
    // acknowledges, one byte before the acknowledgement (an old segment: the receiver ACKs at once),
    // and goes back to ingress to be forwarded as that flow's packet, on the flow's current path. The
    // ACK's TCP options stay behind the header as bytes the 40-byte IPv4 length leaves out. The
    // target's checksum glue computes the TCP checksum whole.
    action make_drain_probe() {
        ipv4_addr_t addr = hdr.ipv4.src_addr;
        hdr.ipv4.src_addr = hdr.ipv4.dst_addr;
        hdr.ipv4.dst_addr = addr;
        hdr.ipv4.total_len = 40;
        bit<16> port = hdr.tcp.src_port;
        hdr.tcp.src_port = hdr.tcp.dst_port;
        hdr.tcp.dst_port = port;
        bit<32> seq = hdr.tcp.seq_no;
        hdr.tcp.seq_no = hdr.tcp.ack_no - 1;
        hdr.tcp.ack_no = seq;
        hdr.tcp.data_offset = 5;
        hdr.tcp.res = 0;
        hdr.tcp.flags = TCP_FLAG_ACK;
        hdr.tcp.urgent_ptr = 0;
        RECIRCULATE_DRAIN_PROBE();
    }

    action set_packet_in() {
        hdr.packet_in.setValid();
        hdr.packet_in.ingress_port = meta.ingress_port;
        hdr.packet_in._pad = 0;
        hdr.packet_in.timestamp = (bit<48>) meta.now;
    }

    apply {
        if (meta.drain_probe == 1 && meta.is_clone == 1) {
            if (hdr.path_tag.isValid()) {
                strip_tag();
            }
            make_drain_probe();  // sent back to ingress: it never leaves on the clone session's port
        } else if (meta.egress_port == CPU_PORT) {
            set_packet_in();
        } else if (meta.routed == 1) {
            port_mac.apply();
            if (meta.to_host == 1) {
                if (hdr.path_tag.isValid()) {
                    strip_tag();
                }
            } else if (hdr.path_tag.isValid()) {
                update_tag();
            } else {
                push_tag();
            }
        }
    }
}

#endif  // P4SRC_INCLUDE_FABRIC_EGRESS_REWRITE_P4_
