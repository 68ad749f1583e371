"""The P4Runtime server with raw gRPC stubs: pipeline config, writes and reads of every entity kind,
errors as PI reports them, arbitration."""

from __future__ import annotations

import queue
import threading

import grpc
import pytest
from google.rpc import code_pb2, status_pb2

from p4sim.switch.p4runtime.proto import p4r, p4r_grpc
from p4sim.switch.p4runtime.testing import load_p4info, program_files, running_switch

ROUTE, ECMP, ACL = 37375156, 41937120, 46580588
NO_ACTION, DROP, SET_NHOP, SET_PATH, TO_CPU, LEARN = 21257015, 25652968, 28792405, 17211240, 23576023, 29530004
SELECTOR, PORT_RX, ROUTE_COUNTER, PORT_METER, SCRATCH, LEARN_T = (
    291115404, 302012345, 318814417, 335591234, 369143021, 385903472)


class Client:
    """A raw P4Runtime client: one channel, one stream, blocking helpers."""

    def __init__(self, address: str, device_id: int = 1, election: int | None = 1, role: str = "") -> None:
        self.channel = grpc.insecure_channel(address)
        self.stub = p4r_grpc.P4RuntimeStub(self.channel)
        self.device_id = device_id
        self.election = election
        self.role = role
        self.out: queue.Queue = queue.Queue()
        self.inbox: queue.Queue = queue.Queue()
        self.stream = self.stub.StreamChannel(iter(self.out.get, None))
        self.stream_error: grpc.RpcError | None = None
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        try:
            for msg in self.stream:
                self.inbox.put(msg)
        except grpc.RpcError as e:
            self.stream_error = e
            self.inbox.put(None)

    def arbitrate(self, election: int | None = None, device_id: int | None = None) -> p4r.StreamMessageResponse:
        """Send a MasterArbitrationUpdate and return the answer."""
        if election is not None:
            self.election = election
        req = p4r.StreamMessageRequest()
        req.arbitration.device_id = self.device_id if device_id is None else device_id
        if self.election is not None:
            req.arbitration.election_id.low = self.election
        if self.role:
            req.arbitration.role.name = self.role
        self.out.put(req)
        return self.next("arbitration")

    def next(self, kind: str, timeout: float = 3) -> p4r.StreamMessageResponse | None:
        """Return the next stream message of a kind (None if the stream ended)."""
        while True:
            msg = self.inbox.get(timeout=timeout)
            if msg is None or msg.WhichOneof("update") == kind:
                return msg

    def set_pipeline(self, action: int = p4r.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT,
                     cookie: int = 0, json_bytes: bytes | None = None) -> None:
        """Push the rt_basic test program."""
        jpath, ipath = program_files()
        req = p4r.SetForwardingPipelineConfigRequest(device_id=self.device_id, action=action, role=self.role)
        if self.election is not None:
            req.election_id.low = self.election
        req.config.p4info.CopyFrom(load_p4info(ipath))
        req.config.p4_device_config = jpath.read_bytes() if json_bytes is None else json_bytes
        if cookie:
            req.config.cookie.cookie = cookie
        self.stub.SetForwardingPipelineConfig(req)

    def write(self, *updates: tuple[int, p4r.Entity]) -> None:
        """Write a batch of (update type, entity)."""
        req = p4r.WriteRequest(device_id=self.device_id, role=self.role)
        if self.election is not None:
            req.election_id.low = self.election
        for utype, ent in updates:
            req.updates.add(type=utype, entity=ent)
        self.stub.Write(req)

    def read(self, *entities: p4r.Entity) -> list[p4r.Entity]:
        """Read and return every entity the request selects."""
        req = p4r.ReadRequest(device_id=self.device_id, entities=list(entities))
        return [e for resp in self.stub.Read(req) for e in resp.entities]

    def close(self) -> None:
        self.out.put(None)
        self.channel.close()


