/* Devices: the lock, pipelines, the packet replication engine, what the data plane hands to Python
 * (events), recirculation (engine.Recirculation) and Device.process's output. */
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "dev.h"

uint32_t p4s_abi(void) { return P4S_ABI; }

p4s_dev *p4s_dev_new(int cpu_port, int nb_queues, uint64_t t0_ns, int log_info) {
    struct p4s_dev *d = calloc(1, sizeof(*d));
    if (d == NULL) return NULL;
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&d->mu, &attr);
    pthread_mutexattr_destroy(&attr);
    d->cpu_port = cpu_port;
    d->nb_queues = nb_queues;
    d->t0_ns = t0_ns;
    d->log_info = log_info;
    d->wakefd = -1;
    d->fixed_us = -1;
    for (int i = 0; i < P4S_MAX_PORTS; i++) d->portidx[i] = -1;
    return d;
}

static void pre_free(struct p4s_pre *pre) {
    for (uint32_t i = 0; i < pre->n; i++) {
        free(pre->items[i].port);
        free(pre->items[i].rid);
    }
    free(pre->items);
    memset(pre, 0, sizeof(*pre));
}

static void events_clear(struct p4s_dev *d) {
    while (d->evh) {
        struct p4s_ev *e = d->evh;
        d->evh = e->next;
        free(e);
    }
    d->evt = NULL;
    d->nev = 0;
}

static void recirc_clear(struct p4s_dev *d) {
    while (d->rqh) {
        struct p4s_rq *r = d->rqh;
        d->rqh = r->next;
        r->pl->prog->drop(r->pkt);
        free(r);
    }
    d->rqt = NULL;
    d->nrq = 0;
}

void p4s_dev_free(p4s_dev *d) {
    if (d == NULL) return;
    p4s_dev_close_ports(d);
    recirc_clear(d);
    events_clear(d);
    pre_free(&d->groups);
    pre_free(&d->sessions);
    free(d->out);
    free(d->backlog);
    pthread_mutex_destroy(&d->mu);
    free(d);
}

void p4s_lock(p4s_dev *d) { pthread_mutex_lock(&d->mu); }
void p4s_unlock(p4s_dev *d) { pthread_mutex_unlock(&d->mu); }

void p4s_dev_set_pipe(p4s_dev *d, p4s_pipe *pl, int py_pipe) {
    recirc_clear(d); /* packets of the old program (engine: `dev.pipeline is not pl` skips them) */
    d->pipe = pl;
    d->py_pipe = py_pipe;
}

void p4s_ring_drops(struct p4s_dev *d);

void p4s_dev_stats(p4s_dev *d, uint64_t *out) {
    p4s_ring_drops(d);
    memcpy(out, d->st, sizeof(d->st));
}

void p4s_dev_fix(p4s_dev *d, int64_t now_us) { d->fixed_us = now_us; }

int p4s_fixed(struct p4s_dev *d) { return d->fixed_us >= 0; }

