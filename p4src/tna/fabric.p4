// fabric.p4 for Tofino (TNA: `tna` for Tofino 1, `t2na` for Tofino 2): the same forwarding logic
// (include/fabric/) and control-plane names as ../fabric.p4 (v1model); the Tofino primitives are in
// include/tna/. Target differences: p4src/README.md ("v1model and TNA").
//   bf-p4c --target tofino  --arch tna  -I p4src p4src/tna/fabric.p4 --p4runtime-files fabric.p4info.txtpb
//   bf-p4c --target tofino2 --arch t2na -Xp4c=--no-clot -I p4src p4src/tna/fabric.p4 ...
// `make tofino-check` compiles it for both and prints its resources.
//
// A manifest, as ../fabric.p4: the controls are declared here and handed to the ones that apply
// them (include/fabric/control_types.p4), so the P4 names are these instances'. Ingress runs them flat.
//
//  ingress                                                              egress
//  -------                                                              ------
//  ingress_in: time, length (identity hashes); port_rx                  egress_in: bridged ingress
//  dispatch: forged hold mark? --yes--> drop                              port, time; port_deq
//              | no                                                     hold_loop_out:
//            packet-out? --yes--> egress port = packet_out.egress_port    lit: SlotEgress (day budget
//              | no                                                       on the real departure,
//            held? --yes--> its path kept, to the schedule                freshness): over / stale:
//              | no                                                       hold mark, mirror to the
//            probe? --yes--> CPU                                          recirculation port
//              | no                                                     hold pass: hold mark, back
//            not IPv4? --yes--> drop                                      to ingress (HOLD_RECIRC_PORT)
//              | IPv4                                                   else egress_rewrite: packet_in,
//            acl --hit--> forward / drop / CPU                            port_mac, tag push/strip;
//  routing (route, TTL, version) -> clock (ScheduleClock) ->              port_tx, or the drain probe
//  slot_route (lit: the slot's uplink; light_end for egress) ->           copy's drain mark (mirror
//  flowlet (RegisterActions) -> path_select -> failover ->                session on a recirculation
//  slot_hold (unlit: hold, include/tna/slot_hold.p4)                      port)
//  ingress_out: marks off; resubmit (port down: the other version),     egress_out: bridged headers off
//    drop, recirculation port or egress port; port_enq; mirror (drain
//    probe); bridged metadata

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
#include "../include/fabric/dispatch.p4"
#include "../include/tna/intrinsics.p4"

control FabricIngress(inout fabric_headers_t hdr,
                      inout fabric_metadata_t meta,
                      in ingress_intrinsic_metadata_t ig_intr_md,
                      in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                      inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                      inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {

    DECLARE_PORT_COUNTER(port_rx)
    DECLARE_PORT_COUNTER(port_enq)  // to the traffic manager; port_enq - port_deq: its drops
    FabricIngressIn(port_rx) ingress_in;
    Acl() acl;
    Dispatch(acl) dispatch;
    Routing() routing;
    Flowlet() flowlet;
    PathSelect() path_select;
    Failover() failover;
    ScheduleClock() clock;
    SlotRoute() slot_route;
    SlotHold() slot_hold;
    FabricIngressOut(port_enq) ingress_out;

    // Flat: every control is one step after another, each guarding itself (its blocks too). Tofino 1
    // has no long branches: it places all of a block's tables before anything that follows the block,
    // so a block that holds a chain holds every other part of ingress back for as many stages.
    apply {
        ingress_in.apply(hdr, meta, ig_intr_md, ig_prsr_md);
        dispatch.apply(hdr, meta);
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
        ingress_out.apply(hdr, meta, ig_intr_md, ig_prsr_md, ig_dprsr_md, ig_tm_md);
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
    SlotEgress() slot_egress;
    EgressRewrite() egress_rewrite;
    FabricEgressIn(port_deq) egress_in;
    HoldLoopOut(slot_egress, port_tx, egress_rewrite) hold_loop_out;
    FabricEgressOut() egress_out;

    apply {
        egress_in.apply(hdr, meta, eg_intr_md, eg_prsr_md);
        hold_loop_out.apply(hdr, meta, eg_intr_md, eg_dprsr_md);
        egress_out.apply(hdr);
    }
}

Pipeline(FabricIngressParser(),
         FabricIngress(),
         FabricIngressDeparser(),
         FabricEgressParser(),
         FabricEgress(),
         FabricEgressDeparser()) pipe;

Switch(pipe) main;
