// Circuit: the emulated optical cross-connect, ingress port to egress port; dark ports drop and count.
#ifndef P4SRC_INCLUDE_OCS_CIRCUIT_P4_
#define P4SRC_INCLUDE_OCS_CIRCUIT_P4_

#include "../headers.p4"
#include "../metadata.p4"

control Circuit(inout ocs_metadata_t meta) {

    DECLARE_PORT_COUNTER(dark_drops)

    action cross_connect(port_t port) {
        meta.egress_port = port;
    }

    action dark() {
        meta.drop = 1;
    }

    // One entry per lit input port: where its light goes. Exact on the ingress port only; a
    // circuit a <-> b is two entries. Ports without an entry are dark.
    table circuit {
        key = {
            meta.ingress_port: exact @name("ingress_port");
        }
        actions = {
            cross_connect;
            dark;
        }
        default_action = dark();
        size = CIRCUIT_TABLE_SIZE;
    }

    apply {
        // Counted after the table, not in dark(): Tofino cannot address an indexed counter from a
        // default action (bf-p4c: "requires the hash distribution unit").
        switch (circuit.apply().action_run) {
            dark: {
                PORT_COUNT(dark_drops, meta.ingress_port);
            }
        }
    }
}

#endif  // P4SRC_INCLUDE_OCS_CIRCUIT_P4_
