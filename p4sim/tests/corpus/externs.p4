/* v1model externs and control flow on one operation header: clone, clone with a preserved
 * field list, recirculate, hash, signed arithmetic, meters, truncate, log_msg, return, switch
 * with fallthrough and default, header stack push/pop, struct and header copies. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
header op_t {
    bit<8>  op;
    bit<8>  mark;
    bit<16> h16;
    int<8>  s;
    bit<8>  color;
    bit<72> data;
}
header tag_t { bit<16> v; }

struct headers_t { ethernet_t ethernet; op_t op; tag_t[2] tags; }
struct pair_t { bit<8> a; bit<8> b; }
struct meta_t {
    @field_list(2) bit<8> tag;
    @field_list(3) bit<8> rec;
    bit<32> color;
    pair_t p;
    pair_t q;
}

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            0x88b5: parse_op;
            default: accept;
        }
    }
    state parse_op {
        pkt.extract(hdr.op);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply { } }

control Ing(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    meter(4, MeterType.packets) m;

    action do_clone() { clone(CloneType.I2E, 32w5); }
    action do_clone_fl() { meta.tag = 0x77; clone_preserving_field_list(CloneType.I2E, 32w5, 2); }
    action do_hash() { hash(hdr.op.h16, HashAlgorithm.crc16, 16w0, { hdr.op.data }, 32w65536); }
    action do_signed() { hdr.op.s = hdr.op.s - 10; }
    action do_meter() { m.execute_meter(32w1, meta.color); hdr.op.color = (bit<8>)meta.color; }
    action do_truncate() { log_msg("truncating op {}", { hdr.op.op }); truncate(32w20); }
    action nop() { }

    table ops {
        key = { hdr.op.op: exact; }
        actions = { do_clone; do_clone_fl; do_hash; do_signed; do_meter; do_truncate; nop; }
        const entries = {
            1: do_clone();
            2: do_clone_fl();
            4: do_hash();
            5: do_signed();
            6: do_meter();
            8: do_truncate();
            10: nop();
            11: nop();
        }
        default_action = nop();
    }

    apply {
        sm.egress_spec = 2;
        if (!hdr.op.isValid()) {
            return;
        }
        if (sm.instance_type == 4) {
            hdr.op.mark = meta.rec + 0x40;   // recirculated copy: the field list survived
            return;
        }
        switch (ops.apply().action_run) {
            do_signed:
            do_hash: {
                hdr.op.mark = 0x12;
            }
            nop: {
                if (hdr.op.op == 9) {
                    hdr.op.mark = 9;
                    return;
                }
                if (hdr.op.op == 12) {
                    hdr.tags.push_front(1);
                    hdr.tags[0].setValid();
                    hdr.tags[0].v = 0xabcd;
                }
                meta.p = { 3, 4 };
                meta.q = meta.p;
                hdr.op.h16 = meta.q.a ++ meta.q.b;
            }
            default: {
                hdr.op.mark = hdr.op.mark | 0x80;
            }
        }
        if (hdr.op.op == 9) {
            hdr.op.mark = 0xee;   // not reached: the return above leaves the control
        }
    }
}

control Eg(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        if (sm.instance_type == 1) {
            hdr.op.mark = 0xc1;
            hdr.op.h16 = (bit<16>)meta.tag;
        } else if (hdr.op.isValid() && hdr.op.op == 3 && meta.rec == 0) {  // bmv2: a recirculated copy's egress sees instance_type 0 too
            meta.rec = 4;
            recirculate_preserving_field_list(3);
        }
    }
}

control CC(inout headers_t hdr, inout meta_t meta) { apply { } }

control D(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.tags);
        pkt.emit(hdr.op);
    }
}

V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
