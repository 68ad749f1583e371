/* Parser features: a sub-parser with a constructor argument, IPv4 options as varbit, a header
 * union for the L4 header, and a parser value set of tunnel UDP ports the control plane fills. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
header ipv4_t {
    bit<4> version; bit<4> ihl; bit<8> dscp; bit<16> len; bit<16> id; bit<3> flags; bit<13> frag;
    bit<8> ttl; bit<8> protocol; bit<16> csum; bit<32> src; bit<32> dst;
}
header ipv4_options_t { varbit<320> options; }
header tcp_t { bit<16> sport; bit<16> dport; bit<32> seq; bit<32> ack; bit<16> flags; bit<16> win;
               bit<16> csum; bit<16> urg; }
header udp_t { bit<16> sport; bit<16> dport; bit<16> len; bit<16> csum; }
header_union l4_t { tcp_t tcp; udp_t udp; }
header tunnel_t { bit<32> vni; }

struct headers_t {
    ethernet_t ethernet; ipv4_t ipv4; ipv4_options_t ipv4_options; l4_t l4; tunnel_t tunnel;
}
struct md_t { bit<8> l4_kind; bit<8> parsed_by; }

// Parses IPv4 with its options and the L4 header; `tag` says which instance ran.
parser Ipv4Parser(packet_in pkt, inout headers_t hdr, inout md_t md)(bit<8> tag) {
    value_set<bit<16>>(4) tunnel_ports;
    state start {
        pkt.extract(hdr.ipv4);
        md.parsed_by = tag;
        pkt.extract(hdr.ipv4_options, (bit<32>)(((bit<16>)hdr.ipv4.ihl - 5) * 32));
        transition select(hdr.ipv4.protocol) { 6: tcp; 17: udp; default: accept; }
    }
    state tcp { pkt.extract(hdr.l4.tcp); md.l4_kind = 6; transition accept; }
    state udp {
        pkt.extract(hdr.l4.udp);
        md.l4_kind = 17;
        transition select(hdr.l4.udp.dport) { tunnel_ports: tunnel; default: accept; }
    }
    state tunnel { pkt.extract(hdr.tunnel); transition accept; }
}

parser Prs(packet_in pkt, out headers_t hdr, inout md_t md, inout standard_metadata_t sm) {
    Ipv4Parser(8w4) v4;
    state start {
        md.l4_kind = 0;
        md.parsed_by = 0;
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) { 0x800: ipv4; default: accept; }
    }
    state ipv4 { v4.apply(pkt, hdr, md); transition accept; }
}

control NoVerify(inout headers_t hdr, inout md_t md) { apply { } }

control IngressImpl(inout headers_t hdr, inout md_t md, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 2;
        if (hdr.l4.isValid()) {
            hdr.ethernet.src = (bit<48>)(md.parsed_by ++ md.l4_kind);
        }
        if (hdr.tunnel.isValid()) {
            hdr.tunnel.vni = hdr.tunnel.vni + 1;
        }
        if (hdr.l4.udp.isValid() && hdr.l4.udp.sport == 7) {
            // rewrite UDP as TCP: making one union member valid invalidates the other
            hdr.l4.tcp.setValid();
            hdr.l4.tcp.sport = 7;
            hdr.l4.tcp.dport = 8;
        }
    }
}

control EgressImpl(inout headers_t hdr, inout md_t md, inout standard_metadata_t sm) { apply { } }
control NoCompute(inout headers_t hdr, inout md_t md) { apply { } }
control Dep(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.ethernet); pkt.emit(hdr.ipv4); pkt.emit(hdr.ipv4_options); pkt.emit(hdr.l4);
            pkt.emit(hdr.tunnel); }
}

V1Switch(Prs(), NoVerify(), IngressImpl(), EgressImpl(), NoCompute(), Dep()) main;
