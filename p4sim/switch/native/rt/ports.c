/* Ports on Linux interfaces and the packet loop (p4sim/switch/ports.py, in native code).
 *
 * Receive: AF_PACKET with a TPACKET_V2 ring per port, read without system calls while frames wait.
 * Not TPACKET_V3: its blocks reach user space only when full or when their timer (1 ms at least)
 * retires them, so sparse traffic (an ACK stream, a ping) would wait up to a millisecond per hop;
 * libpcap's immediate mode avoids V3 for the same reason. Send: the frames a batch produces, by
 * port, one sendmmsg per port. As in ports.py: a frame the switch sent itself is not read back
 * (PACKET_IGNORE_OUTGOING, else the outgoing packet type), the VLAN tag the kernel took off goes
 * back after the MACs (as libpcap does for bmv2), a port whose interface disappears is no longer
 * read, and with a pcap directory every frame in and out is written. */
#define _GNU_SOURCE
#include <errno.h>
#include <net/if.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include "dev.h"

#ifndef PACKET_IGNORE_OUTGOING
#define PACKET_IGNORE_OUTGOING 23
#endif

static void pcap_header(FILE *f) {
    struct { uint32_t magic; uint16_t major, minor; int32_t zone; uint32_t sigfigs, snaplen, linktype; }
        h = {0xA1B2C3D4U, 2, 4, 0, 0, 65535, 1};
    fwrite(&h, sizeof(h), 1, f);
    fflush(f);
}

static void pcap_write(FILE *f, const uint8_t *frame, uint32_t len) {
    struct timeval tv;
    gettimeofday(&tv, NULL);
    uint32_t rec[4] = {(uint32_t)tv.tv_sec, (uint32_t)tv.tv_usec, len, len};
    fwrite(rec, sizeof(rec), 1, f);
    fwrite(frame, 1, len, f);
    fflush(f);
}

static FILE *pcap_open(const char *dir, const char *ifname, const char *what) {
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s_%s.pcap", dir, ifname, what);
    FILE *f = fopen(path, "wb");
    if (f) pcap_header(f);
    return f;
}

static int iface_mtu(int fd, const char *ifname) {
    struct ifreq ifr;
    memset(&ifr, 0, sizeof(ifr));
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
    return ioctl(fd, SIOCGIFMTU, &ifr) == 0 ? ifr.ifr_mtu : 1500;
}

static void port_close(struct p4s_port *p) {
    if (p->ring) munmap(p->ring, p->ring_len);
    if (p->fd >= 0) close(p->fd);
    if (p->pcap_in) fclose(p->pcap_in);
    if (p->pcap_out) fclose(p->pcap_out);
    p->ring = NULL;
    p->fd = -1;
    p->pcap_in = p->pcap_out = NULL;
}

/* 0, or -errno (ENODEV: no such interface) */
int p4s_dev_add_port(p4s_dev *d, int port, const char *ifname, uint32_t ring_bytes, const char *pcap_dir) {
    if (port < 0 || port >= P4S_MAX_PORTS || d->portidx[port] >= 0 || strlen(ifname) >= IFNAMSIZ) return -EINVAL;
    int ifindex = (int)if_nametoindex(ifname);
    if (ifindex == 0) return -ENODEV;
    struct p4s_port p;
    memset(&p, 0, sizeof(p));
    p.port = port;
    p.ifindex = ifindex;
    snprintf(p.ifname, sizeof(p.ifname), "%s", ifname);
    p.fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
    if (p.fd < 0) return -errno;
    int v = TPACKET_V2, one = 1, sndbuf = 4 << 20;
    if (setsockopt(p.fd, SOL_PACKET, PACKET_VERSION, &v, sizeof(v)) < 0) goto fail;
    if (setsockopt(p.fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one)) < 0) p.filter_outgoing = 1;
    setsockopt(p.fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
    /* a slot holds the ring's header, the MAC header's alignment and one frame of the MTU */
    p.frame_size = ((uint32_t)iface_mtu(p.fd, ifname) + 160 + 15) & ~15U;
    p.block_size = 1U << 16;
    while (p.block_size > 4096 && p.block_size > ring_bytes / 2 && p.block_size / 2 >= p.frame_size)
        p.block_size /= 2;
    while (p.block_size < p.frame_size) p.block_size *= 2;
    uint32_t blocks = ring_bytes / p.block_size ? ring_bytes / p.block_size : 1;
    p.frames_per_block = p.block_size / p.frame_size;
    p.frame_nr = blocks * p.frames_per_block;
    struct tpacket_req req = {p.block_size, blocks, p.frame_size, p.frame_nr};
    if (setsockopt(p.fd, SOL_PACKET, PACKET_RX_RING, &req, sizeof(req)) < 0) goto fail;
    p.ring_len = (size_t)p.block_size * blocks;
    p.ring = mmap(NULL, p.ring_len, PROT_READ | PROT_WRITE, MAP_SHARED, p.fd, 0);
    if (p.ring == MAP_FAILED) {
        p.ring = NULL;
        goto fail;
    }
    struct sockaddr_ll sll;
    memset(&sll, 0, sizeof(sll));
    sll.sll_family = AF_PACKET;
    sll.sll_protocol = htons(ETH_P_ALL);
    sll.sll_ifindex = ifindex;
    if (bind(p.fd, (struct sockaddr *)&sll, sizeof(sll)) < 0) goto fail;
    if (pcap_dir && *pcap_dir) {
        p.pcap_in = pcap_open(pcap_dir, ifname, "in");
        p.pcap_out = pcap_open(pcap_dir, ifname, "out");
    }
    struct p4s_port *ports = realloc(d->ports, (d->nports + 1) * sizeof(*ports));
    if (ports == NULL) {
        errno = ENOMEM;
        goto fail;
    }
    d->ports = ports;
    d->ports[d->nports] = p;
    d->portidx[port] = (int16_t)d->nports++;
    return 0;
fail: {
        int err = errno;
        port_close(&p);
        return -err;
    }
}

