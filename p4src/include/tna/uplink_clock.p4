// UplinkClock (TNA): the day budget of SlotRoute, as Tofino decides it. v1model keeps when each
// uplink is free again in a register (max(free, now) + the packet's time, admitted against the
// light left); that access compares the register with two values and adds a third, and a Tofino
// stateful ALU reads two. Tofino's egress knows better anyway: it takes the packet off the uplink's
// queue when the uplink is about to send it, behind everything queued before it. So ingress admits
// every lit packet and gives egress when the light of its uplink ends (meta.light_end: now + what is
// left of the range + meta.slot_more, the light after it), and egress (SlotEgress, include/tna/slot_egress.p4) sends one that
// would not finish before then back round the hold loop, where ingress decides it again.
#ifndef P4SRC_INCLUDE_TNA_UPLINK_CLOCK_P4_
#define P4SRC_INCLUDE_TNA_UPLINK_CLOCK_P4_

#include "glue.p4"
#include "../defines.p4"
#include "../metadata.p4"

control UplinkClock(inout fabric_metadata_t meta, out bit<1> admitted) {

    apply {
        admitted = 1;  // the end of ingress gives egress the light's end (FabricIngressOut, intrinsics.p4)
    }
}

#endif  // P4SRC_INCLUDE_TNA_UPLINK_CLOCK_P4_
