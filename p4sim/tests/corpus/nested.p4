/* Controls applied from controls (fabric-tna / sonic-pins style): an instance per feature, one
 * control type instantiated twice with different constructor arguments, two levels of nesting,
 * and a control applied conditionally. p4c inlines them with names like IngressImpl.fwd.routing.routing_v4. */
#include <core.p4>
#include <v1model.p4>

typedef bit<48> mac_t;
typedef bit<9>  port_t;

header ethernet_t { mac_t dst; mac_t src; bit<16> ether_type; }
header ipv4_t {
    bit<4> version; bit<4> ihl; bit<8> dscp; bit<16> len; bit<16> id; bit<3> flags; bit<13> frag;
    bit<8> ttl; bit<8> protocol; bit<16> csum; bit<32> src; bit<32> dst;
}
struct headers_t { ethernet_t ethernet; ipv4_t ipv4; }
struct local_md_t { bit<16> nexthop; bit<8> class_a; bit<8> class_b; bool routed; }

parser Prs(packet_in pkt, out headers_t hdr, inout local_md_t md, inout standard_metadata_t sm) {
    state start {
        md.nexthop = 0;
        md.class_a = 0;
        md.class_b = 0;
        md.routed = false;
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) { 0x800: ipv4; default: accept; }
    }
    state ipv4 { pkt.extract(hdr.ipv4); transition accept; }
}

control NoVerify(inout headers_t hdr, inout local_md_t md) { apply { } }

// Classifies on the DSCP bits into the given metadata byte, offset by a constructor constant.
control Classifier(in headers_t hdr, inout bit<8> class_out)(bit<8> base) {
    action set_class(bit<8> c) { class_out = c + base; }
    table classify {
        key = { hdr.ipv4.dscp: exact @name("dscp"); }
        actions = { set_class; NoAction; }
        default_action = NoAction();
    }
    apply { classify.apply(); }
}

control Routing(inout headers_t hdr, inout local_md_t md) {
    action set_nexthop(bit<16> nh) { md.nexthop = nh; md.routed = true; }
    table routing_v4 {
        key = { hdr.ipv4.dst: lpm @name("ipv4_dst"); }
        actions = { set_nexthop; NoAction; }
        default_action = NoAction();
    }
    apply { routing_v4.apply(); }
}

control Forwarding(inout headers_t hdr, inout local_md_t md, inout standard_metadata_t sm) {
    Routing() routing;
    action to_port(port_t port, mac_t dmac) { sm.egress_spec = port; hdr.ethernet.dst = dmac; }
    action drop() { mark_to_drop(sm); }
    table nexthop {
        key = { md.nexthop: exact @name("nexthop_id"); }
        actions = { to_port; drop; }
        default_action = drop();
    }
    apply {
        if (hdr.ipv4.isValid()) {
            routing.apply(hdr, md);
            if (md.routed) {
                nexthop.apply();
                hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
            }
        }
    }
}

control IngressImpl(inout headers_t hdr, inout local_md_t md, inout standard_metadata_t sm) {
    Forwarding() fwd;
    Classifier(8w10) cls_a;
    Classifier(8w100) cls_b;
    apply {
        fwd.apply(hdr, md, sm);
        cls_a.apply(hdr, md.class_a);
        if (md.class_a != 0) {
            cls_b.apply(hdr, md.class_b);
        }
        hdr.ethernet.src = (mac_t)(md.class_a ++ md.class_b);
    }
}

control EgressImpl(inout headers_t hdr, inout local_md_t md, inout standard_metadata_t sm) { apply { } }
control NoCompute(inout headers_t hdr, inout local_md_t md) { apply { } }
control Dep(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.ethernet); pkt.emit(hdr.ipv4); } }

V1Switch(Prs(), NoVerify(), IngressImpl(), EgressImpl(), NoCompute(), Dep()) main;
