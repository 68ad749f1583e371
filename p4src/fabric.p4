// fabric.p4: the forwarding program of every electrical switch of hitless (v1model).
// Control-plane contract: p4src/README.md. Static, ECMP and spray forwarding, chosen per route
// at run time; MBB path versions carried in a path tag; fast failover; probes; counters (port_enq -
// port_deq: queue drops).
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
//               | ecmp / spray                                            hold pass: hold mark, out of HOLD_OUT_PORT
//             ecmp_group (5-tuple + hash_config salt) | spray_group (random / round robin)
//               |                                                         stale lit decision: recirculate (SlotHold)
//             schedule (a path through the OCS, slot_policy hit): ScheduleClock -> slot,
//               | slot_path (path_id, slot) --lit--> the slot's uplink, dmac
//               | unlit: hold (SlotHold: out of HOLD_OUT_PORT, back on HOLD_IN_PORT, decided again;
//               |   a stale one recirculated: round the loop undecided) | electrical: go on
//             failover: port_liveness: port down -> resubmit once with the other version
//  (a held packet back from the hold loop (its mark removed) skips acl, routing and flowlet: its
//   route is kept)
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

control FabricIngress(inout fabric_headers_t hdr,
                      inout fabric_metadata_t meta,
                      inout standard_metadata_t standard_metadata) {

    counter(PORT_COUNTER_SIZE, CounterType.packets_and_bytes) port_rx;
    // Handed to the egress queue of a port; port_deq counts what egress took out of it. The
    // difference is what the queue dropped (bmv2: 64 frames a port, full when the switch stalls).
    counter(PORT_COUNTER_SIZE, CounterType.packets_and_bytes) port_enq;
    Acl() acl;
    Routing() routing;
    Flowlet() flowlet;
    PathSelect() path_select;
    Failover() failover;
    ScheduleClock() clock;
    SlotRoute() slot_route;
    register<bit<32>>(HOLD_PATHS) hold_depth;  // SlotHold's: packets of each path in the hold loop
    SlotHold(hold_depth) slot_hold;

    apply {
        meta.now = standard_metadata.ingress_global_timestamp;
        meta.pkt_len = standard_metadata.packet_length;
        meta.slot_depart = meta.now;  // a lit decision's freshness counts from here (UplinkClock may move it)
        bool looped = hdr.hold_mark.isValid();
        if (looped) {
            // Back from the hold loop (SlotHold): the parser took its held state from the mark.
            hdr.ethernet.ether_type = hdr.hold_mark.ether_type;
            hdr.hold_mark.setInvalid();
            if (standard_metadata.ingress_port != HOLD_IN_PORT) {
                meta.drop = 1;  // a mark that did not come round the loop: no one holds by request
            }
        }
        if (meta.failover == 0 && meta.drain_probe == 0 && meta.held == 0) {
            port_rx.count((bit<32>) standard_metadata.ingress_port);  // a resubmitted copy was counted
        }
        bool scheduled = false;
        if (meta.drop == 1) {
            // the forged hold mark above: nothing more
        } else if (hdr.packet_out.isValid()) {
            meta.egress_port = hdr.packet_out.egress_port;
            hdr.packet_out.setInvalid();
            meta.bypass = 1;
            if (hdr.ethernet.isValid() && hdr.ethernet.ether_type == ETHERTYPE_PROBE &&
                    meta.egress_port != CPU_PORT) {
                meta.probe_out = 1;  // Failover: out only while the port is live
            }
        } else if (meta.held == 1 && !looped) {
            // Recirculated by egress, its lit decision stale (SlotHold): it has no timestamp of its
            // own (0), so it goes round the loop undecided and decides when back (the mark's stale).
            meta.hold_pass = 1;
            meta.egress_port = HOLD_OUT_PORT;
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
            meta.routable = 1;
            acl.apply(hdr, meta);
            if (meta.acl_hit == 0) {
                routing.apply(hdr, meta);
                flowlet.apply(hdr, meta);
                scheduled = meta.has_path == 1;
            }
        }
        if (scheduled) {
            hold_depth.read(meta.hold_queued, (bit<32>) meta.path_id);  // SlotRoute: join the held
            clock.apply(meta.now, meta.sched);
            slot_route.apply(hdr, meta);
            slot_hold.apply(meta);
            if (meta.slot_decision == SLOT_PATH) {
                path_select.apply(hdr, meta);
            }
        }
        if ((scheduled && meta.slot_decision == SLOT_PATH) || meta.probe_out == 1) {
            failover.apply(hdr, meta);
        }
        // The decisions: drop or the egress port (resubmit and clone were called where decided).
        if (meta.drop == 1) {
            mark_to_drop(standard_metadata);
        } else {
            standard_metadata.egress_spec = meta.egress_port;
            port_enq.count((bit<32>) meta.egress_port);
        }
    }
}

