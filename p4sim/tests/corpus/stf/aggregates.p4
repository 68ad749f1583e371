/* Headers, structs and stacks as values: == and != on them (two headers are equal when both are invalid,
 * or both valid with equal fields), a struct inside a header (flattened as p4c names its fields), a
 * varbit variable, a nested slice and a run-time index of type int<W> on the left of an assignment,
 * extract<H>(_), a header union's validity as a table key. */
#include <core.p4>
#include <v1model.p4>

struct pair_t {
    bit<8> x;
    bit<8> y;
}

header two_t {
    pair_t p;
    bit<8> z;
}

header one_t {
    bit<8> v;
}

header opt_t {
    varbit<16> o;
}

header_union u_t {
    one_t a;
    two_t b;
}

struct headers_t {
    two_t first;
    two_t second;
    one_t[2] s;
    one_t[2] t;
    opt_t o1;
    opt_t o2;
    one_t res;
    u_t u;
}

struct meta_t {
    int<8> idx;
}

parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract<one_t>(_);
        pkt.extract(hdr.first);
        pkt.extract(hdr.second);
        pkt.extract(hdr.s.next);
        pkt.extract(hdr.s.next);
        pkt.extract(hdr.t.next);
        pkt.extract(hdr.t.next);
        pkt.extract(hdr.o1, 8);
        pkt.extract(hdr.o2, 16);
        transition accept;
    }
}

control V(inout headers_t hdr, inout meta_t m) { apply { } }

control I(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    varbit<16> keep;
    action hit(bit<8> v) { hdr.res.v = hdr.res.v | v; }
    table by_union {
        key = { hdr.u.isValid(): exact @name("u_valid"); }
        actions = { hit; NoAction; }
        const entries = { false: hit(0x80); }
    }
    apply {
        hdr.res.setValid();
        hdr.res.v = 0;
        if (hdr.first == hdr.second) { hdr.res.v = hdr.res.v | 1; }
        if (hdr.first.p == hdr.second.p) { hdr.res.v = hdr.res.v | 2; }
        if (hdr.s != hdr.t) { hdr.res.v = hdr.res.v | 4; }
        keep = hdr.o1.o;  // swap the two varbit fields
        hdr.o1.o = hdr.o2.o;
        hdr.o2.o = keep;
        hdr.first.z[7:4][1:0] = 2w3;
        m.idx = (int<8>) ((bit<8>) hdr.first.p.x[0:0]);
        hdr.s[m.idx].v = 8w0x55;
        by_union.apply();
        sm.egress_spec = 1;
    }
}

control E(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control C(inout headers_t hdr, inout meta_t m) { apply { } }

control D(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.first);
        pkt.emit(hdr.second);
        pkt.emit(hdr.s);
        pkt.emit(hdr.t);
        pkt.emit(hdr.o1);
        pkt.emit(hdr.o2);
        pkt.emit(hdr.res);
    }
}

V1Switch(P(), V(), I(), E(), C(), D()) main;