/* frames the kernel found no free ring slot for, since the last call (PACKET_STATISTICS resets) */
void p4s_ring_drops(struct p4s_dev *d) {
    for (int i = 0; i < d->nports; i++) {
        struct tpacket_stats st;
        socklen_t len = sizeof(st);
        if (!d->ports[i].gone && getsockopt(d->ports[i].fd, SOL_PACKET, PACKET_STATISTICS, &st, &len) == 0)
            d->st[P4S_ST_RING_DROPS] += st.tp_drops;
    }
}

uint64_t p4s_dev_ring_bytes(p4s_dev *d) {
    uint64_t n = 0;
    for (int i = 0; i < d->nports; i++) n += d->ports[i].ring_len;
    return n;
}

int p4s_dev_port_up(p4s_dev *d, int port) {
    return port >= 0 && port < P4S_MAX_PORTS && d->portidx[port] >= 0 && !d->ports[d->portidx[port]].gone;
}

void p4s_dev_close_ports(p4s_dev *d) {
    for (int i = 0; i < d->nports; i++) port_close(&d->ports[i]);
    free(d->ports);
    d->ports = NULL;
    d->nports = 0;
    for (int i = 0; i < P4S_MAX_PORTS; i++) d->portidx[i] = -1;
    free(d->txbuf);
    free(d->txrec);
    d->txbuf = NULL;
    d->txrec = NULL;
    d->txlen = d->ntx = 0;
    if (d->wakefd >= 0) close(d->wakefd);
    d->wakefd = -1;
}

void p4s_dev_io(p4s_dev *d, int on) {
    d->io = on;
    if (on && d->wakefd < 0) d->wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
}

void p4s_dev_wake(p4s_dev *d) {
    uint64_t one = 1;
    if (d->wakefd >= 0 && write(d->wakefd, &one, sizeof(one)) < 0) return;
}

/* ---- sending -------------------------------------------------------------------------------- */

static void send_port(struct p4s_dev *d, struct p4s_port *p, struct mmsghdr *msgs, struct iovec *iov, uint32_t n,
                      const uint32_t *rec) {
    uint32_t i = 0;
    while (i < n) {
        int r = sendmmsg(p->fd, msgs + i, n - i, MSG_DONTWAIT);
        if (r > 0) {
            for (int k = 0; k < r && p->pcap_out; k++) pcap_write(p->pcap_out, iov[i + k].iov_base, (uint32_t)iov[i + k].iov_len);
            d->st[P4S_ST_TX] += (uint64_t)r;
            i += (uint32_t)r;
            continue;
        }
        int err = errno;
        d->st[P4S_ST_DROP]++;
        if (err != ENETDOWN && err != ENXIO && err != EAGAIN && err != ENOBUFS && err != EMSGSIZE) {
            char msg[128];
            snprintf(msg, sizeof(msg), "port %d: send failed: %s", p->port, strerror(err));
            p4s_event_push(d, P4S_EV_LOG, 30, msg, (uint32_t)strlen(msg));
        }
        i++;
    }
    (void)rec;
}

