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

control UplinkClock(in port_t port, in path_id_t path, in time_t now, in time_t tx, in bit<32> left,
                    in SCHEDULE_SCALE_T scale, out bit<1> admitted, out time_t depart) {

    register<time_t>(PORT_COUNTER_SIZE) uplink_free;  // by port: when its last admitted packet has left
    counter(HOLD_PATHS, CounterType.packets_and_bytes) slot_over_budget;  // by path id: lit, over the budget

    apply {
        time_t free;
        uplink_free.read(free, (bit<32>) port);
        time_t start = now;
        if (TIME_AFTER(free, now)) {
            start = free;
        }
        bit<32> need;
        SCHEDULE_UNITS(need, start + tx - now, scale);
        depart = start;  // when the uplink starts sending it, after its backlog
        admitted = 0;
        if (need <= left) {
            admitted = 1;
            uplink_free.write((bit<32>) port, start + tx);
        } else {
            slot_over_budget.count((bit<32>) path);
        }
    }
}

#endif  // P4SRC_INCLUDE_V1MODEL_UPLINK_CLOCK_P4_
