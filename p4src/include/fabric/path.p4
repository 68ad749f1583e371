// Path selection: each version of each path is one port (static) or a multipath group
// (ECMP by 5-tuple hash, or per-packet spray, uniform random or round robin).
// Declarations for the body of FabricIngress: hdr, meta and standard_metadata are in scope.
#ifndef P4SRC_INCLUDE_FABRIC_PATH_P4_
#define P4SRC_INCLUDE_FABRIC_PATH_P4_

    direct_counter(CounterType.packets_and_bytes) path_counter;
    // Round-robin position of each path; data-plane state only (PI cannot write registers).
    register<bit<32>>(SPRAY_RR_SIZE) spray_rr;
    action_selector(HashAlgorithm.crc16, ECMP_SELECTOR_SIZE, 16) ecmp_selector;
    // Identity hash: the member is spray_index modulo the group size, so a counter gives an
    // exact round robin and a uniform random number a uniform choice.
    action_selector(HashAlgorithm.identity, SPRAY_SELECTOR_SIZE, 32) spray_selector;

    action path_static(port_t port, mac_addr_t dmac) {
        standard_metadata.egress_spec = port;
        hdr.ethernet.dst_addr = dmac;
        meta.next_hop_set = 1;
    }

    action path_ecmp() {
        meta.multipath = MULTIPATH_ECMP;
    }

    action path_spray_random() {
        meta.multipath = MULTIPATH_SPRAY;
        random(meta.spray_index, 32w0, 32w0xFFFFFFFF);
    }

    action path_spray_rr() {
        meta.multipath = MULTIPATH_SPRAY;
        spray_rr.read(meta.spray_index, (bit<32>) meta.path_id);
        spray_rr.write((bit<32>) meta.path_id, meta.spray_index + 1);
    }

    action path_drop() {
        mark_to_drop(standard_metadata);
    }

    // Both versions of every path (MBB: the shadow is written here before the flip). Exact on
    // (path id, version); the direct counter counts each version separately.
    table path {
        key = {
            meta.path_id: exact @name("path_id");
            meta.version: exact @name("version");
        }
        actions = {
            path_static;
            path_ecmp;
            path_spray_random;
            path_spray_rr;
            path_drop;
        }
        default_action = path_drop();
        counters = path_counter;
        size = PATH_TABLE_SIZE;
    }

    action set_next_hop(port_t port, mac_addr_t dmac) {
        standard_metadata.egress_spec = port;
        hdr.ethernet.dst_addr = dmac;
        meta.next_hop_set = 1;
    }

    // ECMP groups, one per path version. A dead chosen member is caught by port_liveness.
    table ecmp_group {
        key = {
            meta.path_id: exact @name("path_id");
            meta.version: exact @name("version");
            hdr.ipv4.src_addr: selector;
            hdr.ipv4.dst_addr: selector;
            hdr.ipv4.protocol: selector;
            meta.l4_src_port: selector;
            meta.l4_dst_port: selector;
        }
        actions = {
            set_next_hop;
        }
        implementation = ecmp_selector;
        size = ECMP_GROUP_TABLE_SIZE;
    }

    // Spray groups, one per path version; the member is chosen per packet by spray_index.
    table spray_group {
        key = {
            meta.path_id: exact @name("path_id");
            meta.version: exact @name("version");
            meta.spray_index: selector;
        }
        actions = {
            set_next_hop;
        }
        implementation = spray_selector;
        size = SPRAY_GROUP_TABLE_SIZE;
    }

#endif  // P4SRC_INCLUDE_FABRIC_PATH_P4_
