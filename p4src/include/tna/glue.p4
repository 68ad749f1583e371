// TNA glue (Tofino 1 `tna`, Tofino 2 `t2na`): the types, externs and primitives the shared
// controls (include/fabric/, include/ocs/) use, with the same names as include/v1model/glue.p4.
// The differences and why are in p4src/README.md ("v1model and TNA").
#ifndef P4SRC_INCLUDE_TNA_GLUE_P4_
#define P4SRC_INCLUDE_TNA_GLUE_P4_

#include <core.p4>
#if __TARGET_TOFINO__ == 2
#include <t2na.p4>
#else
#include <tna.p4>
#endif

// The PCIe CPU port depends on the chip and board (192 on 2-pipe Tofino, 320 on 4-pipe).
#ifndef CPU_PORT
#define CPU_PORT 192
#endif

// The hold loop's recirculation port (include/tna/slot_hold.p4): pipe 0's on Tofino 1 (68); on
// Tofino 2 or another pipe, define it to that pipe's recirculation port.
#ifndef HOLD_RECIRC_PORT
#define HOLD_RECIRC_PORT 68
#endif

#include "../defines.p4"

// global_tstamp (ns) >> 10: units of 1.024 us in 32 bits, the width of a stateful ALU. It wraps
// after 73 minutes, so times compare modulo 2^32: a is later than b when b - a is negative.
typedef bit<32> time_t;
#define TIME_AFTER(a, b) ((bit<32>) ((b) - (a)) >= HALF_32)

// Tofino has no `optional` match kind: acl's ingress_port is ternary (a full mask = v1model's value).
#define MATCH_OPTIONAL ternary

// The first byte egress parses tells ingress's bridged metadata from a mirrored copy.
const bit<8> BRIDGED_KIND_NORMAL = 1;
const bit<8> BRIDGED_KIND_DRAIN_PROBE = 2;
const ResubmitType_t RESUBMIT_FAILOVER = 1;  // ig_dprsr_md.resubmit_type
const MirrorType_t MIRROR_DRAIN_PROBE = 1;    // ig_dprsr_md.mirror_type (bit<3>; Tofino 2: bit<4>)

// Ingress state egress needs (Tofino carries no user metadata from ingress to egress).
header bridged_h {
    bit<8>    kind;            // BRIDGED_KIND_NORMAL
    bit<7>    _pad0;
    port_t    ingress_port;
    bit<1>    routed;
    bit<1>    to_host;
    version_t version;
    bit<1>    drain_probe;
    bit<4>    _pad1;
    bit<1>    hold_pass;       // round the hold loop: egress marks it (hold_mark_h)
    bit<1>    lit;             // SlotRoute sent it out of the slot's uplink, decided at `decided`
    bit<6>    _pad2;
    path_id_t held_path_id;    // its scheduled path (held or lit)
    time_t    hold_since;
    time_t    decided;
    bit<32>   fresh_us;        // slot_policy's: egress counts a lit decision older than this (hold_stale)
}

// The header of the held ACK's mirrored copy (the drain probe egress makes).
header probe_mirror_h {
    bit<8> kind;               // BRIDGED_KIND_DRAIN_PROBE
}

// Fast failover's resubmit data: 64 bits on Tofino.
header resubmit_h {
    bit<8>    kind;
    version_t version;
    bit<55>   _pad;
}

// A drain probe on its way from egress back to ingress (a mirror session on a recirculation
// port): the probe's own ether type follows. Ingress removes it.
header drain_mark_h {
    bit<16> ether_type;
}

// flowlet.p4's pending change of a flow (one register pair): since when it waits, and the
// wanted version + 1.
struct flowlet_pending_t {
    bit<32> since;
    bit<32> wanted;
}

#define TARGET_HEADERS bridged_h bridged; drain_mark_h drain_mark;
#define TARGET_OCS_HEADERS bridged_h bridged;
#define TARGET_METADATA resubmit_h resubmit; probe_mirror_h probe_mirror; MirrorId_t mirror_session; time_t now_tx;

// DECLARE_* macros end with their own ';' (some declare nothing on a target).
// Counters: indexed by port, and direct (counted by each action of the table).
#define DECLARE_PORT_COUNTER(name) Counter<bit<64>, port_t>(PORT_COUNTER_SIZE, CounterType_t.PACKETS_AND_BYTES) name;
#define PORT_COUNT(name, port) name.count(port)
#define DECLARE_DIRECT_COUNTER(name) DirectCounter<bit<64>>(CounterType_t.PACKETS_AND_BYTES) name;
#define DIRECT_COUNT(name) name.count()

