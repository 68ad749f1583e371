// fabric.p4: the forwarding program of every electrical switch of hitless (v1model).
// Control-plane contract: p4src/README.md. Static, ECMP and spray forwarding, chosen per route
// at run time; MBB path versions carried in a path tag; fast failover; probes; counters (port_enq -
// port_deq: queue drops).
// A manifest: the forwarding logic is in include/fabric/ (one control per file, shared with the
// TNA program tna/fabric.p4), the v1model primitives and order in include/v1model/. The controls
// below are declared here and handed to the ones that apply them (include/fabric/control_types.p4), so the
// P4 names are these instances' (FabricIngress.routing.route); everything outside p4src/ resolves
// them by unique suffix (route).
//
//  ingress                                                        egress
//  -------                                                        ------
//  ingress_in: time, length; hold loop's entry (mark off;         egress_in: port, clone?; port_deq
//    a forged mark: drop); port_rx                                hold_loop_out:
//  dispatch: packet-out? --yes--> packet_out.egress_port            stale lit decision: hold_stale,
//              | no                                                   recirculate (ingress: round the loop)
//            held, recirculated by egress? --yes--> round the loop  hold pass: hold mark, out of
//              | no                                                   HOLD_OUT_PORT (back on HOLD_IN_PORT)
//            held, back from the loop? --yes--> its path kept      else egress_rewrite:
//              | no                                                   CPU port: packet_in header
//            probe? --yes--> CPU (packet-in with ingress port)        routed: port_mac, tag push/strip
//              | no                                                   drain probe copy: rewrite,
//            not IPv4? --yes--> drop                                    recirculate
//              | IPv4: forwarding                                     port_tx
//            acl (priority table) --hit--> forward / drop / CPU
//              | miss
//            routing: route (LPM) --to_host--> port, dmac (tag stripped in egress)
//              | set_path(path_id); TTL: drop at 0/1, else decrement
//              | version: failover copy | path tag | path_version
//            flowlet: gate (flowlet_config + registers) | drain probe: the flow's version
//                     (ACK to a held TCP flow: window 0; one segment left: drain probe)
//  scheduling (a packet with a path): ScheduleClock -> reservation (grant_path hit: seed 001's loop:
//    a granted window lights this slot; a burst ready sends a request; a grant frame sets a window)
//    -> slot_route (slot_policy hit: a path
//    through the OCS): slot_path (path_id, slot) --lit--> the slot's uplink, dmac
//      | unlit: slot_hold (out of HOLD_OUT_PORT, back on HOLD_IN_PORT, decided again) | electrical
//    path_select: path (path_id, version) --static--> port, dmac
//      | ecmp_group (5-tuple + hash_config salt) | spray_group (random / round robin)
//    failover: port_liveness: port down -> resubmit once with the other version
//  ingress_out: drop, or the egress port; port_enq
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
#include "include/schedule/clock.p4"
#include "include/v1model/uplink_clock.p4"
#include "include/fabric/slot_route.p4"
#include "include/v1model/slot_hold.p4"
#include "include/v1model/reservation_tor.p4"
#include "include/fabric/dispatch.p4"
#include "include/v1model/pipeline.p4"
#include "include/v1model/intrinsics.p4"

control FabricIngress(inout fabric_headers_t hdr,
                      inout fabric_metadata_t meta,
                      inout standard_metadata_t standard_metadata) {

    counter(PORT_COUNTER_SIZE, CounterType.packets_and_bytes) port_rx;
    // Handed to the egress queue of a port; port_deq counts what egress took out of it. The
    // difference is what the queue dropped (bmv2: 64 frames a port, full when the switch stalls).
    counter(PORT_COUNTER_SIZE, CounterType.packets_and_bytes) port_enq;
    FabricIngressIn(port_rx) ingress_in;
    Acl() acl;
    Routing() routing;
    Flowlet() flowlet;
    Forwarding(acl, routing, flowlet) forwarding;
    Dispatch(forwarding) dispatch;
    PathSelect() path_select;
    Failover() failover;
    ScheduleClock() clock;
    SlotRoute() slot_route;
    register<bit<32>>(HOLD_PATHS) hold_depth;  // SlotHold's: packets of each path in the hold loop
    SlotHold(hold_depth) slot_hold;
    Reservation() reservation;
    Scheduling(hold_depth, clock, reservation, slot_route, slot_hold, path_select, failover) scheduling;
    FabricIngressOut(port_enq) ingress_out;

    apply {
        ingress_in.apply(hdr, meta, standard_metadata);
        dispatch.apply(hdr, meta);
        scheduling.apply(hdr, meta);
        ingress_out.apply(meta, standard_metadata);
    }
}

control FabricEgress(inout fabric_headers_t hdr,
                     inout fabric_metadata_t meta,
                     inout standard_metadata_t standard_metadata) {

    counter(PORT_COUNTER_SIZE, CounterType.packets_and_bytes) port_tx;
    counter(PORT_COUNTER_SIZE, CounterType.packets_and_bytes) port_deq;  // out of the queue (not clones)
    counter(HOLD_PATHS, CounterType.packets_and_bytes) hold_stale;  // lit decisions found stale (SlotHold)
    EgressRewrite() egress_rewrite;
    FabricEgressIn(port_deq) egress_in;
    HoldLoopOut(hold_stale, port_tx, egress_rewrite) hold_loop_out;
    ReservationOut() reservation_out;

    apply {
        egress_in.apply(meta, standard_metadata);
        if (meta.is_clone == 1 && meta.resv_kind != 0) {
            reservation_out.apply(hdr, meta);  // a reservation request's copy (include/v1model/reservation_tor.p4)
        } else {
            hold_loop_out.apply(hdr, meta, standard_metadata);
        }
    }
}

V1Switch(FabricParser(),
         FabricVerifyChecksum(),
         FabricIngress(),
         FabricEgress(),
         FabricComputeChecksum(),
         FabricDeparser()) main;
