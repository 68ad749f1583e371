/* Match-action tables, action profile members and groups (p4sim/switch/tables.py, profiles.py).
 *
 * The key is the table's key fields concatenated (the last field in the lowest bits), split into
 * 64-bit words, least significant first. As in tables.py: an exact table is one hash lookup; an LPM
 * table one lookup per prefix length in use, longest first (entries of one length share their mask:
 * the exact fields are whole); ternary and range tables scan their entries by priority (highest
 * first, then in insertion order, the handle). Python keeps the entries and checks every write; the
 * runtime holds the copy packets read, kept in step by p4sim/switch/native/state.py. */
#include <stdlib.h>
#include "p4s.h"

static uint64_t hash_words(const uint64_t *w, int nw) {
    uint64_t h = 0x9E3779B97F4A7C15ULL;
    for (int i = 0; i < nw; i++) {
        h ^= w[i];
        h *= 0xBF58476D1CE4E5B9ULL;
        h ^= h >> 31;
    }
    return h;
}

static int words_eq(const uint64_t *a, const uint64_t *b, int nw) {
    for (int i = 0; i < nw; i++)
        if (a[i] != b[i]) return 0;
    return 1;
}

static struct p4s_entry *map_find(const struct p4s_map *m, const uint64_t *key, int nw) {
    if (m->n == 0) return NULL;
    uint32_t mask = m->cap - 1;
    for (uint32_t i = (uint32_t)hash_words(key, nw) & mask;; i = (i + 1) & mask) {
        struct p4s_entry *e = m->slot[i];
        if (e == NULL) return NULL;
        if (words_eq(e->kw, key, nw)) return e;
    }
}

static int map_put(struct p4s_map *m, struct p4s_entry *e, int nw);

static int map_grow(struct p4s_map *m, int nw) {
    struct p4s_map bigger = {m->cap ? m->cap * 2 : 8, 0, NULL};
    bigger.slot = calloc(bigger.cap, sizeof(*bigger.slot));
    if (bigger.slot == NULL) return -1;
    for (uint32_t i = 0; i < m->cap; i++)
        if (m->slot[i]) map_put(&bigger, m->slot[i], nw);
    free(m->slot);
    *m = bigger;
    return 0;
}

static int map_put(struct p4s_map *m, struct p4s_entry *e, int nw) {
    if ((m->n + 1) * 2 > m->cap && map_grow(m, nw) < 0) return -1;
    uint32_t mask = m->cap - 1;
    uint32_t i = (uint32_t)hash_words(e->kw, nw) & mask;
    while (m->slot[i] != NULL) i = (i + 1) & mask;
    m->slot[i] = e;
    m->n++;
    return 0;
}

/* linear probing's deletion: shift back the entries of the cluster that would no longer be found */
static void map_del(struct p4s_map *m, struct p4s_entry *e, int nw) {
    if (m->cap == 0) return;
    uint32_t mask = m->cap - 1, i = (uint32_t)hash_words(e->kw, nw) & mask;
    while (m->slot[i] != e) {
        if (m->slot[i] == NULL) return;
        i = (i + 1) & mask;
    }
    m->slot[i] = NULL;
    m->n--;
    for (uint32_t j = (i + 1) & mask; m->slot[j] != NULL; j = (j + 1) & mask) {
        uint32_t home = (uint32_t)hash_words(m->slot[j]->kw, nw) & mask;
        /* move slot j into the hole at i unless its home lies cyclically in (i, j] */
        int stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
        if (!stays) {
            m->slot[i] = m->slot[j];
            m->slot[j] = NULL;
            i = j;
        }
    }
}

static int popcount_words(const uint64_t *w, int nw) {
    int n = 0;
    for (int i = 0; i < nw; i++) n += __builtin_popcountll(w[i]);
    return n;
}

/* ---- lookup (the data plane) ---------------------------------------------------------------- */

static int range_ok(const struct p4s_entry *e, const uint64_t *key, int nw) {
    for (uint32_t r = 0; r < e->nranges; r++) {
        const struct p4s_range *rg = &e->ranges[r]; /* the field: bits sh .. sh + w - 1 of the key */
        uint64_t word = rg->sh >> 6, bit = rg->sh & 63;
        u128 x = key[word];
        if ((int)word + 1 < nw) x |= (u128)key[word + 1] << 64;
        x >>= bit;
        uint64_t f = rg->w >= 64 ? (uint64_t)x : (uint64_t)x & ((1ULL << rg->w) - 1);
        if (f < rg->lo || f > rg->hi) return 0;
    }
    return 1;
}

