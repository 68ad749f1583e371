"""diff_states: two desired states of one switch, as canonical lines in a safe order."""

import pytest

from p4rt.diff import diff_states
from p4rt.entities import ActionProfileGroup, ActionProfileMember, GroupMember, TableEntry
from p4rt.state import SwitchState


def state(entries=(), members=(), groups=(), defaults=(), name="s1"):
    return SwitchState(name, "fabric", 1, list(members), list(groups), list(entries), list(defaults))


def member(mid, port):
    return ActionProfileMember("ecmp_selector", mid, "set_next_hop", {"port": port, "dmac": "00:00:00:00:00:01"})


def test_changes_in_a_safe_order_as_canonical_lines():
    route = TableEntry("route", {"ipv4_dst": "10.0.1.0/24"}, "set_path", {"path_id": 1})
    old = state([route, TableEntry("ecmp_group", {"path_id": 1, "version": 0}, group_id=1)], [member(1, 3)],
                [ActionProfileGroup("ecmp_selector", 1, [GroupMember(1)])],
                [TableEntry("path_version", default=True, action="set_version", params={"version": 0})])
    new = state([TableEntry("route", {"ipv4_dst": "10.0.1.0/24"}, "set_path", {"path_id": 2}),
                 TableEntry("ecmp_group", {"path_id": 2, "version": 0}, group_id=2)], [member(2, 4)],
                [ActionProfileGroup("ecmp_selector", 2, [GroupMember(2)])],
                [TableEntry("path_version", default=True, action="set_version", params={"version": 1})])
    assert [str(c) for c in diff_states(old, new)] == [
        "+ ecmp_selector member 2 -> set_next_hop(port=4, dmac=00:00:00:00:00:01)",
        "+ ecmp_selector group 2 -> [2*1]",
        "~ route ipv4_dst=10.0.1.0/24 -> set_path(path_id=1) => route ipv4_dst=10.0.1.0/24 -> set_path(path_id=2)",
        "+ ecmp_group path_id=2 version=0 -> group(2)",
        "~ path_version default -> set_version(version=0) => path_version default -> set_version(version=1)",
        "- ecmp_group path_id=1 version=0 -> group(1)",
        "- ecmp_selector group 1 -> [1*1]",
        "- ecmp_selector member 1 -> set_next_hop(port=3, dmac=00:00:00:00:00:01)",
    ]
    assert diff_states(new, new) == []


def test_priority_is_part_of_an_entry_identity_and_switches_must_match():
    acl = {"ipv4_src": {"value": "10.0.0.2", "mask": "255.255.255.255"}}
    a = state([TableEntry("acl", acl, "acl_drop", priority=10)])
    b = state([TableEntry("acl", acl, "acl_drop", priority=20)])
    assert [(c.op, c.kind) for c in diff_states(a, b)] == [("insert", "entry"), ("delete", "entry")]
    with pytest.raises(ValueError, match="states of 's1' and 's2': expected two states of one switch"):
        diff_states(a, state(name="s2"))
