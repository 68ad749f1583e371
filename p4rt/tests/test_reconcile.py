"""Reconcile (pure): the ordered minimal writes from what a switch holds to a desired state."""


from p4rt.entities import ActionProfileGroup, ActionProfileMember, TableEntry
from p4rt.proto import p4r
from p4rt.reconcile import Held, plan
from p4rt.resources import CloneSession, MulticastGroup
from p4rt.state import SwitchState


def state(entries, members=(), groups=(), defaults=()):
    return SwitchState("s1", "fabric", 1, list(members), list(groups), list(entries), list(defaults))


def route(prefix, pid):
    return TableEntry("route", {"ipv4_dst": prefix}, "set_path", {"path_id": pid})


def path(pid, port, ver=0):
    return TableEntry("path", {"path_id": pid, "version": ver}, "path_static",
                      {"port": port, "dmac": "00:00:00:00:00:01"})


def kinds(p):
    names = {p4r.Update.INSERT: "+", p4r.Update.MODIFY: "~", p4r.Update.DELETE: "-"}
    return [[names[u.type] + u.entity.WhichOneof("entity") for u in ph] for ph in p.phases]


def test_empty_switch_gets_everything_in_dependency_order(schema):
    m = ActionProfileMember("ecmp_selector", 1, "set_next_hop", {"port": 1, "dmac": "00:00:00:00:00:01"})
    g = ActionProfileGroup.from_dict({"profile": "ecmp_selector", "group_id": 1, "members": [1]})
    want = state([route("10.0.1.0/24", 1), path(1, 2),
                  TableEntry("ecmp_group", {"path_id": 1, "version": 0}, group_id=1)], [m], [g],
                 [TableEntry("path_version", default=True, action="set_version", params={"version": 0})])
    p = plan(schema, want, Held(), late_tables=("route",))
    assert kinds(p) == [["+action_profile_member"], ["+action_profile_group"],
                        ["+table_entry", "+table_entry", "~table_entry"], ["+table_entry"]]
    assert p.lines[-1] == "+ route ipv4_dst=10.0.1.0/24 -> set_path(path_id=1)"  # routes last
    assert (p.inserts, p.modifies, p.deletes) == (5, 1, 0)


def test_in_sync_is_empty_and_differences_are_minimal(schema):
    want = state([route("10.0.1.0/24", 1), path(1, 2), path(2, 3)])
    assert plan(schema, want, Held.of_state(schema, want)).empty
    have = state([route("10.0.1.0/24", 1), path(1, 9), route("10.9.0.0/16", 2), path(7, 1)])
    p = plan(schema, want, Held.of_state(schema, have), late_tables=("route",))
    assert sorted(p.lines) == sorted([
        "~ path path_id=1 version=0 -> path_static(port=2, dmac=00:00:00:00:00:01)",
        "+ path path_id=2 version=0 -> path_static(port=3, dmac=00:00:00:00:00:01)",
        "- route ipv4_dst=10.9.0.0/16 -> set_path(path_id=2)",
        "- path path_id=7 version=0 -> path_static(port=1, dmac=00:00:00:00:00:01)"])
    # deletions: the stale route before the stale path it might point at
    assert [line[:7] for line in p.lines if line.startswith("-")] == ["- route", "- path "]
    nodelete = plan(schema, want, Held.of_state(schema, have), delete=False)
    assert nodelete.deletes == 0 and nodelete.modifies == 1


def test_default_entry_only_when_different(schema):
    d = TableEntry("path_version", default=True, action="set_version", params={"version": 1})
    want = state([], defaults=[d])
    assert plan(schema, want, Held.of_state(schema, want)).empty
    other = state([], defaults=[TableEntry("path_version", default=True, action="set_version",
                                           params={"version": 0})])
    assert plan(schema, want, Held.of_state(schema, other)).lines == ["~ path_version default -> set_version(version=1)"]


def test_groups_and_members_modified_and_deleted_in_reverse(schema):
    m1 = ActionProfileMember("ecmp_selector", 1, "set_next_hop", {"port": 1, "dmac": "00:00:00:00:00:01"})
    m2 = ActionProfileMember("ecmp_selector", 2, "set_next_hop", {"port": 2, "dmac": "00:00:00:00:00:02"})
    g_old = ActionProfileGroup.from_dict({"profile": "ecmp_selector", "group_id": 1, "members": [1, 2]})
    g_new = ActionProfileGroup.from_dict({"profile": "ecmp_selector", "group_id": 1, "members": [1]})
    have = state([], [m1, m2], [g_old])
    want = state([], [m1], [g_new])
    p = plan(schema, want, Held.of_state(schema, have))
    assert kinds(p) == [["~action_profile_group"], ["-action_profile_member"]]


def test_clone_sessions_and_multicast_groups_are_reconciled_by_id(schema):
    def pre_state(clones, groups=()):
        st = state([route("10.0.1.0/24", 1)])
        st.clones = [CloneSession.from_dict(c) for c in clones]
        st.multicast = [MulticastGroup.from_dict(g) for g in groups]
        return st

    want = pre_state([{"session_id": 100, "replicas": [{"port": 255}]}], [{"group_id": 1, "replicas": [{"port": 1}]}])
    p = plan(schema, want, Held())
    assert sorted(line for line in p.lines if "route" not in line) == [
        "+ clone 100 -> [255.0]", "+ multicast 1 -> [1.0]"]
    assert plan(schema, want, Held.of_state(schema, want)).empty
    moved = pre_state([{"session_id": 100, "replicas": [{"port": 7}]}, {"session_id": 5}])
    p = plan(schema, want, Held.of_state(schema, moved))
    assert sorted(p.lines) == ["+ multicast 1 -> [1.0]", "- clone 5 -> []", "~ clone 100 -> [255.0]"]
    assert sorted(plan(schema, want, Held.of_state(schema, moved), delete=False).lines) == ["+ multicast 1 -> [1.0]", "~ clone 100 -> [255.0]"]