struct p4s_entry *p4s_lookup(struct p4s_table *t, const uint64_t *key) {
    int nw = t->nw;
    switch (t->mode) {
    case P4S_MODE_EXACT:
        return map_find(&t->exact, key, nw);
    case P4S_MODE_LPM: {
        uint64_t k[nw];
        for (int l = 0; l < t->nlev; l++) {
            const struct p4s_level *lv = &t->lev[l];
            for (int i = 0; i < nw; i++) k[i] = key[i] & lv->mask[i];
            struct p4s_entry *e = map_find(&lv->map, k, nw);
            if (e) return e;
        }
        return NULL;
    }
    case P4S_MODE_TERNARY:
    case P4S_MODE_RANGE:
        for (uint32_t s = 0; s < t->nscan; s++) {
            struct p4s_entry *e = t->scan[s];
            int ok = 1;
            for (int i = 0; i < nw && ok; i++) ok = (key[i] & e->kw[nw + i]) == e->kw[i];
            if (ok && (e->nranges == 0 || range_ok(e, key, nw))) return e;
        }
        return NULL;
    default:
        return NULL;
    }
}

/* ---- entries (the control plane) ------------------------------------------------------------ */

static int set_act(struct p4s_act *a, int aid, uint32_t nargs, const uint64_t *args) {
    uint64_t *copy = NULL;
    if (nargs) {
        copy = malloc(nargs * sizeof(uint64_t));
        if (copy == NULL) return -1;
        memcpy(copy, args, nargs * sizeof(uint64_t));
    }
    free(a->args);
    a->aid = aid;
    a->nargs = nargs;
    a->args = copy;
    return 0;
}

static int scan_before(const struct p4s_entry *a, const struct p4s_entry *b) {
    return a->priority != b->priority ? a->priority > b->priority : a->handle < b->handle;
}

p4s_entry *p4s_entry_add(p4s_pipe *pl, int table, const uint64_t *value, const uint64_t *mask, int64_t priority,
                         uint64_t handle, uint32_t nranges, const uint64_t *ranges) {
    struct p4s_table *t = &pl->tables[table];
    int nw = t->nw;
    struct p4s_entry *e = calloc(1, sizeof(*e) + 2 * (size_t)nw * sizeof(uint64_t));
    if (e == NULL) return NULL;
    e->a.aid = -1;
    e->priority = priority;
    e->handle = handle;
    memcpy(e->kw, value, nw * sizeof(uint64_t));
    memcpy(e->kw + nw, mask, nw * sizeof(uint64_t));
    if (nranges) {
        e->ranges = malloc(nranges * sizeof(*e->ranges));
        if (e->ranges == NULL) goto fail;
        memcpy(e->ranges, ranges, nranges * sizeof(*e->ranges));
        e->nranges = nranges;
    }
    if (t->mode == P4S_MODE_EXACT) {
        if (map_put(&t->exact, e, nw) < 0) goto fail;
    } else if (t->mode == P4S_MODE_LPM) {
        int plen = popcount_words(e->kw + nw, nw), l = 0;
        while (l < t->nlev && t->lev[l].plen > plen) l++;
        if (l == t->nlev || t->lev[l].plen != plen) {
            struct p4s_level *lev = realloc(t->lev, (t->nlev + 1) * sizeof(*lev));
            if (lev == NULL) goto fail;
            t->lev = lev;
            memmove(&lev[l + 1], &lev[l], (t->nlev - l) * sizeof(*lev));
            memset(&lev[l], 0, sizeof(*lev));
            lev[l].plen = plen;
            lev[l].mask = malloc(nw * sizeof(uint64_t));
            if (lev[l].mask == NULL) goto fail;
            memcpy(lev[l].mask, e->kw + nw, nw * sizeof(uint64_t));
            t->nlev++;
        }
        if (map_put(&t->lev[l].map, e, nw) < 0) goto fail;
    } else if (t->mode == P4S_MODE_TERNARY || t->mode == P4S_MODE_RANGE) {
        if (t->nscan == t->capscan) {
            uint32_t cap = t->capscan ? t->capscan * 2 : 8;
            struct p4s_entry **s = realloc(t->scan, cap * sizeof(*s));
            if (s == NULL) goto fail;
            t->scan = s;
            t->capscan = cap;
        }
        uint32_t lo = 0, hi = t->nscan;
        while (lo < hi) {
            uint32_t mid = (lo + hi) / 2;
            if (scan_before(t->scan[mid], e)) lo = mid + 1;
            else hi = mid;
        }
        memmove(&t->scan[lo + 1], &t->scan[lo], (t->nscan - lo) * sizeof(*t->scan));
        t->scan[lo] = e;
        t->nscan++;
    }
    return e;
fail:
    free(e->ranges);
    free(e);
    return NULL;
}

