// fabric.p4: the forwarding program of every electrical switch of hitless (v1model).
// Control-plane contract: p4src/README.md. Static, ECMP and spray forwarding, chosen per route
// at run time; MBB path versions carried in a path tag; fast failover; probes; counters.
// The tables and actions live in include/fabric/, included into the two controls below, so the
// P4 names are flat (FabricIngress.route) on every compiler; this file is the apply order.
//
//  ingress                                                               egress
//  -------                                                               ------
//  port_rx -> packet-out? --yes--> egress_spec = packet_out.egress_port   CPU port: packet_in header
//               | no                                                      routed:   port_mac (smac)
//             probe? --yes--> CPU (packet-in with ingress port)                     tag push/strip
//               | no                                                      port_tx
//             acl (priority table) --hit--> forward / drop / CPU          drain probe copy:
//               | miss                                                      rewrite, recirculate
//             route (LPM) --to_host--> port, dmac (tag stripped in egress)
//               | set_path(path_id)                      TTL: drop at 0/1, else decrement
//               |                     (ACK to a held TCP flow: window 0; one segment left: drain probe)
//             version: failover copy | path tag | drain probe: the flow's | path_version (+ flowlet gate)
//               |
//             path (path_id, version) --static--> port, dmac
//               | ecmp / spray
//             ecmp_group (5-tuple + hash_config salt) | spray_group (random / round robin)
//               |
//             port_liveness: port down -> resubmit once with the other version
//
// Compile: p4c-bm2-ss p4src/fabric.p4 -o fabric.json --p4runtime-files fabric.p4info.txtpb

#include <core.p4>
#include <v1model.p4>

#include "include/sizes.p4"
#include "include/defines.p4"
#include "include/headers.p4"
#include "include/metadata.p4"
#include "include/parser.p4"
#include "include/checksum.p4"
#include "include/deparser.p4"

