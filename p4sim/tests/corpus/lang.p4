/* P4_16 language constructs p4sim-compile lowers as p4c's front and mid end do, one operation each
 * (op.op selects; results in op.r, op.s, op.c, op.w):
 * 1: functions with return values and early returns, a function calling functions,
 * 2: copy-in/copy-out of inout arguments (aliased arguments: the last copy-out wins),
 * 3: table applications inside conditions, with the short circuit of ||,
 * 4: a for loop in an action with a run-time bound (apply_loop.p4 has one in an apply block),
 * 5: saturating arithmetic (unsigned and signed), division and remainder by powers of two,
 * 6: odd widths, casts with sign extension, nested slices, concatenation,
 * 7: serializable and plain enums (switch, table key, const entries),
 * 8: struct and header initializers (a list makes a header valid),
 * 9: a return in the middle of an action, default-action arguments,
 * 10: exit inside an action called from an action,
 * 11: break and continue in a for loop,
 * 12: a generic function (type arguments given and inferred), calls in the branches of ?:, an
 *     operand evaluated before a table test later in the same expression,
 * 13: a tuple variable. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
header op_t { bit<8> op; bit<8> a; bit<8> b; bit<8> c; bit<16> w; bit<8> r; bit<8> s; }
header extra_t { bit<8> x; bit<8> y; }

enum bit<8> Kind { A = 1, B = 7, C = 9 }
enum Color { Red, Green, Blue }

struct headers_t { ethernet_t ethernet; op_t op; extra_t extra; }
struct pair_t { bit<8> first; bit<8> second; }
struct meta_t { Kind kind; pair_t p; }

bit<8> clamp(in bit<8> x, in bit<8> hi) {
    if (x > hi) {
        return hi;
    }
    return x;
}

bit<8> twice_clamped(in bit<8> x) {
    bit<8> once = clamp(x, 50);
    return once + clamp(x, 50);
}

void swap(inout bit<8> x, inout bit<8> y) {
    bit<8> t = x;
    x = y;
    y = t;
}

void bump(inout bit<8> x, inout bit<8> y) {
    x = x + 1;
    y = y + 10;
}

T choose<T>(in bool first, in T x, in T y) {
    if (first) {
        return x;
    }
    return y;
}

Color pick(in bit<8> v) {
    if (v == 0) {
        return Color.Red;
    } else if (v == 1) {
        return Color.Green;
    }
    return Color.Blue;
}

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

// `in` arguments are copied in when the control is applied: an expression (p4c evaluates it into
// a temporary) and a field the body then overwrites (x keeps the value it had at the call).
control SumIn(inout headers_t hdr, in bit<8> x, in bit<8> y) {
    apply {
        hdr.op.a = 0;
        hdr.op.r = x + y;
        hdr.op.s = x;
    }
}

// An extern instance as a constructor argument: two controls share the caller's register (Keep
// writes a, Fetch reads it back into r, one apply each: the same register, not a copy each).
control Keep(inout headers_t hdr)(register<bit<8>> cell) {
    apply { cell.write(0, hdr.op.a); }
}
control Fetch(inout headers_t hdr)(register<bit<8>> cell) {
    apply { cell.read(hdr.op.r, 0); }
}

control Ing(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    SumIn() sum_in;
    register<bit<8>>(1) shared_cell;
    Keep(shared_cell) keep;
    Fetch(shared_cell) fetch;
    action set_r(bit<8> v) { hdr.op.r = v; }
    action nop() { }
    table probe {
        key = { hdr.op.a: exact; }
        actions = { set_r; nop; }
        const entries = { 1: set_r(0x11); }
        default_action = nop();
    }
    table probe_again {
        key = { hdr.op.a: exact; }
        actions = { set_r; nop; }
        const entries = { 1: set_r(0x11); }
        default_action = nop();
    }
    table by_kind {
        key = { meta.kind: exact; }
        actions = { set_r; nop; }
        const entries = { Kind.B: set_r(0xb7); Kind.C: set_r(0xc9); }
        default_action = nop();
    }
    action triangle() {
        bit<8> acc = 0;
        for (bit<8> i = 0; i < hdr.op.a; i = i + 1) {
            acc = acc + i;
        }
        hdr.op.r = acc;
    }
    action evens_below() {
        bit<8> acc = 0;
        for (bit<8> i = 0; i < 10; i = i + 1) {
            if (i == hdr.op.a) {
                break;
            }
            if (i[0:0] == 1) {
                continue;
            }
            acc = acc + i;
        }
        hdr.op.r = acc;
    }
    action early(bit<8> v) {
        hdr.op.r = v;
        if (hdr.op.a == 0) {
            return;
        }
        hdr.op.s = v;
    }
    table with_default {
        key = { hdr.op.b: exact; }
        actions = { early; nop; }
        default_action = early(0x42);
    }
    action leave() {
        exit;
    }
    action outer() {
        hdr.op.r = 9;
        leave();
        hdr.op.s = 9;
    }

    apply {
        sm.egress_spec = 2;
        if (!hdr.op.isValid()) {
            return;
        }
        if (hdr.op.op == 1) {
            hdr.op.r = clamp(hdr.op.a, 100);
            hdr.op.s = twice_clamped(hdr.op.b);
        } else if (hdr.op.op == 2) {
            swap(hdr.op.a, hdr.op.b);
            bump(hdr.op.c, hdr.op.c);
        } else if (hdr.op.op == 3) {
            if (hdr.op.b == 7 || probe.apply().hit) {
                hdr.op.s = 0x55;
            } else {
                hdr.op.s = 0x66;
            }
        } else if (hdr.op.op == 4) {
            triangle();
        } else if (hdr.op.op == 5) {
            hdr.op.r = hdr.op.a |+| hdr.op.b;
            hdr.op.s = hdr.op.a |-| hdr.op.b;
            int<8> x = (int<8>)hdr.op.c;
            x = x |+| 8s100;
            hdr.op.c = (bit<8>)x;
            hdr.op.w = (hdr.op.w / 16)[11:0] ++ (hdr.op.w % 8)[3:0];
        } else if (hdr.op.op == 6) {
            bit<5> f = hdr.op.a[4:0];
            bit<13> g = (bit<13>)f * 13w300;
            hdr.op.w = (bit<16>)g;
            hdr.op.r = hdr.op.b[7:2][3:1] ++ 5w0;
            int<6> n = (int<6>)hdr.op.c[5:0];
            hdr.op.s = (bit<8>)(int<8>)n;
            bit<3> three = 3w7 + hdr.op.c[2:0];
            hdr.op.c = (bit<8>)three;
        } else if (hdr.op.op == 7) {
            meta.kind = (Kind)hdr.op.a;
            by_kind.apply();
            switch (meta.kind) {
                Kind.A: { hdr.op.s = 1; }
                Kind.B: { hdr.op.s = 2; }
                default: { hdr.op.s = 3; }
            }
            Color col = pick(hdr.op.b);
            if (col == Color.Blue) {
                hdr.op.c = 0xbb;
            } else if (col == Color.Green) {
                hdr.op.c = 0x99;
            }
        } else if (hdr.op.op == 8) {
            meta.p = { hdr.op.a, hdr.op.b };
            meta.p = { meta.p.second, meta.p.first };
            hdr.op.r = meta.p.first;
            hdr.op.s = meta.p.second;
            hdr.extra = { 8w0xe1, hdr.op.c };
        } else if (hdr.op.op == 9) {
            with_default.apply();
        } else if (hdr.op.op == 10) {
            outer();
        } else if (hdr.op.op == 11) {
            evens_below();
        } else if (hdr.op.op == 12) {
            // the left operand is read before the table runs (which may set r to 0x11)
            if ((hdr.op.r == 0x11) == probe_again.apply().hit) {
                hdr.op.c = 0xf0;
            } else {
                hdr.op.c = 0x0f;
            }
            hdr.op.r = choose(hdr.op.a > hdr.op.b, hdr.op.a, hdr.op.b);
            hdr.op.w = choose<bit<16>>(hdr.op.w > 0x0300, hdr.op.w, 16w0x0300);
            hdr.op.s = hdr.op.a > 10 ? clamp(hdr.op.b, 20) : clamp(hdr.op.b, 5);
        } else if (hdr.op.op == 13) {
            tuple<bit<8>, bit<16>> t = { hdr.op.a, hdr.op.w };
            t = { t[0] + 1, t[1] };
            hdr.op.r = t[0];
            hdr.op.w = t[1] + 1;
        } else if (hdr.op.op == 14) {
            sum_in.apply(hdr, hdr.op.a - hdr.op.b, hdr.op.c + 1);
        } else if (hdr.op.op == 15) {
            sum_in.apply(hdr, hdr.op.a, hdr.op.b);
        } else if (hdr.op.op == 16) {
            keep.apply(hdr);
            fetch.apply(hdr);
        }
    }
}

control Eg(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        if (hdr.op.isValid() && hdr.op.op == 10) {
            hdr.op.c = 0xec;   // egress still runs after an exit in ingress
        }
    }
}

control CC(inout headers_t hdr, inout meta_t meta) { apply { } }

control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr); } }

V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