void p4s_tx_flush(struct p4s_dev *d) {
    static __thread struct mmsghdr msgs[P4S_TX_FRAMES];
    static __thread struct iovec iov[P4S_TX_FRAMES];
    uint32_t ntx = d->ntx;
    /* per port, its frames in the order they were produced */
    for (uint32_t first = 0; first < ntx; first++) {
        int port = d->txrec[first].port;
        if (port == 0xFFFF) continue;
        struct p4s_port *p = &d->ports[d->portidx[port]];
        uint32_t n = 0;
        for (uint32_t k = first; k < ntx; k++) {
            if (d->txrec[k].port != port) continue;
            iov[n].iov_base = d->txbuf + d->txrec[k].off;
            iov[n].iov_len = d->txrec[k].len;
            memset(&msgs[n], 0, sizeof(msgs[n]));
            msgs[n].msg_hdr.msg_iov = &iov[n];
            msgs[n].msg_hdr.msg_iovlen = 1;
            n++;
            d->txrec[k].port = 0xFFFF;
        }
        send_port(d, p, msgs, iov, n, NULL);
    }
    d->ntx = 0;
    d->txlen = 0;
}

void p4s_tx_queue(struct p4s_dev *d, int port, const uint8_t *frame, uint32_t len) {
    int idx = port >= 0 && port < P4S_MAX_PORTS ? d->portidx[port] : -1;
    if (idx < 0 || d->ports[idx].gone || len > P4S_TX_BYTES) {
        d->st[P4S_ST_DROP]++;
        return;
    }
    if (d->txbuf == NULL) {
        d->txbuf = malloc(P4S_TX_BYTES);
        d->txrec = malloc(P4S_TX_FRAMES * sizeof(*d->txrec));
        if (d->txbuf == NULL || d->txrec == NULL) {
            d->st[P4S_ST_DROP]++;
            return;
        }
    }
    if (d->ntx == P4S_TX_FRAMES || d->txlen + len > P4S_TX_BYTES) p4s_tx_flush(d);
    memcpy(d->txbuf + d->txlen, frame, len);
    d->txrec[d->ntx++] = (struct p4s_txrec){(uint16_t)port, d->txlen, len};
    d->txlen += (len + 7) & ~7U;
}

int p4s_dev_send(p4s_dev *d, int port, const uint8_t *frame, uint32_t len) {
    uint64_t drops = d->st[P4S_ST_DROP];
    p4s_tx_queue(d, port, frame, len);
    p4s_tx_flush(d);
    return d->st[P4S_ST_DROP] == drops ? 0 : -1;
}

/* ---- receiving ------------------------------------------------------------------------------ */

static struct tpacket2_hdr *slot(struct p4s_port *p, uint32_t i) {
    return (struct tpacket2_hdr *)(p->ring + (size_t)(i / p->frames_per_block) * p->block_size +
                                   (size_t)(i % p->frames_per_block) * p->frame_size);
}

static void rx_frame(struct p4s_dev *d, struct p4s_port *p, const uint8_t *data, uint32_t len, int64_t now_us) {
    if (p->pcap_in) pcap_write(p->pcap_in, data, len);
    d->st[P4S_ST_RX]++;
    struct p4s_pipe *pl = d->pipe;
    if (d->py_pipe) p4s_event_push(d, P4S_EV_RX, p->port, data, len);
    else if (pl != NULL) pl->prog->process(pl, d, p->port, data, len, now_us);
}

/* the offset of the realtime clock (the ring's timestamps) over the monotonic one, in ns */
static int64_t realtime_offset_ns(void) {
    struct timespec r, m;
    clock_gettime(CLOCK_REALTIME, &r);
    clock_gettime(CLOCK_MONOTONIC, &m);
    return ((int64_t)r.tv_sec - (int64_t)m.tv_sec) * 1000000000LL + (r.tv_nsec - m.tv_nsec);
}

/* A frame's time is when the kernel took it (the ring's timestamp), on the switch's clock: as bmv2
 * stamps a packet when it reads it, before its ingress runs, so that time spent waiting for the loop
 * (a wake-up, a busy batch) counts as it does there. */
