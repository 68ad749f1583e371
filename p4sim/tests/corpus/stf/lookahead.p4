/* lookahead<T>() of a header, of a struct holding a header stack, of a field inside an expression and as
 * a select key, and as a statement (it still reads: a packet too short for it fails to parse) (p4c's
 * ExpandLookahead). Out on port 1: the headers parsed, then a byte of what the lookaheads saw. */
#include <core.p4>
#include <v1model.p4>

header pre_t {
    bit<4> kind;
    bit<4> len;
}

header data_t {
    bit<8> v;
}

struct peek_t {
    pre_t p;
    data_t[2] d;
}

header seen_t {
    bit<8> len_x4;
    bit<8> d1;
    bit<8> kind;
}

struct headers_t {
    pre_t pre;
    data_t[4] data;
    seen_t seen;
}

struct meta_t {
    bit<8> len_x4;
    bit<8> d1;
}

parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        peek_t peek = pkt.lookahead<peek_t>();
        m.d1 = peek.d[1].v;
        m.len_x4 = 4 * (bit<8>) pkt.lookahead<pre_t>().len;
        pkt.lookahead<bit<32>>();
        transition select(pkt.lookahead<pre_t>().kind) {
            1: one;
            default: accept;
        }
    }
    state one {
        pkt.extract(hdr.pre);
        pkt.extract(hdr.data.next);
        pkt.extract(hdr.data.next);
        pkt.extract(hdr.data.next);
        transition accept;
    }
}

control V(inout headers_t hdr, inout meta_t m) { apply { } }

control I(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        if (sm.parser_error != error.NoError) {
            mark_to_drop(sm);
            return;
        }
        hdr.seen.setValid();
        hdr.seen.len_x4 = m.len_x4;
        hdr.seen.d1 = m.d1;
        // an invalid header's field is undefined (bmv2 kept the previous packet's value): 0 unless parsed
        hdr.seen.kind = 0;
        if (hdr.pre.isValid()) {
            hdr.seen.kind = (bit<8>) hdr.pre.kind;
        }
        sm.egress_spec = 1;
    }
}

control E(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control C(inout headers_t hdr, inout meta_t m) { apply { } }

control D(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.pre);
        pkt.emit(hdr.data);
        pkt.emit(hdr.seen);
    }
}

V1Switch(P(), V(), I(), E(), C(), D()) main;
