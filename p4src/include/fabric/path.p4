// PathSelect: each version of each path is one port (static) or a multipath group (ECMP by
// salted 5-tuple hash, or per-packet spray, uniform random or round robin).
#ifndef P4SRC_INCLUDE_FABRIC_PATH_P4_
#define P4SRC_INCLUDE_FABRIC_PATH_P4_

#include "../headers.p4"
#include "../metadata.p4"

control PathSelect(inout fabric_headers_t hdr, inout fabric_metadata_t meta) {

    DECLARE_DIRECT_COUNTER(path_counter)
    // Round-robin position of each path; data-plane state only (PI cannot write registers).
    DECLARE_NEXT_REGISTER(spray_rr, SPRAY_RR_SIZE)
    DECLARE_RANDOM(spray_random)
    DECLARE_SALT_HASH
    DECLARE_SELECTOR_CRC16(ecmp_selector, ECMP_SELECTOR_SIZE, 16, ECMP_GROUP_TABLE_SIZE)
    // Identity hash: the member is spray_index modulo the group size (v1model), so a counter gives
    // an exact round robin and a uniform random number a uniform choice.
    DECLARE_SELECTOR_IDENTITY(spray_selector, SPRAY_SELECTOR_SIZE, 32, SPRAY_GROUP_TABLE_SIZE)

    action path_static(port_t port, mac_addr_t dmac) {
        meta.egress_port = port;
        hdr.ethernet.dst_addr = dmac;
        meta.next_hop_set = 1;
        DIRECT_COUNT(path_counter);
    }

    action path_ecmp() {
        meta.multipath = MULTIPATH_ECMP;
        DIRECT_COUNT(path_counter);
    }

    action path_spray_random() {
        meta.multipath = MULTIPATH_SPRAY;
        RANDOM_GET(spray_random, meta.spray_index);
        DIRECT_COUNT(path_counter);
    }

    action path_spray_rr() {
        meta.multipath = MULTIPATH_SPRAY;
        REGISTER_NEXT(spray_rr, (bit<32>) meta.path_id, meta.spray_index);
        DIRECT_COUNT(path_counter);
    }

    action path_drop() {
        meta.drop = 1;
        DIRECT_COUNT(path_counter);
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
    // is merely inverted), so the salt mixes with a crc32 of the 5-tuple (v1model: multiplies,
    // non-linear in the flow; TNA: selects bits) and the result joins the selector key. Keyless:
    // only its default action, which the controller sets per switch; salt 0 is the unsalted hash.
    action set_hash_salt(bit<16> salt) {
        SALT_MIX(meta.hash_mix, salt);
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
        meta.egress_port = port;
        hdr.ethernet.dst_addr = dmac;
        meta.next_hop_set = 1;
    }

    // ECMP groups, one per path version, hashed on the 5-tuple and its salted mix (hash_config).
    // A dead chosen member is caught by port_liveness (failover.p4).
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
        implementation = SELECTOR(ecmp_selector);
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
        implementation = SELECTOR(spray_selector);
        size = SPRAY_GROUP_TABLE_SIZE;
    }

    apply {
        // The salt's mix for every packet (keyless: no lookup), ready when path chooses ECMP; the
        // path for a packet with a path id that SlotRoute leaves to it; its group (only path's
        // actions choose one). Flat: Tofino 1 places a block's tables before what follows it.
        SALT_CRC32();
        hash_config.apply();
        if (meta.has_path == 1 && meta.slot_decision == SLOT_PATH) {
            path.apply();
        }
        if (meta.multipath == MULTIPATH_ECMP) {
            ecmp_group.apply();
        } else if (meta.multipath == MULTIPATH_SPRAY) {
            spray_group.apply();
        }
    }
}

#endif  // P4SRC_INCLUDE_FABRIC_PATH_P4_
