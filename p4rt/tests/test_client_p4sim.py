"""The client end to end against p4sim's P4Runtime server (in this process, p4rt.testing): every entity
kind, register reads included (PI, bmv2's server, reads no registers)."""

import time

import grpc
import pytest

from p4rt.client import P4RuntimeClient, wildcard
from p4rt.entities import ActionProfileGroup, ActionProfileMember, TableEntry
from p4rt.errors import P4RuntimeError
from p4rt.resources import CounterEntry, MulticastGroup, RegisterEntry
from p4rt.testing import RT_BASIC_JSON, RT_BASIC_P4INFO, P4simSwitch


@pytest.fixture(scope="module")
def switch():
    with P4simSwitch() as sw:
        yield sw


@pytest.fixture
def client(switch):
    c = P4RuntimeClient(switch.address, device_id=1, election_id=(0, 10))
    assert c.connect()
    c.set_pipeline_files(RT_BASIC_P4INFO, RT_BASIC_JSON)
    yield c
    c.close()


def te(**d):
    return TableEntry.from_dict(d)


def test_write_read_every_kind(client):
    s = client.schema
    members = [ActionProfileMember("ecmp_selector", i, "set_nhop", {"port": i, "dmac": f"00:00:00:00:00:0{i}"})
               for i in (1, 2)]
    group = ActionProfileGroup.from_dict({"profile": "ecmp_selector", "group_id": 7, "members": [
        {"member_id": 1, "weight": 1, "watch_port": 1}, {"member_id": 2, "weight": 1, "watch_port": 2}]})
    entries = [
        te(table="route", match={"ipv4_dst": "10.0.1.0/24"}, action="set_path", params={"path_id": 3}),
        te(table="route", match={"ipv4_dst": "10.0.2.2/32"}, action="set_nhop",
           params={"port": 2, "dmac": "00:00:0a:00:02:02"}),
        te(table="ecmp", match={"path_id": 3}, group_id=7),
        te(table="acl", match={"ipv4_src": {"value": "10.0.0.0", "mask": "255.0.0.0"}, "ingress_port": 1,
                               "proto": {"low": 6, "high": 17}}, priority=10, action="to_cpu"),
    ]
    client.insert(members + [group] + entries)
    client.modify([te(table="route", default=True, action="set_path", params={"path_id": 1})])
    got = sorted(str(e) for e in client.read_entities([wildcard(s, "table_entry")]))
    assert got == sorted(e.canonical(s) for e in entries)
    assert len(client.read([wildcard(s, "table_entry", "route")])) == 2  # entries, not the default
    assert [str(e) for e in client.read_entities([TableEntry("route", default=True)])] == [
        "route default -> set_path(path_id=1)"]
    assert [str(m) for m in client.read_entities([wildcard(s, "action_profile_member")])] == [
        "ecmp_selector member 1 -> set_nhop(port=1, dmac=00:00:00:00:00:01)",
        "ecmp_selector member 2 -> set_nhop(port=2, dmac=00:00:00:00:00:02)"]
    assert [str(g) for g in client.read_entities([wildcard(s, "action_profile_group")])] == [
        "ecmp_selector group 7 -> [1*1@1, 2*1@2]"]
    client.insert([MulticastGroup.from_dict({"group_id": 1, "replicas": [1, 2]})])
    assert [str(g) for g in client.read_entities([wildcard(s, "multicast_group_entry")])] == [
        "multicast 1 -> [1.0, 2.0]"]
    client.modify([RegisterEntry("scratch", 3, 77)])
    assert str(client.read_entities([RegisterEntry("scratch", 3)])[0]) == "scratch[3] = 77"
    cells = client.read_entities([CounterEntry("port_rx")])
    assert len(cells) == 512 and all(c.packets == 0 for c in cells)
    # clean up in reverse order
    client.delete(entries)
    client.delete([group])
    client.delete(members)
    assert client.read([wildcard(s, "table_entry")]) == []


def test_per_update_errors_from_the_switch(client):
    r = te(table="route", match={"ipv4_dst": "10.9.0.0/16"}, action="drop")
    client.insert([r])
    with pytest.raises(P4RuntimeError) as exc:
        client.insert([te(table="route", match={"ipv4_dst": "10.8.0.0/16"}, action="drop"), r])
    err = exc.value
    assert [(d.index, d.code_name) for d in err.details] == [(1, "ALREADY_EXISTS")]
    with pytest.raises(P4RuntimeError) as exc:
        client.delete([te(table="route", match={"ipv4_dst": "10.7.0.0/16"}, action="drop")])
    assert exc.value.details[0].code_name == "NOT_FOUND"
    client.delete([r, te(table="route", match={"ipv4_dst": "10.8.0.0/16"}, action="drop")])


def test_a_batch_past_the_table_size_reports_every_failed_update(client):
    # the route table holds 1024: a batch of 1030 fails 6 updates, all reported (large trailers)
    entries = [te(table="route", match={"ipv4_dst": f"10.{i // 256}.{i % 256}.0/24"}, action="drop")
               for i in range(1030)]
    with pytest.raises(P4RuntimeError) as exc:
        client.insert(entries)
    assert len(exc.value.details) == 6
    assert {d.code_name for d in exc.value.details} == {"RESOURCE_EXHAUSTED"}
    client.delete(entries[:1024])


def test_backup_cannot_write_and_pipeline_is_shared(switch, client):
    with P4RuntimeClient(switch.address, device_id=1, election_id=(0, 2)) as backup:
        assert not backup.is_primary
        assert backup.get_pipeline() is not None
        assert backup.schema.tables["route"].preamble.name == "RtIngress.route"
        with pytest.raises(P4RuntimeError) as exc:
            backup.insert([te(table="route", match={"ipv4_dst": "10.5.0.0/16"}, action="drop")])
        assert exc.value.code == grpc.StatusCode.PERMISSION_DENIED


def test_batched_install_rate(client):
    entries = [te(table="route", match={"ipv4_dst": f"10.{i // 256}.{i % 256}.0/24"}, action="drop")
               for i in range(1000)]
    t0 = time.perf_counter()
    client.insert(entries, batch_size=500)
    rate = len(entries) / (time.perf_counter() - t0)
    assert len(client.read([wildcard(client.schema, "table_entry", "route")])) == 1000
    client.delete(entries, batch_size=500)
    assert rate > 100  # entries/s; the figure is printed by scripts/, this only guards a collapse


def test_install_clear_tables_and_counter_packets(client):
    s = client.schema
    entries = [te(table="route", default=True, action="set_path", params={"path_id": 2}),
               te(table="route", match={"ipv4_dst": "10.0.1.0/24"}, action="set_path", params={"path_id": 3}),
               te(table="route", match={"ipv4_dst": "10.0.2.0/24"}, action="set_path", params={"path_id": 4})]
    client.install(entries)  # the default is modified, the others inserted
    assert len(client.read([wildcard(s, "table_entry", "route")])) == 2
    assert [str(e) for e in client.read_entities([TableEntry("route", default=True)])] == [
        "route default -> set_path(path_id=2)"]
    client.clear_tables(["route"])
    assert client.read([wildcard(s, "table_entry", "route")]) == []  # the default stays
    assert len(client.read_entities([TableEntry("route", default=True)])) == 1
    assert client.counter_packets(["port_rx"], [1, 2, 3]) == {"port_rx": 0}
    client.modify([te(table="route", default=True, action="set_path", params={"path_id": 1})])
