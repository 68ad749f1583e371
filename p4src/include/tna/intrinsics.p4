// fabric.p4's intrinsic metadata (TNA): the time and length in at the start of ingress and egress;
// at the end of ingress the marks off, the decisions in Tofino's primitives and the bridged metadata
// for egress; at the end of egress the bridged headers off. The forwarding controls read and write
// fabric_metadata_t only (include/metadata.p4); the port counters are the top file's (their P4 names).
#ifndef P4SRC_INCLUDE_TNA_INTRINSICS_P4_
#define P4SRC_INCLUDE_TNA_INTRINSICS_P4_

#include "glue.p4"
#include "../defines.p4"
#include "../headers.p4"
#include "../metadata.p4"

// The time, and the packet's length (Tofino's ingress has none: the frame's, from IPv4, for the
// gate's packets), each from an identity hash into a container of its own (glue: NOW_UNITS, IP_LEN);
// port_rx, which a resubmitted or held copy passed already.
control FabricIngressIn(inout fabric_headers_t hdr, inout fabric_metadata_t meta,
                        in ingress_intrinsic_metadata_t ig_intr_md,
                        in ingress_intrinsic_metadata_from_parser_t ig_prsr_md)
                       (Counter<bit<64>, port_t> port_rx) {

    DECLARE_NOW(now_hash)
    DECLARE_NOW(sched_now_hash)
    DECLARE_NOW(hold_now_hash)
    DECLARE_IP_LEN

    STEP(now_step, meta.now = NOW_UNITS(now_hash, ig_prsr_md.global_tstamp))
    STEP(sched_now_step, meta.sched_now = NOW_UNITS(sched_now_hash, ig_prsr_md.global_tstamp))
    STEP(hold_now_step, meta.hold_now = NOW_UNITS(hold_now_hash, ig_prsr_md.global_tstamp))
    STEP(ip_len_step, meta.ip_len = IP_LEN())
    STEP(pkt_len_step, meta.pkt_len = (bit<32>) meta.ip_len + 14)

    apply {
        now_step.apply();
        sched_now_step.apply();
        hold_now_step.apply();
        ip_len_step.apply();
        pkt_len_step.apply();
        if (meta.failover == 0 && meta.drain_probe == 0 && meta.held == 0) {
            port_rx.count(ig_intr_md.ingress_port);  // a resubmitted copy was counted
        }
    }
}

// The end of ingress. A drain probe's or a held packet's mark off (Dispatch's probe check read the
// ether type the parser found: a marked frame is no probe). The decisions, in Tofino's primitives
// (SlotHold's among them: round the loop, or gone). Failover's on port_up, as Failover decides, not on
// what its actions write: in one stage with them (RESUBMIT_FAILOVER). A path whose port is dead
// resubmits the packet with the other version (the original goes nowhere), unless it is that copy:
// dropped. The drain probe's mirror. Then what egress needs of ingress, bridged: the flags and times
// through identity hashes (BRIDGED_FLAGS, BRIDGED_SINCE, BRIDGED_LIGHT_END), and when the light of a lit
// packet's uplink ends: the range's end - the phase + now + the light after the range (SlotRoute's
// slot_more, decided last), an operation a step, for every packet.
control FabricIngressOut(inout fabric_headers_t hdr, inout fabric_metadata_t meta,
                         in ingress_intrinsic_metadata_t ig_intr_md,
                         in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                         inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                         inout ingress_intrinsic_metadata_for_tm_t ig_tm_md)
                        (Counter<bit<64>, port_t> port_enq) {

    DECLARE_NOW(decided_hash)
    DECLARE_BRIDGED_FLAGS

    STEP(light_base_step, meta.light_end = meta.sched.end - meta.sched.phase)
    STEP(light_now_step, meta.light_end = meta.light_end + meta.sched_now)
    STEP(light_end_step, meta.light_end = meta.light_end + meta.slot_more)
    STEP(bridge_since_step, hdr.bridged_slot.hold_since = BRIDGED_SINCE())
    STEP(bridge_decided_step, hdr.bridged_slot.decided = NOW_UNITS(decided_hash, ig_prsr_md.global_tstamp))
    STEP(bridge_light_step, hdr.bridged_slot.light_end = BRIDGED_LIGHT_END())
    STEP(bridge_flags_step, hdr.bridged.flags = BRIDGED_FLAGS())

    apply {
        if (hdr.drain_mark.isValid()) {
            hdr.ethernet.ether_type = hdr.drain_mark.ether_type;
            hdr.drain_mark.setInvalid();
        }
        if (hdr.hold_mark.isValid()) {
            hdr.ethernet.ether_type = hdr.hold_mark.ether_type;
            hdr.hold_mark.setInvalid();
        }
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

// The ingress port for a packet-in (from the bridged header), the time (the packet-in's timestamp:
// ingress's is not bridged) and the length; port_deq counts what left the port's queue (not the
// mirrored copies). bf-p4c lays the bridged port out as ingress's intrinsic port (bits 0..8),
// packet_in_t has it at bits 7..15 next to constants, and an ALU takes a rotated field only alone: a
// table of its own keeps this move apart from the packet-in's.
control FabricEgressIn(inout fabric_headers_t hdr, inout fabric_metadata_t meta,
                       in egress_intrinsic_metadata_t eg_intr_md,
                       in egress_intrinsic_metadata_from_parser_t eg_prsr_md)
                      (Counter<bit<64>, port_t> port_deq) {

    DECLARE_NOW(now_hash)

    STEP(ingress_port_step, meta.ingress_port = hdr.bridged.ingress_port)

    apply {
        ingress_port_step.apply();
        meta.now = NOW_UNITS(now_hash, eg_prsr_md.global_tstamp);
        meta.pkt_len = (bit<32>) eg_intr_md.pkt_length;
        if (meta.is_clone == 0) {
            port_deq.count(eg_intr_md.egress_port);
        }
    }
}

// The bridged headers off: egress is done with them.
control FabricEgressOut(inout fabric_headers_t hdr) {

    apply {
        hdr.bridged.setInvalid();
        hdr.bridged_slot.setInvalid();
    }
}

#endif  // P4SRC_INCLUDE_TNA_INTRINSICS_P4_