struct backlog_rec {
    int32_t port;
    uint32_t len;
    int64_t now_us;
};

/* a frame kept for later (defer): the control plane holds the lock; 0, or -1 when the backlog is full */
static int backlog_put(struct p4s_dev *d, struct p4s_port *p, const uint8_t *data, uint32_t len, int64_t now_us) {
    uint32_t need = sizeof(struct backlog_rec) + ((len + 7) & ~7U);
    if (d->backlog == NULL && (d->backlog = malloc(P4S_BACKLOG_BYTES)) == NULL) return -1;
    if (d->blen + need > P4S_BACKLOG_BYTES) return -1;
    struct backlog_rec r = {p->port, len, now_us};
    memcpy(d->backlog + d->blen, &r, sizeof(r));
    memcpy(d->backlog + d->blen + sizeof(r), data, len);
    d->blen += need;
    return 0;
}

/* the frames kept while the lock was taken, in arrival order (lock held) */
static int backlog_run(struct p4s_dev *d) {
    int n = 0;
    for (uint32_t off = 0; off < d->blen; n++) {
        struct backlog_rec r;
        memcpy(&r, d->backlog + off, sizeof(r));
        int idx = d->portidx[r.port];
        if (idx >= 0) rx_frame(d, &d->ports[idx], d->backlog + off + sizeof(r), r.len, r.now_us);
        off += sizeof(r) + ((r.len + 7) & ~7U);
    }
    d->blen = 0;
    return n;
}

/* defer: another thread holds the lock, so frames go to the backlog instead of the pipeline (the
 * rings keep room, as a socket's buffer would, for as long as the control plane holds the lock) */
