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

// The OCS's reservation scheduler recirculates its booking passes (include/tna/reservation_ocs.p4)
// through the same port.
#define RESV_RECIRC_PORT HOLD_RECIRC_PORT

// global_tstamp (ns) >> 10: units of 1.024 us in 32 bits, the width of a stateful ALU. It wraps
// after 73 minutes, so times compare modulo 2^32: a is later than b when b - a is negative.
typedef bit<32> time_t;
// The time in a container of its own: an identity hash of the slice (global_tstamp is a 48-bit
// field; bits 10..41 span two containers, which no ALU operation can take as one operand). Ingress
// takes one copy for each part that computes with it (the flowlet gate, the schedule clock, the
// hold): an ALU reads only containers of its destination's group, and one copy would tie every
// time field of the program into one group, more than a group holds.
#define DECLARE_NOW(name) Hash<time_t>(HashAlgorithm_t.IDENTITY) name;
#define NOW_UNITS(name, tstamp) name.get({ (tstamp)[41:10] })
// The IPv4 length in 32 bits, likewise (its 16-bit header field in 32-bit arithmetic would tie the
// containers' alignments).
#define DECLARE_IP_LEN Hash<bit<16>>(HashAlgorithm_t.IDENTITY) ip_len_hash;
#define IP_LEN() ip_len_hash.get({ hdr.ipv4.total_len })
#define TIME_AFTER(a, b) ((bit<32>) ((b) - (a)) >= HALF_32)
// A difference of two times (computed before: a gateway compares a field with a constant) is negative.
#define TIME_NEGATIVE(d) ((d) >= HALF_32)
// The same of a 16-bit difference of slots.
#define SLOT_NEGATIVE(d) ((d) >= 16w0x8000)

// A new lit packet joins the packets its path holds in SlotHold on Tofino (include/tna/slot_hold.p4),
// where hold_depth is read and written in one access: reading it here as well would be a second.
#define HOLD_JOINS() false

// Dispatch's cases of the hold loop (include/fabric/dispatch.p4). The marks stay on until the end of
// ingress (FabricIngressOut): a hold mark on a packet that did not come from HOLD_RECIRC_PORT is
// forged, and dropped. Never unmarked: egress sends a packet back round the loop marked (SlotEgress,
// HoldLoopOut). Round the loop: a flag, which the end of ingress applies. Every packet goes on to the
// schedule's controls, each guarding itself (flat: p4src/README.md, "Laid out for Tofino").
#define HOLD_MARK_FORGED() (hdr.hold_mark.isValid() && meta.ingress_port != HOLD_RECIRC_PORT)
#define HOLD_MARK_DROP() meta.drop = 1
#define HOLD_UNMARKED() false
#define HOLD_GO_ROUND() meta.hold_pass = 1
#define SCHEDULED(yes)

// What port_liveness's actions write (failover.p4): a 32-bit word, which bf-p4c keeps in each
// member's action data (a profile whose actions carry none it refuses, and a small constant sits
// in the instruction instead).
typedef bit<32> liveness_t;
const liveness_t LIVENESS_UP = 32w0x4C495645;  // "LIVE"
const liveness_t LIVENESS_DOWN = 32w0;

// Tofino has no `optional` match kind: acl's ingress_port is ternary (a full mask = v1model's value).
#define MATCH_OPTIONAL ternary

// The first byte egress parses tells ingress's bridged metadata from a mirrored copy: a held ACK's
// (ingress to egress: the drain probe to make) or a lit packet egress sends back round the hold
// loop (egress to egress: SlotEgress). Both copies go to DRAIN_PROBE_SESSION, a recirculation port.
const bit<8> BRIDGED_KIND_NORMAL = 1;
const bit<8> BRIDGED_KIND_DRAIN_PROBE = 2;
const bit<8> BRIDGED_KIND_HOLD_RETURN = 3;
const ResubmitType_t RESUBMIT_TYPE_FAILOVER = 1;  // ig_dprsr_md.resubmit_type
const MirrorType_t MIRROR_DRAIN_PROBE = 1;     // ig_dprsr_md.mirror_type (bit<3>; Tofino 2: bit<4>)
const MirrorType_t MIRROR_HOLD_RETURN = 2;     // eg_dprsr_md.mirror_type

