// fabric.p4: the forwarding program of every electrical switch of hitless (v1model).
// Control-plane contract: p4src/README.md. Static, ECMP and spray forwarding, chosen per route
// at run time; MBB path versions carried in a path tag; fast failover; probes; counters.
// A manifest: the forwarding logic is in include/fabric/ (one control per file, shared with the
// TNA program tna/fabric.p4), the v1model primitives in include/v1model/. P4 names are those of
// the instances below (FabricIngress.routing.route); everything outside p4src/ resolves them by
// unique suffix (route).
//
//  ingress                                                               egress
//  -------                                                               ------
//  port_rx -> packet-out? --yes--> egress port = packet_out.egress_port   CPU port: packet_in header
//               | no                                                      routed:   port_mac (smac)
//             probe? --yes--> CPU (packet-in with ingress port)                     tag push/strip
//               | no                                                      port_tx
//             acl (priority table) --hit--> forward / drop / CPU          drain probe copy:
//               | miss                                                      rewrite, recirculate
//             routing: route (LPM) --to_host--> port, dmac (tag stripped in egress)
//               | set_path(path_id)                      TTL: drop at 0/1, else decrement
//               | version: failover copy | path tag | path_version
//             flowlet: gate (flowlet_config + registers) | drain probe: the flow's version
//               |      (ACK to a held TCP flow: window 0; one segment left: drain probe)
//             path_select: path (path_id, version) --static--> port, dmac
//               | ecmp / spray
//             ecmp_group (5-tuple + hash_config salt) | spray_group (random / round robin)
//               |
//             failover: port_liveness: port down -> resubmit once with the other version
//
// Compile: p4c-bm2-ss p4src/fabric.p4 -o fabric.json --p4runtime-files fabric.p4info.txtpb

#include <core.p4>
#include <v1model.p4>

#include "include/v1model/glue.p4"
#include "include/sizes.p4"
#include "include/defines.p4"
#include "include/headers.p4"
#include "include/metadata.p4"
#include "include/v1model/parser.p4"
#include "include/v1model/checksum.p4"
#include "include/v1model/deparser.p4"
#include "include/fabric/acl.p4"
#include "include/fabric/routing.p4"
#include "include/fabric/flowlet.p4"
#include "include/fabric/path.p4"
#include "include/fabric/failover.p4"
#include "include/fabric/egress_rewrite.p4"

control FabricIngress(inout fabric_headers_t hdr,
                      inout fabric_metadata_t meta,
                      inout standard_metadata_t standard_metadata) {

    counter(PORT_COUNTER_SIZE, CounterType.packets_and_bytes) port_rx;
    Acl() acl;
    Routing() routing;
    Flowlet() flowlet;
    PathSelect() path_select;
    Failover() failover;

    apply {
        meta.now = standard_metadata.ingress_global_timestamp;
        meta.pkt_len = standard_metadata.packet_length;
        if (meta.failover == 0 && meta.drain_probe == 0) {
            port_rx.count((bit<32>) standard_metadata.ingress_port);  // a resubmitted copy was counted
        }
        if (hdr.packet_out.isValid()) {
            meta.egress_port = hdr.packet_out.egress_port;
            hdr.packet_out.setInvalid();
            meta.bypass = 1;
        } else if (hdr.ethernet.isValid() && hdr.ethernet.ether_type == ETHERTYPE_PROBE) {
            meta.egress_port = CPU_PORT;
            meta.bypass = 1;
        } else if (!hdr.ipv4.isValid()) {
            meta.drop = 1;
        } else {
            acl.apply(hdr, meta);
            if (meta.acl_hit == 0) {
                routing.apply(hdr, meta);
                flowlet.apply(hdr, meta);
                if (meta.has_path == 1) {
                    path_select.apply(hdr, meta);
                    failover.apply(hdr, meta);
                }
            }
        }
        // The decisions: drop or the egress port (resubmit and clone were called where decided).
        if (meta.drop == 1) {
            mark_to_drop(standard_metadata);
        } else {
            standard_metadata.egress_spec = meta.egress_port;
        }
    }
}

control FabricEgress(inout fabric_headers_t hdr,
                     inout fabric_metadata_t meta,
                     inout standard_metadata_t standard_metadata) {

    counter(PORT_COUNTER_SIZE, CounterType.packets_and_bytes) port_tx;
    EgressRewrite() egress_rewrite;

    apply {
        meta.egress_port = standard_metadata.egress_port;
        meta.is_clone = 0;
        if (standard_metadata.instance_type == INSTANCE_TYPE_INGRESS_CLONE) {
            meta.is_clone = 1;
        }
        egress_rewrite.apply(hdr, meta);
        if (meta.do_recirculate == 0) {  // the drain probe is sent back to ingress, not out
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
