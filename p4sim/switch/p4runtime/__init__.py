"""P4Runtime gRPC server of the p4sim switch (the role PI plays for simple_switch_grpc).

Layers, from the wire to the Device:
    proto        protobuf module aliases (p4r, p4i, code_pb2, status_pb2)
    errors       P4RuntimeError (google.rpc code + message), batch and RPC statuses as PI sends them
    schema       P4Info indexed by ID
    codec        bytestrings <-> ints, match keys and action parameters, checked as PI checks them
    binding      a P4Info bound to a loaded pipeline by name (p4c gives P4Info and JSON the same names)
    entries      table entries, default entries, direct counters and meters
    resources    action profile members/groups, counters, meters, registers, PRE entries
    digests      DigestEntry configs, DigestList batching, acks
    packetio     packet_in / packet_out controller headers
    arbitration  StreamChannel sessions, primary election per role
    config       SetForwardingPipelineConfig actions, GetForwardingPipelineConfig
    wire/encode  fast protobuf wire decoding of Write and encoding of table reads (pure-Python protobuf)
    service      P4RuntimeService: every RPC on request bytes, no gRPC (errors as P4RuntimeError, RpcAbort)
    server       grpc's asyncio server around it: start_server(device, address, device_id) -> ServerHandle
    testing      running_switch() and the rt_basic test program, for tests
"""
