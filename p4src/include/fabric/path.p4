// Path selection: each version of each path is one port (static) or a multipath group
// (ECMP by salted 5-tuple hash, or per-packet spray, uniform random or round robin).
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

    // Per-switch hash salt against hash polarization: switches of successive layers hashing the
    // same 5-tuple with the same crc16 make correlated choices. Concatenating a salt to the key
    // would not help (a CRC is linear: the salt only XORs a constant into the hash, so hash mod 2
    // is merely inverted), so the salt multiplies a crc32 of the 5-tuple (non-linear in the
    // flow) and the product joins the selector key. Keyless: only its default action, which the
    // controller sets per switch; salt 0 adds a constant 0, the unsalted hash.
    action set_hash_salt(bit<16> salt) {
        hash(meta.hash_mix, HashAlgorithm.crc32, 32w0,
             { hdr.ipv4.src_addr, hdr.ipv4.dst_addr, hdr.ipv4.protocol,
               meta.l4_src_port, meta.l4_dst_port },
             32w0xFFFFFFFF);
        meta.hash_mix = meta.hash_mix * (bit<32>) salt;
    }

    table hash_config {
        key = {}
        actions = {
            set_hash_salt;
        }
        default_action = set_hash_salt(16w0);
        size = 1;
    }

    action set_next_hop(port_t port, mac_addr_t dmac) {
        standard_metadata.egress_spec = port;
        hdr.ethernet.dst_addr = dmac;
        meta.next_hop_set = 1;
    }

    // ECMP groups, one per path version, hashed on the 5-tuple and its salted mix (hash_config).
    // A dead chosen member is caught by port_liveness.
    table ecmp_group {
        key = {
            meta.path_id: exact @name("path_id");
            meta.version: exact @name("version");
            hdr.ipv4.src_addr: selector;
            hdr.ipv4.dst_addr: selector;
            hdr.ipv4.protocol: selector;
            meta.l4_src_port: selector;
            meta.l4_dst_port: selector;
            meta.hash_mix: selector;
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
