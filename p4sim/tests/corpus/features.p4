/* Exercises most v1model constructs p4sim supports: stacks, select masks/ranges, lookahead,
 * const entries, switch/hit/miss, selectors, direct resources, registers, hash, random,
 * slices, concatenation, casts, digest, resubmit with field lists, controller headers. */
#include <core.p4>
#include <v1model.p4>

#define VLAN_DEPTH 2
#ifndef TABLE_SIZE
#define TABLE_SIZE 64
#endif
#if defined(TABLE_SIZE) && TABLE_SIZE > 32
#define BIG 1
#else
#define BIG 0
#endif

typedef bit<48> mac_t;
type bit<9> port_t;
enum bit<16> ether_type_t { IPV4 = 0x0800, VLAN = 0x8100, ARP = 0x0806 }
enum color_t { GREEN, RED }
error { BadVersion }

@controller_header("packet_in")
header packet_in_t { bit<9> ingress_port; bit<7> _pad; }
@controller_header("packet_out")
header packet_out_t { bit<9> egress_port; bit<7> _pad; }

header ethernet_t { mac_t dst; mac_t src; bit<16> ether_type; }
header vlan_t { bit<3> pcp; bit<1> cfi; bit<12> vid; bit<16> ether_type; }
header ipv4_t {
    bit<4> version; bit<4> ihl; bit<8> tos; bit<16> len; bit<16> id; bit<3> flags; bit<13> frag;
    bit<8> ttl; bit<8> proto; bit<16> csum; bit<32> src; bit<32> dst;
}

struct headers_t {
    packet_out_t packet_out;
    packet_in_t packet_in;
    ethernet_t ethernet;
    vlan_t[VLAN_DEPTH] vlan;
    ipv4_t ipv4;
}

struct learn_t { mac_t src; bit<9> port; }

struct meta_t {
    @field_list(1) bit<8> resubmits;
    bit<16> hash;
    bit<8> rnd;
    bit<32> color;
    bit<1> tiny;
    bool routed;
    color_t c;
}

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        transition select(sm.ingress_port) {
            255: parse_packet_out;
            default: parse_ethernet;
        }
    }
    state parse_packet_out {
        pkt.extract(hdr.packet_out);
        transition parse_ethernet;
    }
    state parse_ethernet {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ether_type_t.VLAN: parse_vlan;
            0x0800 &&& 0xffff: parse_ipv4;
            0x0000 .. 0x05ff: accept;   // 802.3 length field
            default: accept;
        }
    }
    state parse_vlan {
        pkt.extract(hdr.vlan.next);
        transition select(hdr.vlan.last.ether_type) {
            0x8100: parse_vlan;
            0x0800: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        transition select(pkt.lookahead<bit<4>>()) {
            4: extract_ipv4;
            default: reject;
        }
    }
    state extract_ipv4 {
        pkt.extract(hdr.ipv4);
        verify(hdr.ipv4.ihl >= 5, error.BadVersion);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply { } }

control Ing(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    direct_counter(CounterType.packets) fwd_counter;
    register<bit<32>>(256) seen;
    meter(16, MeterType.packets) m;
    action_selector(HashAlgorithm.crc16, 32w128, 32w14) ecmp_sel;

    action drop() { mark_to_drop(sm); }
    action forward(port_t port) {
        sm.egress_spec = (bit<9>)port;
        meta.routed = true;
        fwd_counter.count();
    }
    action set_nh(bit<9> port, mac_t dmac) {
        sm.egress_spec = port;
        hdr.ethernet.dst = dmac;
    }
    @id(0x01000123)
    action rewrite_tos(bit<6> dscp) {
        hdr.ipv4.tos = dscp ++ hdr.ipv4.tos[1:0];
        if (hdr.ipv4.ttl > 10) {
            hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
        } else {
            hdr.ipv4.ttl = 8w10;
        }
    }

    table fwd {
        key = { hdr.ethernet.dst: exact @name("dmac"); }
        actions = { forward; @defaultonly drop; }
        default_action = drop();
        counters = fwd_counter;
        size = TABLE_SIZE;
    }
    table ecmp {
        key = {
            hdr.ipv4.dst: lpm;
            hdr.ipv4.src: selector;
            hdr.ipv4.proto: selector;
        }
        actions = { set_nh; NoAction; }
        implementation = ecmp_sel;
    }
    table classify {
        key = { hdr.ipv4.proto: ternary; hdr.ipv4.len: range; hdr.vlan[0].isValid(): exact; }
        actions = { rewrite_tos; NoAction; }
        const entries = {
            (17, 0 .. 100, false): rewrite_tos(6w46);
            (6 &&& 0xff, _, false): rewrite_tos(6w10);
        }
    }

    apply {
        if (hdr.packet_out.isValid()) {
            sm.egress_spec = hdr.packet_out.egress_port;
            hdr.packet_out.setInvalid();
            exit;
        }
        bit<32> count;
        seen.read(count, (bit<32>)sm.ingress_port);
        seen.write((bit<32>)sm.ingress_port, count + 1);
        hash(meta.hash, HashAlgorithm.crc16, 16w0, { hdr.ethernet.src, hdr.ethernet.dst }, 32w65536);
        random(meta.rnd, 8w0, 8w255);
        m.execute_meter((bit<32>)sm.ingress_port[3:0], meta.color);
        meta.tiny = (bit<1>)(meta.rnd > 127 ? true : false);
        switch (fwd.apply().action_run) {
            forward: {
                if (hdr.ipv4.isValid()) {
                    if (!classify.apply().hit) {
                        ecmp.apply();
                    }
                }
            }
            drop: {
                if (meta.resubmits == 0 && hdr.ethernet.ether_type == 0x9999) {
                    meta.resubmits = meta.resubmits + 1;
                    resubmit_preserving_field_list(1);
                }
            }
        }
        if (hdr.ethernet.src[40:40] == 0 && sm.ingress_port != 255) {
            learn_t l = { hdr.ethernet.src, sm.ingress_port };
            digest<learn_t>(1, l);
        }
        if (meta.routed && meta.c == color_t.GREEN) {
            hdr.ethernet.src = hdr.ethernet.src ^ 48w1;
        }
    }
}

control Eg(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        if (sm.egress_port == 255) {
            hdr.packet_in.setValid();
            hdr.packet_in.ingress_port = sm.ingress_port;
            hdr.packet_in._pad = 0;
        }
    }
}

control CC(inout headers_t hdr, inout meta_t meta) {
    apply {
        update_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.tos, hdr.ipv4.len, hdr.ipv4.id, hdr.ipv4.flags,
              hdr.ipv4.frag, hdr.ipv4.ttl, hdr.ipv4.proto, hdr.ipv4.src, hdr.ipv4.dst },
            hdr.ipv4.csum, HashAlgorithm.csum16);
    }
}

control D(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr); }
}

V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
