// fabric.p4 for Tofino (TNA: `tna` for Tofino 1, `t2na` for Tofino 2): the same forwarding logic
// (include/fabric/) and control-plane names as ../fabric.p4 (v1model); the Tofino primitives are in
// include/tna/. Target differences: p4src/README.md ("v1model and TNA").
//   bf-p4c --target tofino  --arch tna  -I p4src p4src/tna/fabric.p4 --p4runtime-files fabric.p4info.txtpb
//   bf-p4c --target tofino2 --arch t2na -I p4src p4src/tna/fabric.p4 ...
// Without bf-p4c, `make tofino-check` runs p4c's front end on it.
//
//  ingress                                                               egress
//  -------                                                               ------
//  drain / hold mark (back from egress) removed                          bridged metadata / mirror header
//  port_rx -> packet-out? --yes--> egress port = packet_out.egress_port   CPU port: packet_in header
//               | no                                                      routed:   port_mac, tag push/strip
//             held? --yes--> its path kept, to the schedule               port_tx
//               | no                                                      drain probe copy (mirror session
//             probe? --yes--> CPU                                           on a recirculation port):
//               | no                                                        rewrite, drain mark
//             acl --hit--> forward / drop / CPU                           hold pass: hold mark, back to
//               | miss                                                      ingress (HOLD_RECIRC_PORT)
//             routing (route, TTL, version) -> flowlet (RegisterActions)
//               -> schedule: ScheduleClock -> slot_path (lit: the slot's uplink) | unlit: hold
//                  (SlotHold, include/tna/slot_hold.p4) | electrical: path_select
//               -> failover (port down: resubmit with the other version)
//             bridged metadata; resubmit data; mirror (drain probe)

#include "../include/tna/glue.p4"
#include "../include/sizes.p4"
#include "../include/defines.p4"
#include "../include/headers.p4"
#include "../include/metadata.p4"
#include "../include/tna/parser.p4"
#include "../include/fabric/acl.p4"
#include "../include/fabric/routing.p4"
#include "../include/fabric/flowlet.p4"
#include "../include/fabric/path.p4"
#include "../include/fabric/failover.p4"
#include "../include/fabric/egress_rewrite.p4"
#include "../include/schedule/clock.p4"
#include "../include/tna/uplink_clock.p4"
#include "../include/fabric/slot_route.p4"
#include "../include/tna/slot_hold.p4"

control FabricIngress(inout fabric_headers_t hdr,
                      inout fabric_metadata_t meta,
                      in ingress_intrinsic_metadata_t ig_intr_md,
                      in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                      inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                      inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {

    DECLARE_PORT_COUNTER(port_rx)
    DECLARE_PORT_COUNTER(port_enq)  // to the traffic manager; port_enq - port_deq: its drops
    Acl() acl;
    Routing() routing;
    Flowlet() flowlet;
    PathSelect() path_select;
    Failover() failover;
    ScheduleClock() clock;
    SlotRoute() slot_route;
    SlotHold() slot_hold;

    apply {
        meta.now = ig_prsr_md.global_tstamp[41:10];
        // Tofino's ingress has no packet length: the frame's, from IPv4 (the gate's packets).
        meta.pkt_len = (bit<32>) hdr.ipv4.total_len + 14;
        if (hdr.drain_mark.isValid()) {
            hdr.ethernet.ether_type = hdr.drain_mark.ether_type;
            hdr.drain_mark.setInvalid();
        }
        if (hdr.hold_mark.isValid()) {
            // Back from the hold loop (SlotHold): the parser took its held state from the mark.
            hdr.ethernet.ether_type = hdr.hold_mark.ether_type;
            hdr.hold_mark.setInvalid();
            if (ig_intr_md.ingress_port != HOLD_RECIRC_PORT) {
                meta.drop = 1;  // a mark that did not come round the loop: no one holds by request
            }
        }
        if (meta.failover == 0 && meta.drain_probe == 0 && meta.held == 0) {
            port_rx.count(ig_intr_md.ingress_port);  // a resubmitted copy was counted
        }
        bool scheduled = false;
        if (meta.drop == 1) {
            // the forged hold mark above: nothing more
        } else if (hdr.packet_out.isValid()) {
            meta.egress_port = hdr.packet_out.egress_port;
            hdr.packet_out.setInvalid();
            meta.bypass = 1;
        } else if (meta.held == 1) {
            // Back from the hold loop: routed (TTL done) on its first pass, its path kept.
            meta.routed = 1;
            meta.has_path = 1;
            meta.path_id = meta.held_path_id;
            meta.version = meta.held_version;
            scheduled = true;
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
                scheduled = meta.has_path == 1;
            }
        }
        if (scheduled) {
            clock.apply(meta.now, meta.sched);
            slot_route.apply(hdr, meta);
            slot_hold.apply(meta);
            if (meta.slot_decision == SLOT_PATH) {
                path_select.apply(hdr, meta);
                failover.apply(hdr, meta);
            }
        }
        // The decisions, in Tofino's primitives.
        ig_tm_md.ucast_egress_port = meta.egress_port;
        if (meta.do_resubmit == 1) {
            ig_dprsr_md.resubmit_type = RESUBMIT_FAILOVER;  // the original goes nowhere
            meta.resubmit.setValid();
            meta.resubmit.kind = (bit<8>) RESUBMIT_FAILOVER;
            meta.resubmit.version = meta.failover_version;
            meta.resubmit._pad = 0;
        } else if (meta.drop == 1) {
            ig_dprsr_md.drop_ctl = 1;
        } else {
            port_enq.count(meta.egress_port);
        }
        if (meta.do_clone == 1) {
            ig_dprsr_md.mirror_type = MIRROR_DRAIN_PROBE;
            meta.mirror_session = DRAIN_PROBE_SESSION;
            meta.probe_mirror.setValid();
            meta.probe_mirror.kind = BRIDGED_KIND_DRAIN_PROBE;
        }
        hdr.bridged.setValid();
        hdr.bridged.kind = BRIDGED_KIND_NORMAL;
        hdr.bridged._pad0 = 0;
        hdr.bridged.ingress_port = ig_intr_md.ingress_port;
        hdr.bridged.routed = meta.routed;
        hdr.bridged.to_host = meta.to_host;
        hdr.bridged.version = meta.version;
        hdr.bridged.drain_probe = meta.drain_probe;
        hdr.bridged._pad1 = 0;
        hdr.bridged.hold_pass = meta.hold_pass;
        hdr.bridged.lit = 0;
        if (meta.slot_decision == SLOT_LIT) {
            hdr.bridged.lit = 1;
        }
        hdr.bridged._pad2 = 0;
        hdr.bridged.held_path_id = meta.path_id;  // = held_path_id for a held packet (SlotHold)
        hdr.bridged.hold_since = meta.hold_since;
        hdr.bridged.decided = meta.now;
        hdr.bridged.fresh_us = meta.hold_fresh_us;
    }
}

