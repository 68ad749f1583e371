"""The client's gRPC layer against p4sim's real P4Runtime server, in this process (p4rt.testing)."""

import time

import grpc
import pytest

from p4rt.client import P4RuntimeClient, parse_address, wildcard
from p4rt.entities import TableEntry
from p4rt.errors import P4RuntimeError
from p4rt.resources import Packet
from p4rt.testing import RT_BASIC_JSON, RT_BASIC_P4INFO, P4simSwitch

FRAME = bytes.fromhex("0000000000aa" "0000000000bb" "0800" "4500001400000000400600000a0000010a000002")


@pytest.fixture
def server():
    with P4simSwitch() as sw:
        yield sw


def route(prefix, path_id):
    return TableEntry.from_dict({"table": "route", "match": {"ipv4_dst": prefix}, "action": "set_path",
                                 "params": {"path_id": path_id}})


def wait_for(cond, timeout=3.0):
    deadline = time.monotonic() + timeout
    while not cond() and time.monotonic() < deadline:
        time.sleep(0.01)
    return cond()


def test_parse_address():
    assert parse_address("127.0.0.1:9559") == "127.0.0.1:9559"
    for bad in ("127.0.0.1", ":9559", "h:0", "h:x"):
        with pytest.raises(ValueError, match="expected <host>:<port>"):
            parse_address(bad)


def test_connect_pipeline_write_read(server):
    with P4RuntimeClient(server.address, device_id=1, election_id=(0, 5)) as c:
        assert c.is_primary and c.connected
        assert c.capabilities().startswith("1.")
        c.set_pipeline_files(RT_BASIC_P4INFO, RT_BASIC_JSON)
        entries = [route(f"10.0.{i}.0/24", i) for i in range(10)]
        c.insert(entries, batch_size=4)
        got = sorted(str(e) for e in c.read_entities([wildcard(c.schema, "table_entry", "route")]))
        assert got == sorted(e.canonical(c.schema) for e in entries)
        c.delete(entries[:3])
        assert len(c.read([wildcard(c.schema, "table_entry")])) == 7


def test_write_errors_carry_code_and_per_update_details(server):
    with P4RuntimeClient(server.address, device_id=1) as c:
        c.set_pipeline_files(RT_BASIC_P4INFO, RT_BASIC_JSON)
        c.insert([route("10.0.0.0/24", 1)])
        with pytest.raises(P4RuntimeError) as exc:
            c.insert([route("10.0.9.0/24", 2), route("10.0.0.0/24", 1)])
        err = exc.value
        assert err.code == grpc.StatusCode.UNKNOWN and err.operation == "write"
        assert [(d.index, d.code_name) for d in err.details] == [(1, "ALREADY_EXISTS")]
        assert "update 1: ALREADY_EXISTS" in str(err)
        # the index is relative to the caller's list when batched
        with pytest.raises(P4RuntimeError) as exc:
            c.delete([route("10.0.9.0/24", 2), route("10.0.0.0/24", 1), route("10.7.0.0/16", 1)], batch_size=2)
        assert [(d.index, d.code_name) for d in exc.value.details] == [(2, "NOT_FOUND")]


def test_arbitration_backup_then_primary(server):
    with P4RuntimeClient(server.address, device_id=1, election_id=(0, 10)) as a:
        assert a.is_primary
        with P4RuntimeClient(server.address, device_id=1, election_id=(0, 3)) as b:
            assert not b.is_primary
            with pytest.raises(P4RuntimeError) as exc:
                b.set_pipeline_files(RT_BASIC_P4INFO, RT_BASIC_JSON)
            assert exc.value.code == grpc.StatusCode.PERMISSION_DENIED
            assert b.become_primary((0, 11))
            assert wait_for(lambda: not a.is_primary)


def test_packet_out_and_packet_in_queue_and_callback(server):
    with P4RuntimeClient(server.address, device_id=1) as c:
        c.set_pipeline_files(RT_BASIC_P4INFO, RT_BASIC_JSON)
        c.packet_out(Packet(FRAME, {"egress_port": 4}))
        assert wait_for(lambda: server.front_panel) and server.front_panel == [(4, FRAME)]
        c.insert([TableEntry.from_dict({"table": "acl", "match": {"ipv4_src": {"value": "10.0.0.1",
                                        "mask": "255.255.255.255"}}, "priority": 1, "action": "to_cpu"})])
        server.device.inject(3, FRAME)
        pkt = c.packet_in(timeout=2)
        assert pkt is not None and pkt.payload == FRAME and pkt.metadata["ingress_port"] == 3
        got = []
        c.on_packet_in(got.append)
        server.device.inject(2, FRAME)
        assert wait_for(lambda: got) and got[0].metadata["ingress_port"] == 2
        assert c.packet_in(timeout=0.05) is None


def test_connect_timeout_and_lost_server():
    srv = P4simSwitch().start()
    c = P4RuntimeClient(srv.address, device_id=1, timeout=2)
    lost = []
    c.on_disconnect(lost.append)
    c.connect()
    c.set_pipeline_files(RT_BASIC_P4INFO, RT_BASIC_JSON)
    srv.stop()
    assert wait_for(lambda: lost) and not c.connected and not c.is_primary
    with pytest.raises(P4RuntimeError) as exc:
        c.packet_out(Packet(b"x", {"egress_port": 1}))
    assert exc.value.code == grpc.StatusCode.UNAVAILABLE
    c.close()
    c.close()
    with pytest.raises(P4RuntimeError, match="no P4Runtime server"):
        P4RuntimeClient(srv.address, timeout=0.3).connect()


def test_switch_restart_is_seen_and_reconnect_works():
    sw = P4simSwitch().start()
    lost = []
    c = P4RuntimeClient(sw.address, device_id=1, timeout=3)
    c.on_disconnect(lost.append)
    try:
        c.connect()
        c.set_pipeline_files(RT_BASIC_P4INFO, RT_BASIC_JSON)
        sw.stop()
        assert wait_for(lambda: lost, 5) and not c.connected
        sw.start()
        assert c.connect()
        assert c.get_pipeline() is None  # a restarted switch has no pipeline
    finally:
        c.close()
        sw.stop()