// Ingress state egress needs (Tofino carries no user metadata from ingress to egress), in two
// headers laid out by hand (a single one tied the times, the version and the intrinsic port into
// one cluster of containers bf-p4c could not place). bridged_h: a kind byte first (egress tells a
// mirrored copy from it), the ingress port where ingress's intrinsic metadata has it (bits 0..8 of
// 16; egress moves it alone, intrinsics.p4), and the flags in one byte, packed by an identity hash
// (BRIDGED_FLAGS: an ALU writes a container from at most two sources, and seven fields copied into
// one byte, or seven bytes of a field and zeros, exceed that), the version on top, where the path
// tag and the hold mark have theirs (egress copies it next to constants, unrotated).
// bridged_slot_h: the lit decision's; its times through identity hashes too (BRIDGED_SINCE,
// BRIDGED_LIGHT_END): the schedule's 20-bit phase key slices every time its arithmetic reaches
// into pieces an ALU would copy into a header field from as many sources.
header bridged_h {
    bit<8>    kind;            // BRIDGED_KIND_NORMAL
    bit<7>    _pad;
    port_t    ingress_port;
    bit<8>    flags;           // BRIDGED_FLAGS: version, routed, to_host, drain_probe, hold_pass, held,
                               // slot_decision (2 bits), from the top bit down
}

#define DECLARE_BRIDGED_FLAGS \
    Hash<bit<8>>(HashAlgorithm_t.IDENTITY) bridged_flags_hash; \
    Hash<time_t>(HashAlgorithm_t.IDENTITY) bridged_since_hash; \
    Hash<time_t>(HashAlgorithm_t.IDENTITY) bridged_light_hash;
#define BRIDGED_FLAGS() bridged_flags_hash.get({ meta.version, meta.routed, meta.to_host, meta.drain_probe, \
                                                 meta.hold_pass, meta.held, meta.slot_decision })
#define BRIDGED_SINCE() bridged_since_hash.get({ meta.hold_since })
#define BRIDGED_LIGHT_END() bridged_light_hash.get({ meta.light_end })
#define BRIDGED_VERSION(f) (f)[7:7]
#define BRIDGED_ROUTED(f) (f)[6:6]
#define BRIDGED_TO_HOST(f) (f)[5:5]
#define BRIDGED_DRAIN_PROBE(f) (f)[4:4]
#define BRIDGED_HOLD_PASS(f) (f)[3:3]
#define BRIDGED_HELD(f) (f)[2:2]
#define BRIDGED_SLOT_DECISION(f) (f)[1:0]

header bridged_slot_h {
    path_id_t held_path_id;    // its scheduled path (held or lit)
    time_t    hold_since;
    time_t    decided;         // lit: when ingress decided it
    time_t    light_end;       // lit: when the light of its uplink ends (the day, or the window's last day)
    bit<32>   fresh_us;        // slot_policy's: a lit decision older than this when egress takes it is stale
    bit<32>   byte_ns;         // slot_port's: ns a byte takes on the uplink (0: no day budget)
}

// The OCS's: the ingress port, for a packet-in, where packet_in_t has it (bits 7.. of 16: egress
// copies it without a rotation next to the packet-in's constants; ingress rotates it alone).
header ocs_bridged_h {
    port_t ingress_port;
    @padding bit<7> _pad;
}