control FabricIngress(inout fabric_headers_t hdr,
                      inout fabric_metadata_t meta,
                      inout standard_metadata_t standard_metadata) {

    counter(PORT_COUNTER_SIZE, CounterType.packets_and_bytes) port_rx;

#include "include/fabric/acl.p4"
#include "include/fabric/routing.p4"
#include "include/fabric/path.p4"
#include "include/fabric/failover.p4"
#include "include/fabric/flowlet.p4"

    apply {
        if (meta.failover == 0 && meta.drain_probe == 0) {
            port_rx.count((bit<32>) standard_metadata.ingress_port);  // a resubmitted copy was counted
        }
        if (hdr.packet_out.isValid()) {
            standard_metadata.egress_spec = hdr.packet_out.egress_port;
            hdr.packet_out.setInvalid();
            meta.bypass = 1;
        } else if (hdr.ethernet.isValid() && hdr.ethernet.ether_type == ETHERTYPE_PROBE) {
            standard_metadata.egress_spec = CPU_PORT;
            meta.bypass = 1;
        } else if (!hdr.ipv4.isValid()) {
            mark_to_drop(standard_metadata);
        } else {
            acl.apply();
            if (meta.acl_hit == 0) {
                route.apply();
                if (meta.routed == 1) {
                    if (hdr.ipv4.ttl <= 1) {
                        ttl_expired();
                    } else {
                        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
                    }
                }
                bit<48> now = standard_metadata.ingress_global_timestamp;
                // The flowlet gate runs where a flow enters the fabric (no tag yet); the ACKs of a
                // TCP flow pass the same switch on their way back to its sender.
                bool gate = meta.has_path == 1 && meta.failover == 0 && !hdr.path_tag.isValid();
                bool ack_back = meta.to_host == 1 && hdr.tcp.isValid() && (hdr.tcp.flags & TCP_FLAG_ACK) != 0;
                if (gate || ack_back) {
                    flowlet_config.apply();
                }
                if (ack_back) {
                    flowlet_read_acked_flow();
                    // The acknowledged flow waits to move: hold its sender (window 0) until it is
                    // drained, except on a duplicate ACK (a loss to repair); with one segment left,
                    // ask the receiver for its ACK now. MAX_HOLD ends the pause anyway.
                    bit<32> unacked = meta.flow_sent_end - hdr.tcp.ack_no;  // modulo 2^32
                    if (meta.flowlet_pause == 1 && meta.flow_pending != 0 && hdr.tcp.ack_no != meta.flow_acked &&
                            unacked != 0 && unacked < 32w0x80000000 &&
                            now - meta.flow_pending < (bit<48>) meta.flowlet_max_hold) {
                        hold_sender();
                        if (unacked <= FLOWLET_DRAIN_SLACK) {
                            send_drain_probe();
                        }
                    }
                }
                if (meta.has_path == 1) {
                    // One version per packet: failover copy, else the upstream tag, else local.
                    if (meta.failover == 1) {
                        meta.version = meta.failover_version;
                    } else if (hdr.path_tag.isValid()) {
                        meta.version = hdr.path_tag.version;
                    } else if (meta.drain_probe == 1) {
                        // The drain probe follows the flow's last segment on the version the flow
                        // is on, and is no packet of the flow for its flowlet state. (Recirculated,
                        // it has ingress_global_timestamp 0 on bmv2: the gate would see MAX_HOLD
                        // long past and move the flow.)
                        flowlet_read();
                        meta.version = meta.flow_version;
                    } else {
                        path_version.apply();
                        flowlet_read();
                        // With PAUSE a TCP flow moves by its ACKs, never on a gap (a stalled old
                        // path can be slower than GAP): once everything it sent has been acknowledged,
                        // none of it is left on the old path (a new flow in this slot has sent
                        // nothing: also drained).
                        bool by_acks = hdr.tcp.isValid() && meta.flowlet_pause == 1;
                        bool drained = by_acks && meta.flow_acked == meta.flow_sent_end;
                        if (meta.gradual == 0 || meta.flow_version == meta.version) {
                            meta.flow_pending = 0;  // immediate, or nothing to change
                        } else {
                            // A change is pending for this flow: it moves after an idle gap
                            // longer than GAP (not a flow moved by its ACKs), once drained, or once
                            // the change has waited MAX_HOLD.
                            if (meta.flow_pending == 0) {
                                meta.flow_pending = now;
                            }
                            if ((!by_acks && now > meta.flow_departure + (bit<48>) meta.flowlet_gap) || drained ||
                                    now - meta.flow_pending >= (bit<48>) meta.flowlet_max_hold) {
                                meta.flow_pending = 0;
                            } else {
                                meta.version = meta.flow_version;
                            }
                        }
                        if (hdr.tcp.isValid()) {
                            // New data moves the flow's end on, a retransmission does not (sequence
                            // order modulo 2^32); so does any segment once the slot has idled past
                            // MAX_HOLD (a new flow hashed to it).
                            bit<32> end = hdr.tcp.seq_no + (bit<32>) (hdr.ipv4.total_len - 16w20 -
                                                                     ((bit<16>) hdr.tcp.data_offset << 2));
                            if (end - meta.flow_sent_end < 32w0x80000000 ||
                                    now > meta.flow_departure + (bit<48>) meta.flowlet_max_hold) {
                                meta.flow_sent_end = end;
                            }
                        }
                        // This packet leaves once the flow's earlier ones have: ~length x BYTE_NS
                        // later (ns >> 10: units of 1.024 us).
                        if (meta.flow_departure < now) {
                            meta.flow_departure = now;
                        }
                        meta.flow_departure = meta.flow_departure +
                            (((bit<48>) standard_metadata.packet_length * (bit<48>) meta.flowlet_byte_ns) >> 10);
                        flowlet_write();
                    }
                    path.apply();
                    if (meta.multipath == MULTIPATH_ECMP) {
                        hash_config.apply();
                        ecmp_group.apply();
                    } else if (meta.multipath == MULTIPATH_SPRAY) {
                        spray_group.apply();
                    }
                    if (meta.next_hop_set == 1) {
                        port_liveness.apply();
                    }
                    // A forwarding path action ran but no live port came out of it (dead static
                    // port, or a group whose members are all dead): take the other version.
                    if ((meta.next_hop_set == 1 || meta.multipath != MULTIPATH_NONE) && meta.port_up == 0) {
                        if (meta.failover == 0) {
                            fail_over();
                        } else {
                            mark_to_drop(standard_metadata);  // both versions are down
                        }
                    }
                }
            }
        }
    }
}

control FabricEgress(inout fabric_headers_t hdr,
                     inout fabric_metadata_t meta,
                     inout standard_metadata_t standard_metadata) {

    counter(PORT_COUNTER_SIZE, CounterType.packets_and_bytes) port_tx;

#include "include/fabric/egress_rewrite.p4"

    apply {
        if (meta.drain_probe == 1 && standard_metadata.instance_type == INSTANCE_TYPE_INGRESS_CLONE) {
            if (hdr.path_tag.isValid()) {
                strip_tag();
            }
            make_drain_probe();  // recirculated: it never leaves on the clone session's port
        } else {
            if (standard_metadata.egress_port == CPU_PORT) {
                set_packet_in();
            } else if (meta.routed == 1) {
                port_mac.apply();
                if (meta.to_host == 1) {
                    if (hdr.path_tag.isValid()) {
                        strip_tag();
                    }
                } else if (hdr.path_tag.isValid()) {
                    update_tag();
                } else {
                    push_tag();
                }
            }
            port_tx.count((bit<32>) standard_metadata.egress_port);
        }
    }
}

V1Switch(FabricParser(),
         FabricVerifyChecksum(),
         FabricIngress(),
         FabricEgress(),
         FabricComputeChecksum(),
         FabricDeparser()) main;
