"""SwitchState: the document and JSON text of tablegen/FORMAT.md, both ways."""

import json

import pytest

from p4rt.state import SwitchState

DOC = {
    "switch": "s1", "device_id": 3, "program": "fabric",
    "action_profile_members": [{"profile": "ecmp_selector", "member_id": 1, "action": "set_next_hop",
                                "params": {"port": 3, "dmac": "00:00:00:01:00:03"}}],
    "action_profile_groups": [{"profile": "ecmp_selector", "group_id": 1,
                               "members": [{"member_id": 1, "weight": 1, "watch_port": 3}]}],
    "table_entries": [
        {"table": "route", "match": {"ipv4_dst": "10.1.0.0/16"}, "action": "set_path", "params": {"path_id": 2}},
        {"table": "ecmp_group", "match": {"path_id": 2, "version": 0}, "group_id": 1},
        {"table": "acl", "match": {"ipv4_src": {"value": "10.0.0.2", "mask": "255.255.255.255"}}, "priority": 10,
         "action": "acl_drop", "params": {}},
        {"table": "path_version", "default": True, "action": "set_version", "params": {"version": 0}},
    ],
    "multicast_groups": [{"group_id": 1, "replicas": [{"port": 1}, {"port": 2, "instance": 1}]}],
    "clone_sessions": [{"session_id": 100, "replicas": [{"port": 255}]}],
}


def test_document_round_trip():
    st = SwitchState.from_doc(DOC)
    assert len(st.entries) == 3 and [str(d) for d in st.defaults] == ["path_version default -> set_version(version=0)"]
    assert st.to_doc() == DOC
    assert SwitchState.from_doc(st.to_doc()) == st


def test_json_text_one_entity_per_line():
    st = SwitchState.from_doc(DOC)
    text = st.to_json()
    assert json.loads(text) == DOC and SwitchState.from_json(text) == st
    lines = text.splitlines()
    assert lines[0] == "{" and lines[1] == '  "switch": "s1",' and lines[-1] == "}"
    assert '    {"table": "route", "match": {"ipv4_dst": "10.1.0.0/16"}, "action": "set_path", "params": {"path_id": 2}},' \
        in lines
    bare = SwitchState("ocs", "ocs", 9)
    assert json.loads(bare.to_json()) == {"switch": "ocs", "device_id": 9, "program": "ocs", "action_profile_members": [],
                                          "action_profile_groups": [], "table_entries": []}
    assert bare.lines() == [] and st.lines()[0] == "ecmp_selector member 1 -> set_next_hop(port=3, dmac=00:00:00:01:00:03)"


@pytest.mark.parametrize(("text", "msg"), [
    ('{"switch": ', "f.json: not JSON (Expecting value at line 1)"),
    ('{"switch": "s1", "program": "fabric"}', "f.json: missing 'table_entries'"),
    ('{"switch": "s1", "program": "fabric", "table_entries": [{"table": "route"}]}',
     "f.json: table entry for 'route': has none; expected exactly one of action, member_id, group_id"),
])
def test_bad_text_is_one_line_naming_the_source(text, msg):
    with pytest.raises(ValueError) as exc:
        SwitchState.from_json(text, "f.json")
    assert str(exc.value) == msg
