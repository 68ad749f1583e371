// Table, selector and counter sizes. Override any of them with -DNAME=VALUE.
#ifndef P4SRC_INCLUDE_SIZES_P4_
#define P4SRC_INCLUDE_SIZES_P4_

#ifndef ACL_TABLE_SIZE
#define ACL_TABLE_SIZE 1024
#endif

#ifndef ROUTE_TABLE_SIZE
#define ROUTE_TABLE_SIZE 4096
#endif

#ifndef PATH_TABLE_SIZE
#define PATH_TABLE_SIZE 4096
#endif

#ifndef ECMP_GROUP_TABLE_SIZE
#define ECMP_GROUP_TABLE_SIZE 2048
#endif

#ifndef ECMP_SELECTOR_SIZE
#define ECMP_SELECTOR_SIZE 8192
#endif

#ifndef SPRAY_GROUP_TABLE_SIZE
#define SPRAY_GROUP_TABLE_SIZE 2048
#endif

#ifndef SPRAY_SELECTOR_SIZE
#define SPRAY_SELECTOR_SIZE 8192
#endif

// The round-robin register is indexed by path id, so it spans the whole path id space (bit<16>).
#ifndef SPRAY_RR_SIZE
#define SPRAY_RR_SIZE 65536
#endif

#ifndef PORT_TABLE_SIZE
#define PORT_TABLE_SIZE 512
#endif

#ifndef LIVENESS_SELECTOR_SIZE
#define LIVENESS_SELECTOR_SIZE 1024
#endif

// Port counters are indexed by the 9-bit port number, CPU port included.
#ifndef PORT_COUNTER_SIZE
#define PORT_COUNTER_SIZE 512
#endif

// Per-flow flowlet state of the gradual MBB flip, indexed by a 5-tuple hash (collisions only
// make two flows share a flowlet; MAX_HOLD still bounds the wait). A power of two (TNA masks the hash).
#ifndef FLOWLET_SIZE
#define FLOWLET_SIZE 8192
#endif
// log2(FLOWLET_SIZE): TNA's flowlet hash is this wide (Tofino has no modulo, and the hash unit
// gives the index directly, no mask after it).
#ifndef FLOWLET_INDEX_BITS
#define FLOWLET_INDEX_BITS 13
#endif
#if FLOWLET_SIZE != (1 << FLOWLET_INDEX_BITS)
#error "FLOWLET_SIZE must be 2^FLOWLET_INDEX_BITS"
#endif

// Defaults of flowlet_config (microseconds): the idle gap that ends a flowlet and the longest a
// pending version change is held back. See p4src/README.md for how they were chosen.
#ifndef FLOWLET_GAP_US
#define FLOWLET_GAP_US 8000
#endif

// 0: the gap counts from the flow's last arrival (tablegen sets the fabric's line rate).
#ifndef FLOWLET_BYTE_NS
#define FLOWLET_BYTE_NS 0
#endif

// 1: pause a pending TCP flow until it is drained (flowlet.p4); tablegen turns it on.
#ifndef FLOWLET_PAUSE
#define FLOWLET_PAUSE 0
#endif

// A held ACK that leaves at most this many bytes (one segment) unacknowledged sends a drain probe:
// the receiver may delay its ACK of a lone last segment by 40 ms (flowlet.p4).
#ifndef FLOWLET_DRAIN_SLACK
#define FLOWLET_DRAIN_SLACK 1500
#endif

#ifndef FLOWLET_MAX_HOLD_US
#define FLOWLET_MAX_HOLD_US 300000
#endif

// TNA: what the flowlet departure counts for the first packet after its flow went idle, in 1.024 us
// units (include/tna/flowlet_state.p4): at least any packet's length x BYTE_NS (64: 1518 bytes at
// 32 ns a byte, 250 Mb/s; 9216 bytes at 7 ns), so a move only waits longer.
#ifndef FLOWLET_TX_FIRST
#define FLOWLET_TX_FIRST 64
#endif

// TNA: the most members of one selector group (Tofino's selectors need a bound).
#ifndef MAX_GROUP_SIZE
#define MAX_GROUP_SIZE 64
#endif

#ifndef CIRCUIT_TABLE_SIZE
#define CIRCUIT_TABLE_SIZE 512
#endif

// The time-sliced schedule: phase ranges (a night and a day per slot), the OCS's cross-connect per
// (slot, night, port), a ToR's uplink per (path, slot), and the per-path hold state.
#ifndef SCHEDULE_PHASE_SIZE
#define SCHEDULE_PHASE_SIZE 1024
#endif

#ifndef SLOT_CIRCUIT_SIZE
#define SLOT_CIRCUIT_SIZE 16384
#endif

#ifndef SLOT_PATH_SIZE
#define SLOT_PATH_SIZE 16384
#endif

// Hold depth registers and hold counters are indexed by path id.
#ifndef HOLD_PATHS
#define HOLD_PATHS 1024
#endif

// Seed 001's reservation loop (include/v1model/reservation_*.p4): slots a cycle at most (the OCS's
// calendar has one cell per input port and slot: PORT_COUNTER_SIZE x RESV_SLOTS), and the loop-time
// histogram's buckets (32 us each; the last: longer).
#ifndef RESV_SLOTS
#define RESV_SLOTS 512
#endif
#define RESV_CALENDAR_SIZE 262144
// window_more: an entry per slot and window length, so the longest the loop allows (tablegen's Loop:
// 512 slots x 127) fits; a ToR's hold loop shared by 8 busy paths stretches a 48-frame window to 40
// slots (e11, TDC 8: 12,000 entries)
#define RESV_WINDOW_MORE_SIZE 65536
#define RESV_WINDOW_LENGTH_SIZE 128  // a range per window length (Loop: at most 127)
#define RESV_LOOP_BUCKETS 256

#endif  // P4SRC_INCLUDE_SIZES_P4_
