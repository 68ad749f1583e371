// parity.p4: a v1model program that writes what the target shows it into the packet, so the same
// p4c JSON can be run on simple_switch_grpc and on p4sim-switch and their answers compared
// (p4sim/tests/test_switch_parity.py). Regenerate parity.json / parity.p4info.txtpb with
//   p4c-bm2-ss p4sim/switch/testdata/parity.p4 -o p4sim/switch/testdata/parity.json \
//       --p4runtime-files p4sim/switch/testdata/parity.p4info.txtpb
//
// A test frame: Ethernet (ether type 0x88B7) | cmd | report | payload. `cmd.op` chooses what ingress
// does; every ingress pass and every egress pass writes its view of standard_metadata and of user
// metadata into `report` (the last pass of each kind wins), so the frame that leaves tells what the
// target did. Ports: the CPU port is 255 (packet_in / packet_out headers as in p4src/).

#include <core.p4>
#include <v1model.p4>

const bit<16> ETHERTYPE_PARITY = 0x88B7;
const bit<9> CPU_PORT = 255;

const bit<8> OP_FORWARD = 0;      // to cmd.port
const bit<8> OP_RESUBMIT = 1;     // resubmit once (field list 1), then to cmd.port
const bit<8> OP_CLONE_I2E = 2;    // clone to session cmd.arg (field list 1), original to cmd.port
const bit<8> OP_RECIRCULATE = 3;  // to cmd.port, recirculated once from egress (field list 1)
const bit<8> OP_CLONE_E2E = 4;    // to cmd.port, cloned once from egress to session cmd.arg
const bit<8> OP_MULTICAST = 5;    // to multicast group cmd.arg
const bit<8> OP_SELECT = 6;       // table `pick`: group by cmd.arg, selector input cmd.key
const bit<8> OP_PRIORITY = 7;     // to cmd.port with standard_metadata.priority = cmd.arg
const bit<8> OP_DROP = 8;         // mark_to_drop

@controller_header("packet_in")
header packet_in_t {
    bit<9> ingress_port;
    bit<7> _pad;
}

@controller_header("packet_out")
header packet_out_t {
    bit<9> egress_port;
    bit<7> _pad;
}

header ethernet_t {
    bit<48> dst;
    bit<48> src;
    bit<16> ether_type;
}

header cmd_t {
    bit<8>  op;
    bit<16> port;
    bit<16> arg;
    bit<32> key;
}

// What the target showed the program. i_*: the last ingress pass; e_*: the last egress pass.
header report_t {
    bit<8>  i_passes;          // ingress passes seen in this frame's bytes (recirculation keeps it)
    bit<16> i_ingress_port;
    bit<32> i_instance_type;
    bit<32> i_packet_length;
    bit<48> i_timestamp;       // ingress_global_timestamp
    bit<8>  i_kept;            // meta.kept (field list 1) at ingress start
    bit<8>  i_parser_mark;     // meta.parser_mark (set by the parser) at ingress start
    bit<16> i_egress_spec;     // egress_spec at ingress start
    bit<8>  e_passes;
    bit<16> e_ingress_port;
    bit<16> e_egress_port;
    bit<16> e_egress_spec;     // egress_spec at egress start
    bit<32> e_instance_type;
    bit<32> e_packet_length;
    bit<48> e_ingress_timestamp;
    bit<48> e_timestamp;       // egress_global_timestamp
    bit<32> e_enq_timestamp;
    bit<32> e_deq_timedelta;
    bit<32> e_enq_qdepth;
    bit<32> e_deq_qdepth;
    bit<16> e_egress_rid;
    bit<16> e_mcast_grp;
    bit<8>  e_kept;            // meta.kept (field list 1)
    bit<8>  e_parser_mark;     // meta.parser_mark
    bit<8>  e_ingress_mark;    // meta.ingress_mark (set in ingress, not in a field list)
    bit<8>  e_member;          // the `pick` member's data (0: none ran)
    bit<8>  e_priority;
}

struct headers_t {
    packet_out_t packet_out;
    packet_in_t  packet_in;
    ethernet_t   ethernet;
    cmd_t        cmd;
    report_t     report;
}

struct metadata_t {
    @field_list(1)
    bit<8> kept;
    bit<8> parser_mark;
    bit<8> ingress_mark;
    bit<8> member;
    bit<9> in_port;
}

parser ParityParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                    inout standard_metadata_t standard_metadata) {
    state start {
        meta.parser_mark = 7;
        transition select(standard_metadata.ingress_port) {
            CPU_PORT: parse_packet_out;
            default: parse_ethernet;
        }
    }

    state parse_packet_out {
        packet.extract(hdr.packet_out);
        transition parse_ethernet;
    }

    state parse_ethernet {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_PARITY: parse_cmd;
            default: accept;
        }
    }

    state parse_cmd {
        packet.extract(hdr.cmd);
        packet.extract(hdr.report);
        transition accept;
    }
}

control ParityVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control ParityIngress(inout headers_t hdr, inout metadata_t meta,
                      inout standard_metadata_t standard_metadata) {

    counter(8, CounterType.packets_and_bytes) ingress_by_instance;

    action_selector(HashAlgorithm.identity, 64, 32) pick_selector;

    action set_member(bit<8> member) {
        meta.member = member;
    }

    // Selector groups: the member chosen for selector input cmd.key.
    table pick {
        key = {
            hdr.cmd.arg: exact @name("group");
            hdr.cmd.key: selector;
        }
        actions = {
            set_member;
        }
        implementation = pick_selector;
        size = 64;
    }

    apply {
        ingress_by_instance.count((bit<32>) standard_metadata.instance_type);
        if (hdr.packet_out.isValid()) {
            standard_metadata.egress_spec = hdr.packet_out.egress_port;
            hdr.packet_out.setInvalid();
            exit;
        }
        if (!hdr.cmd.isValid()) {
            mark_to_drop(standard_metadata);
            exit;
        }
        hdr.report.i_passes = hdr.report.i_passes + 1;
        hdr.report.i_ingress_port = (bit<16>) standard_metadata.ingress_port;
        hdr.report.i_instance_type = standard_metadata.instance_type;
        hdr.report.i_packet_length = standard_metadata.packet_length;
        hdr.report.i_timestamp = standard_metadata.ingress_global_timestamp;
        hdr.report.i_kept = meta.kept;
        hdr.report.i_parser_mark = meta.parser_mark;
        hdr.report.i_egress_spec = (bit<16>) standard_metadata.egress_spec;
        meta.ingress_mark = 9;
        meta.in_port = standard_metadata.ingress_port;
        standard_metadata.egress_spec = (bit<9>) hdr.cmd.port;
        if (hdr.cmd.op == OP_RESUBMIT) {
            if (meta.kept == 0) {
                meta.kept = 1;
                resubmit_preserving_field_list(1);
            }
        } else if (hdr.cmd.op == OP_CLONE_I2E) {
            meta.kept = 5;
            clone_preserving_field_list(CloneType.I2E, (bit<32>) hdr.cmd.arg, 1);
        } else if (hdr.cmd.op == OP_MULTICAST) {
            standard_metadata.mcast_grp = hdr.cmd.arg;
        } else if (hdr.cmd.op == OP_SELECT) {
            pick.apply();
        } else if (hdr.cmd.op == OP_PRIORITY) {
            standard_metadata.priority = (bit<3>) hdr.cmd.arg;
        } else if (hdr.cmd.op == OP_DROP) {
            mark_to_drop(standard_metadata);
        }
    }
}

control ParityEgress(inout headers_t hdr, inout metadata_t meta,
                     inout standard_metadata_t standard_metadata) {

    counter(8, CounterType.packets_and_bytes) egress_by_instance;

    apply {
        bit<16> spec_at_start = (bit<16>) standard_metadata.egress_spec;
        egress_by_instance.count((bit<32>) standard_metadata.instance_type);
        if (standard_metadata.egress_port == CPU_PORT) {
            hdr.packet_in.setValid();
            hdr.packet_in.ingress_port = standard_metadata.ingress_port;
            hdr.packet_in._pad = 0;
        }
        if (hdr.report.isValid()) {
            hdr.report.e_passes = hdr.report.e_passes + 1;
            hdr.report.e_ingress_port = (bit<16>) standard_metadata.ingress_port;
            hdr.report.e_egress_port = (bit<16>) standard_metadata.egress_port;
            hdr.report.e_egress_spec = spec_at_start;
            hdr.report.e_instance_type = standard_metadata.instance_type;
            hdr.report.e_packet_length = standard_metadata.packet_length;
            hdr.report.e_ingress_timestamp = standard_metadata.ingress_global_timestamp;
            hdr.report.e_timestamp = standard_metadata.egress_global_timestamp;
            hdr.report.e_enq_timestamp = standard_metadata.enq_timestamp;
            hdr.report.e_deq_timedelta = standard_metadata.deq_timedelta;
            hdr.report.e_enq_qdepth = (bit<32>) standard_metadata.enq_qdepth;
            hdr.report.e_deq_qdepth = (bit<32>) standard_metadata.deq_qdepth;
            hdr.report.e_egress_rid = standard_metadata.egress_rid;
            hdr.report.e_mcast_grp = standard_metadata.mcast_grp;
            hdr.report.e_kept = meta.kept;
            hdr.report.e_parser_mark = meta.parser_mark;
            hdr.report.e_ingress_mark = meta.ingress_mark;
            hdr.report.e_member = meta.member;
            hdr.report.e_priority = (bit<8>) standard_metadata.priority;
            if (hdr.cmd.op == OP_RECIRCULATE && meta.kept == 0) {
                meta.kept = 3;
                recirculate_preserving_field_list(1);
            } else if (hdr.cmd.op == OP_CLONE_E2E && standard_metadata.instance_type == 0) {
                meta.kept = 4;
                clone_preserving_field_list(CloneType.E2E, (bit<32>) hdr.cmd.arg, 1);
            }
        }
    }
}

control ParityComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control ParityDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.packet_in);
        packet.emit(hdr.ethernet);
        packet.emit(hdr.cmd);
        packet.emit(hdr.report);
    }
}

V1Switch(ParityParser(), ParityVerifyChecksum(), ParityIngress(), ParityEgress(),
         ParityComputeChecksum(), ParityDeparser()) main;