// The reservation scheduler's booking state round its recirculation (include/tna/reservation_ocs.p4):
// the clock as the request arrived (ingress reads it; egress's passes use it), the configuration the
// ingress's cell passes need (egress reads reservation_config), the horizons the first pass saw, which
// the commit finds unchanged or refuses, the window's end, and until when the next cell holds
// (v1model keeps that in reservation_h's 48-bit `expires`; a 32-bit slice of it would tie the
// header's containers). After the reservation header on the recirculation port only: never on a wire.
header resv_booking_h {
    bit<8> pass;              // what the next pass does: RESV_PASS_READ, _START, _WINDOW, _COMMIT, _CELLS, _REFUSED
    bit<7> _pad;
    bit<1> sched_on;          // the clock at arrival: a schedule runs,
    slot_t slot;              // its slot,
    time_t now;               // the arrival time
    time_t phase;             // and the time since the cycle began
    slot_t last_slot;         // the cycle's last slot (reservation_config)
    time_t slot_len;          // a slot's length
    time_t seen_in;           // the horizons as the read pass took them
    time_t seen_out;
    time_t earliest;          // the earliest start (read pass)
    time_t start;             // the window's start (start pass)
    time_t cycle_start;
    time_t limit;             // the latest end
    time_t end;               // the window's end (the commit sets both horizons to it)
    time_t until;             // the next cell's end
}
const bit<8> RESV_PASS_READ = 0;     // a frame from a port (ingress set the booking header)
const bit<8> RESV_PASS_START = 1;
const bit<8> RESV_PASS_WINDOW = 2;
const bit<8> RESV_PASS_COMMIT = 3;
const bit<8> RESV_PASS_CELLS = 4;
const bit<8> RESV_PASS_REFUSED = 5;

// The header of a mirrored copy: its kind (BRIDGED_KIND_DRAIN_PROBE, BRIDGED_KIND_HOLD_RETURN), and
// a drain probe's version (the flow's, read by the held ACK: flowlet_state.p4).
header mirror_h {
    bit<8>    kind;
    bit<7>    _pad;
    version_t version;         // bit 0, where the flow_version register's output has it
}

// Fast failover's resubmit data: 64 bits on Tofino.
header resubmit_h {
    bit<8>    kind;
    bit<7>    _pad0;
    version_t version;
    bit<48>   _pad1;
}

// A drain probe on its way from egress back to ingress (a mirror session on a recirculation
// port): the probe's own ether type follows, and its flow's version (version_read). Ingress
// removes it.
header drain_mark_h {
    bit<16>   ether_type;
    bit<7>    _pad;
    version_t version;
}

// flowlet.p4's pending change of a flow (one register pair): since when it waits, and the
// wanted version + 1.
struct flowlet_pending_t {
    bit<32> since;
    bit<32> wanted;
}

// flowlet_state.p4's flow_version: the flow's version in bit 0, this bit while it waits for another.
const bit<8> FLOW_PENDING = 2;

#define TARGET_HEADERS bridged_h bridged; bridged_slot_h bridged_slot; drain_mark_h drain_mark;
#define TARGET_OCS_HEADERS ocs_bridged_h bridged; resv_booking_h resv_booking;
// The calendar's index and two stateful-ALU inputs (include/tna/reservation_ocs.p4), shared by its
// read (a data frame: its cell, now) and its write (a booking pass: its cell, the output word and end).
#define TARGET_OCS_METADATA bit<16> cell_index; time_t cell_time; bit<32> cell_word;
// The resubmit data and mirror header, the drain probe's pseudo-header TCP length (a deparser
// checksum takes no constant but 0), a held ACK's checksum residual (ZERO_WINDOW), the flowlet
// gate's intermediate values (include/tna/flowlet_state.p4), and the hold's (uplink_clock.p4,
// slot_hold.p4, slot_egress.p4).
#define TARGET_METADATA \
    resubmit_h resubmit; mirror_h mirror; MirrorId_t mirror_session; bit<16> probe_tcp_len; \
    bit<16> tcp_residual; bit<1> zero_window; \
    time_t flow_idle; bit<32> flow_gap_left; time_t flow_hold_start; bit<32> flow_wait_left; bit<1> flow_ack_new; bit<8> flow_sent; \
    time_t sched_now; time_t hold_now; time_t light_end; bit<32> hold_left; bit<1> send_back; bit<1> hold_return; bit<1> hold_drop; bit<32> flow_crc; bit<16> ip_len;

// DECLARE_* macros end with their own ';' (some declare nothing on a target).
// Counters: indexed by port, and direct (counted by each action of the table).
#define DECLARE_PORT_COUNTER(name) Counter<bit<64>, port_t>(PORT_COUNTER_SIZE, CounterType_t.PACKETS_AND_BYTES) name;
#define PORT_COUNT(name, port) name.count(port)
#define DECLARE_DIRECT_COUNTER(name) DirectCounter<bit<64>>(CounterType_t.PACKETS_AND_BYTES) name;
#define DIRECT_COUNT(name) name.count()

