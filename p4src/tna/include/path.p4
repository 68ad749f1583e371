// Path selection on Tofino: static, ECMP (CRC16 selector on the 5-tuple and a per-switch salt), spray (identity selector on a random
// number or a round-robin register). Tofino's FAIR selector spreads by hash but does not take the
// hash modulo the group size, so round robin is even over time rather than exact per packet.
// Declarations for the body of FabricIngress (hdr, meta, ig_intr_md, ig_dprsr_md, ig_tm_md in scope).
#ifndef P4SRC_TNA_INCLUDE_PATH_P4_
#define P4SRC_TNA_INCLUDE_PATH_P4_

    DirectCounter<bit<64>>(CounterType_t.PACKETS_AND_BYTES) path_counter;
    Random<bit<16>>() spray_random;
    Register<bit<16>, path_id_t>(SPRAY_RR_SIZE, 0) spray_rr;
    RegisterAction<bit<16>, path_id_t, bit<16>>(spray_rr) spray_rr_next = {
        void apply(inout bit<16> position, out bit<16> current) {
            current = position;
            position = position + 1;
        }
    };

    Hash<bit<16>>(HashAlgorithm_t.CRC16) ecmp_hash;
    ActionProfile(ECMP_SELECTOR_SIZE) ecmp_profile;
    ActionSelector(ecmp_profile, ecmp_hash, SelectorMode_t.FAIR, MAX_GROUP_SIZE,
                   ECMP_GROUP_TABLE_SIZE) ecmp_selector;

    Hash<bit<16>>(HashAlgorithm_t.IDENTITY) spray_hash;
    ActionProfile(SPRAY_SELECTOR_SIZE) spray_profile;
    ActionSelector(spray_profile, spray_hash, SelectorMode_t.FAIR, MAX_GROUP_SIZE,
                   SPRAY_GROUP_TABLE_SIZE) spray_selector;

    action path_static(port_t port, mac_addr_t dmac) {
        ig_tm_md.ucast_egress_port = port;
        hdr.ethernet.dst_addr = dmac;
        meta.next_hop_set = 1;
        path_counter.count();
    }

    action path_ecmp() {
        meta.multipath = MULTIPATH_ECMP;
        path_counter.count();
    }

    action path_spray_random() {
        meta.multipath = MULTIPATH_SPRAY;
        meta.spray_index = spray_random.get();
        path_counter.count();
    }

    action path_spray_rr() {
        meta.multipath = MULTIPATH_SPRAY;
        meta.spray_index = spray_rr_next.execute(meta.path_id);
        path_counter.count();
    }

    action path_drop() {
        ig_dprsr_md.drop_ctl = 1;
        path_counter.count();
    }

    table path {
        key = {
            meta.path_id: exact @name("path_id");
            hdr.bridged.version: exact @name("version");
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

    // Per-switch hash salt against hash polarization (see ../../include/fabric/path.p4). Tofino
    // cannot multiply two run-time values, so the salt selects bits of a crc32 of the 5-tuple
    // (AND): a different salt is a different linear function of the flow, which decorrelates the
    // layers' choices just as well; a salt concatenated to the key would only XOR a constant.
    Hash<bit<32>>(HashAlgorithm_t.CRC32) salt_hash;

    action set_hash_salt(bit<16> salt) {
        meta.hash_mix = salt_hash.get({hdr.ipv4.src_addr, hdr.ipv4.dst_addr, hdr.ipv4.protocol,
                                       meta.l4_src_port, meta.l4_dst_port}) & (bit<32>) salt;
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
        ig_tm_md.ucast_egress_port = port;
        hdr.ethernet.dst_addr = dmac;
        meta.next_hop_set = 1;
    }

    table ecmp_group {
        key = {
            meta.path_id: exact @name("path_id");
            hdr.bridged.version: exact @name("version");
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

    table spray_group {
        key = {
            meta.path_id: exact @name("path_id");
            hdr.bridged.version: exact @name("version");
            meta.spray_index: selector;
        }
        actions = {
            set_next_hop;
        }
        implementation = spray_selector;
        size = SPRAY_GROUP_TABLE_SIZE;
    }

#endif  // P4SRC_TNA_INCLUDE_PATH_P4_
