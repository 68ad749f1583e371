/* The runtime's API to Python (cffi reads this file with its '#' lines dropped): devices, ports,
 * pipelines and their state. Every function that touches a device's state expects the caller to hold
 * the device's lock (p4s_lock), a recursive mutex the packet loop also holds while it processes. */
#ifndef P4S_API_H
#define P4S_API_H
#include <stdint.h>
#include <stddef.h>

typedef struct p4s_dev p4s_dev;
typedef struct p4s_pipe p4s_pipe;
typedef struct p4s_prog p4s_prog;
typedef struct p4s_entry p4s_entry;
typedef struct p4s_member p4s_member;
typedef struct p4s_group p4s_group;

/* events the device hands to Python (p4s_dev_event) */
enum { P4S_EV_PACKET_IN = 1, P4S_EV_DIGEST = 2, P4S_EV_LOG = 3, P4S_EV_PORT_GONE = 4, P4S_EV_RX = 5 };
/* stats slots (p4s_dev_stats) */
enum { P4S_ST_RX = 0, P4S_ST_TX = 1, P4S_ST_DROP = 2, P4S_ST_TO_CPU = 3, P4S_ST_ERRORS = 4,
       P4S_ST_EV_DROPPED = 5, P4S_ST_RECIRC_DROPPED = 6, P4S_ST_TRUNCATED = 7, P4S_ST_RING_DROPS = 8,
       P4S_ST_N = 9 };

uint32_t p4s_abi(void);

/* devices */
p4s_dev *p4s_dev_new(int cpu_port, int nb_queues, uint64_t t0_ns, int log_info);
void p4s_dev_free(p4s_dev *d);
void p4s_lock(p4s_dev *d);
void p4s_unlock(p4s_dev *d);
void p4s_dev_set_pipe(p4s_dev *d, p4s_pipe *pl, int py_pipe);
void p4s_dev_stats(p4s_dev *d, uint64_t *out);
int p4s_dev_process(p4s_dev *d, int port, const uint8_t *frame, uint32_t len, const uint8_t **out);
int p4s_dev_event(p4s_dev *d, uint8_t *buf, uint32_t cap, int32_t *kind, int32_t *arg);
int p4s_dev_pending(p4s_dev *d);
/* tests: every packet at this clock value (-1: the real clock), and `random` gives its lower bound */
void p4s_dev_fix(p4s_dev *d, int64_t now_us);

/* ports and the packet loop */
int p4s_dev_add_port(p4s_dev *d, int port, const char *ifname, uint32_t ring_bytes, const char *pcap_dir);
int p4s_dev_port_up(p4s_dev *d, int port);
void p4s_dev_io(p4s_dev *d, int on);
int p4s_dev_run(p4s_dev *d, int timeout_ms);
void p4s_dev_wake(p4s_dev *d);
int p4s_dev_send(p4s_dev *d, int port, const uint8_t *frame, uint32_t len);
void p4s_dev_close_ports(p4s_dev *d);
uint64_t p4s_dev_ring_bytes(p4s_dev *d);

/* packet replication engine */
int p4s_pre_set(p4s_dev *d, int session, uint32_t id, uint32_t n, const uint16_t *ports, const uint16_t *rids,
                uint32_t trunc);
void p4s_pre_del(p4s_dev *d, int session, uint32_t id);
void p4s_pre_reset(p4s_dev *d);

/* pipelines */
p4s_pipe *p4s_pipe_new(const p4s_prog *prog);
void p4s_pipe_free(p4s_pipe *pl);
uint64_t p4s_pipe_bytes(p4s_pipe *pl);

/* tables: value and mask are nw 64-bit words each, least significant word first */
p4s_entry *p4s_entry_add(p4s_pipe *pl, int table, const uint64_t *value, const uint64_t *mask,
                         int64_t priority, uint64_t handle, uint32_t nranges, const uint64_t *ranges);
void p4s_entry_del(p4s_pipe *pl, int table, p4s_entry *e);
int p4s_entry_action(p4s_entry *e, int aid, uint32_t nargs, const uint64_t *args, p4s_member *m, p4s_group *g);
void p4s_entry_counter(p4s_entry *e, uint64_t *packets, uint64_t *bytes, int write);
int p4s_entry_meter(p4s_entry *e, int kind, const double *cfg, int64_t now_us);
p4s_entry *p4s_default_set(p4s_pipe *pl, int table, int aid, uint32_t nargs, const uint64_t *args);
void p4s_default_clear(p4s_pipe *pl, int table);

/* action profiles: members and groups (the active members, as the selector picks among them) */
p4s_member *p4s_member_new(int aid, uint32_t nargs, const uint64_t *args);
int p4s_member_set(p4s_member *m, int aid, uint32_t nargs, const uint64_t *args);
void p4s_member_free(p4s_member *m);
p4s_group *p4s_group_new(void);
int p4s_group_set(p4s_group *g, uint32_t n, p4s_member **active);
void p4s_group_free(p4s_group *g);

/* counter, register and meter arrays, parser value sets (by index in the program's order) */
void p4s_counter(p4s_pipe *pl, int idx, uint32_t i, uint64_t *packets, uint64_t *bytes, int write);
void p4s_counter_reset(p4s_pipe *pl, int idx);
uint64_t p4s_register(p4s_pipe *pl, int idx, uint32_t i, uint64_t value, int write);
void p4s_register_reset(p4s_pipe *pl, int idx);
int p4s_meter(p4s_pipe *pl, int idx, uint32_t i, int kind, const double *cfg, int64_t now_us);
void p4s_meter_reset(p4s_pipe *pl, int idx);
int p4s_vset(p4s_pipe *pl, int idx, uint32_t n, const uint64_t *values);

/* benchmarks: send frames (each `size` bytes apart in `frames`) round robin for `seconds` */
int64_t p4s_blast(const char *ifname, const uint8_t *frames, uint32_t n, uint32_t size, double seconds);
#endif
