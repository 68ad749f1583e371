// Per-port packet and byte counters, shared by fabric.p4 and ocs.p4.
#ifndef P4SRC_INCLUDE_PORT_COUNTERS_P4_
#define P4SRC_INCLUDE_PORT_COUNTERS_P4_

#include <core.p4>
#include <v1model.p4>
#include "sizes.p4"

// Everything received, indexed by ingress port (the CPU port counts packet-outs).
control PortRxCounter(in standard_metadata_t standard_metadata) {
    counter(PORT_COUNTER_SIZE, CounterType.packets_and_bytes) port_rx;
    apply {
        port_rx.count((bit<32>) standard_metadata.ingress_port);
    }
}

// Everything sent, indexed by egress port (the CPU port counts packet-ins).
control PortTxCounter(in standard_metadata_t standard_metadata) {
    counter(PORT_COUNTER_SIZE, CounterType.packets_and_bytes) port_tx;
    apply {
        port_tx.count((bit<32>) standard_metadata.egress_port);
    }
}

#endif  // P4SRC_INCLUDE_PORT_COUNTERS_P4_
