/* The forms of p4c's bmv2 JSON beyond the everyday ones, one operation each (op.op selects):
 * 1: header stack assignment in a parser (assign_header_stack: the next index is copied too),
 * 2: a varbit header (extract_VL from a run-time length, assign_header and assign_VL of it, a
 *    checksum over the varbit field; too long is HeaderTooShort),
 * 3: a header union stack (extract of `next` members, pop_front, a member made valid),
 * 4: a `for` loop in an action (p4c: a backward _jump),
 * 5: extract_VL into the next element of a header stack (too long is HeaderTooShort),
 * and a table whose key is an `error` (P4Info gives it no width, the JSON 32 bits). */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
header op_t { bit<8> op; bit<8> n; bit<8> r; bit<8> s; bit<16> sum; }
header tag_t { bit<16> v; }
header opt_t { bit<8> kind; varbit<64> data; }
header vopt_t { varbit<32> data; }
header a_t { bit<8> x; }
header b_t { bit<16> y; }
header_union ab_t { a_t a; b_t b; }

struct headers_t {
    ethernet_t ethernet;
    op_t op;
    tag_t[3] tags;
    tag_t[3] copy;
    opt_t opt;
    opt_t opt2;
    ab_t[2] us;
    vopt_t[2] vs;
}
struct meta_t { bit<8> unused; }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) { 0x88b5: parse_op; default: accept; }
    }
    state parse_op {
        pkt.extract(hdr.op);
        transition select(hdr.op.op) { 1: parse_tags; 2: parse_opt; 3: parse_us; 5: parse_vs; default: accept; }
    }
    state parse_tags {
        pkt.extract(hdr.tags.next);
        pkt.extract(hdr.tags.next);
        hdr.copy = hdr.tags;
        pkt.extract(hdr.copy.next);   // copy[2]: the next index came with the copy
        transition accept;
    }
    state parse_opt {
        pkt.extract(hdr.opt, (bit<32>)hdr.op.n * 8);
        transition accept;
    }
    state parse_vs {
        pkt.extract(hdr.vs.next, (bit<32>)hdr.op.n * 8);   // extract_VL into a stack's next element
        pkt.extract(hdr.vs.next, 8);
        transition accept;
    }
    state parse_us {
        pkt.extract(hdr.us.next.a);
        pkt.extract(hdr.us.next.b);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply { } }

control Ing(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action triangle() {
        bit<8> acc = 0;
        for (bit<8> i = 0; i < hdr.op.n; i = i + 1) {
            acc = acc + i;
        }
        hdr.op.r = acc;
    }
    action copy_opt() {
        hdr.opt2 = hdr.opt;
        hdr.opt2.kind = 0x22;
    }
    action copy_data() {
        hdr.opt2.data = hdr.opt.data;
    }
    action mark(bit<8> r) { hdr.op.r = r; }
    action nop() { }
    table parse_result {
        key = { sm.parser_error: exact; }
        actions = { mark; nop; }
        default_action = mark(0x01);
    }
    apply {
        sm.egress_spec = 2;
        if (hdr.op.isValid()) {
            parse_result.apply();
            if (sm.parser_error == error.HeaderTooShort) {
                hdr.op.r = 0xe4;
            }
            if (hdr.op.op == 1) {
                hdr.tags[0].setInvalid();
            } else if (hdr.op.op == 2 && hdr.opt.isValid()) {
                copy_opt();
                copy_data();
            } else if (hdr.op.op == 3) {
                hdr.us.pop_front(1);
                hdr.op.s = (bit<8>)hdr.us[0].b.y;
                hdr.us[1].a.setValid();
                hdr.us[1].a.x = 0xa1;
            } else if (hdr.op.op == 4) {
                triangle();
            }
        }
    }
}

control Eg(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }

control CC(inout headers_t hdr, inout meta_t meta) {
    apply {
        update_checksum(hdr.opt.isValid(), { hdr.op.op, hdr.opt.data }, hdr.op.sum, HashAlgorithm.csum16);
    }
}

control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr); } }

V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
