"""What the switch refuses at config load and in malformed requests, each with INVALID_ARGUMENT naming
what was wrong: P4Infos with duplicate or zero IDs and names (as Stratum's P4InfoManager), sizes bmv2
cannot read or the machine cannot hold, strings that are not UTF-8."""

from __future__ import annotations

import copy
import json
import subprocess
import sys

import grpc
import pytest

from p4sim.switch import heap
from p4sim.switch.device import Device
from p4sim.switch.p4runtime.proto import p4i, p4r
from p4sim.switch.p4runtime.testing import load_p4info, program_files, running_switch
from p4sim.target import free_port
from p4sim.tests.test_p4runtime_server import INS, SET_NHOP, Client, b, details, route

BAD_UTF8 = b"\xff\xfe"


@pytest.fixture
def switch():
    with running_switch() as sw:
        yield sw


def _push(sw, p4info: p4i.P4Info | None = None, doc: dict | None = None) -> grpc.RpcError | None:  # noqa: ANN001
    jpath, ipath = program_files()
    req = p4r.SetForwardingPipelineConfigRequest(
        device_id=1, action=p4r.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT)
    req.config.p4info.CopyFrom(p4info if p4info is not None else load_p4info(ipath))
    req.config.p4_device_config = json.dumps(doc).encode() if doc is not None else jpath.read_bytes()
    client = Client(sw.address, election=None)
    try:
        client.stub.SetForwardingPipelineConfig(req, timeout=30)
        return None
    except grpc.RpcError as e:
        return e
    finally:
        client.close()


def _refused(err: grpc.RpcError | None, *words: str) -> str:
    assert err is not None, "accepted"
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT, (err.code(), err.details())
    for w in words:
        assert w in err.details(), err.details()
    return err.details()


def _variant(edit) -> p4i.P4Info:  # noqa: ANN001
    info = copy.deepcopy(load_p4info(program_files()[1]))
    edit(info)
    return info


def test_p4info_ids_and_names_must_be_unique_and_set(switch) -> None:
    def same_table_id(i: p4i.P4Info) -> None:
        i.tables[1].preamble.id = i.tables[0].preamble.id

    def action_id_of_a_table(i: p4i.P4Info) -> None:
        i.actions[1].preamble.id = i.tables[0].preamble.id

    def same_table_name(i: p4i.P4Info) -> None:
        i.tables[1].preamble.name = i.tables[0].preamble.name

    def zero_id(i: p4i.P4Info) -> None:
        i.counters[0].preamble.id = 0

    def same_match_field_id(i: p4i.P4Info) -> None:
        t = next(t for t in i.tables if len(t.match_fields) > 1)
        t.match_fields[1].id = t.match_fields[0].id

    def same_param_id(i: p4i.P4Info) -> None:
        a = next(a for a in i.actions if len(a.params) > 1)
        a.params[1].id = a.params[0].id

    tables = [t.preamble.name for t in load_p4info(program_files()[1]).tables]
    _refused(_push(switch, _variant(same_table_id)), tables[1], tables[0], "not unique")
    _refused(_push(switch, _variant(action_id_of_a_table)), tables[0], "not unique")
    _refused(_push(switch, _variant(same_table_name)), tables[0], "name is not unique")
    _refused(_push(switch, _variant(zero_id)), "RtIngress.port_rx", "id 0")
    _refused(_push(switch, _variant(same_match_field_id)), "RtIngress.acl", "match field id 1 is not unique")
    _refused(_push(switch, _variant(same_param_id)), "RtIngress.set_nhop", "parameter id 1 is not unique")
    # nothing of those was committed; the good config is, and its tables are writable
    assert switch.service.committed is None
    assert _push(switch) is None
    client = Client(switch.address, election=None)
    client.write((INS, route(0x0A000000, 8, SET_NHOP, b(1), b(2, 6))))
    assert len(client.read(route(0x0A000000, 8))) == 1
    client.close()


def _rt_basic(**sizes: int) -> dict:
    doc = json.loads(program_files()[0].read_bytes())
    for kind, objects in (("counter", doc["counter_arrays"]), ("register", doc["register_arrays"])):
        for o in objects:
            if f"{kind}_size" in sizes and "size" in o:
                o["size"] = sizes[f"{kind}_size"]
    return doc


def test_sizes_bmv2_cannot_read_are_refused_naming_the_object(switch) -> None:
    _refused(_push(switch, doc=_rt_basic(counter_size=10**12)), "counter RtIngress.port_rx", "size 1000000000000")
    _refused(_push(switch, doc=_rt_basic(register_size=-1)), "register RtIngress.scratch", "size -1")
    doc = _rt_basic()
    doc["pipelines"][0]["tables"][0]["max_size"] = 2**32
    _refused(_push(switch, doc=doc), doc["pipelines"][0]["tables"][0]["name"], "32-bit")
    assert switch.service.committed is None


