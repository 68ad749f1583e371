/* What generated program code includes first: the runtime's declarations and the helpers of its
 * expressions. Expressions compute in 128-bit signed integers, so that they have the values of the
 * Python path's unbounded ints wherever the generator (cgen/exprs.py) proves they fit; elsewhere
 * only their low bits are used (assignments mask them), as there. */
#ifndef P4S_PROG_H
#define P4S_PROG_H
#include <stdlib.h>
#include "p4s.h"

typedef i128 V;

struct ctx {
    struct p4s_pipe *pl;
    struct p4s_dev *d;
    int64_t now;
    uint8_t obuf[65536 + 4096]; /* a deparsed frame */
    uint8_t tmp[65536 + 4096];  /* a hash's input with the payload */
};

/* runtime._tcm: v as a w-bit two's complement value */
static inline V p4s_tcm(V v, int w) {
    u128 x = (u128)v & (((u128)1 << w) - 1);
    return (x >> (w - 1)) ? (V)x - ((V)1 << w) : (V)x;
}

static inline V p4s_sat_s(V v, int w) {
    V lo = -((V)1 << (w - 1)), hi = ((V)1 << (w - 1)) - 1;
    return v < lo ? lo : v > hi ? hi : v;
}

static inline V p4s_sat_u(V v, int w) {
    V hi = ((V)1 << w) - 1;
    return v < 0 ? 0 : v > hi ? hi : v;
}

/* Python's << and >> (floor) for any shift amount, modulo 2^128 */
static inline V p4s_shl(V a, V b) { return b < 0 ? 0 : b >= 128 ? 0 : (V)((u128)a << (int)b); }
static inline V p4s_shr(V a, V b) { return b >= 127 ? (a < 0 ? -1 : 0) : b < 0 ? a : a >> (int)b; }

/* Python's // and % (the quotient rounds down, the remainder has the divisor's sign) */
static inline V p4s_fdiv(V a, V b) {
    V q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

static inline V p4s_fmod(V a, V b) {
    V r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

/* bmv2 log_msg formatting (runtime._fmt): each {} takes the next value */
static inline void p4s_fmt(struct p4s_dev *d, const char *fmt, const V *vals, int n) {
    char out[1024];
    size_t o = 0;
    int i = 0;
    o += (size_t)snprintf(out, sizeof(out), "log_msg: ");
    for (const char *c = fmt; *c && o < sizeof(out) - 48; c++) {
        if (c[0] == '{' && c[1] == '}' && i < n) {
            V v = vals[i++];
            char digits[48];
            int k = 47, neg = v < 0;
            u128 u = neg ? (u128)(-v) : (u128)v;
            digits[k] = 0;
            do {
                digits[--k] = (char)('0' + (int)(u % 10));
                u /= 10;
            } while (u);
            if (neg) digits[--k] = '-';
            o += (size_t)snprintf(out + o, sizeof(out) - o, "%s", digits + k);
            c++;
        } else {
            out[o++] = *c;
        }
    }
    out[o < sizeof(out) ? o : sizeof(out) - 1] = 0;
    p4s_log(d, 20, out);
}
#endif
