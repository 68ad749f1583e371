/* p4sim's native runtime: what the runtime's files and every generated program share.
 *
 * A program library (generated from a bmv2 JSON by p4sim/switch/native/cgen) exports one
 * `struct p4s_prog`; the runtime builds a pipeline from it (tables, arrays) and runs its `process`
 * on frames. Semantics are those of p4sim's Python path (p4sim/switch/engine.py, tables.py,
 * externs.py, hashes.py), bit for bit: this file's comments say where it follows them. */
#ifndef P4S_H
#define P4S_H
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "p4s_api.h"

#define P4S_ABI 1
#define P4S_DROP 511
#define P4S_MAX_PORTS 512

typedef unsigned __int128 u128;
typedef __int128 i128;

enum { P4S_MODE_NONE = 0, P4S_MODE_EXACT = 1, P4S_MODE_LPM = 2, P4S_MODE_TERNARY = 3, P4S_MODE_RANGE = 4 };
enum { P4S_TRTCM = 0, P4S_SRTCM = 1, P4S_SR2C = 2 };
enum { P4S_GREEN = 0, P4S_YELLOW = 1, P4S_RED = 2 };

/* an action with its arguments: a table entry's, a default entry's or a profile member's */
struct p4s_act {
    int32_t aid;
    uint32_t nargs;
    uint64_t *args;
};

struct p4s_member {
    struct p4s_act a;
};

struct p4s_group {
    uint32_t n, cap;
    struct p4s_member **active; /* bmv2 member handle order, weight copies included (profiles.py) */
};

struct p4s_bucket {
    int kind;
    double cir, pir, cburst, pburst, eburst, tc, tp;
    int64_t last_us;
};

struct p4s_range {
    uint64_t sh, w, lo, hi;
};

struct p4s_entry {
    struct p4s_act a;
    struct p4s_member *member;
    struct p4s_group *group;
    uint64_t packets, bytes;
    struct p4s_bucket *meter;
    int64_t priority;
    uint64_t handle;
    uint32_t nranges;
    struct p4s_range *ranges;
    uint64_t kw[]; /* value words [0, nw), then mask words [nw, 2 nw) */
};

/* open addressing over the value words of entries */
struct p4s_map {
    uint32_t cap, n;
    struct p4s_entry **slot;
};

struct p4s_level {
    int plen;
    uint64_t *mask;
    struct p4s_map map;
};

struct p4s_table {
    int mode, nw;
    struct p4s_entry *deflt;
    struct p4s_map exact;
    int nlev;
    struct p4s_level *lev; /* LPM: one per prefix length (mask bits), longest first */
    uint32_t nscan, capscan;
    struct p4s_entry **scan; /* ternary, range: highest priority first, then by handle */
};

struct p4s_counters {
    uint32_t size;
    uint64_t *pk, *by;
};

struct p4s_registers {
    uint32_t size;
    uint64_t mask;
    uint64_t *v;
};

struct p4s_meters {
    uint32_t size;
    int by_bytes;
    struct p4s_bucket **b;
};

struct p4s_vset {
    uint32_t n;
    uint64_t *v; /* sorted */
};

struct p4s_pipe;
struct p4s_dev;

struct p4s_prog {
    uint32_t abi;
    uint32_t n_tables, n_counters, n_registers, n_meters, n_vsets;
    const int32_t *table_mode, *table_nw;
    const uint32_t *counter_size, *register_size, *register_width, *meter_size, *meter_bytes;
    /* one frame arriving on a port at now_us (-1: now), through the whole flow; outputs go to p4s_emit */
    void (*process)(struct p4s_pipe *pl, struct p4s_dev *d, int port, const uint8_t *frame, uint32_t len,
                    int64_t now_us);
    /* a recirculated packet (queued by p4s_recirc_put) through ingress again, then freed */
    void (*resume)(struct p4s_pipe *pl, struct p4s_dev *d, void *pkt);
    void (*drop)(void *pkt); /* free a queued packet that will not run */
};

struct p4s_pipe {
    const struct p4s_prog *prog;
    struct p4s_table *tables;
    struct p4s_counters *counters;
    struct p4s_registers *registers;
    struct p4s_meters *meters;
    struct p4s_vset *vsets;
    uint64_t rng;
};

