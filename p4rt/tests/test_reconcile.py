import pytest

from fabric.state import path_versions, with_failover, with_version_entries_from, with_versions
from p4rt.entities import ActionProfileGroup, ActionProfileMember, TableEntry
from p4rt.proto import p4r
from p4rt.reconcile import Held, plan
from p4rt.state import SwitchState


def state(entries, members=(), groups=(), defaults=()):
    return SwitchState("s1", "fabric", 1, list(members), list(groups), list(entries), list(defaults))


def route(prefix, pid):
    return TableEntry("route", {"ipv4_dst": prefix}, "set_path", {"path_id": pid})


def path(pid, port, ver=0):
    return TableEntry("path", {"path_id": pid, "version": ver}, "path_static",
                      {"port": port, "dmac": "00:00:00:00:00:01"})


def held_of(schema, st):
    h = Held()
    h.entries = [e.to_proto(schema) for e in st.entries]
    h.members = [m.to_proto(schema) for m in st.members]
    h.groups = [g.to_proto(schema) for g in st.groups]
    h.defaults = [d.to_proto(schema) for d in st.defaults]
    h.pre = [x.to_proto(schema) for x in [*st.multicast, *st.clones]]
    return h


def kinds(p):
    names = {p4r.Update.INSERT: "+", p4r.Update.MODIFY: "~", p4r.Update.DELETE: "-"}
    return [[names[u.type] + u.entity.WhichOneof("entity") for u in ph] for ph in p.phases]


def test_empty_switch_gets_everything_in_dependency_order(schema):
    m = ActionProfileMember("ecmp_selector", 1, "set_next_hop", {"port": 1, "dmac": "00:00:00:00:00:01"})
    g = ActionProfileGroup.from_dict({"profile": "ecmp_selector", "group_id": 1, "members": [1]})
    want = state([route("10.0.1.0/24", 1), path(1, 2),
                  TableEntry("ecmp_group", {"path_id": 1, "version": 0}, group_id=1)], [m], [g],
                 [TableEntry("path_version", default=True, action="set_version", params={"version": 0})])
    p = plan(schema, want, Held())
    assert kinds(p) == [["+action_profile_member"], ["+action_profile_group"],
                        ["+table_entry", "+table_entry", "~table_entry"], ["+table_entry"]]
    assert p.lines[-1] == "+ route ipv4_dst=10.0.1.0/24 -> set_path(path_id=1)"  # routes last
    assert (p.inserts, p.modifies, p.deletes) == (5, 1, 0)


def test_in_sync_is_empty_and_differences_are_minimal(schema):
    want = state([route("10.0.1.0/24", 1), path(1, 2), path(2, 3)])
    assert plan(schema, want, held_of(schema, want)).empty
    have = state([route("10.0.1.0/24", 1), path(1, 9), route("10.9.0.0/16", 2), path(7, 1)])
    p = plan(schema, want, held_of(schema, have))
    assert sorted(p.lines) == sorted([
        "~ path path_id=1 version=0 -> path_static(port=2, dmac=00:00:00:00:00:01)",
        "+ path path_id=2 version=0 -> path_static(port=3, dmac=00:00:00:00:00:01)",
        "- route ipv4_dst=10.9.0.0/16 -> set_path(path_id=2)",
        "- path path_id=7 version=0 -> path_static(port=1, dmac=00:00:00:00:00:01)"])
    # deletions: the stale route before the stale path it might point at
    assert [line[:7] for line in p.lines if line.startswith("-")] == ["- route", "- path "]
    nodelete = plan(schema, want, held_of(schema, have), delete=False)
    assert nodelete.deletes == 0 and nodelete.modifies == 1


def test_default_entry_only_when_different(schema):
    d = TableEntry("path_version", default=True, action="set_version", params={"version": 1})
    want = state([], defaults=[d])
    assert plan(schema, want, held_of(schema, want)).empty
    other = state([], defaults=[TableEntry("path_version", default=True, action="set_version",
                                           params={"version": 0})])
    assert plan(schema, want, held_of(schema, other)).lines == ["~ path_version default -> set_version(version=1)"]


def test_groups_and_members_modified_and_deleted_in_reverse(schema):
    m1 = ActionProfileMember("ecmp_selector", 1, "set_next_hop", {"port": 1, "dmac": "00:00:00:00:00:01"})
    m2 = ActionProfileMember("ecmp_selector", 2, "set_next_hop", {"port": 2, "dmac": "00:00:00:00:00:02"})
    g_old = ActionProfileGroup.from_dict({"profile": "ecmp_selector", "group_id": 1, "members": [1, 2]})
    g_new = ActionProfileGroup.from_dict({"profile": "ecmp_selector", "group_id": 1, "members": [1]})
    have = state([], [m1, m2], [g_old])
    want = state([], [m1], [g_new])
    p = plan(schema, want, held_of(schema, have))
    assert kinds(p) == [["~action_profile_group"], ["-action_profile_member"]]