def details(err: grpc.RpcError) -> list[p4r.Error]:
    """The per-update p4.v1.Errors of a failed Write."""
    for key, value in err.trailing_metadata():
        if key == "grpc-status-details-bin":
            st = status_pb2.Status.FromString(value)
            out = []
            for any_ in st.details:
                e = p4r.Error()
                any_.Unpack(e)
                out.append(e)
            return out
    raise AssertionError("no grpc-status-details-bin in the trailers")


def b(v: int, n: int = 1) -> bytes:
    return v.to_bytes(n, "big")


def route(prefix: int, plen: int, action: int = SET_NHOP, *params: bytes) -> p4r.Entity:
    ent = p4r.Entity()
    te = ent.table_entry
    te.table_id = ROUTE
    if plen:
        fm = te.match.add(field_id=1)
        fm.lpm.value, fm.lpm.prefix_len = b(prefix, 4), plen
    te.action.action.action_id = action
    for i, p in enumerate(params, 1):
        te.action.action.params.add(param_id=i, value=p)
    return ent


def acl(value: int, mask: int, prio: int, action: int = DROP, port: int | None = None,
        proto: tuple[int, int] | None = None) -> p4r.Entity:
    ent = p4r.Entity()
    te = ent.table_entry
    te.table_id, te.priority = ACL, prio
    fm = te.match.add(field_id=1)
    fm.ternary.value, fm.ternary.mask = b(value, 4), b(mask, 4)
    if port is not None:
        te.match.add(field_id=2).optional.value = b(port, 2)
    if proto is not None:
        fm = te.match.add(field_id=3)
        fm.range.low, fm.range.high = b(proto[0]), b(proto[1])
    te.action.action.action_id = action
    return ent


INS, MOD, DEL = p4r.Update.INSERT, p4r.Update.MODIFY, p4r.Update.DELETE


@pytest.fixture
def switch():
    with running_switch() as sw:
        yield sw


@pytest.fixture
def client(switch):
    c = Client(switch.address)
    assert c.arbitrate().arbitration.status.code == code_pb2.OK
    c.set_pipeline()
    yield c
    c.close()


def test_capabilities_and_no_pipeline(switch) -> None:
    c = Client(switch.address)
    assert c.stub.Capabilities(p4r.CapabilitiesRequest()).p4runtime_api_version.startswith("1.")
    c.arbitrate()
    with pytest.raises(grpc.RpcError) as ei:
        c.write((INS, route(0x0A000000, 8, SET_NHOP, b(1), b(2))))
    assert ei.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    with pytest.raises(grpc.RpcError) as ei:
        c.stub.GetForwardingPipelineConfig(p4r.GetForwardingPipelineConfigRequest(device_id=1))
    assert ei.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    c.close()


def test_pipeline_config_actions_and_get(switch) -> None:
    c = Client(switch.address)
    c.arbitrate()
    A = p4r.SetForwardingPipelineConfigRequest
    c.set_pipeline(A.VERIFY)
    assert switch.service.committed is None
    with pytest.raises(grpc.RpcError) as ei:
        c.set_pipeline(A.COMMIT)
    assert ei.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    c.set_pipeline(A.VERIFY_AND_SAVE, cookie=7)
    assert switch.service.committed is None
    c.set_pipeline(A.COMMIT)
    assert switch.device.pipeline is not None
    G = p4r.GetForwardingPipelineConfigRequest
    full = c.stub.GetForwardingPipelineConfig(G(device_id=1, response_type=G.ALL)).config
    assert full.cookie.cookie == 7 and full.p4_device_config == program_files()[0].read_bytes()
    assert [t.preamble.name for t in full.p4info.tables] == ["RtIngress.route", "RtIngress.ecmp", "RtIngress.acl"]
    only = c.stub.GetForwardingPipelineConfig(G(device_id=1, response_type=G.COOKIE_ONLY)).config
    assert only.cookie.cookie == 7 and not only.HasField("p4info") and not only.p4_device_config
    info = c.stub.GetForwardingPipelineConfig(G(device_id=1, response_type=G.P4INFO_AND_COOKIE)).config
    assert info.HasField("p4info") and not info.p4_device_config
    dev = c.stub.GetForwardingPipelineConfig(G(device_id=1, response_type=G.DEVICE_CONFIG_AND_COOKIE)).config
    assert dev.p4_device_config and not dev.HasField("p4info")
    with pytest.raises(grpc.RpcError) as ei:
        c.set_pipeline(json_bytes=b"{not json")
    assert ei.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    c.close()