static int rx_port(struct p4s_dev *d, struct p4s_port *p, int budget, int defer) {
    int n = 0;
    int64_t off = -1;
    while (n < budget) {
        struct tpacket2_hdr *h = slot(p, p->head);
        if (!(__atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE) & TP_STATUS_USER)) break;
        const uint8_t *data = (const uint8_t *)h + h->tp_mac;
        uint32_t len = h->tp_snaplen;
        if (off < 0) off = realtime_offset_ns();
        int64_t now_us = d->fixed_us >= 0 ? d->fixed_us
                         : ((int64_t)h->tp_sec * 1000000000LL + h->tp_nsec - off - (int64_t)d->t0_ns) / 1000;
        int64_t clock_us = p4s_now_us(d);
        if (now_us > clock_us || now_us < 0) now_us = clock_us; /* a clock step: never ahead, never before 0 */
        if (defer && backlog_put(d, p, data, len, now_us) < 0) break; /* full: leave it in the ring */
        if (defer) {
            __atomic_store_n(&h->tp_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
            p->head = (p->head + 1) % p->frame_nr;
            n++;
            continue;
        }
        const struct sockaddr_ll *sll = (const struct sockaddr_ll *)((const uint8_t *)h +
                                                                       TPACKET_ALIGN(sizeof(struct tpacket2_hdr)));
        if (p->filter_outgoing && sll->sll_pkttype == PACKET_OUTGOING) {
            /* our own frame, read back */
        } else if (len < h->tp_len) {
            d->st[P4S_ST_TRUNCATED]++; /* larger than a ring slot (the MTU): not a frame of this port */
        } else if (h->tp_vlan_tci || (h->tp_status & TP_STATUS_VLAN_VALID)) {
            /* libpcap's test; a tag of 0 sets only the flag */
            uint16_t tpid = (h->tp_status & TP_STATUS_VLAN_TPID_VALID) ? h->tp_vlan_tpid : 0x8100;
            uint8_t *f = d->scratch;
            uint32_t head = len < 12 ? len : 12;
            memcpy(f, data, head);
            f[head] = (uint8_t)(tpid >> 8);
            f[head + 1] = (uint8_t)tpid;
            f[head + 2] = (uint8_t)(h->tp_vlan_tci >> 8);
            f[head + 3] = (uint8_t)h->tp_vlan_tci;
            memcpy(f + head + 4, data + head, len - head);
            rx_frame(d, p, f, len + 4, now_us);
        } else {
            rx_frame(d, p, data, len, now_us);
        }
        __atomic_store_n(&h->tp_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
        p->head = (p->head + 1) % p->frame_nr;
        n++;
    }
    return n;
}

static int64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* a port whose socket reports an error: the link went down (cleared), or the interface is gone */
static void port_error(struct p4s_dev *d, struct p4s_port *p) {
    int err = 0;
    socklen_t sl = sizeof(err);
    getsockopt(p->fd, SOL_SOCKET, SO_ERROR, &err, &sl);
    if (if_nametoindex(p->ifname) == (unsigned)p->ifindex) return;
    p->gone = 1;
    port_close(p);
    p4s_event_push(d, P4S_EV_PORT_GONE, p->port, NULL, 0);
}

/* Receive, process and send until there are events for Python (their number), the wake-up call or
 * `timeout_ms` (0). The device's lock is held while frames are processed, not while waiting. */
int p4s_dev_run(p4s_dev *d, int timeout_ms) {
    int64_t deadline = now_ms() + timeout_ms;
    struct pollfd fds[P4S_MAX_PORTS + 1];
    int owner[P4S_MAX_PORTS + 1];
    for (;;) {
        int did = 0;
        if (pthread_mutex_trylock(&d->mu) != 0) {
            /* the control plane holds the lock (a Write batch): keep the rings from filling meanwhile */
            for (int i = 0; i < d->nports; i++)
                if (!d->ports[i].gone) did += rx_port(d, &d->ports[i], P4S_RX_BATCH, 1);
            if (now_ms() >= deadline) return 0;
            if (!did) {
                struct timespec ts = {0, 50000};
                nanosleep(&ts, NULL);
            }
            continue;
        }
        if (d->blen) did += backlog_run(d);
        if (d->nrq) did += p4s_recirc_run(d);
        for (int i = 0; i < d->nports; i++)
            if (!d->ports[i].gone) did += rx_port(d, &d->ports[i], P4S_RX_BATCH, 0);
        if (d->ntx) p4s_tx_flush(d);
        int nev = (int)d->nev;
        pthread_mutex_unlock(&d->mu);
        if (nev) return nev;
        int64_t left = deadline - now_ms();
        if (left <= 0) return 0;
        if (did) continue;
        int n = 0;
        for (int i = 0; i < d->nports; i++) {
            if (d->ports[i].gone) continue;
            fds[n] = (struct pollfd){d->ports[i].fd, POLLIN, 0};
            owner[n++] = i;
        }
        fds[n] = (struct pollfd){d->wakefd, POLLIN, 0};
        owner[n++] = -1;
        if (poll(fds, (nfds_t)n, (int)left) <= 0) continue;
        for (int k = 0; k < n; k++) {
            if (owner[k] < 0 && (fds[k].revents & POLLIN)) {
                uint64_t v;
                if (read(d->wakefd, &v, sizeof(v)) < 0) v = 0;
                return 0;
            }
            if (owner[k] >= 0 && (fds[k].revents & (POLLERR | POLLHUP | POLLNVAL))) {
                pthread_mutex_lock(&d->mu);
                port_error(d, &d->ports[owner[k]]);
                pthread_mutex_unlock(&d->mu);
            }
        }
    }
}

/* ---- benchmarks ----------------------------------------------------------------------------- */

int64_t p4s_blast(const char *ifname, const uint8_t *frames, uint32_t n, uint32_t size, double seconds) {
    int ifindex = (int)if_nametoindex(ifname);
    int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));
    if (ifindex == 0 || fd < 0 || n == 0) {
        if (fd >= 0) close(fd);
        return -1;
    }
    struct sockaddr_ll sll;
    memset(&sll, 0, sizeof(sll));
    sll.sll_family = AF_PACKET;
    sll.sll_protocol = htons(ETH_P_ALL);
    sll.sll_ifindex = ifindex;
    if (bind(fd, (struct sockaddr *)&sll, sizeof(sll)) < 0) {
        close(fd);
        return -1;
    }
    enum { B = 64 };
    struct mmsghdr msgs[B];
    struct iovec iov[B];
    memset(msgs, 0, sizeof(msgs));
    for (int i = 0; i < B; i++) {
        iov[i].iov_base = (void *)(frames + (size_t)(i % n) * size);
        iov[i].iov_len = size;
        msgs[i].msg_hdr.msg_iov = &iov[i];
        msgs[i].msg_hdr.msg_iovlen = 1;
    }
    int64_t sent = 0, end = now_ms() + (int64_t)(seconds * 1000);
    while (now_ms() < end) {
        int r = sendmmsg(fd, msgs, B, 0);
        if (r > 0) sent += r;
    }
    close(fd);
    return sent;
}