static void entry_free(struct p4s_entry *e) {
    if (e == NULL) return;
    free(e->a.args);
    free(e->ranges);
    free(e->meter);
    free(e);
}

void p4s_entry_del(p4s_pipe *pl, int table, p4s_entry *e) {
    struct p4s_table *t = &pl->tables[table];
    int nw = t->nw;
    if (t->mode == P4S_MODE_EXACT) {
        map_del(&t->exact, e, nw);
    } else if (t->mode == P4S_MODE_LPM) {
        int plen = popcount_words(e->kw + nw, nw);
        for (int l = 0; l < t->nlev; l++) {
            if (t->lev[l].plen != plen) continue;
            map_del(&t->lev[l].map, e, nw);
            if (t->lev[l].map.n == 0) {
                free(t->lev[l].map.slot);
                free(t->lev[l].mask);
                memmove(&t->lev[l], &t->lev[l + 1], (t->nlev - l - 1) * sizeof(*t->lev));
                t->nlev--;
            }
            break;
        }
    } else if (t->mode == P4S_MODE_TERNARY || t->mode == P4S_MODE_RANGE) {
        for (uint32_t s = 0; s < t->nscan; s++) {
            if (t->scan[s] != e) continue;
            memmove(&t->scan[s], &t->scan[s + 1], (t->nscan - s - 1) * sizeof(*t->scan));
            t->nscan--;
            break;
        }
    }
    entry_free(e);
}

int p4s_entry_action(p4s_entry *e, int aid, uint32_t nargs, const uint64_t *args, p4s_member *m, p4s_group *g) {
    if (set_act(&e->a, aid, nargs, args) < 0) return -1;
    e->member = m;
    e->group = g;
    return 0;
}

void p4s_entry_counter(p4s_entry *e, uint64_t *packets, uint64_t *bytes, int write) {
    if (write) {
        e->packets = *packets;
        e->bytes = *bytes;
    } else {
        *packets = e->packets;
        *bytes = e->bytes;
    }
}

p4s_entry *p4s_default_set(p4s_pipe *pl, int table, int aid, uint32_t nargs, const uint64_t *args) {
    struct p4s_table *t = &pl->tables[table];
    struct p4s_entry *e = calloc(1, sizeof(*e) + 2 * (size_t)t->nw * sizeof(uint64_t));
    if (e == NULL || set_act(&e->a, aid, nargs, args) < 0) {
        free(e);
        return NULL;
    }
    entry_free(t->deflt);
    t->deflt = e;
    return e;
}

void p4s_default_clear(p4s_pipe *pl, int table) {
    entry_free(pl->tables[table].deflt);
    pl->tables[table].deflt = NULL;
}

/* ---- members and groups --------------------------------------------------------------------- */

p4s_member *p4s_member_new(int aid, uint32_t nargs, const uint64_t *args) {
    struct p4s_member *m = calloc(1, sizeof(*m));
    if (m == NULL || set_act(&m->a, aid, nargs, args) < 0) {
        free(m);
        return NULL;
    }
    return m;
}

int p4s_member_set(p4s_member *m, int aid, uint32_t nargs, const uint64_t *args) {
    return set_act(&m->a, aid, nargs, args);
}

void p4s_member_free(p4s_member *m) {
    if (m == NULL) return;
    free(m->a.args);
    free(m);
}

p4s_group *p4s_group_new(void) {
    return calloc(1, sizeof(struct p4s_group));
}

int p4s_group_set(p4s_group *g, uint32_t n, p4s_member **active) {
    if (n > g->cap) {
        struct p4s_member **a = realloc(g->active, n * sizeof(*a));
        if (a == NULL) return -1;
        g->active = a;
        g->cap = n;
    }
    if (n) memcpy(g->active, active, n * sizeof(*active));
    g->n = n;
    return 0;
}

void p4s_group_free(p4s_group *g) {
    if (g == NULL) return;
    free(g->active);
    free(g);
}

/* ---- a table's memory ----------------------------------------------------------------------- */

void p4s_table_free(struct p4s_table *t) {
    if (t->mode == P4S_MODE_EXACT) {
        for (uint32_t i = 0; i < t->exact.cap; i++) entry_free(t->exact.slot[i]);
    }
    for (int l = 0; l < t->nlev; l++) {
        for (uint32_t i = 0; i < t->lev[l].map.cap; i++) entry_free(t->lev[l].map.slot[i]);
        free(t->lev[l].map.slot);
        free(t->lev[l].mask);
    }
    for (uint32_t s = 0; s < t->nscan; s++) entry_free(t->scan[s]);
    free(t->exact.slot);
    free(t->lev);
    free(t->scan);
    entry_free(t->deflt);
}
