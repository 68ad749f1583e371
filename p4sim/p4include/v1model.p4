/* v1model.p4 for the p4sim compiler: the v1model architecture as bmv2's simple_switch implements
 * it (the standard_metadata fields, the V1Switch package and its externs), written for p4sim from
 * the P4_16 specification and the v1model/simple_switch documentation. */
/* The include guard and macros are p4c's v1model.p4's, which programs test and use: V1MODEL_VERSION
 * (p4c's default, 20180101; p4sim takes the index type arguments of 20200408 in either version),
 * __v1model_version, PortId_t from 20200408 on, the meter colours. */
#ifndef _V1_MODEL_P4_
#define _V1_MODEL_P4_

#include <core.p4>

#ifndef V1MODEL_VERSION
#define V1MODEL_VERSION 20180101
#endif

const bit<32> __v1model_version = V1MODEL_VERSION;

#if V1MODEL_VERSION >= 20200408
typedef bit<9> PortId_t;
#endif

#define V1MODEL_METER_COLOR_GREEN  0
#define V1MODEL_METER_COLOR_YELLOW 1
#define V1MODEL_METER_COLOR_RED    2

/* Extra match kinds of bmv2. */
match_kind {
    range,
    optional,
    selector
}

/* Per-packet intrinsic metadata of simple_switch. */
@metadata @name("standard_metadata")
struct standard_metadata_t {
    bit<9>  ingress_port;
    bit<9>  egress_spec;
    bit<9>  egress_port;
    bit<32> instance_type;
    bit<32> packet_length;
    @alias("queueing_metadata.enq_timestamp") bit<32> enq_timestamp;
    @alias("queueing_metadata.enq_qdepth")    bit<19> enq_qdepth;
    @alias("queueing_metadata.deq_timedelta") bit<32> deq_timedelta;
    @alias("queueing_metadata.deq_qdepth")    bit<19> deq_qdepth;
    @alias("intrinsic_metadata.ingress_global_timestamp") bit<48> ingress_global_timestamp;
    @alias("intrinsic_metadata.egress_global_timestamp")  bit<48> egress_global_timestamp;
    @alias("intrinsic_metadata.mcast_grp")  bit<16> mcast_grp;
    @alias("intrinsic_metadata.egress_rid") bit<16> egress_rid;
    bit<1>  checksum_error;
    error   parser_error;
    @alias("intrinsic_metadata.priority") bit<3> priority;
}

enum CounterType {
    packets,
    bytes,
    packets_and_bytes
}

enum MeterType {
    packets,
    bytes
}

/* Indexed counter array; the index type I is usually bit<32> (`counter(...)` without type argument). */
extern counter<I> {
    counter(bit<32> size, CounterType type);
    void count(in I index);
}

/* Counter attached to the entries of one table. */
extern direct_counter {
    direct_counter(CounterType type);
    void count();
}

/* Indexed two-rate three-color meter array (color result: 0 green, 1 yellow, 2 red). */
extern meter<I> {
    meter(bit<32> size, MeterType type);
    void execute_meter<T>(in I index, out T result);
}

/* Meter attached to the entries of one table. */
extern direct_meter<T> {
    direct_meter(MeterType type);
    void read(out T result);
}

/* Indexed state read and written by the data plane. */
extern register<T, I> {
    register(bit<32> size);
    void read(out T result, in I index);
    void write(in I index, in T value);
}

/* Shared action data for the entries of a table. */
extern action_profile {
    action_profile(bit<32> size);
}

/* A uniform random number in [lo, hi]. */
extern void random<T>(out T result, in T lo, in T hi);

/* Send the packet to the controller as a learned digest. */
extern void digest<T>(in bit<32> receiver, in T data);

enum HashAlgorithm {
    crc32,
    crc32_custom,
    crc16,
    crc16_custom,
    random,
    identity,
    csum16,
    xor16
}

/* Drop the packet at the end of the pipeline. */
extern void mark_to_drop(inout standard_metadata_t standard_metadata);

/* result = base + (hash(data) mod max), for max > 0. */
extern void hash<O, T, D, M>(out O result, in HashAlgorithm algo, in T base, in D data, in M max);

/* Action profile whose group members are chosen by a hash of the selector keys. */
extern action_selector {
    action_selector(HashAlgorithm algorithm, bit<32> size, bit<32> outputWidth);
}

enum CloneType {
    I2E,
    E2E
}

/* Verify or compute a checksum in the VerifyChecksum / ComputeChecksum controls. */
extern void verify_checksum<T, O>(in bool condition, in T data, in O checksum, HashAlgorithm algo);
extern void update_checksum<T, O>(in bool condition, in T data, inout O checksum, HashAlgorithm algo);
extern void verify_checksum_with_payload<T, O>(in bool condition, in T data, in O checksum, HashAlgorithm algo);
extern void update_checksum_with_payload<T, O>(in bool condition, in T data, inout O checksum, HashAlgorithm algo);

/* Packet replication: resubmit to ingress, recirculate after the deparser, clone. */
extern void resubmit<T>(in T data);
extern void resubmit_preserving_field_list(bit<8> index);
extern void recirculate<T>(in T data);
extern void recirculate_preserving_field_list(bit<8> index);
extern void clone(in CloneType type, in bit<32> session);
extern void clone3<T>(in CloneType type, in bit<32> session, in T data);
extern void clone_preserving_field_list(in CloneType type, in bit<32> session, bit<8> index);

extern void truncate(in bit<32> length);

/* Debug logging of the switch. */
extern void log_msg(string msg);
extern void log_msg<T>(string msg, in T data);

extern void assert(in bool check);
extern void assume(in bool check);

/* The blocks of the V1Switch package, in pipeline order. */
parser Parser<H, M>(packet_in b, out H parsedHdr, inout M meta, inout standard_metadata_t standard_metadata);
control VerifyChecksum<H, M>(inout H hdr, inout M meta);
@pipeline
control Ingress<H, M>(inout H hdr, inout M meta, inout standard_metadata_t standard_metadata);
@pipeline
control Egress<H, M>(inout H hdr, inout M meta, inout standard_metadata_t standard_metadata);
control ComputeChecksum<H, M>(inout H hdr, inout M meta);
@deparser
control Deparser<H>(packet_out b, in H hdr);

package V1Switch<H, M>(Parser<H, M> p, VerifyChecksum<H, M> vr, Ingress<H, M> ig, Egress<H, M> eg,
                       ComputeChecksum<H, M> ck, Deparser<H> dep);

#endif  /* _V1_MODEL_P4_ */
