/* Keys and entries (op.op selects): an expression as a table key (with the @name p4c requires) and
 * as a parser select key, entries with explicit priorities, an enum-typed action parameter in a
 * default action, a header union assigned whole and its member changed, a header union variable,
 * a serializable enum as a header field, minSizeInBytes(). */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
enum bit<8> Kind { A = 1, B = 7 }
header op_t { bit<8> op; bit<8> a; bit<8> b; bit<8> r; bit<8> s; Kind e; }
header t_t { bit<8> v; }
header h2_t { bit<16> w; }
header_union u_t { t_t t; h2_t h2; }

struct headers_t { ethernet_t ethernet; op_t op; u_t u; u_t w; }
struct meta_t { bit<8> unused; }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) { 0x88b5: parse_op; default: accept; }
    }
    state parse_op {
        pkt.extract(hdr.op);
        transition select(hdr.op.a & 0x0f, hdr.op.op + 1) {
            (4, 4): parse_t;
            default: accept;
        }
    }
    state parse_t {
        pkt.extract(hdr.u.t);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply { } }

control Ing(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action set_r(bit<8> v) { hdr.op.r = v; }
    action set_s(bit<8> v) { hdr.op.s = v; }
    action set_e(Kind k) { hdr.op.e = k; }
    action nop() { }
    table by_sum {
        key = { hdr.op.a + hdr.op.b: exact @name("sum"); }
        actions = { set_r; nop; }
        const entries = { 10: set_r(0xaa); }
        default_action = nop();
    }
    table ranked {
        key = { hdr.op.a: ternary; }
        actions = { set_s; nop; }
        entries = {
            priority = 20: 0x01 &&& 0x0f: set_s(1);
            priority = 10: 0x11 &&& 0xff: set_s(2);
        }
        default_action = nop();
    }
    table kinds {
        key = { hdr.op.b: exact; }
        actions = { set_e; nop; }
        default_action = set_e(Kind.B);
    }
    apply {
        sm.egress_spec = 2;
        if (hdr.op.isValid()) {
            if (hdr.op.e == Kind.A) {   // a serializable enum as a header field
                hdr.op.s = hdr.op.s + (bit<8>)hdr.op.minSizeInBytes();
            }
            by_sum.apply();
            ranked.apply();
            kinds.apply();
            if (hdr.u.isValid()) {
                hdr.w = hdr.u;
                hdr.w.t.v = hdr.w.t.v + 1;
            } else if (hdr.op.op == 4) {
                u_t local;              // a header union variable: making h2 valid invalidates t
                local.t.setValid();
                local.t.v = 5;
                local.h2.setValid();
                local.h2.w = 0x1234;
                hdr.w = local;
            }
        }
    }
}

control Eg(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr); } }

V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
