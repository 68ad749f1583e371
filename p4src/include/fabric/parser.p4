// FabricPacketParser: Ethernet, path tag, IPv4, L4, ARP, for both targets. The target's own
// parser (include/<target>/) initialises the metadata, handles its intrinsic metadata and the
// controller header, then calls this one.
#ifndef P4SRC_INCLUDE_FABRIC_PARSER_P4_
#define P4SRC_INCLUDE_FABRIC_PARSER_P4_

#include "../defines.p4"
#include "../headers.p4"
#include "../metadata.p4"

parser FabricPacketParser(packet_in packet, inout fabric_headers_t hdr, inout fabric_metadata_t meta) {

    DECLARE_TCP_RESIDUAL

    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_PATH_TAG: parse_path_tag;
            ETHERTYPE_IPV4: parse_ipv4;
            ETHERTYPE_ARP: parse_arp;
            ETHERTYPE_HOLD_MARK: parse_hold_mark;
#ifndef __TARGET_TOFINO__
            ETHERTYPE_RESERVATION: parse_reservation;  // v1model's reservation loop (TNA: not yet)
#endif
#ifdef __TARGET_TOFINO__
            ETHERTYPE_DRAIN_MARK: parse_drain_mark;
#endif
            default: accept;  // probes (ETHERTYPE_PROBE) are recognised by the ether type alone
        }
    }

#ifdef __TARGET_TOFINO__
    // TNA: a drain probe back from egress (include/tna/glue.p4); v1model keeps a field list instead.
    state parse_drain_mark {
        packet.extract(hdr.drain_mark);
        meta.drain_probe = 1;
        transition select(hdr.drain_mark.ether_type) {
            ETHERTYPE_IPV4: parse_ipv4;
            default: accept;
        }
    }
#endif

#ifndef __TARGET_TOFINO__
    // A reservation frame (a grant at a ToR; include/v1model/reservation_tor.p4): not IPv4, so
    // Dispatch drops it, after the reservation control has read it.
    state parse_reservation {
        packet.extract(hdr.reservation);
        transition accept;
    }
#endif

    // A packet held for its slot, back from the hold loop (include/<target>/slot_hold.p4): its held
    // state. Ingress removes the mark (and drops one that did not come round the loop).
    state parse_hold_mark {
        packet.extract(hdr.hold_mark);
        meta.held = 1;
        meta.stale = hdr.hold_mark.stale;
        meta.hold_since = hdr.hold_mark.since;
        meta.held_path_id = hdr.hold_mark.path_id;
        meta.held_version = hdr.hold_mark.version;
        transition select(hdr.hold_mark.ether_type) {
            ETHERTYPE_PATH_TAG: parse_path_tag;
            ETHERTYPE_IPV4: parse_ipv4;
            default: accept;
        }
    }

    state parse_path_tag {
        packet.extract(hdr.path_tag);
        transition select(hdr.path_tag.ether_type) {
            ETHERTYPE_IPV4: parse_ipv4;
            default: accept;
        }
    }

    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        // Only option-less first fragments carry the L4 header right after IPv4.
        transition select(hdr.ipv4.ihl, hdr.ipv4.frag_offset, hdr.ipv4.protocol) {
            (4w5, 13w0, IP_PROTO_TCP): parse_tcp;
            (4w5, 13w0, IP_PROTO_UDP): parse_udp;
            (4w5, 13w0, IP_PROTO_ICMP): parse_icmp;
            default: accept;
        }
    }

    state parse_tcp {
        packet.extract(hdr.tcp);
        TCP_RESIDUAL();
        meta.l4_src_port = hdr.tcp.src_port;
        meta.l4_dst_port = hdr.tcp.dst_port;
        transition accept;
    }

    state parse_udp {
        packet.extract(hdr.udp);
        meta.l4_src_port = hdr.udp.src_port;
        meta.l4_dst_port = hdr.udp.dst_port;
        transition accept;
    }

    state parse_icmp {
        packet.extract(hdr.icmp);
        transition accept;
    }

    state parse_arp {
        packet.extract(hdr.arp);
        transition accept;
    }
}

#endif  // P4SRC_INCLUDE_FABRIC_PARSER_P4_
