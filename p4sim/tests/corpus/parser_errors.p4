/* Parser errors as bmv2 reports them: verify() with a program error and a truncated header;
 * `transition reject` is accept there (p4c's bmv2 back end). Ingress writes the error it sees
 * into the source MAC. */
#include <core.p4>
#include <v1model.p4>

error { BadOp }

header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
header op_t { bit<8> op; bit<8> arg; bit<16> pad; }
struct headers_t { ethernet_t ethernet; op_t op; }
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            0x88b5: parse_op;
            0x1234: reject;
            default: accept;
        }
    }
    state parse_op {
        pkt.extract(hdr.op);
        verify(hdr.op.op != 0xff, error.BadOp);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply { } }

control Ing(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 2;
        if (sm.parser_error == error.NoError) {
            hdr.ethernet.src = 0;
        } else if (sm.parser_error == error.NoMatch) {
            hdr.ethernet.src = 1;
        } else if (sm.parser_error == error.BadOp) {
            hdr.ethernet.src = 2;
        } else if (sm.parser_error == error.PacketTooShort) {
            hdr.ethernet.src = 3;
        } else {
            hdr.ethernet.src = 0xff;
        }
    }
}

control Eg(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr); } }

V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