def test_insert_read_modify_delete_table_entries(client) -> None:
    client.write((INS, route(0x0A000000, 8, SET_NHOP, b(1), b(0xAABB, 6))),
                 (INS, route(0x0A010000, 16, SET_PATH, b(3))),
                 (INS, acl(0x0A000001, 0xFFFFFFFF, 10, DROP, port=2, proto=(6, 17))))
    got = client.read(p4r.Entity(table_entry=p4r.TableEntry()))
    assert len(got) == 3
    r = [e.table_entry for e in got if e.table_entry.table_id == ROUTE]
    first = next(te for te in r if te.match[0].lpm.prefix_len == 8)
    assert first.match[0].lpm.value == b"\x0a\x00\x00\x00"
    assert [p.value for p in first.action.action.params] == [b"\x01", b"\xaa\xbb"]  # canonical bytestrings
    a = [e.table_entry for e in got if e.table_entry.table_id == ACL][0]
    assert a.priority == 10 and [m.field_id for m in a.match] == [1, 2, 3]
    assert a.match[1].optional.value == b"\x02" and a.match[2].range.high == b"\x11"
    # read one entry by key; modify it; delete it
    one = client.read(route(0x0A010000, 16))
    assert len(one) == 1 and one[0].table_entry.action.action.action_id == SET_PATH
    client.write((MOD, route(0x0A010000, 16, DROP)))
    assert client.read(route(0x0A010000, 16))[0].table_entry.action.action.action_id == DROP
    client.write((DEL, route(0x0A010000, 16, DROP)))
    assert len(client.read(p4r.Entity(table_entry=p4r.TableEntry(table_id=ROUTE)))) == 1


def test_batch_errors_per_update(client) -> None:
    good = route(0x0B000000, 8, SET_NHOP, b(1), b(2))
    client.write((INS, good))
    bad_width = route(0x0C000000, 8, SET_NHOP, b(0x200, 2), b(2))  # port is 9 bits
    lpm_host_bits = route(0x0C000001, 8, DROP)
    no_prio = acl(1, 0xFF, 0)
    tern_bits = acl(0x100, 0xFF, 5)
    unknown_table = p4r.Entity(table_entry=p4r.TableEntry(table_id=0x02000099))
    wrong_action = route(0x0D000000, 8, TO_CPU)
    missing = route(0x0E000000, 8, DROP)
    with pytest.raises(grpc.RpcError) as ei:
        client.write((INS, good), (INS, bad_width), (INS, lpm_host_bits), (INS, no_prio), (INS, tern_bits),
                     (INS, unknown_table), (INS, wrong_action), (MOD, missing), (DEL, missing),
                     (INS, route(0x0F000000, 8, DROP)))
    assert ei.value.code() == grpc.StatusCode.UNKNOWN
    codes = [e.canonical_code for e in details(ei.value)]
    C = code_pb2
    assert codes == [C.ALREADY_EXISTS, C.OUT_OF_RANGE, C.INVALID_ARGUMENT, C.INVALID_ARGUMENT,
                     C.INVALID_ARGUMENT, C.INVALID_ARGUMENT, C.INVALID_ARGUMENT, C.NOT_FOUND, C.NOT_FOUND, C.OK]
    # the good update of the failed batch was applied (CONTINUE_ON_ERROR), the server still serves
    assert len(client.read(route(0x0F000000, 8))) == 1


