// fabric.p4: the forwarding program of every electrical switch of hitless (v1model).
// Control-plane contract: p4src/README.md. Static, ECMP and spray forwarding, chosen per route
// at run time; MBB path versions carried in a path tag; fast failover; probes; counters.
//
//  ingress                                                               egress
//  -------                                                               ------
//  port_rx -> packet-out? --yes--> egress_spec = packet_out.egress_port   packet_in header (CPU)
//               | no                                                      or, if routed:
//             probe? --yes--> CPU (packet-in with ingress port)             port_mac (smac)
//               | no                                                        tag push / strip
//             acl (priority table) --hit--> forward / drop / CPU          port_tx
//               | miss
//             route (LPM) --to_host--> port, dmac (tag stripped in egress)
//               | set_path(path_id)
//             version: failover copy | path tag | path_version
//               |
//             path (path_id, version) --static--> port, dmac
//               | ecmp / spray
//             ecmp_group (5-tuple hash) | spray_group (random / round robin)
//               |
//             port_liveness: port down -> resubmit once with the other version
//
// Compile: p4c-bm2-ss fabric.p4 -I p4src -o fabric.json --p4runtime-files fabric.p4info.txtpb

#include <core.p4>
#include <v1model.p4>

#include "include/sizes.p4"
#include "include/defines.p4"
#include "include/headers.p4"
#include "include/metadata.p4"
#include "include/parser.p4"
#include "include/checksum.p4"
#include "include/port_counters.p4"
#include "include/packet_io.p4"
#include "include/acl.p4"
#include "include/routing.p4"
#include "include/path.p4"
#include "include/failover.p4"
#include "include/egress_rewrite.p4"
#include "include/deparser.p4"

control FabricIngress(inout fabric_headers_t hdr,
                      inout fabric_metadata_t meta,
                      inout standard_metadata_t standard_metadata) {
    PortRxCounter() rx_counter;
    PacketIoIngress() packet_io;
    Acl() acl;
    Routing() routing;
    PathSelect() path_select;
    Failover() fast_failover;

    apply {
        if (meta.failover == 0) {
            rx_counter.apply(standard_metadata);  // a resubmitted copy was counted already
        }
        packet_io.apply(hdr, meta, standard_metadata);
        if (meta.bypass == 0) {
            if (hdr.ipv4.isValid()) {
                acl.apply(hdr, meta, standard_metadata);
                if (meta.acl_hit == 0) {
                    routing.apply(hdr, meta, standard_metadata);
                    if (meta.has_path == 1) {
                        path_select.apply(hdr, meta, standard_metadata);
                        fast_failover.apply(hdr, meta, standard_metadata);
                    }
                }
            } else {
                mark_to_drop(standard_metadata);
            }
        }
    }
}

control FabricEgress(inout fabric_headers_t hdr,
                     inout fabric_metadata_t meta,
                     inout standard_metadata_t standard_metadata) {
    PacketIoEgress() packet_io;
    EgressRewrite() rewrite;
    PortTxCounter() tx_counter;

    apply {
        if (standard_metadata.egress_port == CPU_PORT) {
            packet_io.apply(hdr, meta, standard_metadata);
        } else if (meta.routed == 1) {
            rewrite.apply(hdr, meta, standard_metadata);
        }
        tx_counter.apply(standard_metadata);
    }
}

V1Switch(FabricParser(),
         FabricVerifyChecksum(),
         FabricIngress(),
         FabricEgress(),
         FabricComputeChecksum(),
         FabricDeparser()) main;
