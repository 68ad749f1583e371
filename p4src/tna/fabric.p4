// fabric.p4 for Tofino (TNA): the same forwarding and the same control-plane names as
// ../fabric.p4 (v1model), so tablegen and the controller drive both. Differences, all in the
// glue: ingress state reaches egress in a bridged header; fast failover resubmits with Tofino's
// resubmit header; acl's ingress_port is ternary (no `optional` kind); CPU_PORT defaults to 192;
// round-robin spray is even but not exact (Tofino's selector does not use hash mod size).
// Not compiled in this repository (no bf-p4c here): build with the Tofino SDE,
//   bf-p4c --arch tna -I p4src p4src/tna/fabric.p4 --p4runtime-files fabric.p4info.txtpb
//
//  ingress: port_rx, packet-out | probe | acl -> route -> version (flowlet gate) -> path -> ecmp/spray group
//           -> port_liveness (resubmit with the other version when the port is down)
//  egress:  packet_in header | port_mac, tag push/strip; port_tx

#include <core.p4>
#include <tna.p4>

#include "include/sizes.p4"
#include "include/types.p4"
#include "include/parser.p4"
#include "include/egress.p4"

control FabricIngress(inout tna_headers_t hdr,
                      inout tna_ingress_metadata_t meta,
                      in ingress_intrinsic_metadata_t ig_intr_md,
                      in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                      inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                      inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {

    Counter<bit<64>, port_t>(PORT_COUNTER_SIZE, CounterType_t.PACKETS_AND_BYTES) port_rx;

#include "include/acl.p4"
#include "include/routing.p4"
#include "include/path.p4"
#include "include/failover.p4"
#include "include/flowlet.p4"

    apply {
        hdr.bridged.setValid();
        hdr.bridged.ingress_port = ig_intr_md.ingress_port;
        hdr.bridged.bypass = 0;
        hdr.bridged.routed = 0;
        hdr.bridged.to_host = 0;
        hdr.bridged.version = 0;
        hdr.bridged._pad = 0;
        if (meta.failover == 0) {
            port_rx.count(ig_intr_md.ingress_port);
        }
        if (hdr.packet_out.isValid()) {
            ig_tm_md.ucast_egress_port = hdr.packet_out.egress_port;
            hdr.packet_out.setInvalid();
            hdr.bridged.bypass = 1;  // egress leaves it exactly as the controller wrote it
        } else if (hdr.ethernet.isValid() && hdr.ethernet.ether_type == ETHERTYPE_PROBE) {
            ig_tm_md.ucast_egress_port = CPU_PORT;
            hdr.bridged.bypass = 1;
        } else if (!hdr.ipv4.isValid()) {
            ig_dprsr_md.drop_ctl = 1;
        } else {
            acl.apply();
            if (meta.acl_hit == 0) {
                route.apply();
                if (hdr.bridged.routed == 1) {
                    if (hdr.ipv4.ttl <= 1) {
                        ttl_expired();
                    } else {
                        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
                    }
                }
                if (meta.has_path == 1) {
                    if (meta.failover == 1) {
                        hdr.bridged.version = meta.resubmit.version;
                    } else if (hdr.path_tag.isValid()) {
                        hdr.bridged.version = hdr.path_tag.version;
                    } else {
                        path_version.apply();
                        flowlet_config.apply();
                        flowlet_prepare();
                        meta.flow_idle = flowlet_touch.execute(meta.flow_index);
                        if (meta.gradual == 1) {
                            meta.flow_held = flowlet_pending.execute(meta.flow_index);
                            meta.flow_move = 0;
                            if (meta.flow_idle > meta.flowlet_gap) {
                                meta.flow_move = 1;
                            }
                            if (meta.flow_held >= meta.flowlet_max_hold) {
                                meta.flow_move = 1;
                            }
                        } else {
                            flowlet_settled.execute(meta.flow_index);
                            meta.flow_move = 1;
                        }
                        meta.flow_current = flowlet_gate.execute(meta.flow_index);
                        hdr.bridged.version = (version_t) meta.flow_current;
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
                    if ((meta.next_hop_set == 1 || meta.multipath != MULTIPATH_NONE) && meta.port_up == 0) {
                        if (meta.failover == 0) {
                            fail_over();
                        } else {
                            ig_dprsr_md.drop_ctl = 1;  // both versions are down
                        }
                    }
                }
            }
        }
    }
}

Pipeline(FabricIngressParser(),
         FabricIngress(),
         FabricIngressDeparser(),
         FabricEgressParser(),
         FabricEgress(),
         FabricEgressDeparser()) pipe;

Switch(pipe) main;
