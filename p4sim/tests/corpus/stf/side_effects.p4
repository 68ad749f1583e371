/* Calls with out/inout arguments inside expressions, in P4's evaluation order (left to right; an
 * operand read before a call that writes it keeps its value; the left side of an assignment is
 * evaluated first), compound assignments, short circuits and 0 / x (p4c's SideEffectOrdering,
 * RemoveOpAssign and StrengthReduction). One packet: a header of eight bytes, rewritten. */
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
    bit<8> c;
    bit<8> d;
    bit<8> i;
    bit<8> e;
    bit<8> f;
    bit<8> g;
}

header w_t {
    bit<8> x;
}

struct headers_t {
    h_t h;
    w_t[4] w;
}

struct meta_t {}

bit<8> bump(inout bit<8> v) {
    v = v + 1;
    return v;
}

bit<8> postincr(inout bit<8> v) {
    bit<8> old = v;
    v += 1;
    return old;
}

bit<8> low2(in bit<8> v) {
    return v & 3;
}

bool mark(inout bit<8> v) {
    v = 8w0xee;
    return true;
}

parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        pkt.extract(hdr.w.next);
        pkt.extract(hdr.w.next);
        pkt.extract(hdr.w.next);
        pkt.extract(hdr.w.next);
        transition accept;
    }
}

control V(inout headers_t hdr, inout meta_t m) { apply { } }

control I(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        // a is read before bump writes it: a + (a + 1)
        hdr.h.b = hdr.h.a + bump(hdr.h.a);
        // as p4c: the index (no call in it) is read when the value is stored, after postincr ran
        hdr.w[hdr.h.i & 3].x = postincr(hdr.h.i);
        // a compound assignment whose left side calls a function: evaluated once
        hdr.w[postincr(hdr.h.i) & 3].x |= 8w0x80;
        // a call in the left side, even of a function without effects: the left side is evaluated first
        hdr.w[low2(hdr.h.i)].x = postincr(hdr.h.i);
        // short circuits: mark runs only when it must
        bool t = true || mark(hdr.h.c);
        bool u = false || mark(hdr.h.d);
        hdr.h.e = (t && u) ? 8w1 : 8w0;
        // 0 / x is 0, x still evaluated
        hdr.h.f = 8w0 / bump(hdr.h.g);
        sm.egress_spec = 1;
    }
}

control E(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control C(inout headers_t hdr, inout meta_t m) { apply { } }

control D(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.h);
        pkt.emit(hdr.w);
    }
}

V1Switch(P(), V(), I(), E(), C(), D()) main;