def test_default_entry(client) -> None:
    ent = p4r.Entity()
    ent.table_entry.table_id = ROUTE
    ent.table_entry.is_default_action = True
    got = client.read(ent)
    assert got[0].table_entry.action.action.action_id == DROP
    ent.table_entry.action.action.action_id = SET_PATH
    ent.table_entry.action.action.params.add(param_id=1, value=b"\x05")
    client.write((MOD, ent))
    assert client.read(ent)[0].table_entry.action.action.params[0].value == b"\x05"
    with pytest.raises(grpc.RpcError) as ei:
        client.write((INS, ent))
    assert details(ei.value)[0].canonical_code == code_pb2.INVALID_ARGUMENT
    reset = p4r.Entity()
    reset.table_entry.table_id = ROUTE
    reset.table_entry.is_default_action = True
    client.write((MOD, reset))
    assert client.read(reset)[0].table_entry.action.action.action_id == DROP


def test_direct_counter_and_counters_registers_meters(client, switch) -> None:
    ent = route(0x0A000000, 8, DROP)
    ent.table_entry.counter_data.packet_count = 5
    client.write((INS, ent))
    dc = p4r.Entity()
    dc.direct_counter_entry.table_entry.CopyFrom(route(0x0A000000, 8).table_entry)
    dc.direct_counter_entry.table_entry.ClearField("action")
    got = client.read(dc)
    assert got[0].direct_counter_entry.data.packet_count == 5
    dc.direct_counter_entry.data.packet_count = 9
    dc.direct_counter_entry.data.byte_count = 900
    client.write((MOD, dc))
    assert client.read(dc)[0].direct_counter_entry.data.byte_count == 900

    c = p4r.Entity()
    c.counter_entry.counter_id = PORT_RX
    c.counter_entry.index.index = 3
    c.counter_entry.data.packet_count = 42
    client.write((MOD, c))
    assert switch.device.pipeline.counters["RtIngress.port_rx"].read(3) == (42, 0)
    everything = client.read(p4r.Entity(counter_entry=p4r.CounterEntry(counter_id=PORT_RX)))
    assert len(everything) == 512 and everything[3].counter_entry.data.packet_count == 42
    with pytest.raises(grpc.RpcError) as ei:
        client.write((INS, c))
    assert details(ei.value)[0].canonical_code == code_pb2.INVALID_ARGUMENT
    c.counter_entry.index.index = 512
    with pytest.raises(grpc.RpcError) as ei:
        client.write((MOD, c))
    assert details(ei.value)[0].canonical_code == code_pb2.OUT_OF_RANGE

    r = p4r.Entity()
    r.register_entry.register_id = SCRATCH
    r.register_entry.index.index = 2
    r.register_entry.data.bitstring = b"\x12\x34"
    client.write((MOD, r))
    got = client.read(p4r.Entity(register_entry=p4r.RegisterEntry(register_id=SCRATCH)))
    assert len(got) == 16 and got[2].register_entry.data.bitstring == b"\x12\x34"

    m = p4r.Entity()
    m.meter_entry.meter_id = PORT_METER
    m.meter_entry.index.index = 1
    m.meter_entry.config.cir, m.meter_entry.config.cburst = 1000, 100
    m.meter_entry.config.pir, m.meter_entry.config.pburst = 2000, 200
    client.write((MOD, m))
    m.meter_entry.ClearField("config")
    got = client.read(m)
    assert got[0].meter_entry.config.pir == 2000


