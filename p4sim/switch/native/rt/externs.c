/* Counter, register and meter arrays, parser value sets, hashes (p4sim/switch/externs.py, hashes.py).
 * Meters compute in doubles exactly as externs.py's buckets do, so both paths colour alike. */
#include <stdlib.h>
#include "p4s.h"

/* ---- meters (RFC 2698 trTCM as bmv2; RFC 2697 srTCM; single-rate two-colour) ------------------ */

static int single_rate(struct p4s_bucket *b, uint64_t units, int64_t now_us) {
    double dt = (double)(now_us - b->last_us) / 1e6;
    if (dt > 0) {
        double add = b->tc + dt * b->cir;
        b->tc = b->cburst < add ? b->cburst : add;
        if (b->kind == P4S_SRTCM) {
            double tp = b->tp + (add - b->tc);
            b->tp = b->eburst < tp ? b->eburst : tp;
        }
        b->last_us = now_us;
    }
    if (b->tc >= (double)units) {
        b->tc -= (double)units;
        return P4S_GREEN;
    }
    if (b->kind == P4S_SRTCM && b->tp >= (double)units) {
        b->tp -= (double)units;
        return P4S_YELLOW;
    }
    return P4S_RED;
}

int p4s_bucket_execute(struct p4s_bucket *b, uint64_t units, int64_t now_us) {
    if (b == NULL) return P4S_GREEN;
    if (b->kind != P4S_TRTCM) return single_rate(b, units, now_us);
    double dt = (double)(now_us - b->last_us) / 1e6;
    if (dt > 0) {
        double tc = b->tc + dt * b->cir, tp = b->tp + dt * b->pir;
        b->tc = b->cburst < tc ? b->cburst : tc;
        b->tp = b->pburst < tp ? b->pburst : tp;
        b->last_us = now_us;
    }
    if (b->tp < (double)units) return P4S_RED;
    if (b->tc < (double)units) {
        b->tp -= (double)units;
        return P4S_YELLOW;
    }
    b->tp -= (double)units;
    b->tc -= (double)units;
    return P4S_GREEN;
}

/* cfg: cir, cburst, pir, pburst, eburst; NULL: unconfigured (every packet GREEN) */
static struct p4s_bucket *bucket_new(int kind, const double *cfg, int64_t now_us) {
    if (cfg == NULL) return NULL;
    struct p4s_bucket *b = calloc(1, sizeof(*b));
    if (b == NULL) return NULL;
    b->kind = kind;
    b->cir = cfg[0];
    b->cburst = cfg[1];
    b->pir = cfg[2];
    b->pburst = cfg[3];
    b->eburst = cfg[4];
    b->tc = b->cburst;
    b->tp = kind == P4S_SRTCM ? b->eburst : kind == P4S_TRTCM ? b->pburst : 0.0;
    b->last_us = now_us;
    return b;
}

int p4s_entry_meter(p4s_entry *e, int kind, const double *cfg, int64_t now_us) {
    struct p4s_bucket *b = bucket_new(kind, cfg, now_us);
    if (cfg != NULL && b == NULL) return -1;
    free(e->meter);
    e->meter = b;
    return 0;
}

int p4s_meter_execute(struct p4s_meters *m, uint64_t index, uint64_t nbytes, int64_t now_us) {
    if (index >= m->size) return P4S_GREEN;
    return p4s_bucket_execute(m->b[index], m->by_bytes ? nbytes : 1, now_us);
}

int p4s_meter(p4s_pipe *pl, int idx, uint32_t i, int kind, const double *cfg, int64_t now_us) {
    struct p4s_meters *m = &pl->meters[idx];
    struct p4s_bucket *b = bucket_new(kind, cfg, now_us);
    if (cfg != NULL && b == NULL) return -1;
    free(m->b[i]);
    m->b[i] = b;
    return 0;
}

void p4s_meter_reset(p4s_pipe *pl, int idx) {
    struct p4s_meters *m = &pl->meters[idx];
    for (uint32_t i = 0; i < m->size; i++) {
        free(m->b[i]);
        m->b[i] = NULL;
    }
}

/* ---- counters, registers, value sets ---------------------------------------------------------- */

void p4s_counter(p4s_pipe *pl, int idx, uint32_t i, uint64_t *packets, uint64_t *bytes, int write) {
    struct p4s_counters *c = &pl->counters[idx];
    if (write) {
        c->pk[i] = *packets;
        c->by[i] = *bytes;
    } else {
        *packets = c->pk[i];
        *bytes = c->by[i];
    }
}

void p4s_counter_reset(p4s_pipe *pl, int idx) {
    struct p4s_counters *c = &pl->counters[idx];
    memset(c->pk, 0, c->size * sizeof(uint64_t));
    memset(c->by, 0, c->size * sizeof(uint64_t));
}

uint64_t p4s_register(p4s_pipe *pl, int idx, uint32_t i, uint64_t value, int write) {
    struct p4s_registers *r = &pl->registers[idx];
    if (write) r->v[i] = value & r->mask;
    return r->v[i];
}

