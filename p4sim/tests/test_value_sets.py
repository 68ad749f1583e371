"""Parser value sets: value_set<T>(N) compiled as p4c does (parse_vsets, P4Info value_sets) and run."""

from __future__ import annotations

import json
from pathlib import Path

import grpc
import pytest
from google.rpc import code_pb2

from p4sim.switch.device import Device
from p4sim.switch.p4runtime.proto import p4r
from p4sim.switch.p4runtime.testing import running_switch
from p4sim.switch.values import InvalidArgument
from p4sim.tests.corpus import build
from p4sim.tests.test_p4runtime_server import INS, MOD, Client, details

TOP = "struct pair_t { bit<8> a; bit<16> b; }"
PARSER = ("value_set<bit<8>>(4) pvs; value_set<pair_t>(2) pairs;"
          " state start { p.extract(hdr.h); transition select(hdr.h.a) { pvs: two; 7: two; default: three; } }"
          " state two { m.x = 2; transition accept; }"
          " state three { transition select(hdr.h.a, hdr.h.b) { pairs: four; default: accept; } }"
          " state four { m.x = 4; transition accept; }")
BODY = "hdr.h.c = m.x; sm.egress_spec = 2;"


def test_value_sets_in_p4info_and_json(tmp_path: Path) -> None:
    res = build(tmp_path, BODY, top=TOP, parser=PARSER)
    vs = {v.preamble.name: v for v in res.p4info.value_sets}
    assert set(vs) == {"P.pvs", "P.pairs"}
    assert [(m.id, m.name, m.bitwidth) for m in vs["P.pvs"].match] == [(1, "", 8)] and vs["P.pvs"].size == 4
    assert [(m.name, m.bitwidth) for m in vs["P.pairs"].match] == [("a", 8), ("b", 16)]
    assert vs["P.pvs"].preamble.id >> 24 == 0x03  # P4Ids VALUE_SET
    assert res.json["parse_vsets"] == [{"name": "P.pvs", "id": 0, "compressed_bitwidth": 8},
                                       {"name": "P.pairs", "id": 1, "compressed_bitwidth": 24}]
    start = res.json["parsers"][0]["parse_states"][0]
    assert start["transitions"][0] == {"type": "parse_vset", "value": "P.pvs", "mask": None, "next_state": "two"}


@pytest.mark.parametrize("fused", ["1", "0"])
def test_value_sets_select_states_on_the_switch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                fused: str) -> None:
    monkeypatch.setenv("P4SIM_FUSED", fused)
    res = build(tmp_path, BODY, top=TOP, parser=PARSER)
    d = Device(ports={1: "v1", 2: "v2"})
    d.commit_pipeline(d.load_pipeline(json.dumps(res.json)))

    def cls(frame: bytes) -> int:
        return d.process(1, frame)[0][1][3]
    assert (cls(bytes([9, 0, 5, 0])), cls(bytes([7, 0, 5, 0]))) == (0, 2)   # empty sets match nothing
    d.pipeline.value_set("pvs").set_members([9, 10])
    d.pipeline.value_set("pairs").set_members([(3 << 16) | 5])               # a=3, b=5 (compressed key)
    assert (cls(bytes([9, 0, 5, 0])), cls(bytes([10, 0, 0, 0])), cls(bytes([11, 0, 0, 0]))) == (2, 2, 0)
    assert (cls(bytes([3, 0, 5, 0])), cls(bytes([3, 0, 6, 0]))) == (4, 0)
    d.pipeline.value_set("pvs").set_members([])
    assert cls(bytes([9, 0, 5, 0])) == 0
    with pytest.raises(InvalidArgument, match="does not fit 8 bits"):
        d.pipeline.value_set("pvs").set_members([256])


def _member(*values: int) -> p4r.ValueSetMember:
    m = p4r.ValueSetMember()
    for fid, v in enumerate(values, 1):
        m.match.add(field_id=fid).exact.value = v.to_bytes(max(1, (v.bit_length() + 7) // 8), "big")
    return m


def test_value_sets_over_p4runtime(tmp_path: Path) -> None:
    res = build(tmp_path, BODY, top=TOP, parser=PARSER)
    vs = {v.preamble.name: v.preamble.id for v in res.p4info.value_sets}
    with running_switch(ports={1: "v1", 2: "v2"}) as sw:
        c = Client(sw.address)
        c.arbitrate()
        req = p4r.SetForwardingPipelineConfigRequest(device_id=1, election_id=p4r.Uint128(low=1),
                                                     action=p4r.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT)
        req.config.p4info.CopyFrom(res.p4info)
        req.config.p4_device_config = json.dumps(res.json).encode()
        c.stub.SetForwardingPipelineConfig(req)
        try:
            ent = p4r.Entity(value_set_entry=p4r.ValueSetEntry(value_set_id=vs["P.pairs"], members=[_member(3, 5)]))
            c.write((MOD, ent))
            assert sw.device.process(1, bytes([3, 0, 5, 0]))[0][1][3] == 4
            got = c.read(p4r.Entity(value_set_entry=p4r.ValueSetEntry()))
            by_id = {e.value_set_entry.value_set_id: e.value_set_entry for e in got}
            assert set(by_id) == set(vs.values()) and not by_id[vs["P.pvs"]].members
            assert [[(m.field_id, m.exact.value) for m in mem.match] for mem in by_id[vs["P.pairs"]].members] == \
                [[(1, b"\x03"), (2, b"\x05")]]
            too_many = p4r.ValueSetEntry(value_set_id=vs["P.pairs"], members=[_member(1, 1), _member(2, 2), _member(3, 3)])
            for utype, e, code in ((INS, ent, code_pb2.INVALID_ARGUMENT),
                                   (MOD, p4r.Entity(value_set_entry=too_many), code_pb2.RESOURCE_EXHAUSTED),
                                   (MOD, p4r.Entity(value_set_entry=p4r.ValueSetEntry(
                                       value_set_id=vs["P.pvs"], members=[_member(256)])), code_pb2.OUT_OF_RANGE)):
                with pytest.raises(grpc.RpcError) as exc:
                    c.write((utype, e))
                assert [d.canonical_code for d in details(exc.value)] == [code]
            c.write((MOD, p4r.Entity(value_set_entry=p4r.ValueSetEntry(value_set_id=vs["P.pairs"]))))  # empty it
            assert sw.device.process(1, bytes([3, 0, 5, 0]))[0][1][3] == 0
        finally:
            c.close()
