// fabric.p4 for Tofino (TNA: `tna` for Tofino 1, `t2na` for Tofino 2): the same forwarding logic
// (include/fabric/) and control-plane names as ../fabric.p4 (v1model); the Tofino primitives are in
// include/tna/. Target differences: p4src/README.md ("v1model and TNA").
//   bf-p4c --target tofino  --arch tna  -I p4src p4src/tna/fabric.p4 --p4runtime-files fabric.p4info.txtpb
//   bf-p4c --target tofino2 --arch t2na -Xp4c=--no-clot -I p4src p4src/tna/fabric.p4 ...
// `make tofino-check` compiles it for both and prints its resources.
//
//  ingress                                                               egress
//  -------                                                               ------
//  drain / hold mark (back from egress) removed                          bridged metadata / mirror header
//  port_rx -> packet-out? --yes--> egress port = packet_out.egress_port   CPU port: packet_in header
//               | no                                                      lit: SlotEgress (day budget on
//             held? --yes--> its path kept, to the schedule                 the real departure, freshness):
//               | no                                                        over / stale: hold mark, mirror
//             probe? --yes--> CPU                                           to the recirculation port
//               | no                                                      routed:   port_mac, tag push/strip
//             acl --hit--> forward / drop / CPU                           port_tx
//               | miss                                                    drain probe copy (mirror session
//             routing (route, TTL, version) -> flowlet (RegisterActions)    on a recirculation port):
//               -> schedule: ScheduleClock -> slot_path (lit: the slot's      rewrite, drain mark
//                  uplink; light_end for egress) | unlit: hold (SlotHold,  hold pass: hold mark, back to
//                  include/tna/slot_hold.p4) | electrical: path_select       ingress (HOLD_RECIRC_PORT)
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
#include "../include/tna/slot_egress.p4"

