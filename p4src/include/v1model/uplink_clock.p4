// UplinkClock (v1model): when each of a ToR's optical uplinks is free again, for SlotRoute's day
// budget. A lit packet is admitted only if it would finish leaving its uplink (after what the
// uplink already has to send) before its day ends: what the ToR sends past the day's end would
// wait in the link's queue (the kernel's, after the switch) into the night and be lost in the dark.
// OCSEMU's per-day byte tokens with aging, with the backlog counted. The register is read and
// written in ingress only (one thread on bmv2), so each admission sees the ones before it.
#ifndef P4SRC_INCLUDE_V1MODEL_UPLINK_CLOCK_P4_
#define P4SRC_INCLUDE_V1MODEL_UPLINK_CLOCK_P4_

#include "glue.p4"
#include "../defines.p4"
#include "../metadata.p4"

// The packet's uplink (meta.slot_port), path, arrival, length and the uplink's ns a byte
// (meta.slot_byte_ns), the schedule's phase, its range's end and meta.slot_more (the light after the
// range); out meta.slot_depart (when the uplink starts sending it, after its backlog).
control UplinkClock(inout fabric_metadata_t meta, out bit<1> admitted) {

    register<time_t>(PORT_COUNTER_SIZE) uplink_free;  // by port: when its last admitted packet has left
    counter(HOLD_PATHS, CounterType.packets_and_bytes) slot_over_budget;  // by path id: lit, over the budget

    apply {
        time_t tx;
        SLOT_TX(tx, meta.pkt_len, meta.slot_byte_ns);
        bit<32> left = meta.sched.end - meta.sched.phase + meta.slot_more;  // in phase units
        time_t free;
        uplink_free.read(free, (bit<32>) meta.slot_port);
        time_t start = meta.now;
        if (TIME_AFTER(free, meta.now)) {
            start = free;
        }
        bit<32> need;
        SCHEDULE_UNITS(need, start + tx - meta.now, meta.sched.scale);
        meta.slot_depart = start;
        admitted = 0;
        if (need <= left) {
            admitted = 1;
            uplink_free.write((bit<32>) meta.slot_port, start + tx);
        } else {
            slot_over_budget.count((bit<32>) meta.path_id);
        }
    }
}

#endif  // P4SRC_INCLUDE_V1MODEL_UPLINK_CLOCK_P4_
