// The emulated optical cross-connect: ingress port to egress port, dark ports drop and count.
// Declarations for the body of OcsIngress: standard_metadata is in scope.
#ifndef P4SRC_INCLUDE_OCS_CIRCUIT_P4_
#define P4SRC_INCLUDE_OCS_CIRCUIT_P4_

    counter(PORT_COUNTER_SIZE, CounterType.packets_and_bytes) dark_drops;

    action cross_connect(port_t port) {
        standard_metadata.egress_spec = port;
    }

    action dark() {
        mark_to_drop(standard_metadata);
        dark_drops.count((bit<32>) standard_metadata.ingress_port);
    }

    // One entry per lit input port: where its light goes. Exact on the ingress port only; a
    // circuit a <-> b is two entries. Ports without an entry are dark.
    table circuit {
        key = {
            standard_metadata.ingress_port: exact @name("ingress_port");
        }
        actions = {
            cross_connect;
            dark;
        }
        default_action = dark();
        size = CIRCUIT_TABLE_SIZE;
    }

#endif  // P4SRC_INCLUDE_OCS_CIRCUIT_P4_