/* what the runtime offers generated code */
struct p4s_entry *p4s_lookup(struct p4s_table *t, const uint64_t *key);
int p4s_bucket_execute(struct p4s_bucket *b, uint64_t units, int64_t now_us);
int p4s_meter_execute(struct p4s_meters *m, uint64_t index, uint64_t nbytes, int64_t now_us);
int p4s_vset_has(const struct p4s_vset *s, uint64_t v);
uint64_t p4s_rand(struct p4s_dev *d, struct p4s_pipe *pl, uint64_t lo, uint64_t hi);
int p4s_fixed(struct p4s_dev *d);
uint64_t p4s_hash(int algo, const uint8_t *data, uint32_t len);
uint64_t p4s_csum16_bits(const uint8_t *data, uint32_t nbits);
int64_t p4s_now_us(struct p4s_dev *d);
void p4s_emit(struct p4s_dev *d, int port, const uint8_t *frame, uint32_t len);
void p4s_digest(struct p4s_dev *d, int learn_id, const uint64_t *values, uint32_t n);
void p4s_log(struct p4s_dev *d, int level, const char *msg);
int p4s_log_info(struct p4s_dev *d);
int p4s_nb_queues(struct p4s_dev *d);
int p4s_recirc_later(struct p4s_dev *d);
void p4s_recirc_put(struct p4s_dev *d, struct p4s_pipe *pl, void *pkt);
/* clone sessions (session != 0) and multicast groups: replicas, and a session's truncation */
int p4s_pre_get(struct p4s_dev *d, int session, uint32_t id, const uint16_t **ports, const uint16_t **rids,
                uint32_t *trunc);
void p4s_count_error(struct p4s_dev *d);

/* hash algorithms of bmv2 (hashes.py), by number */
enum { P4S_H_CRC16 = 0, P4S_H_CRC32, P4S_H_CRCCCITT, P4S_H_CSUM16, P4S_H_IDENTITY, P4S_H_XOR16, P4S_H_XOR32,
       P4S_H_CRC8_CUSTOM, P4S_H_CRC64_CUSTOM };

/* bits of a big-endian byte string: `w` (<= 64) bits at bit offset `off` */
static inline uint64_t p4s_get(const uint8_t *b, uint32_t off, uint32_t w) {
    const uint8_t *p = b + (off >> 3);
    uint32_t lead = off & 7, nbytes = (lead + w + 7) >> 3;
    u128 x = 0;
    for (uint32_t i = 0; i < nbytes; i++) x = (x << 8) | p[i];
    x >>= nbytes * 8 - lead - w;
    return (uint64_t)(w >= 64 ? x : x & (((u128)1 << w) - 1));
}

/* OR `w` bits of v into a zeroed big-endian byte string at bit offset `off` */
static inline void p4s_put(uint8_t *b, uint32_t off, uint32_t w, uint64_t v) {
    uint8_t *p = b + (off >> 3);
    uint32_t lead = off & 7, nbytes = (lead + w + 7) >> 3;
    u128 x = (u128)(w >= 64 ? v : v & ((1ULL << w) - 1)) << (nbytes * 8 - lead - w);
    for (int i = (int)nbytes - 1; i >= 0; i--) {
        p[i] |= (uint8_t)x;
        x >>= 8;
    }
}

/* append w bits of v to a bit string of *nbits bits (bmv2's BufBuilder, hashes' input) */
static inline void p4s_bits(uint8_t *b, uint32_t *nbits, uint32_t w, uint64_t v) {
    while (w > 0) {
        uint32_t take = w > 56 ? 56 : w;
        uint64_t part = take == 64 ? v : (v >> (w - take)) & ((1ULL << take) - 1);
        uint32_t off = *nbits;
        uint32_t end = off + take;
        for (uint32_t i = off >> 3; i < ((end + 7) >> 3); i++)
            if (i << 3 >= off) b[i] = 0;
        p4s_put(b, off, take, part);
        *nbits = end;
        w -= take;
    }
}
#endif