control FabricEgress(inout fabric_headers_t hdr,
                     inout fabric_metadata_t meta,
                     in egress_intrinsic_metadata_t eg_intr_md,
                     in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
                     inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
                     inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {

    DECLARE_PORT_COUNTER(port_tx)
    DECLARE_PORT_COUNTER(port_deq)
    // Lit decisions older than the path's fresh_us when egress takes the packet (SlotHold). Counted
    // only: egress cannot send a packet back round the loop here (bmv2's v1model egress does), and a
    // Tofino decision is at most the traffic manager's queueing old (a held packet re-enters ingress
    // with a real timestamp), far below a guard band.
    Counter<bit<64>, bit<32>>(HOLD_PATHS, CounterType_t.PACKETS_AND_BYTES) hold_stale;
    EgressRewrite() egress_rewrite;

    apply {
        if (meta.is_clone == 0) {
            port_deq.count(eg_intr_md.egress_port);
        }
        meta.now = eg_prsr_md.global_tstamp[41:10];  // the packet-in's timestamp (ingress's is not bridged)
        if (meta.is_clone == 0 && hdr.bridged.lit == 1 && hdr.bridged.fresh_us != 0 &&
                meta.now - hdr.bridged.decided > hdr.bridged.fresh_us) {
            hold_stale.count((bit<32>) hdr.bridged.held_path_id);
        }
        if (meta.hold_pass == 1) {
            // Round the hold loop (SlotHold): back to ingress unchanged but for the mark.
            hdr.hold_mark.setValid();
            hdr.hold_mark.ether_type = hdr.ethernet.ether_type;
            hdr.hold_mark.path_id = meta.held_path_id;
            hdr.hold_mark.version = meta.version;
            hdr.hold_mark.stale = 0;  // egress only counts stale decisions here
            hdr.hold_mark._pad = 0;
            hdr.hold_mark.since = meta.hold_since;
            hdr.ethernet.ether_type = ETHERTYPE_HOLD_MARK;
        } else {
            egress_rewrite.apply(hdr, meta);
            if (meta.do_recirculate == 1) {
                // Leaves on the mirror session's (recirculation) port and comes back to ingress,
                // which knows it by the drain mark.
                hdr.drain_mark.setValid();
                hdr.drain_mark.ether_type = hdr.ethernet.ether_type;
                hdr.ethernet.ether_type = ETHERTYPE_DRAIN_MARK;
            } else {
                port_tx.count(eg_intr_md.egress_port);
            }
        }
        hdr.bridged.setInvalid();
    }
}

Pipeline(FabricIngressParser(),
         FabricIngress(),
         FabricIngressDeparser(),
         FabricEgressParser(),
         FabricEgress(),
         FabricEgressDeparser()) pipe;

Switch(pipe) main;
