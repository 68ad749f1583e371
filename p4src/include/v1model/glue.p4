// v1model glue: the types, externs and primitives the shared controls (include/fabric/,
// include/ocs/) use, for bmv2 and p4sim. include/tna/glue.p4 supplies the same names for Tofino.
// The forwarding logic never names standard_metadata: intrinsics.p4 copies it into fabric_metadata_t
// at the start of ingress and applies the decisions (meta.drop, meta.egress_port, ...) at the end.
#ifndef P4SRC_INCLUDE_V1MODEL_GLUE_P4_
#define P4SRC_INCLUDE_V1MODEL_GLUE_P4_

#include <core.p4>
#include <v1model.p4>

// ingress_global_timestamp: microseconds since the switch started, 48 bits (never wraps).
typedef bit<48> time_t;
// a is later than b (the TNA glue compares modulo 2^32); a difference of two times is negative
// (both within 2^47 us of each other: the switch's clock runs for 4 years before they are not).
#define TIME_AFTER(a, b) ((a) > (b))
#define TIME_NEGATIVE(d) ((d)[47:47] == 1)

// Nothing beyond the shared headers and metadata.
#define TARGET_HEADERS
#define TARGET_OCS_HEADERS
#define TARGET_OCS_METADATA
#define TARGET_METADATA

// The hold loop (include/v1model/slot_hold.p4): a held packet leaves by HOLD_OUT_PORT and comes back
// on HOLD_IN_PORT, the two ends of one link outside the switch (a veth pair whose out end the kernel
// paces: emulation/holdloop.py). No topology port may be either (topo/validate.py).
#ifndef HOLD_OUT_PORT
#define HOLD_OUT_PORT 253
#endif
#ifndef HOLD_IN_PORT
#define HOLD_IN_PORT 254
#endif

// A new lit packet of a path joins the packets the path holds (SlotRoute): some are held (SlotHold's
// depth, read into meta.hold_queued before SlotRoute), and the hold has room for it.
#define HOLD_JOINS() (meta.hold_queued != 0 && meta.hold_queued < meta.hold_limit)

// Dispatch's cases of the hold loop (include/fabric/dispatch.p4). A forged mark: HoldLoopIn has taken
// every mark off already and dropped the packet of one that did not come back on HOLD_IN_PORT (its
// meta.drop, the only one set before Dispatch). Unmarked: held, but recirculated by egress with its
// lit decision stale (FL_HOLD), not back from the loop. Round the loop: out of HOLD_OUT_PORT. A
// packet goes on to the schedule (Scheduling) when Dispatch or Forwarding finds it has a path.
#define HOLD_MARK_FORGED() (meta.drop == 1)
#define HOLD_MARK_DROP()
#define HOLD_UNMARKED() (meta.held == 1 && !meta.looped)
#define HOLD_GO_ROUND() meta.hold_pass = 1; meta.egress_port = HOLD_OUT_PORT
#define SCHEDULED(yes) meta.scheduled = (yes)

// What port_liveness's actions write (failover.p4).
typedef bit<1> liveness_t;
const liveness_t LIVENESS_UP = 1;
const liveness_t LIVENESS_DOWN = 0;

// acl's ingress_port: v1model has `optional`.
#define MATCH_OPTIONAL optional

// standard_metadata.instance_type of an ingress-to-egress clone (simple_switch)
#define INSTANCE_TYPE_INGRESS_CLONE 32w1
// ... and of a recirculated packet
#define INSTANCE_TYPE_RECIRCULATED 32w4

// DECLARE_* macros end with their own ';' (some declare nothing on a target).
// Counters: indexed by port, and direct (counted by the table itself).
#define DECLARE_PORT_COUNTER(name) counter(PORT_COUNTER_SIZE, CounterType.packets_and_bytes) name;
#define PORT_COUNT(name, port) name.count((bit<32>) (port))
#define DECLARE_DIRECT_COUNTER(name) direct_counter(CounterType.packets_and_bytes) name;
#define DIRECT_COUNT(name)

// Action selectors: the hash algorithm, the profile size, the hash width (v1model), the number of
// groups (TNA). v1model takes the hash modulo the number of live members.
#define DECLARE_SELECTOR_CRC16(name, size, width, groups) action_selector(HashAlgorithm.crc16, size, width) name;
#define DECLARE_SELECTOR_IDENTITY(name, size, width, groups) action_selector(HashAlgorithm.identity, size, width) name;
#define SELECTOR(name) name

// The flowlet slots: crc32 of the 5-tuple (meta.flow_index), and of the reversed one (meta.ack_index:
// the flow an ACK acknowledges), modulo FLOWLET_SIZE (a power of two: TNA's hash is
// FLOWLET_INDEX_BITS wide instead).
#define DECLARE_FLOWLET_HASHES
#define FLOWLET_HASHES() \
    hash(meta.flow_index, HashAlgorithm.crc32, 32w0, { hdr.ipv4.src_addr, hdr.ipv4.dst_addr, hdr.ipv4.protocol, meta.l4_src_port, meta.l4_dst_port }, (bit<32>) FLOWLET_SIZE); \
    hash(meta.ack_index, HashAlgorithm.crc32, 32w0, { hdr.ipv4.dst_addr, hdr.ipv4.src_addr, hdr.ipv4.protocol, meta.l4_dst_port, meta.l4_src_port }, (bit<32>) FLOWLET_SIZE)

