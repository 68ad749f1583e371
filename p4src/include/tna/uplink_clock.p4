// UplinkClock (TNA): when each of a ToR's optical uplinks is free again, for SlotRoute's day budget
// (include/v1model/uplink_clock.p4 says why). One stateful-ALU access per packet: the register
// holds the time its uplink is free; the packet is admitted if max(free, now) + tx is within what
// is left of the day. Written for the p4c front end (make tofino-check); bf-p4c was not run, and
// Tofino's stateful ALU may need the max split from the comparison.
#ifndef P4SRC_INCLUDE_TNA_UPLINK_CLOCK_P4_
#define P4SRC_INCLUDE_TNA_UPLINK_CLOCK_P4_

#include "glue.p4"
#include "../defines.p4"
#include "../metadata.p4"

control UplinkClock(in port_t port, in path_id_t path, in time_t now, in time_t tx, in bit<32> left,
                    in SCHEDULE_SCALE_T scale, out bit<1> admitted, out time_t depart) {

    Register<time_t, bit<32>>(PORT_COUNTER_SIZE, 0) uplink_free;
    Counter<bit<64>, bit<32>>(HOLD_PATHS, CounterType_t.PACKETS_AND_BYTES) slot_over_budget;  // by path id
    time_t deadline;  // the latest time the packet may finish leaving: now + left (units are time)
    RegisterAction<time_t, bit<32>, bit<1>>(uplink_free) reserve = {
        void apply(inout time_t free, out bit<1> ok) {
            time_t start = free;
            if (TIME_AFTER(now, free)) {
                start = now;
            }
            ok = 0;
            if (!TIME_AFTER(start + tx, deadline)) {
                free = start + tx;
                ok = 1;
            }
        }
    };

    apply {
        deadline = now + left;  // TNA's phase units are its time units (SCHEDULE_UNITS)
        depart = now;  // the register action has one result (admitted): egress counts from the decision
        admitted = reserve.execute((bit<32>) port);
        if (admitted == 0) {
            slot_over_budget.count((bit<32>) path);
        }
    }
}

#endif  // P4SRC_INCLUDE_TNA_UPLINK_CLOCK_P4_