control FabricIngress(inout fabric_headers_t hdr,
                      inout fabric_metadata_t meta,
                      in ingress_intrinsic_metadata_t ig_intr_md,
                      in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                      inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                      inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {

    DECLARE_NOW(now_hash)
    DECLARE_NOW(sched_now_hash)
    DECLARE_NOW(hold_now_hash)
    DECLARE_NOW(decided_hash)
    DECLARE_IP_LEN
    DECLARE_BRIDGED_FLAGS
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


    // The time, and the packet's length (Tofino's ingress has none: the frame's, from IPv4, for the
    // gate's packets), each from an identity hash into a container of its own (glue: NOW_UNITS,
    // IP_LEN); the bridged times likewise (BRIDGED_SINCE, BRIDGED_LIGHT_END).
    STEP(now_step, meta.now = NOW_UNITS(now_hash, ig_prsr_md.global_tstamp))
    STEP(sched_now_step, meta.sched_now = NOW_UNITS(sched_now_hash, ig_prsr_md.global_tstamp))
    STEP(hold_now_step, meta.hold_now = NOW_UNITS(hold_now_hash, ig_prsr_md.global_tstamp))
    STEP(ip_len_step, meta.ip_len = IP_LEN())
    STEP(pkt_len_step, meta.pkt_len = (bit<32>) meta.ip_len + 14)
    // When the light of a lit packet's uplink ends: the range's end - the phase + now + the light
    // after the range (SlotRoute's slot_more, decided last), an operation a step; for every packet.
    STEP(light_base_step, meta.light_end = meta.sched.end - meta.sched.phase)
    STEP(light_now_step, meta.light_end = meta.light_end + meta.sched_now)
    STEP(light_end_step, meta.light_end = meta.light_end + meta.slot_more)
    STEP(bridge_since_step, hdr.bridged_slot.hold_since = BRIDGED_SINCE())
    STEP(bridge_decided_step, hdr.bridged_slot.decided = NOW_UNITS(decided_hash, ig_prsr_md.global_tstamp))
    STEP(bridge_light_step, hdr.bridged_slot.light_end = BRIDGED_LIGHT_END())
    STEP(bridge_flags_step, hdr.bridged.flags = BRIDGED_FLAGS())

    // Flat: every block below is one step, each control's too. Tofino 1 has no long branches: it
    // places all of a block's tables before anything that follows the block, so a block that
    // holds a chain holds every other part of ingress back for as many stages.
    apply {
        now_step.apply();
        sched_now_step.apply();
        hold_now_step.apply();
        ip_len_step.apply();
        pkt_len_step.apply();
        if (meta.failover == 0 && meta.drain_probe == 0 && meta.held == 0) {
            port_rx.count(ig_intr_md.ingress_port);  // a resubmitted copy was counted
        }
        // What the packet is, from what the parser found alone (stage 0).
        if (hdr.hold_mark.isValid() && ig_intr_md.ingress_port != HOLD_RECIRC_PORT) {
            meta.drop = 1;  // a mark that did not come round the loop: no one holds by request
        } else if (hdr.packet_out.isValid()) {
            meta.egress_port = hdr.packet_out.egress_port;
            hdr.packet_out.setInvalid();
            meta.bypass = 1;
        } else if (meta.held == 1) {
            // Back from the hold loop (SlotHold; the parser took its held state from the mark):
            // routed (TTL done) on its first pass, its path kept.
            meta.routed = 1;
            meta.has_path = 1;
            meta.path_id = meta.held_path_id;
            meta.version = meta.held_version;
        } else if (hdr.ethernet.isValid() && hdr.ethernet.ether_type == ETHERTYPE_PROBE) {
            meta.egress_port = CPU_PORT;
            meta.bypass = 1;
        } else if (!hdr.ipv4.isValid()) {
            meta.drop = 1;
        } else {
            meta.routable = 1;
            acl.apply(hdr, meta);
        }
        routing.apply(hdr, meta);
        // Every packet's slot of the schedule, from its arrival alone, so the slot is ready when
        // routing has found a path (the clock runs in the stages routing and the flowlet gate
        // take); only scheduled paths use it.
        clock.apply(meta.sched_now, meta.sched);
        slot_route.apply(hdr, meta);  // a routed packet with a path, or a held one
        flowlet.apply(hdr, meta);     // an ACK to a host, or a routed packet with a path
        path_select.apply(hdr, meta); // the path table when SlotRoute leaves the packet to it
        failover.apply(hdr, meta);    // only if path_select chose a next hop or group
        slot_hold.apply(meta);
        // A drain probe's or a held packet's mark off (the probe check above read the ether type
        // the parser found: a marked frame is no probe).
        if (hdr.drain_mark.isValid()) {
            hdr.ethernet.ether_type = hdr.drain_mark.ether_type;
            hdr.drain_mark.setInvalid();
        }
        if (hdr.hold_mark.isValid()) {
            hdr.ethernet.ether_type = hdr.hold_mark.ether_type;
            hdr.hold_mark.setInvalid();
        }
        // The decisions, in Tofino's primitives (SlotHold's among them: round the loop, or gone).
        // Failover's on port_up, as Failover decides, not on what its actions write: in one stage
        // with them (RESUBMIT_FAILOVER). A path whose port is dead resubmits the packet with the
        // other version (the original goes nowhere), unless it is that copy: dropped.
        if ((meta.next_hop_set == 1 || meta.multipath != MULTIPATH_NONE) && meta.port_up != LIVENESS_UP &&
                meta.failover == 0) {
            ig_dprsr_md.resubmit_type = RESUBMIT_TYPE_FAILOVER;
        } else if ((meta.next_hop_set == 1 || meta.multipath != MULTIPATH_NONE) && meta.port_up != LIVENESS_UP) {
            ig_dprsr_md.drop_ctl = 1;
        } else if (meta.probe_out == 1 && meta.port_up != LIVENESS_UP) {
            ig_dprsr_md.drop_ctl = 1;  // a probe by a port not live (Failover)
        } else if (meta.drop == 1 || meta.hold_drop == 1) {
            ig_dprsr_md.drop_ctl = 1;
        } else if (meta.hold_pass == 1) {
            ig_tm_md.ucast_egress_port = HOLD_RECIRC_PORT;
            port_enq.count(HOLD_RECIRC_PORT);
        } else {
            ig_tm_md.ucast_egress_port = meta.egress_port;
            port_enq.count(meta.egress_port);
        }
        if (meta.do_clone == 1) {
            ig_dprsr_md.mirror_type = MIRROR_DRAIN_PROBE;
            meta.mirror_session = DRAIN_PROBE_SESSION;
            meta.mirror.setValid();
            meta.mirror.kind = BRIDGED_KIND_DRAIN_PROBE;
            meta.mirror.version = (version_t) meta.flow_version;  // bit 0: the flow's version
            meta.mirror._pad = 0;
        }
        hdr.bridged.ingress_port = ig_intr_md.ingress_port;
        bridge_flags_step.apply();
        hdr.bridged_slot.held_path_id = meta.path_id;  // = held_path_id for a held packet (SlotHold)
        bridge_since_step.apply();
        bridge_decided_step.apply();
        light_base_step.apply();
        light_now_step.apply();
        light_end_step.apply();
        bridge_light_step.apply();
        hdr.bridged_slot.fresh_us = meta.hold_fresh_us;
        hdr.bridged_slot.byte_ns = meta.slot_byte_ns;
    }
}

control FabricEgress(inout fabric_headers_t hdr,
                     inout fabric_metadata_t meta,
                     in egress_intrinsic_metadata_t eg_intr_md,
                     in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
                     inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
                     inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {

    DECLARE_NOW(now_hash)
    DECLARE_PORT_COUNTER(port_tx)
    DECLARE_PORT_COUNTER(port_deq)
    SlotEgress() slot_egress;
    EgressRewrite() egress_rewrite;

    // Round the hold loop (SlotHold), or sent back to it: unchanged but for the mark, which carries
    // the held state (Tofino keeps no metadata round the loop).
    action mark_held(bit<1> stale) {
        hdr.hold_mark.setValid();
        hdr.hold_mark.ether_type = hdr.ethernet.ether_type;
        hdr.hold_mark.path_id = hdr.bridged_slot.held_path_id;
        hdr.hold_mark.version = meta.version;
        hdr.hold_mark.stale = stale;
        hdr.hold_mark._pad = 0;
        hdr.hold_mark.since = hdr.bridged_slot.hold_since;
        hdr.ethernet.ether_type = ETHERTYPE_HOLD_MARK;
    }

    // The ingress port for a packet-in: bf-p4c lays the bridged field out as ingress's intrinsic
    // port (bits 0..8), packet_in_t has it at bits 7..15 next to constants, and an ALU takes a
    // rotated field only alone. A table of its own keeps this move apart from the packet-in's.

    STEP(ingress_port_step, meta.ingress_port = hdr.bridged.ingress_port)

    apply {
        ingress_port_step.apply();
        meta.now = NOW_UNITS(now_hash, eg_prsr_md.global_tstamp);  // the packet-in's timestamp (ingress's is not bridged)
        meta.pkt_len = (bit<32>) eg_intr_md.pkt_length;
        if (meta.is_clone == 0) {
            port_deq.count(eg_intr_md.egress_port);
        }
        if (meta.hold_return == 1) {
            // A lit packet sent back (the mirrored copy, marked): out of the recirculation port as it is.
        } else {
            if (meta.is_clone == 0 && BRIDGED_SLOT_DECISION(hdr.bridged.flags) == SLOT_LIT) {
                slot_egress.apply(hdr, meta);
            }
            if (meta.send_back == 1) {
                // Not out of the uplink: back round the hold loop, where ingress decides again (a
                // copy to the recirculation port; the original goes nowhere).
                mark_held(1);
                if (BRIDGED_HELD(hdr.bridged.flags) == 0) {
                    hdr.hold_mark.since = meta.now;  // never held: held from now
                }
                eg_dprsr_md.mirror_type = MIRROR_HOLD_RETURN;
                meta.mirror_session = DRAIN_PROBE_SESSION;
                meta.mirror.setValid();
                meta.mirror.kind = BRIDGED_KIND_HOLD_RETURN;
                meta.mirror.version = 0;
                meta.mirror._pad = 0;
                eg_dprsr_md.drop_ctl = 1;
            } else if (meta.hold_pass == 1) {
                mark_held(0);
            } else {
                egress_rewrite.apply(hdr, meta);
                if (meta.do_recirculate == 1) {
                    // The drain probe: the probe's own ether type follows a drain mark, so ingress
                    // knows it when the mirror session's (recirculation) port brings it back; the TCP
                    // length of its pseudo-header is a field (a deparser checksum takes no constant
                    // but 0).
                    meta.probe_tcp_len = 20;
                    hdr.drain_mark.setValid();
                    hdr.drain_mark.ether_type = hdr.ethernet.ether_type;
                    hdr.drain_mark.version = meta.mirror.version;
                    hdr.drain_mark._pad = 0;
                    hdr.ethernet.ether_type = ETHERTYPE_DRAIN_MARK;
                } else {
                    port_tx.count(eg_intr_md.egress_port);
                }
            }
        }
        hdr.bridged.setInvalid();
        hdr.bridged_slot.setInvalid();
    }
}

Pipeline(FabricIngressParser(),
         FabricIngress(),
         FabricIngressDeparser(),
         FabricEgressParser(),
         FabricEgress(),
         FabricEgressDeparser()) pipe;

Switch(pipe) main;