control FabricEgress(inout fabric_headers_t hdr,
                     inout fabric_metadata_t meta,
                     inout standard_metadata_t standard_metadata) {

    counter(PORT_COUNTER_SIZE, CounterType.packets_and_bytes) port_tx;
    counter(PORT_COUNTER_SIZE, CounterType.packets_and_bytes) port_deq;  // out of the queue (not clones)
    counter(HOLD_PATHS, CounterType.packets_and_bytes) hold_stale;  // lit decisions found stale (SlotHold)
    EgressRewrite() egress_rewrite;

    apply {
        meta.egress_port = standard_metadata.egress_port;
        meta.is_clone = 0;
        if (standard_metadata.instance_type == INSTANCE_TYPE_INGRESS_CLONE) {
            meta.is_clone = 1;
        } else {
            port_deq.count((bit<32>) standard_metadata.egress_port);
        }
        // Stale: egress takes it more than fresh_us after its uplink was to start sending it (its
        // decision's time, or later by the backlog the day budget counted: a packet at the back of
        // a burst is not stale for waiting behind the burst, which the budget allowed for).
        bool stale = meta.slot_decision == SLOT_LIT && meta.hold_fresh_us != 0 &&
                     standard_metadata.egress_global_timestamp > meta.slot_depart + (time_t) meta.hold_fresh_us;
        if (stale) {
            // Decided lit too long ago (SlotHold's freshness): not out of the uplink, round the loop.
            hold_stale.count((bit<32>) meta.path_id);
            if (meta.held == 0) {
                meta.hold_since = meta.now;
                meta.held_path_id = meta.path_id;
                meta.held_version = meta.version;
                meta.held = 1;
            }
            meta.stale = 1;
        }
        if (stale) {
            // Not out of the uplink: back to ingress (egress cannot change the port), which sends it
            // round the hold loop.
            recirculate_preserving_field_list(FL_HOLD);
        } else if (meta.hold_pass == 1) {
            // Round the hold loop (SlotHold): out of HOLD_OUT_PORT with the mark, back on HOLD_IN_PORT.
            hdr.hold_mark.setValid();
            hdr.hold_mark.ether_type = hdr.ethernet.ether_type;
            hdr.hold_mark.path_id = meta.held_path_id;
            hdr.hold_mark.version = meta.held_version;
            hdr.hold_mark.stale = meta.stale;
            hdr.hold_mark._pad = 0;
            hdr.hold_mark.since = meta.hold_since;
            hdr.ethernet.ether_type = ETHERTYPE_HOLD_MARK;
        } else {
            egress_rewrite.apply(hdr, meta);
            if (meta.do_recirculate == 0) {  // the drain probe is sent back to ingress, not out
                port_tx.count((bit<32>) standard_metadata.egress_port);
            }
        }
    }
}

V1Switch(FabricParser(),
         FabricVerifyChecksum(),
         FabricIngress(),
         FabricEgress(),
         FabricComputeChecksum(),
         FabricDeparser()) main;
