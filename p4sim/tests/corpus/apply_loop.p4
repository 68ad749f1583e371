/* A for loop in a control's apply block: p4sim-compile runs it in one action (a backward _jump);
 * p4c 1.2.5.16's JSON runs its body once (a known p4c bug, see parity_scenarios.P4C_APPLY_LOOP). */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
header op_t { bit<8> n; bit<8> b; bit<16> w; }

struct headers_t { ethernet_t ethernet; op_t op; }
struct meta_t { bit<8> unused; }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) { 0x88b5: parse_op; default: accept; }
    }
    state parse_op {
        pkt.extract(hdr.op);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply { } }

control Ing(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 2;
        if (hdr.op.isValid()) {
            for (bit<8> i = 0; i < 3; i = i + 1) {
                hdr.op.w = hdr.op.w + (bit<16>)hdr.op.b + (bit<16>)i;
            }
            for (bit<8> j = 0; j < hdr.op.n; j = j + 1) {
                hdr.op.b = hdr.op.b + 1;
            }
        }
    }
}

control Eg(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr); } }

V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
