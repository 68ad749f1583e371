"""Random and malformed P4Runtime requests: the server answers each with a proper code, never INTERNAL,
and keeps serving."""

from __future__ import annotations

import random

import grpc
from google.rpc import code_pb2

from p4sim.switch.p4runtime.proto import p4r
from p4sim.switch.p4runtime.testing import load_p4info, program_files, running_switch
from p4sim.tests.test_p4runtime_server import (
    ACL,
    ECMP,
    LEARN_T,
    PORT_METER,
    PORT_RX,
    ROUTE,
    SCRATCH,
    SELECTOR,
    Client,
    details,
)

IDS = [0, 1, ROUTE, ECMP, ACL, PORT_RX, PORT_METER, SCRATCH, SELECTOR, LEARN_T, 0x7FFFFFFF]


def _bytes(rng: random.Random) -> bytes:
    return rng.choice([b"", b"\x00", b"\x01", b"\xff" * rng.randint(1, 9), rng.randbytes(rng.randint(0, 7))])


def _random_entity(rng: random.Random, action_ids: list[int]) -> p4r.Entity:
    ent = p4r.Entity()
    kind = rng.choice(["table", "table", "table", "member", "group", "counter", "dcounter", "meter", "register",
                       "mc", "clone", "digest"])
    if kind == "table":
        te = ent.table_entry
        te.table_id = rng.choice(IDS)
        for _ in range(rng.randint(0, 4)):
            fm = te.match.add(field_id=rng.randint(0, 4))
            value = _bytes(rng) if rng.random() < 0.5 else b"\x0a"
            kind = rng.choice(["exact", "lpm", "ternary", "range", "optional"])
            if kind == "range":
                fm.range.low, fm.range.high = value, _bytes(rng)
            else:
                getattr(fm, kind).value = value
            if kind == "lpm":
                fm.lpm.prefix_len = rng.randint(-2, 40)
            if kind == "ternary":
                fm.ternary.mask = _bytes(rng)
        r = rng.random()
        if r < 0.6:
            te.action.action.action_id = rng.choice(action_ids + [0, 5])
            for _ in range(rng.randint(0, 3)):
                te.action.action.params.add(param_id=rng.randint(0, 3), value=_bytes(rng))
        elif r < 0.7:
            te.action.action_profile_member_id = rng.randint(0, 3)
        elif r < 0.8:
            te.action.action_profile_group_id = rng.randint(0, 3)
        te.priority = rng.choice([0, 0, 1, 10, -1])
        te.is_default_action = rng.random() < 0.1
        if rng.random() < 0.1:
            te.counter_data.packet_count = 1
        if rng.random() < 0.05:
            te.meter_config.cir = 1
    elif kind == "member":
        m = ent.action_profile_member
        m.action_profile_id, m.member_id = rng.choice(IDS), rng.randint(0, 3)
        m.action.action_id = rng.choice(action_ids)
        m.action.params.add(param_id=1, value=_bytes(rng))
    elif kind == "group":
        g = ent.action_profile_group
        g.action_profile_id, g.group_id = rng.choice(IDS), rng.randint(0, 3)
        for _ in range(rng.randint(0, 3)):
            g.members.add(member_id=rng.randint(0, 3), weight=rng.randint(-1, 3), watch_port=_bytes(rng))
    elif kind == "counter":
        c = ent.counter_entry
        c.counter_id = rng.choice(IDS)
        c.index.index = rng.choice([-1, 0, 5, 511, 512])
    elif kind == "dcounter":
        ent.direct_counter_entry.table_entry.table_id = rng.choice(IDS)
    elif kind == "meter":
        m = ent.meter_entry
        m.meter_id, m.index.index = rng.choice(IDS), rng.choice([-1, 0, 600])
        m.config.cir, m.config.pir = rng.randint(-2, 5), rng.randint(-2, 5)
    elif kind == "register":
        r = ent.register_entry
        r.register_id, r.index.index = rng.choice(IDS), rng.choice([0, 3, 16])
        r.data.bitstring = _bytes(rng)
    elif kind == "mc":
        g = ent.packet_replication_engine_entry.multicast_group_entry
        g.multicast_group_id = rng.choice([0, 1, 70000])
        g.replicas.add(egress_port=rng.choice([1, 600]), instance=rng.randint(0, 2))
    elif kind == "clone":
        s = ent.packet_replication_engine_entry.clone_session_entry
        s.session_id = rng.choice([0, 1, 40000])
        s.replicas.add(port=_bytes(rng), instance=0)
    else:
        d = ent.digest_entry
        d.digest_id = rng.choice(IDS)
        if rng.random() < 0.8:
            d.config.max_list_size = rng.randint(-1, 3)
    return ent


def test_random_writes_and_reads_never_break_the_server() -> None:
    rng = random.Random(7)
    action_ids = [a.preamble.id for a in load_p4info(program_files()[1]).actions]
    with running_switch() as sw:
        c = Client(sw.address)
        c.arbitrate()
        c.set_pipeline()
        codes: dict[int, int] = {}
        for _ in range(400):
            updates = [(rng.choice([0, 1, 2, 3, 3, 1]), _random_entity(rng, action_ids))
                       for _ in range(rng.randint(1, 6))]
            try:
                c.write(*updates)
                codes[0] = codes.get(0, 0) + len(updates)
            except grpc.RpcError as e:
                assert e.code() == grpc.StatusCode.UNKNOWN, e
                for err in details(e):
                    codes[err.canonical_code] = codes.get(err.canonical_code, 0) + 1
            try:
                c.read(_random_entity(rng, action_ids))
            except grpc.RpcError as e:
                assert e.code() not in (grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN), e
        raw = c.channel.unary_unary("/p4.v1.P4Runtime/Write", request_serializer=None,
                                    response_deserializer=p4r.WriteResponse.FromString)
        for _ in range(200):  # bytes that are mostly not a WriteRequest at all
            try:
                raw(rng.randbytes(rng.randint(0, 60)))
            except grpc.RpcError as e:
                assert e.code() != grpc.StatusCode.INTERNAL, e
        assert code_pb2.INTERNAL not in codes, codes
        assert codes.get(code_pb2.OK, 0) > 0 and len(codes) >= 4, codes
        assert c.stub.Capabilities(p4r.CapabilitiesRequest()).p4runtime_api_version
        c.close()
