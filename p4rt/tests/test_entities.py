import pytest

from p4rt.entities import ActionProfileGroup, ActionProfileMember, TableEntry
from p4rt.proto import p4r


def te(d):
    return TableEntry.from_dict(d)


def test_route_entry_round_trip_and_canonical(schema):
    e = te({"table": "route", "match": {"ipv4_dst": "10.0.1.0/24"}, "action": "set_path",
            "params": {"path_id": 3}})
    msg = e.to_proto(schema).table_entry
    assert msg.table_id == 1001
    assert msg.match[0].lpm.value == bytes([10, 0, 1, 0]) and msg.match[0].lpm.prefix_len == 24
    assert msg.action.action.params[0].value == b"\x03"
    assert e.canonical(schema) == "route ipv4_dst=10.0.1.0/24 -> set_path(path_id=3)"


def test_host_route_and_macs(schema):
    e = te({"table": "route", "match": {"ipv4_dst": "10.0.0.2/32"}, "action": "to_host",
            "params": {"dmac": "00:00:0A:00:00:02", "port": 1}})
    assert e.canonical(schema) == "route ipv4_dst=10.0.0.2/32 -> to_host(port=1, dmac=00:00:0a:00:00:02)"


def test_lpm_zero_prefix_is_omitted(schema):
    e = te({"table": "route", "match": {"ipv4_dst": "0.0.0.0/0"}, "action": "route_drop"})
    assert len(e.to_proto(schema).table_entry.match) == 0
    assert e.canonical(schema) == "route -> route_drop()"


def test_ternary_optional_range_priority(schema):
    e = te({"table": "acl", "match": {"ipv4_src": {"value": "10.0.0.2", "mask": "255.255.255.255"},
                                      "ingress_port": 1, "l4_dport": {"low": 80, "high": 90}},
            "priority": 10, "action": "acl_drop", "params": {}})
    msg = e.to_proto(schema).table_entry
    assert msg.priority == 10
    assert [m.WhichOneof("field_match_type") for m in msg.match] == ["ternary", "optional", "range"]
    assert e.canonical(schema) == (
        "acl ipv4_src=10.0.0.2&&&255.255.255.255 ingress_port=1 l4_dport=80..90 priority=10 -> acl_drop()")
    full_range = te({"table": "acl", "match": {"l4_dport": {"low": 0, "high": 65535}}, "priority": 1,
                     "action": "acl_drop"})
    assert len(full_range.to_proto(schema).table_entry.match) == 0


def test_priority_rules(schema):
    with pytest.raises(ValueError, match="expected a positive priority"):
        te({"table": "acl", "match": {}, "action": "acl_drop"}).to_proto(schema)
    with pytest.raises(ValueError, match="table has no ternary"):
        te({"table": "route", "match": {"ipv4_dst": "10.0.0.0/8"}, "priority": 3,
            "action": "route_drop"}).to_proto(schema)


def test_default_entry(schema):
    e = te({"table": "path_version", "default": True, "action": "set_version", "params": {"version": 0}})
    msg = e.to_proto(schema).table_entry
    assert msg.is_default_action and not msg.match
    assert e.canonical(schema) == "path_version default -> set_version(version=0)"


def test_member_and_group_refs(schema):
    e = te({"table": "ecmp_group", "match": {"path_id": 2, "version": 0}, "group_id": 1})
    assert e.to_proto(schema).table_entry.action.action_profile_group_id == 1
    assert e.canonical(schema) == "ecmp_group path_id=2 version=0 -> group(1)"
    m = te({"table": "ecmp_group", "match": {"path_id": 2, "version": 1}, "member_id": 7})
    assert m.canonical(schema) == "ecmp_group path_id=2 version=1 -> member(7)"


@pytest.mark.parametrize("d,msg", [
    ({"table": "route", "match": {"ipv4_dst": "10.0.0.0/8"}}, "exactly one of"),
    ({"table": "route", "action": "set_path", "group_id": 1}, "exactly one of"),
    ({"table": "route", "action": "set_path", "bogus": 1}, "unknown keys"),
])
def test_bad_dicts(d, msg):
    with pytest.raises(ValueError, match=msg):
        TableEntry.from_dict(d)


@pytest.mark.parametrize("d,msg", [
    ({"table": "route", "match": {"ipv4_dst": "10.0.0.0/8"}, "action": "set_path", "params": {}},
     "missing param 'path_id'"),
    ({"table": "route", "match": {"ipv4_dst": "10.0.0.0/8"}, "action": "set_path",
      "params": {"path_id": 1, "x": 2}}, "unknown params"),
    ({"table": "route", "match": {"ipv4_dst": "10.0.0.0/8"}, "action": "set_path",
      "params": {"path_id": 70000}}, "does not fit in 16 bits"),
    ({"table": "path", "match": {"path_id": 1}, "action": "path_ecmp"}, "exact fields"),
    ({"table": "path", "match": {"path_id": 1, "version": 0}, "action": "set_path",
      "params": {"path_id": 1}}, "action of table"),
    ({"table": "nope", "action": "x"}, "unknown table 'nope'"),
])
def test_bad_entries_raise_one_line(schema, d, msg):
    with pytest.raises(ValueError, match=msg) as exc:
        TableEntry.from_dict(d).to_proto(schema)
    assert "\n" not in str(exc.value)


def test_profile_member_and_group(schema):
    m = ActionProfileMember.from_dict({"profile": "ecmp_selector", "member_id": 1, "action": "set_next_hop",
                                       "params": {"port": 3, "dmac": "00:00:00:01:00:03"}})
    assert m.canonical(schema) == "ecmp_selector member 1 -> set_next_hop(port=3, dmac=00:00:00:01:00:03)"
    assert m.to_proto(schema).action_profile_member.action_profile_id == 3001
    g = ActionProfileGroup.from_dict({"profile": "ecmp_selector", "group_id": 1, "members": [
        {"member_id": 2, "weight": 1, "watch_port": 4}, {"member_id": 1, "weight": 2, "watch_port": 3}]})
    msg = g.to_proto(schema).action_profile_group
    assert msg.members[1].watch_port == b"\x03" and msg.members[1].weight == 2
    assert g.canonical(schema) == "ecmp_selector group 1 -> [1*2@3, 2*1@4]"
    # the deprecated int32 watch field decodes too
    ent = p4r.Entity()
    ent.action_profile_group.action_profile_id = 3001
    ent.action_profile_group.members.add(member_id=5, weight=1, watch=9)
    assert str(ActionProfileGroup.from_proto(schema, ent)) == "ecmp_selector group 0 -> [5*1@9]"
    assert ActionProfileGroup.from_dict(g.to_dict()) == g


def test_dict_round_trip(schema):
    d = {"table": "acl", "match": {"ipv4_src": {"value": "10.0.0.2", "mask": "255.255.255.255"}},
         "priority": 5, "action": "acl_forward", "params": {"port": 2}}
    e = TableEntry.from_dict(d)
    assert TableEntry.from_dict(e.to_dict()) == e
    assert e.key(schema) == TableEntry.from_dict({**d, "action": "acl_drop", "params": {}}).key(schema)
