"""The compiler corpus program features.p4 over P4Runtime: const entries, a valid-bit key, a selector
table keyed by lpm, direct counters, and the errors a const table gives."""

from __future__ import annotations

import grpc
import pytest
from google.rpc import code_pb2

from p4sim.switch.p4runtime.proto import p4r
from p4sim.switch.p4runtime.testing import load_p4info, running_switch
from p4sim.tests.programs import REPO, compile_program
from p4sim.tests.test_p4runtime_server import INS, MOD, Client, details


@pytest.fixture(scope="module")
def program(tmp_path_factory) -> tuple[bytes, object]:
    json_path, p4info_path = compile_program(REPO / "p4sim/tests/corpus/features.p4",
                                             tmp_path_factory.mktemp("features"))
    return json_path.read_bytes(), load_p4info(p4info_path)


@pytest.fixture
def client(program):
    json_bytes, p4info = program
    with running_switch() as sw:
        c = Client(sw.address)
        c.arbitrate()
        req = p4r.SetForwardingPipelineConfigRequest(device_id=1, election_id=p4r.Uint128(low=1),
                                                     action=p4r.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT)
        req.config.p4info.CopyFrom(p4info)
        req.config.p4_device_config = json_bytes
        c.stub.SetForwardingPipelineConfig(req)
        c.p4info = p4info
        yield c
        c.close()


def _ids(p4info) -> dict[str, int]:  # noqa: ANN001
    out = {}
    for group in (p4info.tables, p4info.actions, p4info.action_profiles, p4info.direct_counters):
        for o in group:
            out[o.preamble.name.split(".")[-1]] = o.preamble.id
    return out


def test_const_entries_are_read_and_protected(client) -> None:
    ids = _ids(client.p4info)
    got = client.read(p4r.Entity(table_entry=p4r.TableEntry(table_id=ids["classify"])))
    assert len(got) == 2 and all(e.table_entry.is_const for e in got)
    first = got[0].table_entry
    assert first.action.action.action_id == ids["rewrite_tos"]
    assert first.action.action.params[0].value == b"\x2e"  # rewrite_tos(6w46)
    # the valid-bit key reads back as exact \x00 (vlan[0] invalid), the range as 0..100
    kinds = {m.WhichOneof("field_match_type") for m in first.match}
    assert kinds == {"ternary", "range", "exact"}
    ent = p4r.Entity()
    ent.table_entry.CopyFrom(first)
    ent.table_entry.ClearField("is_const")
    with pytest.raises(grpc.RpcError) as ei:
        client.write((MOD, ent))
    assert details(ei.value)[0].canonical_code == code_pb2.PERMISSION_DENIED


def test_defaultonly_action_and_direct_counter(client) -> None:
    ids = _ids(client.p4info)
    ent = p4r.Entity()
    te = ent.table_entry
    te.table_id = ids["fwd"]
    te.match.add(field_id=1).exact.value = b"\x00\x00\x00\x00\x00\x01"
    te.action.action.action_id = ids["drop"]  # @defaultonly
    with pytest.raises(grpc.RpcError) as ei:
        client.write((INS, ent))
    assert details(ei.value)[0].canonical_code == code_pb2.INVALID_ARGUMENT
    te.action.action.action_id = ids["forward"]
    te.action.action.params.add(param_id=1, value=b"\x02")
    te.counter_data.packet_count = 3
    client.write((INS, ent))
    dc = p4r.Entity()
    dc.direct_counter_entry.table_entry.table_id = ids["fwd"]
    got = client.read(dc)
    assert [e.direct_counter_entry.data.packet_count for e in got] == [3]


def test_selector_table_with_lpm_key_and_one_shot_action_set(client) -> None:
    ids = _ids(client.p4info)
    ent = p4r.Entity()
    te = ent.table_entry
    te.table_id = ids["ecmp"]
    fm = te.match.add(field_id=1)
    fm.lpm.value, fm.lpm.prefix_len = b"\x0a\x00\x00\x00", 8
    aset = te.action.action_profile_action_set
    for port, weight in ((1, 1), (2, 3)):
        pa = aset.action_profile_actions.add(weight=weight, watch_port=bytes([port]))
        pa.action.action_id = ids["set_nh"]
        pa.action.params.add(param_id=1, value=bytes([port]))
        pa.action.params.add(param_id=2, value=bytes([0xA0 + port]))
    client.write((INS, ent))
    got = client.read(p4r.Entity(table_entry=p4r.TableEntry(table_id=ids["ecmp"])))
    actions = got[0].table_entry.action.action_profile_action_set.action_profile_actions
    assert [(a.weight, a.watch_port, a.action.params[0].value) for a in actions] == [
        (1, b"\x01", b"\x01"), (3, b"\x02", b"\x02")]
