/* Actions, controls and externs called the ways p4c's tests call them: a directly called action whose
 * parameter the body can also reach another way (copy-in/copy-out, in parameter order), a slice and a
 * list as an action's arguments, a control applied directly (Counting.apply) and passed to another as a
 * constructor argument, an extern instance declared at the top of the program, a table keyed on a
 * slice (a 4-bit match field, as p4c) and on an expression; V1MODEL_METER_COLOR_* from v1model.p4. */
#include <core.p4>
#include <v1model.p4>
#include "calls_frag.p4"

struct headers_t {
    h_t h;
}

struct meta_t {}

register<bit<8>>(4) seen;

control counter_t(inout bit<8> x);

control Counting(inout bit<8> x) {
    apply {
        x = x + 1;
    }
}

control Twice(inout bit<8> x)(counter_t c) {
    apply {
        c.apply(x);
        c.apply(x);
    }
}

parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition accept;
    }
}

control V(inout headers_t hdr, inout meta_t m) { apply { } }

control I(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    Counting() counting;
    Twice(counting) twice;
    bit<8> kept = 8w12;

    action touch(inout bit<8> v) {
        hdr.h.a = v;     // the value copied in
        kept = 8w24;     // the argument, reached another way: the copy-out below undoes it
    }
    action set_low(inout bit<1> low) {
        hdr.h.b = 8w2;
        low = 1;         // copied out into b[0:0] after the body
    }
    action from_list(in h_t v) {
        hdr.h.c = v.c;
    }
    action fwd(bit<9> port) {
        sm.egress_spec = port;
    }
    table by_slice {
        key = {
            hdr.h.d[7:4]: exact @name("d_high");
            hdr.h.e - 1: exact @name("e_less_1");
        }
        actions = { fwd; NoAction; }
        default_action = NoAction();
    }
    apply {
        touch(kept);
        touch(kept);
        set_low(hdr.h.b[0:0]);
        from_list({1, 2, 3, 4, 5, 6});
        Counting.apply(hdr.h.f);
        twice.apply(hdr.h.f);
        seen.write(1, hdr.h.f);
        bit<8> back;
        seen.read(back, 1);
        hdr.h.e = back + V1MODEL_METER_COLOR_RED;
        sm.egress_spec = 1;
        by_slice.apply();
    }
}

control E(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control C(inout headers_t hdr, inout meta_t m) { apply { } }

control D(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.h);
    }
}

V1Switch(P(), V(), I(), E(), C(), D()) main;
