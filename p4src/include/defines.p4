// Constants and type aliases shared by fabric.p4 and ocs.p4, on both targets (v1model and TNA).
#ifndef P4SRC_INCLUDE_DEFINES_P4_
#define P4SRC_INCLUDE_DEFINES_P4_

typedef bit<9>  port_t;
typedef bit<48> mac_addr_t;
typedef bit<32> ipv4_addr_t;
typedef bit<16> path_id_t;
typedef bit<1>  version_t;
typedef bit<16> slot_t;     // a slot of the time-sliced optical schedule (schedule/clock.p4)

// The CPU port of simple_switch_grpc and p4sim-switch (--cpu-port 255); the TNA glue sets its own.
#ifndef CPU_PORT
#define CPU_PORT 255
#endif

const bit<16> ETHERTYPE_IPV4     = 0x0800;
const bit<16> ETHERTYPE_ARP      = 0x0806;
const bit<16> ETHERTYPE_PATH_TAG = 0x88B5;
const bit<16> ETHERTYPE_PROBE    = 0x88B6;
// TNA only: a drain probe on its way back to ingress (include/tna/glue.p4); v1model keeps a field list.
const bit<16> ETHERTYPE_DRAIN_MARK = 0x88B7;
// A held packet round its hold loop (hold_mark_h; include/<target>/slot_hold.p4), both targets.
const bit<16> ETHERTYPE_HOLD_MARK = 0x88B8;
// A reservation's control frame (reservation_h: request, grant, announce) on a ToR's OCS uplink (seed 001).
const bit<16> ETHERTYPE_RESERVATION = 0x88B9;

const bit<8> IP_PROTO_ICMP = 1;
const bit<8> IP_PROTO_TCP  = 6;
const bit<8> IP_PROTO_UDP  = 17;

const bit<8> TCP_FLAG_ACK = 0x10;
const bit<8> TCP_FLAG_SYN = 0x02;

// multipath kind chosen by the `path` table
const bit<2> MULTIPATH_NONE  = 0;
const bit<2> MULTIPATH_ECMP  = 1;
const bit<2> MULTIPATH_SPRAY = 2;

// Field list of the metadata kept across the fast-failover resubmit (@field_list).
#define FL_FAILOVER 1
// Field list of the metadata kept from a held ACK to its drain probe (clone, recirculate: flowlet.p4).
#define FL_DRAIN_PROBE 2
// Field list of the metadata kept by a lit packet that v1model's egress found stale and recirculates
// (include/v1model/slot_hold.p4); a held packet round its loop keeps it in hold_mark_h instead.
#define FL_HOLD 3

// Field list of a reservation request's clone, ToR ingress to egress (include/v1model/reservation_tor.p4).
#define FL_RESERVATION 4
// ... and of the OCS scheduler's booking passes (include/v1model/reservation_ocs.p4): their state is
// in the frame; the parser tells a pass by its instance type.
#define FL_BOOKING 5

// The schedule clock's phase is a fraction of the cycle in SCHEDULE_PHASE_BITS bits (v1model).
#define SCHEDULE_PHASE_BITS 20
const bit<32> SCHEDULE_PHASE_MASK = 0xFFFFF;

// SlotRoute's decision for a scheduled path (fabric/slot_route.p4).
const bit<2> SLOT_PATH = 0;  // not scheduled, or unlit with the electrical policy: the path table decides
const bit<2> SLOT_LIT  = 1;  // the slot's circuit: out of its uplink now
const bit<2> SLOT_HOLD = 2;  // held until its slot (round the hold loop)
const bit<2> SLOT_DROP = 3;  // the hold is full or the packet waited longer than its max hold

// The clone session of drain probes. The controller points it at the CPU port; the copy never leaves
// there (egress recirculates it).
#ifndef DRAIN_PROBE_SESSION
#define DRAIN_PROBE_SESSION 100
#endif

// A reservation frame's kind (reservation_h.kind): a ToR's request (two-way), the scheduler's grant,
// a ToR's announcement of the window it took (one-way). The OCS's booking passes keep the kind.
const bit<8> RESV_REQUEST  = 1;
const bit<8> RESV_GRANT    = 2;
const bit<8> RESV_ANNOUNCE = 3;
// reservation_config's mode at a ToR.
const bit<2> RESV_OFF     = 0;
const bit<2> RESV_TWO_WAY = 1;
const bit<2> RESV_ONE_WAY = 2;
// A reservation frame's length: Ethernet and reservation_h (ReservationOut cuts the copy to it).
#define RESV_FRAME_BYTES 50

// Half the range of a bit<32>: a difference below it is "not negative" (sequence order modulo 2^32).
const bit<32> HALF_32 = 32w0x80000000;

#endif  // P4SRC_INCLUDE_DEFINES_P4_
