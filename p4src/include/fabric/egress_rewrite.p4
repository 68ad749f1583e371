// Egress rewrite of routed packets: source MAC of the egress port, path tag push/strip.
// Declarations for the body of FabricEgress: hdr, meta and standard_metadata are in scope.
#ifndef P4SRC_INCLUDE_FABRIC_EGRESS_REWRITE_P4_
#define P4SRC_INCLUDE_FABRIC_EGRESS_REWRITE_P4_

    action set_smac(mac_addr_t smac) {
        hdr.ethernet.src_addr = smac;
    }

    // The MAC address of each switch port. Exact on the egress port.
    table port_mac {
        key = {
            standard_metadata.egress_port: exact @name("egress_port");
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
    // ACK's TCP options stay behind the header as bytes the 40-byte IPv4 length leaves out.
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
        recirculate_preserving_field_list(FL_DRAIN_PROBE);
    }

    action set_packet_in() {
        hdr.packet_in.setValid();
        hdr.packet_in.ingress_port = meta.ingress_port;
        hdr.packet_in._pad = 0;
    }

#endif  // P4SRC_INCLUDE_FABRIC_EGRESS_REWRITE_P4_
