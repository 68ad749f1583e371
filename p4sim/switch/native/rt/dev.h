/* The device's internals, shared by dev.c and ports.c. */
#ifndef P4S_DEV_H
#define P4S_DEV_H
#include "p4s.h"

#define P4S_MAX_EVENTS 8192
#define P4S_RECIRC_CAPACITY 1024 /* bmv2's input buffer (engine.Recirculation) */
#define P4S_TX_BYTES (256 * 1024)
#define P4S_TX_FRAMES 1024
#define P4S_RX_BATCH 64
#define P4S_BACKLOG_BYTES (16u << 20) /* frames taken off the rings while Python holds the lock */

struct p4s_pre_item {
    uint32_t id, n, trunc;
    uint16_t *port, *rid;
};

struct p4s_pre {
    uint32_t n, cap;
    struct p4s_pre_item *items; /* sorted by id */
};

struct p4s_ev {
    struct p4s_ev *next;
    int32_t kind, arg;
    uint32_t len;
    uint8_t data[];
};

struct p4s_rq {
    struct p4s_rq *next;
    struct p4s_pipe *pl;
    void *pkt;
};

struct p4s_port {
    int port, fd, ifindex, gone, filter_outgoing;
    char ifname[20];
    uint8_t *ring;
    size_t ring_len;
    uint32_t frame_size, frame_nr, frames_per_block, block_size, head;
    FILE *pcap_in, *pcap_out;
};

struct p4s_txrec {
    uint16_t port;
    uint32_t off, len;
};

struct p4s_dev {
    pthread_mutex_t mu;
    struct p4s_pipe *pipe;
    int py_pipe; /* a Python pipeline: received frames go to Python as events */
    int cpu_port, nb_queues, log_info;
    uint64_t t0_ns;
    int64_t fixed_us; /* p4s_dev_fix */
    struct p4s_pre groups, sessions;
    struct p4s_ev *evh, *evt;
    uint32_t nev;
    /* Device.process: outputs collected into the caller's buffer */
    int collect;
    uint8_t *out;
    uint32_t outcap, outlen, outn;
    /* ports */
    int nports, io, wakefd;
    struct p4s_port *ports;
    int16_t portidx[P4S_MAX_PORTS];
    /* frames to send, by port at the end of a batch */
    uint8_t *txbuf;
    uint32_t txlen, ntx;
    struct p4s_txrec *txrec;
    /* frames taken off the rings while another thread held the lock, in arrival order */
    uint8_t *backlog;
    uint32_t blen;
    /* recirculated packets waiting for ingress */
    struct p4s_rq *rqh, *rqt;
    uint32_t nrq;
    uint64_t st[P4S_ST_N];
    uint8_t scratch[65536 + 4];
};

int p4s_event_push(struct p4s_dev *d, int kind, int arg, const void *data, uint32_t len);
void p4s_tx_queue(struct p4s_dev *d, int port, const uint8_t *frame, uint32_t len);
void p4s_tx_flush(struct p4s_dev *d);
int p4s_recirc_run(struct p4s_dev *d);
#endif
