/* Idioms of v1model programs: function-like macros over standard_metadata, a top-level action
 * with a directional parameter bound in the actions list, a control instance applied twice with
 * constant arguments, resubmit/recirculate/clone3 with empty field lists. */
#include <core.p4>
#include <v1model.p4>

const bit<32> INSTANCE_RESUBMIT = 6;
const bit<32> INSTANCE_RECIRC = 4;
#define IS_RESUBMITTED(sm) (sm.instance_type == INSTANCE_RESUBMIT)
#define IS_RECIRCULATED(sm) (sm.instance_type == INSTANCE_RECIRC)

header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
header ipv4_t {
    bit<4> version; bit<4> ihl; bit<8> tos; bit<16> len; bit<16> id; bit<3> flags; bit<13> frag;
    bit<8> ttl; bit<8> proto; bit<16> csum; bit<32> src; bit<32> dst;
}
struct headers_t { ethernet_t ethernet; ipv4_t ipv4; }
struct meta_t { bit<32> l2ptr; }

action my_drop(inout standard_metadata_t smeta) {
    mark_to_drop(smeta);
}

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    const bit<16> ETHERTYPE_IPV4 = 16w0x0800;
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_IPV4: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition accept;
    }
}

control fill_ipv4_address(out bit<32> address, in bit<8> b0, in bit<8> b1, in bit<8> b2, in bit<8> b3) {
    apply {
        address = b0 ++ b1 ++ b2 ++ b3;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply { } }

control Ing(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    fill_ipv4_address() fill;

    action set_port(bit<9> port) { sm.egress_spec = port; }
    action do_resubmit(bit<32> new_dst) {
        hdr.ipv4.dst = new_dst;
        resubmit({});
    }
    action do_clone(bit<9> port) {
        sm.egress_spec = port;
        clone3(CloneType.I2E, 32w5, {});
    }
    table ipv4_da {
        key = { hdr.ipv4.dst: lpm; }
        actions = { set_port; do_resubmit; do_clone; my_drop(sm); }
        default_action = my_drop(sm);
    }

    apply {
        if (IS_RESUBMITTED(sm)) {
            fill.apply(hdr.ipv4.src, 10, 252, 129, 2);
            sm.egress_spec = 3;
        } else if (IS_RECIRCULATED(sm)) {
            fill.apply(hdr.ipv4.src, 10, 199, 86, 99);
            sm.egress_spec = 4;
        } else if (hdr.ipv4.isValid()) {
            ipv4_da.apply();
        } else {
            my_drop(sm);
        }
    }
}

control Eg(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        if (sm.instance_type == 0 && hdr.ipv4.isValid() && hdr.ipv4.proto == 0xfe) {
            hdr.ipv4.proto = 0xfd;
            recirculate({});
        }
    }
}

control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.ethernet); pkt.emit(hdr.ipv4); } }

V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
