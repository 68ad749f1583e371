"""mbb's gradual flip: the state written at the flip (no network needed)."""

from control.procedures import with_gradual_versions
from control.state import SwitchState


def state(versions):
    entries = [{"table": "path_version", "match": {"path_id": pid}, "action": "set_version", "params": {"version": v}}
               for pid, v in versions.items()]
    entries.append({"table": "path_version", "default": True, "action": "set_version", "params": {"version": 0}})
    return SwitchState.from_doc({"switch": "t1", "program": "fabric", "table_entries": entries})


def actions(st):
    return {int(e.match["path_id"]): (e.action, int(e.params["version"])) for e in st.entries
            if e.table == "path_version"}


def test_gradual_only_for_the_affected_paths():
    st = state({1: 0, 2: 0, 3: 1})
    got = with_gradual_versions(st, [1, 3])
    assert actions(got) == {1: ("set_version_gradual", 0), 2: ("set_version", 0), 3: ("set_version_gradual", 1)}
    assert actions(st) == {1: ("set_version", 0), 2: ("set_version", 0), 3: ("set_version", 1)}  # a copy
    assert [(d.action, dict(d.params)) for d in got.defaults] == [("set_version", {"version": 0})]  # immediate


def test_gradual_adds_an_entry_for_a_path_on_the_default():
    got = with_gradual_versions(state({1: 0}), [7])
    assert actions(got) == {1: ("set_version", 0), 7: ("set_version_gradual", 0)}