def test_action_profile_members_groups_and_indirect_entries(client) -> None:
    def member(mid: int, port: int) -> p4r.Entity:
        ent = p4r.Entity()
        m = ent.action_profile_member
        m.action_profile_id, m.member_id = SELECTOR, mid
        m.action.action_id = SET_NHOP
        m.action.params.add(param_id=1, value=b(port))
        m.action.params.add(param_id=2, value=b(port, 6))
        return ent

    client.write((INS, member(1, 1)), (INS, member(2, 2)))
    grp = p4r.Entity()
    g = grp.action_profile_group
    g.action_profile_id, g.group_id = SELECTOR, 10
    g.members.add(member_id=1, weight=1, watch_port=b"\x01")
    g.members.add(member_id=2, weight=2)
    client.write((INS, grp))
    te = p4r.Entity()
    te.table_entry.table_id = ECMP
    te.table_entry.match.add(field_id=1).exact.value = b"\x07"
    te.table_entry.action.action_profile_group_id = 10
    client.write((INS, te))
    got = client.read(p4r.Entity(action_profile_group=p4r.ActionProfileGroup(action_profile_id=SELECTOR)))
    assert [(m.member_id, m.weight) for m in got[0].action_profile_group.members] == [(1, 1), (2, 2)]
    assert len(client.read(p4r.Entity(action_profile_member=p4r.ActionProfileMember()))) == 2
    assert client.read(te)[0].table_entry.action.action_profile_group_id == 10
    # a member in use cannot go; a direct action is not allowed in an indirect table
    with pytest.raises(grpc.RpcError) as ei:
        client.write((DEL, member(1, 1)))
    assert details(ei.value)[0].canonical_code == code_pb2.FAILED_PRECONDITION
    direct = p4r.Entity()
    direct.table_entry.CopyFrom(te.table_entry)
    direct.table_entry.action.action.action_id = SET_NHOP
    with pytest.raises(grpc.RpcError) as ei:
        client.write((MOD, direct))
    assert details(ei.value)[0].canonical_code == code_pb2.INVALID_ARGUMENT
    client.write((DEL, te), (DEL, grp), (DEL, member(1, 1)), (DEL, member(2, 2)))
    assert client.read(p4r.Entity(action_profile_member=p4r.ActionProfileMember())) == []


def test_pre_entries(client, switch) -> None:
    mc = p4r.Entity()
    g = mc.packet_replication_engine_entry.multicast_group_entry
    g.multicast_group_id = 5
    g.replicas.add(egress_port=1, instance=0)
    g.replicas.add(port=b"\x02", instance=1)
    cs = p4r.Entity()
    s = cs.packet_replication_engine_entry.clone_session_entry
    s.session_id, s.class_of_service, s.packet_length_bytes = 3, 1, 128
    s.replicas.add(egress_port=255, instance=0)
    client.write((INS, mc), (INS, cs))
    assert switch.device.pre.groups[5] == ((1, 0), (2, 1))
    got = client.read(p4r.Entity(packet_replication_engine_entry=p4r.PacketReplicationEngineEntry()))
    assert len(got) == 2
    with pytest.raises(grpc.RpcError) as ei:
        client.write((INS, mc))
    assert details(ei.value)[0].canonical_code == code_pb2.ALREADY_EXISTS
    client.write((DEL, mc), (DEL, cs))
    assert switch.device.pre.groups == {} and switch.device.pre.sessions == {}


def test_digest_entry_config(client) -> None:
    d = p4r.Entity()
    d.digest_entry.digest_id = LEARN_T
    d.digest_entry.config.max_list_size = 10
    d.digest_entry.config.max_timeout_ns = 1_000_000
    client.write((INS, d))
    assert client.read(p4r.Entity(digest_entry=p4r.DigestEntry()))[0].digest_entry.config.max_list_size == 10
    with pytest.raises(grpc.RpcError) as ei:
        client.write((INS, d))
    assert details(ei.value)[0].canonical_code == code_pb2.ALREADY_EXISTS
    client.write((DEL, d))


