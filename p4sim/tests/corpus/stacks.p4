/* Header stacks and initializers (op.op selects):
 * 1: a stack assigned in a parser (bmv2 assign_header_stack: the next index comes with it),
 * 2: run-time stack indices (read and write), a stack assigned in a control (element by element),
 *    named struct and header initializers ({x = ..., y = ...} makes a header valid),
 * 3: a header assignment under a condition in an action. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
header op_t { bit<8> op; bit<8> i; bit<8> j; bit<8> r; bit<8> s; }
header tag_t { bit<16> v; }
header extra_t { bit<8> x; bit<8> y; }

struct headers_t { ethernet_t ethernet; op_t op; tag_t[3] tags; tag_t[3] copy; extra_t extra; }
struct pair_t { bit<8> first; bit<8> second; }
struct meta_t { pair_t p; }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) { 0x88b5: parse_op; default: accept; }
    }
    state parse_op {
        pkt.extract(hdr.op);
        transition select(hdr.op.op) { 1: copy_in_parser; 2: three_tags; 3: three_tags; default: accept; }
    }
    state copy_in_parser {
        pkt.extract(hdr.tags.next);
        pkt.extract(hdr.tags.next);
        hdr.copy = hdr.tags;
        pkt.extract(hdr.copy.next);
        transition accept;
    }
    state three_tags {
        pkt.extract(hdr.tags.next);
        pkt.extract(hdr.tags.next);
        pkt.extract(hdr.tags.next);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply { } }

control Ing(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action maybe_copy() {
        if (hdr.op.i == 1) {
            hdr.copy[0] = hdr.tags[0];   // a header assignment under a condition: jumps, not predication
        } else {
            hdr.op.r = 0x77;
        }
    }
    apply {
        sm.egress_spec = 2;
        if (hdr.op.op == 1) {
            hdr.tags[0].setInvalid();
        } else if (hdr.op.op == 2) {
            hdr.op.r = hdr.tags[hdr.op.i].v[7:0];
            hdr.tags[hdr.op.j].v = 0xabcd;
            hdr.copy = hdr.tags;
            hdr.extra = { y = hdr.op.r, x = hdr.op.i };
            meta.p = { second = hdr.op.r, first = hdr.op.j };
            hdr.op.s = meta.p.first;
        } else if (hdr.op.op == 3) {
            maybe_copy();
        }
    }
}

control Eg(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr); } }

V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
