// OcsDispatch: a packet-out leaves on its port; a reservation frame goes to the scheduler; any other
// frame is switched by the schedule's
// time-flow table while a schedule is on (ScheduleClock on the packet's own arrival time), else by the
// cross-connect. The controls are the top file's instances, given as constructor arguments.
#ifndef P4SRC_INCLUDE_OCS_DISPATCH_P4_
#define P4SRC_INCLUDE_OCS_DISPATCH_P4_

#include "../headers.p4"
#include "../metadata.p4"
#include "../schedule/clock.p4"

// The apply signature of Circuit and TimeFlow, for OcsDispatch (include/fabric/control_types.p4).
control OcsControl(inout ocs_metadata_t meta);
// The reservation scheduler's (include/v1model/reservation_ocs.p4), which reads and writes the frame.
control OcsFrameControl(inout ocs_headers_t hdr, inout ocs_metadata_t meta);

control OcsDispatch(inout ocs_headers_t hdr, inout ocs_metadata_t meta)
                   (ClockControl clock, OcsFrameControl scheduler, OcsControl time_flow, OcsControl circuit) {

    apply {
        if (hdr.packet_out.isValid()) {
            meta.egress_port = hdr.packet_out.egress_port;
            hdr.packet_out.setInvalid();
        } else {
            clock.apply(meta.now, meta.sched);
#if !defined(__TARGET_TOFINO__) || defined(RESV_TNA_SCHEDULER)
            // a reservation frame (the parser knows it by its ether type); TNA's default parses none
            // (its scheduler does not fit Tofino 1 yet: -DRESV_TNA_SCHEDULER), and no stage is spent
            if (hdr.reservation.isValid()) {
                scheduler.apply(hdr, meta);
            } else
#endif
            if (meta.sched.on == 1) {
                time_flow.apply(meta);
            } else {
                circuit.apply(meta);
            }
        }
    }
}

#endif  // P4SRC_INCLUDE_OCS_DISPATCH_P4_