def test_arbitration_primary_backup_and_permission(switch) -> None:
    a = Client(switch.address)
    assert a.arbitrate(5).arbitration.status.code == code_pb2.OK
    b_ = Client(switch.address)
    ans = b_.arbitrate(3).arbitration
    assert ans.status.code == code_pb2.ALREADY_EXISTS and ans.election_id.low == 5
    a.set_pipeline()
    with pytest.raises(grpc.RpcError) as ei:
        b_.write((INS, route(0x0A000000, 8, DROP)))
    assert ei.value.code() == grpc.StatusCode.PERMISSION_DENIED
    # a higher election id takes over: everyone is told
    c = Client(switch.address)
    assert c.arbitrate(9).arbitration.status.code == code_pb2.OK
    assert a.next("arbitration").arbitration.status.code == code_pb2.ALREADY_EXISTS
    assert b_.next("arbitration").arbitration.election_id.low == 9
    with pytest.raises(grpc.RpcError) as ei:
        a.write((INS, route(0x0A000000, 8, DROP)))
    assert ei.value.code() == grpc.StatusCode.PERMISSION_DENIED
    c.write((INS, route(0x0A000000, 8, DROP)))
    # the primary leaves: the next highest becomes primary
    c.close()
    assert a.next("arbitration").arbitration.status.code == code_pb2.OK
    a.write((DEL, route(0x0A000000, 8, DROP)))
    # an election id already in use ends the stream with INVALID_ARGUMENT
    d = Client(switch.address)
    d.out.put(p4r.StreamMessageRequest(arbitration=p4r.MasterArbitrationUpdate(
        device_id=1, election_id=p4r.Uint128(low=5))))
    assert d.next("arbitration") is None and d.stream_error.code() == grpc.StatusCode.INVALID_ARGUMENT
    # a wrong device id is refused too
    e = Client(switch.address)
    assert e.arbitrate(20, device_id=99) is None and e.stream_error.code() == grpc.StatusCode.NOT_FOUND
    for x in (a, b_, d, e):
        x.close()


def test_reconcile_keeps_state(client, switch) -> None:
    client.write((INS, route(0x0A000000, 8, SET_PATH, b(4))))
    client.set_pipeline(p4r.SetForwardingPipelineConfigRequest.RECONCILE_AND_COMMIT)
    assert len(client.read(route(0x0A000000, 8))) == 1
    # a different JSON (same program, reformatted): state replayed into the new pipeline
    import json

    switch.device.pipeline.registers["RtIngress.scratch"].write(3, 99)
    switch.device.pipeline.counters["RtIngress.port_rx"].write(1, 5, 500)
    old_pipeline = switch.device.pipeline
    doc = json.loads(program_files()[0].read_bytes())
    client.set_pipeline(p4r.SetForwardingPipelineConfigRequest.RECONCILE_AND_COMMIT,
                        json_bytes=json.dumps(doc).encode())
    assert switch.device.pipeline is not old_pipeline
    got = client.read(route(0x0A000000, 8))
    assert got[0].table_entry.action.action.params[0].value == b"\x04"
    assert switch.device.pipeline.registers["RtIngress.scratch"].read(3) == 99
    assert switch.device.pipeline.counters["RtIngress.port_rx"].read(1) == (5, 500)
    client.set_pipeline()  # VERIFY_AND_COMMIT: fresh state
    assert client.read(p4r.Entity(table_entry=p4r.TableEntry())) == []


def test_a_pipeline_push_frees_the_pipeline_it_replaces() -> None:
    import gc
    import json
    import weakref

    reformatted = json.dumps(json.loads(program_files()[0].read_bytes())).encode()
    try:
        with running_switch(freeze_heap=True) as sw:  # as p4sim-switch runs
            client = Client(sw.address)
            client.arbitrate()
            client.set_pipeline()
            for action, json_bytes in ((p4r.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT, None),
                                       (p4r.SetForwardingPipelineConfigRequest.RECONCILE_AND_COMMIT, reformatted)):
                old = weakref.ref(sw.device.pipeline)
                client.set_pipeline(action, json_bytes=json_bytes)
                # freed when the push returns, not one push later: nothing holds it when the device commits
                assert old() is None and sw.device.pipeline is not None
            client.close()
    finally:
        gc.unfreeze()


