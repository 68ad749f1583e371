/* rt_basic: the small v1model program the P4Runtime server tests run (every entity kind once).
 * rt_basic.json and rt_basic.p4info.txtpb are its bmv2 JSON and P4Info, written in the shape
 * p4c-bm2-ss emits them. */
#include <core.p4>
#include <v1model.p4>

#define CPU_PORT 255

@controller_header("packet_in")
header packet_in_t { bit<9> ingress_port; bit<7> _pad; }
@controller_header("packet_out")
header packet_out_t { bit<9> egress_port; bit<7> _pad; }
header ethernet_t { bit<48> dstAddr; bit<48> srcAddr; bit<16> etherType; }
header ipv4_t {
    bit<4> version; bit<4> ihl; bit<8> diffserv; bit<16> totalLen; bit<16> identification;
    bit<3> flags; bit<13> fragOffset; bit<8> ttl; bit<8> protocol; bit<16> hdrChecksum;
    bit<32> srcAddr; bit<32> dstAddr;
}
struct learn_t { bit<48> srcAddr; bit<9> port; }
struct metadata_t { bit<16> path_id; }
struct headers_t { packet_in_t packet_in; packet_out_t packet_out; ethernet_t ethernet; ipv4_t ipv4; }

parser RtParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        transition select(standard_metadata.ingress_port) { CPU_PORT: parse_packet_out; default: parse_ethernet; }
    }
    state parse_packet_out { packet.extract(hdr.packet_out); transition parse_ethernet; }
    state parse_ethernet {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) { 0x0800: parse_ipv4; default: accept; }
    }
    state parse_ipv4 { packet.extract(hdr.ipv4); transition accept; }
}

control RtVerify(inout headers_t hdr, inout metadata_t meta) { apply { } }

control RtIngress(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t standard_metadata) {
    counter(512, CounterType.packets_and_bytes) port_rx;
    direct_counter(CounterType.packets_and_bytes) route_counter;
    meter(512, MeterType.bytes) port_meter;
    register<bit<32>>(16) scratch;
    action_selector(HashAlgorithm.crc16, 128, 16) ecmp_selector;

    action drop() { mark_to_drop(standard_metadata); }
    action set_nhop(bit<9> port, bit<48> dmac) {
        standard_metadata.egress_spec = port;
        hdr.ethernet.dstAddr = dmac;
    }
    action set_path(bit<16> path_id) { meta.path_id = path_id; }
    action to_cpu() {
        standard_metadata.egress_spec = CPU_PORT;
        hdr.packet_in.setValid();
        hdr.packet_in.ingress_port = standard_metadata.ingress_port;
    }
    action learn() { digest<learn_t>(1, {hdr.ethernet.srcAddr, standard_metadata.ingress_port}); }

    // Destination prefix to a next hop or a path (lpm, direct counter).
    table route {
        key = { hdr.ipv4.dstAddr: lpm @name("ipv4_dst"); }
        actions = { set_nhop; set_path; drop; }
        default_action = drop();
        counters = route_counter;
        size = 1024;
    }
    // ECMP over the members of a path's group.
    table ecmp {
        key = { meta.path_id: exact @name("path_id");
                hdr.ipv4.srcAddr: selector; hdr.ipv4.dstAddr: selector; }
        actions = { set_nhop; }
        implementation = ecmp_selector;
        size = 64;
    }
    // Overrides by source, port and protocol (ternary, optional, range: priorities).
    table acl {
        key = { hdr.ipv4.srcAddr: ternary @name("ipv4_src");
                standard_metadata.ingress_port: optional @name("ingress_port");
                hdr.ipv4.protocol: range @name("proto"); }
        actions = { to_cpu; drop; learn; NoAction; }
        default_action = NoAction();
        size = 256;
    }

    apply {
        port_rx.count((bit<32>)standard_metadata.ingress_port);
        if (hdr.packet_out.isValid()) {
            standard_metadata.egress_spec = hdr.packet_out.egress_port;
            hdr.packet_out.setInvalid();
        } else if (hdr.ipv4.isValid()) {
            route.apply();
            if (meta.path_id != 0) { ecmp.apply(); }
            acl.apply();
        }
    }
}

control RtEgress(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t standard_metadata) {
    apply { }
}

control RtCompute(inout headers_t hdr, inout metadata_t meta) { apply { } }

control RtDeparser(packet_out packet, in headers_t hdr) {
    apply { packet.emit(hdr.packet_in); packet.emit(hdr.ethernet); packet.emit(hdr.ipv4); }
}

V1Switch(RtParser(), RtVerify(), RtIngress(), RtEgress(), RtCompute(), RtDeparser()) main;
