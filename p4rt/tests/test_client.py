import time

import grpc
import pytest

from p4rt.client import P4RuntimeClient, parse_address, wildcard
from p4rt.entities import TableEntry
from p4rt.errors import P4RuntimeError
from p4rt.resources import Packet
from p4rt.tests.p4rt_server import LoopbackP4RuntimeServer


@pytest.fixture
def server():
    srv = LoopbackP4RuntimeServer()
    srv.start()
    yield srv
    srv.stop()


def route(prefix, path_id):
    return TableEntry.from_dict({"table": "route", "match": {"ipv4_dst": prefix}, "action": "set_path",
                                 "params": {"path_id": path_id}})


def test_parse_address():
    assert parse_address("127.0.0.1:9559") == "127.0.0.1:9559"
    for bad in ("127.0.0.1", ":9559", "h:0", "h:x"):
        with pytest.raises(ValueError, match="expected <host>:<port>"):
            parse_address(bad)


def test_connect_pipeline_write_read(server, schema):
    with P4RuntimeClient(f"127.0.0.1:{server.port}", device_id=1, election_id=(0, 5)) as c:
        assert c.is_primary and c.connected
        assert c.capabilities() == "1.4.1"
        c.set_pipeline(schema, b"{}")
        entries = [route(f"10.0.{i}.0/24", i) for i in range(10)]
        c.insert(entries, batch_size=4)
        got = sorted(str(e) for e in c.read_entities([wildcard(c.schema, "table_entry", "route")]))
        assert got == sorted(e.canonical(schema) for e in entries)
        c.delete(entries[:3])
        assert len(c.read([wildcard(c.schema, "table_entry")])) == 7


def test_write_errors_carry_code_and_per_update_details(server, schema):
    with P4RuntimeClient(f"127.0.0.1:{server.port}", device_id=1) as c:
        c.set_pipeline(schema, b"{}")
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


def test_arbitration_backup_then_primary(server, schema):
    addr = f"127.0.0.1:{server.port}"
    with P4RuntimeClient(addr, device_id=1, election_id=(0, 10)) as a:
        assert a.is_primary
        with P4RuntimeClient(addr, device_id=1, election_id=(0, 3)) as b:
            assert not b.is_primary
            with pytest.raises(P4RuntimeError) as exc:
                b.set_pipeline(schema, b"{}")
            assert exc.value.code == grpc.StatusCode.PERMISSION_DENIED
            assert b.become_primary((0, 11))
            deadline = time.monotonic() + 2
            while a.is_primary and time.monotonic() < deadline:
                time.sleep(0.01)
            assert not a.is_primary


def test_packet_out_in_queue_and_callback(server, schema):
    with P4RuntimeClient(f"127.0.0.1:{server.port}", device_id=1, schema=schema) as c:
        c.packet_out(Packet(b"probe", {"egress_port": 4}))
        pkt = c.packet_in(timeout=2)
        assert pkt is not None and pkt.payload == b"probe"
        got = []
        c.on_packet_in(got.append)
        c.packet_out(Packet(b"cb", {"egress_port": 1}))
        deadline = time.monotonic() + 2
        while not got and time.monotonic() < deadline:
            time.sleep(0.01)
        assert got and got[0].payload == b"cb"
        assert c.packet_in(timeout=0.05) is None


def test_connect_timeout_and_lost_server(schema):
    srv = LoopbackP4RuntimeServer()
    port = srv.start()
    c = P4RuntimeClient(f"127.0.0.1:{port}", device_id=1, timeout=2, schema=schema)
    lost = []
    c.on_disconnect(lost.append)
    c.connect()
    srv.stop()
    deadline = time.monotonic() + 3
    while not lost and time.monotonic() < deadline:
        time.sleep(0.02)
    assert lost and not c.connected and not c.is_primary
    with pytest.raises(P4RuntimeError) as exc:
        c.packet_out(Packet(b"x", {"egress_port": 1}))
    assert exc.value.code == grpc.StatusCode.UNAVAILABLE
    c.close()
    c.close()
    with pytest.raises(P4RuntimeError, match="no P4Runtime server"):
        P4RuntimeClient(f"127.0.0.1:{port}", timeout=0.3).connect()