def test_malformed_and_odd_requests_do_not_hurt_the_server(client) -> None:
    raw = client.channel.unary_unary("/p4.v1.P4Runtime/Write", request_serializer=None,
                                     response_deserializer=p4r.WriteResponse.FromString)
    with pytest.raises(grpc.RpcError) as ei:
        raw(b"\x22\xff\xff\xff\xff\x0f")
    assert ei.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    with pytest.raises(grpc.RpcError) as ei:  # wrong device id
        client.stub.Write(p4r.WriteRequest(device_id=9, election_id=p4r.Uint128(low=1)))
    assert ei.value.code() == grpc.StatusCode.NOT_FOUND
    empty = p4r.Entity()
    with pytest.raises(grpc.RpcError) as ei:  # an update without entity, and one with a bad type
        client.write((INS, empty), (p4r.Update.UNSPECIFIED, route(0x0A000000, 8, DROP)))
    assert [e.canonical_code for e in details(ei.value)] == [code_pb2.INVALID_ARGUMENT] * 2
    with pytest.raises(grpc.RpcError) as ei:
        client.read(p4r.Entity())
    assert ei.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    # a large failed batch: one Error per update, messages within budget so the trailers stay small
    with pytest.raises(grpc.RpcError) as ei:
        client.write(*[(DEL, route(0x0A000000 + (i << 8), 24, DROP)) for i in range(300)])
    errs = details(ei.value)
    assert len(errs) == 300 and {e.canonical_code for e in errs} == {code_pb2.NOT_FOUND}
    assert errs[0].message and not errs[-1].message
    client.write((INS, route(0x0A000000, 8, DROP)))  # still serving


def test_roles_have_their_own_primary(switch) -> None:
    a = Client(switch.address, role="ctl")
    assert a.arbitrate(1).arbitration.status.code == code_pb2.OK
    b_ = Client(switch.address, role="ocs")
    ans = b_.arbitrate(1).arbitration  # same election id, another role: no conflict
    assert ans.status.code == code_pb2.OK and ans.role.name == "ocs"
    c = Client(switch.address, role="ocs")
    assert c.arbitrate(2).arbitration.status.code == code_pb2.OK
    assert b_.next("arbitration").arbitration.status.code == code_pb2.ALREADY_EXISTS
    a.set_pipeline()
    with pytest.raises(grpc.RpcError) as ei:
        b_.write((INS, route(0x0A000000, 8, DROP)))
    assert ei.value.code() == grpc.StatusCode.PERMISSION_DENIED
    c.write((INS, route(0x0A000000, 8, DROP)))
    assert {s.role for s in switch.service.arbiter.primaries()} == {"ctl", "ocs"}
    for x in (a, b_, c):
        x.close()


def test_busy_or_bad_address_is_a_value_error(switch) -> None:
    from p4sim.switch.device import Device
    from p4sim.switch.p4runtime.server import start_server

    with pytest.raises(ValueError, match="cannot listen"):
        start_server(Device(device_id=1), switch.address, 1)
    with pytest.raises(ValueError, match="expected <ip>:<port>"):
        start_server(Device(device_id=1), "localhost", 1)


def test_single_rate_meter_from_p4info_meter_type(switch) -> None:
    """A meter whose P4Info MeterSpec.type is single-rate gets cir/cburst/eburst (RFC 2697)."""
    c = Client(switch.address)
    try:
        assert c.arbitrate().arbitration.status.code == code_pb2.OK
        jpath, ipath = program_files()
        p4info = load_p4info(ipath)
        (spec,) = [m.spec for m in p4info.meters if m.preamble.id == PORT_METER]
        spec.type = spec.SINGLE_RATE_THREE_COLOR
        req = p4r.SetForwardingPipelineConfigRequest(
            device_id=1, action=p4r.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT)
        req.election_id.low = 1
        req.config.p4info.CopyFrom(p4info)
        req.config.p4_device_config = jpath.read_bytes()
        c.stub.SetForwardingPipelineConfig(req)

        m = p4r.Entity()
        m.meter_entry.meter_id, m.meter_entry.index.index = PORT_METER, 2
        cfg = m.meter_entry.config
        cfg.cir, cfg.cburst, cfg.eburst = 1000, 100, 300
        c.write((MOD, m))
        (name,) = switch.device.pipeline.meters
        got = switch.device.pipeline.meters[name].get_config(2)
        assert (got.kind, got.cir, got.cburst, got.eburst, got.pir) == ("srTCM", 1000, 100, 300, 0)
        m.meter_entry.ClearField("config")
        assert c.read(m)[0].meter_entry.config.eburst == 300
    finally:
        c.close()