// The salt joins the ECMP key as crc32 x salt (the whole crc32, modulo 2^32 - 1 as p4c's hash
// takes a maximum; TNA: AND, it cannot multiply two variables). SALT_CRC32: TNA's hook.
#define DECLARE_SALT_HASH
#define SALT_CRC32()
#define SALT_MIX(dst, salt) \
    hash(dst, HashAlgorithm.crc32, 32w0, { hdr.ipv4.src_addr, hdr.ipv4.dst_addr, hdr.ipv4.protocol, meta.l4_src_port, meta.l4_dst_port }, 32w0xFFFFFFFF); \
    dst = dst * (bit<32>) (salt)

// A uniform random bit<32>.
#define DECLARE_RANDOM(name)
#define RANDOM_GET(name, dst) random(dst, 32w0, 32w0xFFFFFFFF)

// A register of bit<32> counters, and "dst = the counter at index; the counter + 1".
#define DECLARE_NEXT_REGISTER(name, size) register<bit<32>>(size) name;
#define REGISTER_NEXT(name, index, dst) name.read(dst, index); name.write(index, dst + 1)

// A held ACK's receive window to 0, its TCP checksum updated incrementally (RFC 1624:
// HC' = ~(~HC + ~m + m')).
#define ZERO_WINDOW() \
    bit<32> sum = (bit<32>) (~hdr.tcp.checksum) + (bit<32>) (~hdr.tcp.window); \
    sum = (sum & 32w0xffff) + (sum >> 16); \
    sum = (sum & 32w0xffff) + (sum >> 16); \
    hdr.tcp.checksum = ~((bit<16>) sum); \
    hdr.tcp.window = 0

// The parser's hook for Tofino's incremental TCP checksum (none: ZERO_WINDOW computes it).
#define DECLARE_TCP_RESIDUAL
#define TCP_RESIDUAL()

// The sequence number after a TCP segment's data (IPv4 without options).
#define TCP_END(dst) dst = hdr.tcp.seq_no + (bit<32>) (hdr.ipv4.total_len - 16w20 - ((bit<16>) hdr.tcp.data_offset << 2))

#define DECLARE_TCP_END

// Primitives the shared controls call: the failover copy back to ingress with its field list, the
// held ACK's copy to egress (drain probe), and that copy back to ingress. (Drop and the egress port
// are meta.drop and meta.egress_port: intrinsics.p4 applies them, mark_to_drop needs standard_metadata;
// meta.do_recirculate keeps the probe out of port_tx.)
#define RESUBMIT_FAILOVER(other) meta.failover = 1; resubmit_preserving_field_list(FL_FAILOVER); meta.drop = 1
#define BOTH_VERSIONS_DOWN() meta.drop = 1
#define PROBE_PORT_DOWN() meta.drop = 1
#define MARK_PROBE_OUT() \
    if (hdr.ethernet.isValid() && hdr.ethernet.ether_type == ETHERTYPE_PROBE && meta.egress_port != CPU_PORT) { \
        meta.probe_out = 1; \
    }
#define CLONE_DRAIN_PROBE() clone_preserving_field_list(CloneType.I2E, DRAIN_PROBE_SESSION, FL_DRAIN_PROBE)
#define RECIRCULATE_DRAIN_PROBE() meta.do_recirculate = 1; recirculate_preserving_field_list(FL_DRAIN_PROBE)

// The end of ingress of both programs (intrinsics.p4, ocs_intrinsics.p4): drop, or the egress port,
// counted in the port counter `enq` (- port_deq: what the queue dropped).
#define DROP_OR_ENQUEUE(enq) \
    if (meta.drop == 1) { \
        mark_to_drop(standard_metadata); \
    } else { \
        standard_metadata.egress_spec = meta.egress_port; \
        enq.count((bit<32>) meta.egress_port); \
    }

// Time a packet keeps the fabric port busy: length x BYTE_NS ns, in 1.024 us (>> 10).
#define FLOWLET_TX() meta.flow_tx = ((bit<48>) meta.pkt_len * (bit<48>) meta.flowlet_byte_ns) >> 10

// The schedule clock's phase (schedule/clock.p4): bits 32.. of t x scale, with scale =
// round(2^(32 + SCHEDULE_PHASE_BITS) / cycle_us) from the controller. A multiplication, because p4c
// refuses % and / by a run-time value for bmv2 ("operator % on non-constant values is not
// supported by bmv2"). Only bits 32..51 of the product count, so its overflow past 64 bits does not.
#define SCHEDULE_SCALE_T bit<64>
// The time since the schedule's epoch (set_schedule's epoch_us).
#define SCHEDULE_SINCE(dst, now, epoch) dst = (now) - (epoch)
#define SCHEDULE_PHASE(dst, t, scale) dst = ((bit<32>) ((((bit<64>) (t)) * (scale)) >> 32)) & SCHEDULE_PHASE_MASK
// A duration (us) in phase units, rounded down (the day budget, fabric/slot_route.p4).
#define SCHEDULE_UNITS(dst, t, scale) dst = (bit<32>) ((((bit<64>) (t)) * (scale)) >> 32)
// The time (us) a packet of len bytes takes on a link of byte_ns ns a byte, rounded up: / 1000 as
// x 1049 >> 20 (0.04% more; p4c divides by no constant but a power of two for bmv2).
#define SLOT_TX(dst, len, byte_ns) dst = (time_t) (((bit<64>) (len) * (bit<64>) (byte_ns) * 1049 + 1048575) >> 20)

#endif  // P4SRC_INCLUDE_V1MODEL_GLUE_P4_