int64_t p4s_now_us(struct p4s_dev *d) {
    if (d->fixed_us >= 0) return d->fixed_us;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    /* Device.now_us: int((monotonic - t0) * 1e6), in integers */
    return ((int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec - (int64_t)d->t0_ns) / 1000;
}

int p4s_log_info(struct p4s_dev *d) { return d->log_info; }
int p4s_nb_queues(struct p4s_dev *d) { return d->nb_queues; }
void p4s_count_error(struct p4s_dev *d) { d->st[P4S_ST_ERRORS]++; }

/* ---- events for Python ------------------------------------------------------------------------ */

int p4s_event_push(struct p4s_dev *d, int kind, int arg, const void *data, uint32_t len) {
    if (d->nev >= P4S_MAX_EVENTS) {
        d->st[P4S_ST_EV_DROPPED]++;
        return -1;
    }
    struct p4s_ev *e = malloc(sizeof(*e) + len);
    if (e == NULL) {
        d->st[P4S_ST_EV_DROPPED]++;
        return -1;
    }
    e->next = NULL;
    e->kind = kind;
    e->arg = arg;
    e->len = len;
    if (len) memcpy(e->data, data, len);
    if (d->evt) d->evt->next = e;
    else d->evh = e;
    d->evt = e;
    d->nev++;
    return 0;
}

int p4s_dev_pending(p4s_dev *d) { return (int)d->nev; }

/* the oldest event into buf: its length, or -1 (none), or -(length) - 2 when buf is too small */
int p4s_dev_event(p4s_dev *d, uint8_t *buf, uint32_t cap, int32_t *kind, int32_t *arg) {
    struct p4s_ev *e = d->evh;
    if (e == NULL) return -1;
    if (e->len > cap) return -(int)e->len - 2;
    memcpy(buf, e->data, e->len);
    *kind = e->kind;
    *arg = e->arg;
    int len = (int)e->len;
    d->evh = e->next;
    if (d->evh == NULL) d->evt = NULL;
    d->nev--;
    free(e);
    return len;
}

void p4s_digest(struct p4s_dev *d, int learn_id, const uint64_t *values, uint32_t n) {
    p4s_event_push(d, P4S_EV_DIGEST, learn_id, values, n * sizeof(uint64_t));
}

void p4s_log(struct p4s_dev *d, int level, const char *msg) {
    p4s_event_push(d, P4S_EV_LOG, level, msg, (uint32_t)strlen(msg));
}

/* ---- where frames go ------------------------------------------------------------------------- */

void p4s_emit(struct p4s_dev *d, int port, const uint8_t *frame, uint32_t len) {
    if (d->collect) { /* Device.process: every frame back to the caller, the CPU port's too */
        uint32_t need = 8 + ((len + 7) & ~7U);
        if (d->outlen + need > d->outcap) {
            uint32_t cap = d->outcap ? d->outcap : 65536;
            while (cap < d->outlen + need) cap *= 2;
            uint8_t *out = realloc(d->out, cap);
            if (out == NULL) {
                d->st[P4S_ST_DROP]++;
                return;
            }
            d->out = out;
            d->outcap = cap;
        }
        uint32_t hdr[2] = {(uint32_t)port, len};
        memcpy(d->out + d->outlen, hdr, 8);
        memcpy(d->out + d->outlen + 8, frame, len);
        d->outlen += need;
        d->outn++;
        return;
    }
    if (port == d->cpu_port) {
        d->st[P4S_ST_TO_CPU]++;
        p4s_event_push(d, P4S_EV_PACKET_IN, port, frame, len);
        return;
    }
    p4s_tx_queue(d, port, frame, len);
}

/* one frame through the pipeline without ports: the frames it emits, as records (u32 port, u32
 * length, the frame padded to 8 bytes) at *out; returns how many */
int p4s_dev_process(p4s_dev *d, int port, const uint8_t *frame, uint32_t len, const uint8_t **out) {
    struct p4s_pipe *pl = d->pipe;
    d->collect = 1;
    d->outlen = d->outn = 0;
    if (pl != NULL && !d->py_pipe) pl->prog->process(pl, d, port, frame, len, -1);
    d->collect = 0;
    *out = d->out;
    return (int)d->outn;
}

/* ---- recirculation: back into the input while ports run (bmv2's input buffer: 1024) ------------ */

int p4s_recirc_later(struct p4s_dev *d) { return d->io; }

void p4s_recirc_put(struct p4s_dev *d, struct p4s_pipe *pl, void *pkt) {
    struct p4s_rq *r = NULL;
    if (d->nrq >= P4S_RECIRC_CAPACITY || (r = malloc(sizeof(*r))) == NULL) {
        d->st[P4S_ST_RECIRC_DROPPED]++;
        pl->prog->drop(pkt);
        return;
    }
    r->next = NULL;
    r->pl = pl;
    r->pkt = pkt;
    if (d->rqt) d->rqt->next = r;
    else d->rqh = r;
    d->rqt = r;
    d->nrq++;
}

/* the packets waiting now pass ingress again (those they recirculate wait for the next round) */
int p4s_recirc_run(struct p4s_dev *d) {
    uint32_t n = d->nrq;
    for (uint32_t i = 0; i < n && d->rqh; i++) {
        struct p4s_rq *r = d->rqh;
        d->rqh = r->next;
        if (d->rqh == NULL) d->rqt = NULL;
        d->nrq--;
        r->pl->prog->resume(r->pl, d, r->pkt);
        free(r);
    }
    return (int)n;
}

/* ---- packet replication engine ---------------------------------------------------------------- */

static struct p4s_pre *pre_of(struct p4s_dev *d, int session) { return session ? &d->sessions : &d->groups; }

static uint32_t pre_find(const struct p4s_pre *pre, uint32_t id) {
    uint32_t lo = 0, hi = pre->n;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (pre->items[mid].id < id) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

int p4s_pre_set(p4s_dev *d, int session, uint32_t id, uint32_t n, const uint16_t *ports, const uint16_t *rids,
                uint32_t trunc) {
    struct p4s_pre *pre = pre_of(d, session);
    uint16_t *p = malloc((n + 1) * sizeof(uint16_t)), *r = malloc((n + 1) * sizeof(uint16_t));
    if (p == NULL || r == NULL) {
        free(p);
        free(r);
        return -1;
    }
    memcpy(p, ports, n * sizeof(uint16_t));
    memcpy(r, rids, n * sizeof(uint16_t));
    uint32_t i = pre_find(pre, id);
    if (i < pre->n && pre->items[i].id == id) {
        free(pre->items[i].port);
        free(pre->items[i].rid);
    } else {
        if (pre->n == pre->cap) {
            uint32_t cap = pre->cap ? pre->cap * 2 : 4;
            struct p4s_pre_item *items = realloc(pre->items, cap * sizeof(*items));
            if (items == NULL) {
                free(p);
                free(r);
                return -1;
            }
            pre->items = items;
            pre->cap = cap;
        }
        memmove(&pre->items[i + 1], &pre->items[i], (pre->n - i) * sizeof(*pre->items));
        pre->n++;
    }
    pre->items[i] = (struct p4s_pre_item){id, n, trunc, p, r};
    return 0;
}

void p4s_pre_del(p4s_dev *d, int session, uint32_t id) {
    struct p4s_pre *pre = pre_of(d, session);
    uint32_t i = pre_find(pre, id);
    if (i >= pre->n || pre->items[i].id != id) return;
    free(pre->items[i].port);
    free(pre->items[i].rid);
    memmove(&pre->items[i], &pre->items[i + 1], (pre->n - i - 1) * sizeof(*pre->items));
    pre->n--;
}

void p4s_pre_reset(p4s_dev *d) {
    pre_free(&d->groups);
    pre_free(&d->sessions);
}

int p4s_pre_get(struct p4s_dev *d, int session, uint32_t id, const uint16_t **ports, const uint16_t **rids,
                uint32_t *trunc) {
    struct p4s_pre *pre = pre_of(d, session);
    uint32_t i = pre_find(pre, id);
    if (i >= pre->n || pre->items[i].id != id) return -1;
    *ports = pre->items[i].port;
    *rids = pre->items[i].rid;
    *trunc = pre->items[i].trunc;
    return (int)pre->items[i].n;
}

/* ---- pipelines ---------------------------------------------------------------------------------- */

void p4s_table_free(struct p4s_table *t);

void p4s_pipe_free(p4s_pipe *pl) {
    if (pl == NULL) return;
    const struct p4s_prog *g = pl->prog;
    for (uint32_t i = 0; pl->tables && i < g->n_tables; i++) p4s_table_free(&pl->tables[i]);
    for (uint32_t i = 0; pl->counters && i < g->n_counters; i++) {
        free(pl->counters[i].pk);
        free(pl->counters[i].by);
    }
    for (uint32_t i = 0; pl->registers && i < g->n_registers; i++) free(pl->registers[i].v);
    for (uint32_t i = 0; pl->meters && i < g->n_meters; i++) {
        for (uint32_t k = 0; pl->meters[i].b && k < pl->meters[i].size; k++) free(pl->meters[i].b[k]);
        free(pl->meters[i].b);
    }
    for (uint32_t i = 0; pl->vsets && i < g->n_vsets; i++) free(pl->vsets[i].v);
    free(pl->tables);
    free(pl->counters);
    free(pl->registers);
    free(pl->meters);
    free(pl->vsets);
    free(pl);
}

p4s_pipe *p4s_pipe_new(const p4s_prog *g) {
    if (g->abi != P4S_ABI) return NULL;
    struct p4s_pipe *pl = calloc(1, sizeof(*pl));
    if (pl == NULL) return NULL;
    pl->prog = g;
    pl->rng = (uint64_t)time(NULL) ^ (uint64_t)(uintptr_t)pl;
    pl->tables = calloc(g->n_tables + 1, sizeof(*pl->tables));
    pl->counters = calloc(g->n_counters + 1, sizeof(*pl->counters));
    pl->registers = calloc(g->n_registers + 1, sizeof(*pl->registers));
    pl->meters = calloc(g->n_meters + 1, sizeof(*pl->meters));
    pl->vsets = calloc(g->n_vsets + 1, sizeof(*pl->vsets));
    if (!pl->tables || !pl->counters || !pl->registers || !pl->meters || !pl->vsets) goto fail;
    for (uint32_t i = 0; i < g->n_tables; i++) {
        pl->tables[i].mode = g->table_mode[i];
        pl->tables[i].nw = g->table_nw[i];
    }
    for (uint32_t i = 0; i < g->n_counters; i++) {
        struct p4s_counters *c = &pl->counters[i];
        c->size = g->counter_size[i];
        c->pk = calloc(c->size + 1, sizeof(uint64_t));
        c->by = calloc(c->size + 1, sizeof(uint64_t));
        if (!c->pk || !c->by) goto fail;
    }
    for (uint32_t i = 0; i < g->n_registers; i++) {
        struct p4s_registers *r = &pl->registers[i];
        r->size = g->register_size[i];
        r->mask = g->register_width[i] >= 64 ? ~0ULL : (1ULL << g->register_width[i]) - 1;
        r->v = calloc(r->size + 1, sizeof(uint64_t));
        if (!r->v) goto fail;
    }
    for (uint32_t i = 0; i < g->n_meters; i++) {
        struct p4s_meters *m = &pl->meters[i];
        m->size = g->meter_size[i];
        m->by_bytes = (int)g->meter_bytes[i];
        m->b = calloc(m->size + 1, sizeof(*m->b));
        if (!m->b) goto fail;
    }
    return pl;
fail:
    p4s_pipe_free(pl);
    return NULL;
}

/* what a pipeline's arrays hold (the entries' memory is not counted) */
uint64_t p4s_pipe_bytes(p4s_pipe *pl) {
    const struct p4s_prog *g = pl->prog;
    uint64_t n = 0;
    for (uint32_t i = 0; i < g->n_counters; i++) n += 16ULL * pl->counters[i].size;
    for (uint32_t i = 0; i < g->n_registers; i++) n += 8ULL * pl->registers[i].size;
    for (uint32_t i = 0; i < g->n_meters; i++) n += 8ULL * pl->meters[i].size;
    return n;
}