// Action selectors: a hash, a profile and a FAIR selector of at most MAX_GROUP_SIZE members per
// group. Tofino's selector does not take the hash modulo the number of live members.
#define DECLARE_SELECTOR_CRC16(name, size, width, groups) \
    Hash<bit<16>>(HashAlgorithm_t.CRC16) name##_hash; \
    ActionProfile(size) name##_profile; \
    ActionSelector(name##_profile, name##_hash, SelectorMode_t.FAIR, MAX_GROUP_SIZE, groups) name;
#define DECLARE_SELECTOR_IDENTITY(name, size, width, groups) \
    Hash<bit<16>>(HashAlgorithm_t.IDENTITY) name##_hash; \
    ActionProfile(size) name##_profile; \
    ActionSelector(name##_profile, name##_hash, SelectorMode_t.FAIR, MAX_GROUP_SIZE, groups) name;

// crc32 of the 5-tuple and of the reversed one (the flow an ACK acknowledges). One hash unit
// each; the mask is a statement of its own (bf-p4c takes no hash inside an expression).
// FLOWLET_SIZE must be a power of two (Tofino has no modulo).
#define DECLARE_FLOW_HASHES \
    Hash<bit<32>>(HashAlgorithm_t.CRC32) flow_hash; \
    Hash<bit<32>>(HashAlgorithm_t.CRC32) ack_hash;
#define FLOW_HASH(dst, limit) dst = flow_hash.get({ hdr.ipv4.src_addr, hdr.ipv4.dst_addr, hdr.ipv4.protocol, meta.l4_src_port, meta.l4_dst_port }); dst = dst & ((limit) - 1)
#define ACK_HASH(dst, limit) dst = ack_hash.get({ hdr.ipv4.dst_addr, hdr.ipv4.src_addr, hdr.ipv4.protocol, meta.l4_dst_port, meta.l4_src_port }); dst = dst & ((limit) - 1)
#define FLOW_CRC32(dst) dst = flow_hash.get({ hdr.ipv4.src_addr, hdr.ipv4.dst_addr, hdr.ipv4.protocol, meta.l4_src_port, meta.l4_dst_port })
// Tofino cannot multiply two run-time values: the salt selects bits of the crc32 (AND), a
// different linear function of the flow per salt, which decorrelates the layers' choices too.
#define SALT_MIX(dst, salt) dst = dst & (bit<32>) (salt)

// A uniform random bit<32>.
#define DECLARE_RANDOM(name) Random<bit<32>>() name;
#define RANDOM_GET(name, dst) dst = name.get()

// A register of bit<32> counters, and "dst = the counter at index; the counter + 1" (one
// RegisterAction).
#define DECLARE_NEXT_REGISTER(name, size) \
    Register<bit<32>, bit<32>>(size, 0) name; \
    RegisterAction<bit<32>, bit<32>, bit<32>>(name) name##_next = { \
        void apply(inout bit<32> position, out bit<32> current) { \
            current = position; \
            position = position + 1; \
        } \
    };
#define REGISTER_NEXT(name, index, dst) dst = name##_next.execute(index)

// Primitives the shared controls call. Tofino's are deparser settings: they are flags here, which
// tna/fabric.p4 turns into resubmit_type (with the resubmit data) and mirror_type at the end of ingress;
// the drain probe goes back to ingress through its mirror session's recirculation port.
#define RESUBMIT_FAILOVER() meta.do_resubmit = 1
#define CLONE_DRAIN_PROBE() meta.do_clone = 1
#define RECIRCULATE_DRAIN_PROBE() meta.do_recirculate = 1

// Time a packet keeps the fabric port busy, and the departure it gives an idle flow
// (tna/flowlet_state.p4: a table of shifts, Tofino cannot multiply length x BYTE_NS).
#define FLOWLET_TX() flowlet_tx.apply(); meta.now_tx = meta.now + meta.flow_tx

// The schedule clock's phase (schedule/clock.p4): Tofino cannot multiply two run-time values nor
// divide, so the cycle is a power of two of time units (1.024 us) and `scale` is its mask
// (cycle - 1); the phase is t within the cycle, in time units.
#define SCHEDULE_SCALE_T bit<32>
#define SCHEDULE_PHASE(dst, t, scale) dst = (bit<32>) (t) & (scale)
// A duration in phase units: the phase is in time units already.
#define SCHEDULE_UNITS(dst, t, scale) dst = (bit<32>) (t)
// The time (1.024 us units) a packet of len bytes takes on a link of byte_ns ns a byte, rounded up.
#define SLOT_TX(dst, len, byte_ns) dst = (time_t) (((len) * (byte_ns) + 1023) >> 10)

#endif  // P4SRC_INCLUDE_TNA_GLUE_P4_