def test_arrays_the_machine_cannot_hold_are_refused_before_allocation(switch, monkeypatch) -> None:
    monkeypatch.setattr(heap, "available_bytes", lambda: 1 << 30)  # 1 GiB left
    details = _refused(_push(switch, doc=_rt_basic(register_size=2**27 + 1)), "register RtIngress.scratch",
                       "more than the 1.0 GiB available")
    assert "needs 1.0 GiB" in details
    assert _push(switch, doc=_rt_basic(register_size=2**20)) is None  # 8 MiB: fits


def test_the_switch_command_refuses_such_a_program_with_one_line(tmp_path) -> None:
    prog = tmp_path / "big.json"
    prog.write_text(json.dumps(_rt_basic(counter_size=4294967296000)))
    res = subprocess.run([sys.executable, "-m", "p4sim", "switch", str(prog), "--", "--grpc-server-addr",
                          f"127.0.0.1:{free_port()}"], capture_output=True, text=True, timeout=60)
    assert res.returncode == 1
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "counter RtIngress.port_rx: size 4294967296000" in lines[0], res.stderr


def test_device_load_names_the_array() -> None:
    with pytest.raises(ValueError, match=r"counter RtIngress.port_rx: size 4294967296000 is not in 0\.\.4294967295"):
        Device().load_pipeline(json.dumps(_rt_basic(counter_size=4294967296000)))


def _field(number: int, data: bytes) -> bytes:
    """A length-delimited protobuf field (short payloads)."""
    return bytes([number << 3 | 2, len(data)]) + data


def test_strings_that_are_not_utf8_are_invalid_argument(switch) -> None:
    channel = grpc.insecure_channel(switch.address)
    raw = {"Write": b"\x08\x01" + _field(6, BAD_UTF8),  # device_id 1, role
           "SetForwardingPipelineConfig": b"\x08\x01" + _field(6, BAD_UTF8)}
    for method, request in raw.items():
        call = channel.unary_unary(f"/p4.v1.P4Runtime/{method}")
        with pytest.raises(grpc.RpcError) as exc:
            call(request, timeout=10)
        assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT, (method, exc.value.details())
        assert "role is not valid UTF-8" in exc.value.details()
    # arbitration with a role name that is not UTF-8: the stream ends with INVALID_ARGUMENT
    arbitration = b"\x08\x01" + _field(2, _field(3, BAD_UTF8))  # device_id 1, role { name }
    stream = channel.stream_stream("/p4.v1.P4Runtime/StreamChannel")(iter([_field(1, arbitration)]), timeout=10)
    with pytest.raises(grpc.RpcError) as exc:
        list(stream)
    assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "Role.name is not valid UTF-8" in exc.value.details()
    # and the server still answers
    client = Client(switch.address)
    assert client.arbitrate().arbitration.status.code == 0
    client.close()
    channel.close()


def test_p4info_forms_of_p4c_that_pi_accepts(switch) -> None:
    # an action the JSON does not have (p4c lists a NoAction its JSON dropped), also in a table's
    # action_refs, and a key field without width (p4c gives an `error` key no bitwidth; the JSON 32 bits)
    def extra_action(i: p4i.P4Info) -> None:
        a = i.actions.add()
        a.preamble.id, a.preamble.name, a.preamble.alias = 0x01FFFFF0, "OnlyInP4Info", "OnlyInP4Info"
        i.tables[0].action_refs.add().id = a.preamble.id

    def widthless_key(i: p4i.P4Info) -> None:
        i.tables[0].match_fields[0].bitwidth = 0

    def wrong_width_key(i: p4i.P4Info) -> None:
        i.tables[0].match_fields[0].bitwidth += 1

    assert _push(switch, _variant(extra_action)) is None
    assert _push(switch, _variant(widthless_key)) is None
    table = load_p4info(program_files()[1]).tables[0].preamble.name
    _refused(_push(switch, _variant(wrong_width_key)), table, "in the device config")


def test_p4info_table_the_json_lacks_loads_and_refuses_writes(switch) -> None:
    # p4c lists a table its JSON dropped as dead code (gauntlet_nested_switch-bmv2: applied after a
    # return that always runs); PI loads that config, and a write naming the table fails
    dead = 0x02FFFFF0

    def dead_table(i: p4i.P4Info) -> None:
        t = i.tables.add()
        t.preamble.id, t.preamble.name, t.preamble.alias = dead, "ingress.dead", "dead"
        t.action_refs.add().id = i.actions[0].preamble.id
        t.size = 16

    assert _push(switch, _variant(dead_table)) is None
    client = Client(switch.address)
    client.arbitrate()
    ent = p4r.Entity()
    ent.table_entry.table_id = dead
    ent.table_entry.action.action.action_id = load_p4info(program_files()[1]).actions[0].preamble.id
    with pytest.raises(grpc.RpcError) as exc:
        client.write((INS, ent))
    [err] = details(exc.value)
    assert err.canonical_code == grpc.StatusCode.INVALID_ARGUMENT.value[0]
    assert err.message == "table 'ingress.dead' is not in the device config (the compiler removed it)"
    client.close()
