// TimeFlow: the OCS's time-flow table. The cross-connect of each slot of the schedule, chosen by
// the slot ScheduleClock computed from the packet's own timestamp; night frames on a changing
// port are dropped and counted (night_drops), as are frames on a port the slot leaves unlit
// (unlit_drops). Used instead of `circuit` while a schedule is on.
#ifndef P4SRC_INCLUDE_OCS_TIMEFLOW_P4_
#define P4SRC_INCLUDE_OCS_TIMEFLOW_P4_

#include "../headers.p4"
#include "../metadata.p4"

control TimeFlow(inout ocs_metadata_t meta) {

    DECLARE_PORT_COUNTER(night_drops)
    DECLARE_PORT_COUNTER(unlit_drops)

    action slot_cross_connect(port_t port) {
        meta.egress_port = port;
    }

    action slot_dark() {
        meta.drop = 1;
    }

    // Where each input's light goes in each slot, by day (night 0) and by night (night 1). A port
    // whose circuit does not change into the slot keeps its night entry (unchanged circuits stay
    // lit; OCSEMU's night darkens the reconfigured ports only); a changing port has none.
    table slot_circuit {
        key = {
            meta.sched.slot: exact @name("slot");
            meta.sched.night: exact @name("night");
            meta.ingress_port: exact @name("ingress_port");
        }
        actions = {
            slot_cross_connect;
            slot_dark;
        }
        default_action = slot_dark();
        size = SLOT_CIRCUIT_SIZE;
    }

    apply {
        // Counted after the table (Tofino cannot address an indexed counter from a default action).
        if (!slot_circuit.apply().hit) {
            meta.drop = 1;
            if (meta.sched.night == 1) {
                PORT_COUNT(night_drops, meta.ingress_port);
            } else {
                PORT_COUNT(unlit_drops, meta.ingress_port);
            }
        }
    }
}

#endif  // P4SRC_INCLUDE_OCS_TIMEFLOW_P4_