def test_versions_helpers():
    st = state([TableEntry("path_version", {"path_id": 1}, "set_version", {"version": 0}), route("10.0.0.0/8", 1)])
    flipped = with_versions(st, {1: 1, 5: 1})
    assert path_versions(flipped) == {1: 1, 5: 1} and path_versions(st) == {1: 0}
    assert path_versions(with_version_entries_from(flipped, st)) == {1: 0}


# -- the port_liveness sentinel (p4src/README.md) on the real fabric P4Info -------------------------


@pytest.fixture(scope="module")
def fabric(tmp_path_factory):
    from control.tests.netbed import compile_program

    return compile_program("fabric", tmp_path_factory.mktemp("fabric")).schema


def _generated(failover=True, name="e0_0"):
    from control.network import generate_states
    from topo.generators import fattree

    return generate_states(fattree(4), "ecmp", failover=failover)[name]


def test_sentinel_written_alone_first(fabric):
    p = plan(fabric, _generated(), Held())
    assert p.lines[0] == "+ liveness_selector member 1 -> port_down()" and len(p.phases[0]) == 1
    assert p.lines[1].startswith("+ liveness_selector member 1000 -> port_up()") and not p.rebuilt


def test_failover_toggle_is_a_clean_diff(fabric):
    on, off = _generated(True), _generated(False)
    assert off == with_failover(on, False) and on == with_failover(off, True)
    p = plan(fabric, off, held_of(fabric, on))
    assert (p.inserts, p.modifies, p.deletes) == (0, 4, 0) and not p.rebuilt
    assert sorted(p.lines)[0] == "~ port_liveness port=1 -> group(9999)"
    assert plan(fabric, on, held_of(fabric, off)).modifies == 4
    assert plan(fabric, on, held_of(fabric, on)).empty


def test_missing_or_changed_sentinel_rebuilds_the_profile(fabric):
    want = _generated()
    # an old layout: port_up members (one of them with the sentinel's id) and no port_down member
    old = want.copy()
    old.members = [m for m in old.members if m.action != "port_down"]
    old.members.append(ActionProfileMember("liveness_selector", 1, "port_up"))
    p = plan(fabric, want, held_of(fabric, old))
    assert p.rebuilt == ["liveness_selector"]
    first_insert = next(i for i, line in enumerate(p.lines) if line.startswith("+"))
    # every liveness entity is gone before the sentinel is written, and the sentinel comes first
    assert all(line.startswith("-") for line in p.lines[:first_insert])
    assert {line.split()[1] for line in p.lines[:first_insert]} == {"port_liveness", "liveness_selector"}
    assert p.lines[first_insert] == "+ liveness_selector member 1 -> port_down()"
    # other profiles and tables are untouched
    assert not any("ecmp" in line or "route" in line for line in p.lines)
    # nothing held of that profile: no rebuild, just the sentinel first
    bare = want.copy()
    bare.members = [m for m in bare.members if _short(m.profile) != "liveness_selector"]
    bare.groups = [g for g in bare.groups if _short(g.profile) != "liveness_selector"]
    bare.entries = [e for e in bare.entries if e.table != "port_liveness"]
    p = plan(fabric, want, held_of(fabric, bare))
    assert not p.rebuilt and p.lines[0] == "+ liveness_selector member 1 -> port_down()"


def test_sentinel_never_rewritten_when_held(fabric):
    want = _generated()
    have = want.copy()
    have.members = [m for m in have.members if m.member_id != 1004]  # one port_up member missing
    p = plan(fabric, want, held_of(fabric, have))
    assert p.lines == ["+ liveness_selector member 1004 -> port_up()"]


def _short(name):
    return name.rsplit(".", 1)[-1]


def test_clone_sessions_and_multicast_groups_are_reconciled_by_id(schema):
    from p4rt.resources import CloneSession, MulticastGroup

    def pre_state(clones, groups=()):
        st = state([route("10.0.1.0/24", 1)])
        st.clones = [CloneSession.from_dict(c) for c in clones]
        st.multicast = [MulticastGroup.from_dict(g) for g in groups]
        return st

    want = pre_state([{"session_id": 100, "replicas": [{"port": 255}]}], [{"group_id": 1, "replicas": [{"port": 1}]}])
    p = plan(schema, want, Held())
    assert sorted(line for line in p.lines if "route" not in line) == [
        "+ clone 100 -> [255.0]", "+ multicast 1 -> [1.0]"]
    assert plan(schema, want, held_of(schema, want)).empty
    moved = pre_state([{"session_id": 100, "replicas": [{"port": 7}]}, {"session_id": 5}])
    p = plan(schema, want, held_of(schema, moved))
    assert sorted(p.lines) == ["+ multicast 1 -> [1.0]", "- clone 5 -> []", "~ clone 100 -> [255.0]"]
    assert sorted(plan(schema, want, held_of(schema, moved), delete=False).lines) == ["+ multicast 1 -> [1.0]", "~ clone 100 -> [255.0]"]