// Action selectors: a hash, a profile and a FAIR selector of at most MAX_GROUP_SIZE members per
// group. Tofino's selector picks among the live members its own way (p4src/README.md). The profile
// carries the name (P4Runtime's action profile, in bf-p4c's P4Info of standard externs, is named
// after it: v1model's selector name); a table's implementation is the selector, SELECTOR(name).
#define DECLARE_SELECTOR_CRC16(name, size, width, groups) \
    Hash<bit<16>>(HashAlgorithm_t.CRC16) name##_hash; \
    ActionProfile(size) name; \
    ActionSelector(name, name##_hash, SelectorMode_t.FAIR, MAX_GROUP_SIZE, groups) name##_groups;
#define DECLARE_SELECTOR_IDENTITY(name, size, width, groups) \
    Hash<bit<16>>(HashAlgorithm_t.IDENTITY) name##_hash; \
    ActionProfile(size) name; \
    ActionSelector(name, name##_hash, SelectorMode_t.FAIR, MAX_GROUP_SIZE, groups) name##_groups;
#define SELECTOR(name) name##_groups

// The flowlet slots (flowlet.p4): crc32 of the 5-tuple (meta.flow_index) and of the reversed one
// (meta.ack_index: the flow an ACK acknowledges), FLOWLET_INDEX_BITS wide (Tofino has no modulo; the
// hash unit gives the index directly), each in a step of its own (a table takes 32 bits from the
// hash units).
#define DECLARE_FLOWLET_HASHES \
    Hash<bit<FLOWLET_INDEX_BITS>>(HashAlgorithm_t.CRC32) flow_hash; \
    Hash<bit<FLOWLET_INDEX_BITS>>(HashAlgorithm_t.CRC32) ack_hash; \
    STEP(flow_hash_step, meta.flow_index = (bit<32>) flow_hash.get({ hdr.ipv4.src_addr, hdr.ipv4.dst_addr, \
                                                                    hdr.ipv4.protocol, meta.l4_src_port, meta.l4_dst_port })) \
    STEP(ack_hash_step, meta.ack_index = (bit<32>) ack_hash.get({ hdr.ipv4.dst_addr, hdr.ipv4.src_addr, \
                                                                 hdr.ipv4.protocol, meta.l4_dst_port, meta.l4_src_port }))
#define FLOWLET_HASHES() flow_hash_step.apply(); ack_hash_step.apply()
// hash_config's salt mix (path.p4): the crc32 of the 5-tuple before the table (SALT_CRC32: an
// action takes one operation per field), then AND the salt in its action. Tofino cannot multiply
// two run-time values: the salt selects bits of the crc32, a different linear function of the flow
// per salt, which decorrelates the layers' choices too.
#define DECLARE_SALT_HASH \
    Hash<bit<32>>(HashAlgorithm_t.CRC32) salt_hash; \
    STEP(salt_crc_step, meta.flow_crc = salt_hash.get({ hdr.ipv4.src_addr, hdr.ipv4.dst_addr, hdr.ipv4.protocol, \
                                                        meta.l4_src_port, meta.l4_dst_port }))
#define SALT_CRC32() salt_crc_step.apply()
#define SALT_MIX(dst, salt) dst = meta.flow_crc & (bit<32>) (salt)

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
// FabricIngressOut (intrinsics.p4) turns into resubmit_type (with the resubmit data) and mirror_type
// at the end of ingress; the drain probe goes back to ingress through its mirror session's
// recirculation port.
// Fast failover (failover.p4): the resubmit data here; whether to resubmit, drop or forward the
// end of ingress decides on port_up itself (intrinsics.p4), in the stage failover decides in, so
// these write nothing it reads.
#define BOTH_VERSIONS_DOWN()
#define PROBE_PORT_DOWN()
#define MARK_PROBE_OUT()  // the parser marks it (tna/parser.p4 parse_probe_out): no stage for it
#define RESUBMIT_FAILOVER(other) \
    meta.resubmit.setValid(); \
    meta.resubmit.kind = (bit<8>) RESUBMIT_TYPE_FAILOVER; \
    meta.resubmit._pad0 = 0; \
    meta.resubmit.version = other; \
    meta.resubmit._pad1 = 0
#define CLONE_DRAIN_PROBE() meta.do_clone = 1
#define RECIRCULATE_DRAIN_PROBE() meta.do_recirculate = 1

// An arithmetic step, or a hash unit's output, in a table of its own (one action, always run):
// bf-p4c would fold a plain statement into the comparison or the action that uses it, and Tofino
// computes one ALU operation per field and stage, compares a field only with a constant (a
// gateway), and takes 32 bits from the hash units per table.
#define STEP(name, ...) \
    action name##_do() { __VA_ARGS__; } \
    @hidden table name { actions = { name##_do; } const default_action = name##_do(); size = 1; }

// `dst` = `len` x `byte_ns` >> 10 (a packet's time on a port, in 1.024 us units) without a
// multiplier: byte_ns rounded up to a power of two 2^k (at most twice the real time: a flowlet gap
// then counts from a later departure, the day budget keeps more back, neither sends early), so the
// product is a shift of the length, one action per k. Program constants, hidden from the control
// plane (not in P4Info). byte_ns 0: 0.
#define TX_SHIFT_ACTION(name, k, expr) action name##_##k() { expr; }
#define DECLARE_TX_SHIFT(name, byte_ns, len, dst) \
    action name##_none() { dst = 0; } \
    TX_SHIFT_ACTION(name, 0, dst = (len) >> 10) \
    TX_SHIFT_ACTION(name, 1, dst = (len) >> 9) \
    TX_SHIFT_ACTION(name, 2, dst = (len) >> 8) \
    TX_SHIFT_ACTION(name, 3, dst = (len) >> 7) \
    TX_SHIFT_ACTION(name, 4, dst = (len) >> 6) \
    TX_SHIFT_ACTION(name, 5, dst = (len) >> 5) \
    TX_SHIFT_ACTION(name, 6, dst = (len) >> 4) \
    TX_SHIFT_ACTION(name, 7, dst = (len) >> 3) \
    TX_SHIFT_ACTION(name, 8, dst = (len) >> 2) \
    TX_SHIFT_ACTION(name, 9, dst = (len) >> 1) \
    TX_SHIFT_ACTION(name, 10, dst = (len)) \
    TX_SHIFT_ACTION(name, 11, dst = (len) << 1) \
    TX_SHIFT_ACTION(name, 12, dst = (len) << 2) \
    TX_SHIFT_ACTION(name, 13, dst = (len) << 3) \
    @hidden table name { \
        key = { byte_ns: ternary; } \
        actions = { name##_none; name##_0; name##_1; name##_2; name##_3; name##_4; name##_5; name##_6; \
                    name##_7; name##_8; name##_9; name##_10; name##_11; name##_12; name##_13; } \
        const default_action = name##_none(); \
        const entries = { \
            32w0 &&& 32w0xFFFFFFFF: name##_none(); \
            32w1 &&& 32w0xFFFFFFFF: name##_0(); \
            32w2 &&& 32w0xFFFFFFFF: name##_1(); \
            32w4 &&& 32w0xFFFFFFFF: name##_2(); \
            32w8 &&& 32w0xFFFFFFFF: name##_3(); \
            32w16 &&& 32w0xFFFFFFFF: name##_4(); \
            32w32 &&& 32w0xFFFFFFFF: name##_5(); \
            32w64 &&& 32w0xFFFFFFFF: name##_6(); \
            32w128 &&& 32w0xFFFFFFFF: name##_7(); \
            32w256 &&& 32w0xFFFFFFFF: name##_8(); \
            32w512 &&& 32w0xFFFFFFFF: name##_9(); \
            32w1024 &&& 32w0xFFFFFFFF: name##_10(); \
            32w2048 &&& 32w0xFFFFFFFF: name##_11(); \
            32w4096 &&& 32w0xFFFFFFFF: name##_12(); \
            32w2 &&& 32w0xFFFFFFFE: name##_2(); \
            32w4 &&& 32w0xFFFFFFFC: name##_3(); \
            32w8 &&& 32w0xFFFFFFF8: name##_4(); \
            32w16 &&& 32w0xFFFFFFF0: name##_5(); \
            32w32 &&& 32w0xFFFFFFE0: name##_6(); \
            32w64 &&& 32w0xFFFFFFC0: name##_7(); \
            32w128 &&& 32w0xFFFFFF80: name##_8(); \
            32w256 &&& 32w0xFFFFFF00: name##_9(); \
            32w512 &&& 32w0xFFFFFE00: name##_10(); \
            32w1024 &&& 32w0xFFFFFC00: name##_11(); \
            32w2048 &&& 32w0xFFFFF800: name##_12(); \
            32w0 &&& 32w0: name##_13(); \
        } \
    }

// The sequence number after a TCP segment's data (IPv4 without options), in the flowlet control:
// seq_no - (14 + 20 + 4 x data_offset) from a table of constants (a header field in 32-bit
// arithmetic with a 16-bit one would tie their containers' alignments), then + the frame's length
// (meta.pkt_len: the IPv4 length + 14, intrinsics.p4).
#define DECLARE_TCP_END \
    action tcp_headers(bit<32> minus) { meta.flow_end = hdr.tcp.seq_no + minus; } \
    @hidden table tcp_header_len { \
        key = { hdr.tcp.data_offset: exact; } \
        actions = { tcp_headers; } \
        const default_action = tcp_headers(32w0 - 94); \
        const entries = { \
            0: tcp_headers(32w0 - 34); 1: tcp_headers(32w0 - 38); 2: tcp_headers(32w0 - 42); \
            3: tcp_headers(32w0 - 46); 4: tcp_headers(32w0 - 50); 5: tcp_headers(32w0 - 54); \
            6: tcp_headers(32w0 - 58); 7: tcp_headers(32w0 - 62); 8: tcp_headers(32w0 - 66); \
            9: tcp_headers(32w0 - 70); 10: tcp_headers(32w0 - 74); 11: tcp_headers(32w0 - 78); \
            12: tcp_headers(32w0 - 82); 13: tcp_headers(32w0 - 86); 14: tcp_headers(32w0 - 90); \
        } \
        size = 16; \
    } \
    STEP(tcp_payload_step, meta.flow_end = meta.flow_end + meta.pkt_len)
#define TCP_END(dst) tcp_header_len.apply(); tcp_payload_step.apply()

// What an ACK leaves of its flow unacknowledged (include/tna/flowlet_state.p4).
const bit<8> ACK_LEAVES_NONE = 0;
const bit<8> ACK_LEAVES_SOME = 1;
const bit<8> ACK_LEAVES_LAST = 2;

// A held ACK's receive window to 0; the ingress deparser computes its TCP checksum from the
// residual the parser took (TCP_RESIDUAL: the old checksum and window subtracted), as Tofino's
// checksum engine does incremental updates.
#define ZERO_WINDOW() hdr.tcp.window = 0; meta.zero_window = 1
#define DECLARE_TCP_RESIDUAL Checksum() tcp_residual;
#define TCP_RESIDUAL() tcp_residual.subtract({ hdr.tcp.checksum, hdr.tcp.window }); meta.tcp_residual = tcp_residual.get()

// The schedule clock's phase (schedule/clock.p4): Tofino cannot multiply two run-time values nor
// divide, so the cycle is a power of two of time units (1.024 us) and `scale` is its mask
// (cycle - 1); the phase is t within the cycle, in time units.
#define SCHEDULE_SCALE_T bit<32>
// The time since the epoch: set_schedule's epoch_us carries the negated epoch (mod 2^32), because
// Tofino's ALU subtracts a field from action data but not action data from a field.
#define SCHEDULE_SINCE(dst, now, epoch) dst = (now) + (epoch)
#define SCHEDULE_PHASE(dst, t, scale) dst = (bit<32>) (t) & (scale)

#endif  // P4SRC_INCLUDE_TNA_GLUE_P4_
