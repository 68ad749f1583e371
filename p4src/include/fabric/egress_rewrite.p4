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

    action set_packet_in() {
        hdr.packet_in.setValid();
        hdr.packet_in.ingress_port = meta.ingress_port;
        hdr.packet_in._pad = 0;
    }

#endif  // P4SRC_INCLUDE_FABRIC_EGRESS_REWRITE_P4_