void p4s_register_reset(p4s_pipe *pl, int idx) {
    struct p4s_registers *r = &pl->registers[idx];
    memset(r->v, 0, r->size * sizeof(uint64_t));
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int p4s_vset(p4s_pipe *pl, int idx, uint32_t n, const uint64_t *values) {
    struct p4s_vset *s = &pl->vsets[idx];
    uint64_t *v = n ? malloc(n * sizeof(uint64_t)) : NULL;
    if (n && v == NULL) return -1;
    if (n) memcpy(v, values, n * sizeof(uint64_t));
    qsort(v, n, sizeof(uint64_t), cmp_u64);
    free(s->v);
    s->v = v;
    s->n = n;
    return 0;
}

int p4s_vset_has(const struct p4s_vset *s, uint64_t v) {
    uint32_t lo = 0, hi = s->n;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (s->v[mid] < v) lo = mid + 1;
        else hi = mid;
    }
    return lo < s->n && s->v[lo] == v;
}

/* uniform in [lo, hi] (random.randint's range; the values differ from Python's, as any two runs do) */
uint64_t p4s_rand(struct p4s_dev *d, struct p4s_pipe *pl, uint64_t lo, uint64_t hi) {
    if (p4s_fixed(d)) return lo;
    uint64_t x = pl->rng += 0x9E3779B97F4A7C15ULL; /* splitmix64 */
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    x ^= x >> 31;
    if (hi <= lo) return lo;
    uint64_t span = hi - lo + 1;
    return span == 0 ? x : lo + x % span;
}

/* ---- hashes: bmv2's algorithms over a byte string (hashes.py) --------------------------------- */

static uint64_t reflect(uint64_t v, int n) {
    uint64_t r = 0;
    for (int i = 0; i < n; i++) {
        r = (r << 1) | (v & 1);
        v >>= 1;
    }
    return r;
}

/* hashes.make_crc: MSB-first table, input bytes reflected when refin, result when refout */
static uint64_t crc_generic(const uint8_t *d, uint32_t len, int width, uint64_t poly, uint64_t init, int refl) {
    uint64_t mask = width == 64 ? ~0ULL : (1ULL << width) - 1, top = 1ULL << (width - 1), r = init;
    int shift = width - 8;
    for (uint32_t i = 0; i < len; i++) {
        uint64_t b = refl ? reflect(d[i], 8) : d[i];
        uint64_t t = (b ^ (r >> shift)) & 0xFF;
        uint64_t c = t << shift;
        for (int k = 0; k < 8; k++) c = (c & top) ? ((c << 1) ^ poly) : (c << 1);
        r = (c & mask) ^ ((r << 8) & mask);
    }
    return refl ? reflect(r, width) : r;
}

static uint32_t crc32_table[256];
static uint16_t arc_table[256];

static void tables_init(void) {
    static int done;
    if (done) return;
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        uint16_t a = (uint16_t)i;
        for (int k = 0; k < 8; k++) {
            c = (c & 1) ? 0xEDB88320U ^ (c >> 1) : c >> 1;
            a = (a & 1) ? (uint16_t)((a >> 1) ^ 0xA001) : (uint16_t)(a >> 1);
        }
        crc32_table[i] = c;
        arc_table[i] = a;
    }
    done = 1;
}

__attribute__((constructor)) static void init_hashes(void) { tables_init(); }

/* the Internet checksum of a bit string zero-padded to 16 bits (hashes.csum16_int) */
uint64_t p4s_csum16_bits(const uint8_t *d, uint32_t nbits) {
    uint32_t nbytes = (nbits + 7) / 8;
    uint64_t s = 0;
    for (uint32_t i = 0; i < nbytes; i += 2) s += ((uint64_t)d[i] << 8) | (i + 1 < nbytes ? d[i + 1] : 0);
    while (s >> 16) s = (s & 0xFFFF) + (s >> 16);
    return ~s & 0xFFFF;
}

uint64_t p4s_hash(int algo, const uint8_t *d, uint32_t len) {
    uint64_t r = 0;
    switch (algo) {
    case P4S_H_CRC16:
        for (uint32_t i = 0; i < len; i++) r = (r >> 8) ^ arc_table[(r ^ d[i]) & 0xFF];
        return r;
    case P4S_H_CRC32: {
        uint32_t c = 0xFFFFFFFFU;
        for (uint32_t i = 0; i < len; i++) c = crc32_table[(c ^ d[i]) & 0xFF] ^ (c >> 8);
        return c ^ 0xFFFFFFFFU;
    }
    case P4S_H_CRCCCITT:
        return crc_generic(d, len, 16, 0x1021, 0xFFFF, 0);
    case P4S_H_CSUM16:
        return p4s_csum16_bits(d, len * 8);
    case P4S_H_IDENTITY:
        for (uint32_t i = 0; i < len && i < 8; i++) r = (r << 8) | d[i];
        return r;
    case P4S_H_XOR16:
    case P4S_H_XOR32: {
        uint32_t n = algo == P4S_H_XOR16 ? 2 : 4;
        for (uint32_t i = 0; i < len; i += n) {
            uint64_t w = 0;
            for (uint32_t k = 0; k < n; k++) w = (w << 8) | (i + k < len ? d[i + k] : 0);
            r ^= w;
        }
        return r;
    }
    case P4S_H_CRC8_CUSTOM:
        return crc_generic(d, len, 8, 0x07, 0, 0);
    case P4S_H_CRC64_CUSTOM:
        return crc_generic(d, len, 64, 0x1B, 0, 1);
    default:
        return 0;
    }
}
