"""The procedures' plans as canonical lines (ucd4, old map "initial" -> "reconfigured"; no network, no root)."""

from dataclasses import replace

import pytest

from control.plan import (
    FLOWLET_GAP_MS,
    FLOWLET_MAX_HOLD_MS,
    Hold,
    Plan,
    Probe,
    SetCircuits,
    Sync,
    View,
    flowlet_wait_ms,
    no_shadow,
    plan,
    with_gradual_versions,
    without_shadow,
)
from fabric.contract import FLOWLET_CONFIG
from fabric.state import path_versions, with_failover, with_versions
from p4rt.state import SwitchState
from tablegen.entries import generate_states
from topo.generators import ucd4

OLD = [(3, 1), (2, 5), (6, 4)]
NEW = [(3, 4), (2, 5)]

AFFECTED_OLD = "s1 path 2,3 -> 1{g}; s2 path 1,3,4 -> 1{g}; s3 path 1,2,4 -> 1{g}; s4 path 2,3 -> 1{g}"
AFFECTED_NEW = "s1 path 2,3 -> {v}{g}; s2 path 1,3,4 -> {v}{g}; s3 path 1,2,4 -> {v}{g}; s4 path 2,3 -> {v}{g}"
# before the event, a controller that synced no switch yet writes the old circuits' states (failover on)
SETUP = "failover-on: sync s1,s2,s3,s4 -> old (keep)"


@pytest.fixture(scope="module")
def view():
    topo = ucd4()
    assert topo.ocs[0].circuit_maps["initial"] == OLD and topo.ocs[0].circuit_maps["reconfigured"] == NEW
    return View(topo, "ocs", 6)


def run_plan(view, procedure, **kw) -> Plan:
    return plan(procedure, OLD, NEW, view, **kw)


def index(p: Plan, prefix: str) -> int:
    """Position of the first step whose line starts with `prefix`."""
    return next(i for i, line in enumerate(p.lines()) if line.startswith(prefix))


def test_bbm(view):
    p = run_plan(view, "bbm")
    assert p.lines() == [
        SETUP,
        "prepare: encode new",
        "ocs: ocs set [(3,4),(2,5)]",
        "routes: sync s1,s2,s3,s4 -> new",
    ]
    assert p.affected == {}
    # the OCS changes before the routes
    assert index(p, "ocs:") < index(p, "routes:")


def test_mbb_timed(view):
    p = run_plan(view, "mbb-timed")
    assert p.lines() == [
        SETUP,
        "prepare: encode shadow, mid, new",
        "to-shadow: sync s1,s2,s3,s4 -> shadow (keep; versions " + AFFECTED_OLD.format(g="") + ")",
        "drain: hold 20 ms (drain)",
        "ocs: ocs set [(3,4),(2,5)]",
        "ocs-mirrors: wait-light ports 2,3,4,5",
        "hold: hold 1000 ms (mbb-timed)",
        "new-paths: sync s1,s2,s3,s4 -> mid (keep; versions " + AFFECTED_NEW.format(v=1, g="") + ")",
        "flip: sync s1,s2,s3,s4 -> new (versions " + AFFECTED_NEW.format(v=0, g="") + ")",
    ]
    assert p.affected == {"s1": [2, 3], "s2": [1, 3, 4], "s3": [1, 2, 4], "s4": [2, 3]}


def test_mbb_timed_with_another_hold(view):
    p = run_plan(view, "mbb-timed", hold_s=0.3, drain_ms=5)
    holds = [s for s in p.steps if isinstance(s, Hold)]
    assert [str(s) for s in holds] == ["drain: hold 5 ms (drain)", "hold: hold 300 ms (mbb-timed)"]
    assert [s.name for s in p.steps] == [s.name for s in run_plan(view, "mbb-timed").steps]


def test_mbb(view):
    p = run_plan(view, "mbb")
    flowlet = "hold 328 ms (flowlet_config gap+max_hold of s1,s2,s3,s4 + drain 20 ms)"
    assert p.lines() == [
        SETUP,
        "prepare: encode shadow, mid, gradual, new",
        "to-shadow: sync s1,s2,s3,s4 -> shadow (keep; versions " + AFFECTED_OLD.format(g=" gradual") + ")",
        "drain: " + flowlet,
        "ocs: ocs set [(3,4),(2,5)]",
        "ocs-mirrors: wait-light ports 2,3,4,5",
        "new-paths: sync s1,s2,s3,s4 -> mid (keep; versions " + AFFECTED_NEW.format(v=1, g="") + ")",
        "probe: probe s2:2 -> s3:2, s3:2 -> s2:2",
        "flip: sync s1,s2,s3,s4 -> gradual (keep; versions " + AFFECTED_NEW.format(v=0, g=" gradual") + ")",
        "flowlet-hold: " + flowlet,
        "settle: sync s1,s2,s3,s4 -> new (versions " + AFFECTED_NEW.format(v=0, g="") + ")",
    ]


def test_mbb_order(view):
    p = run_plan(view, "mbb")
    # nothing darkens the old circuit before the traffic is on the shadow and the flowlet hold has passed
    assert index(p, "to-shadow:") < index(p, "drain: hold 328 ms (flowlet_config") < index(p, "ocs:")
    # the new paths come after the light, the flip to them only after a successful probe
    assert index(p, "ocs:") < index(p, "ocs-mirrors:") < index(p, "new-paths:") < index(p, "probe:") \
        < index(p, "flip:")
    # nothing is deleted before every flow has moved: only the last step deletes
    syncs = [s for s in p.steps if isinstance(s, Sync)]
    assert [s.delete for s in syncs] == [False, False, False, True]
    assert index(p, "flowlet-hold:") < index(p, "settle:") == len(p.lines()) - 1
    probe = next(s for s in p.steps if isinstance(s, Probe))
    assert probe.links == ((("s2", 2), ("s3", 2)), (("s3", 2), ("s2", 2)))  # the one new circuit, both ways


def test_mbb_waits_the_flowlet_config_the_switches_are_synced_to(view):
    # the wait is what the desired states set, the largest over the flipped switches: nothing is read
    current = view.states(OLD)
    slow = current["s3"].copy()
    slow.defaults = [replace(d, params={**d.params, "max_hold_us": 500_000}) if d.table == FLOWLET_CONFIG else d
                     for d in slow.defaults]
    v = View(view.topo, "ocs", 6, current={**current, "s3": slow})
    p = plan("mbb", OLD, NEW, v, drain_ms=0)
    assert "drain: hold 508 ms (flowlet_config gap+max_hold of s1,s2,s3,s4 + drain 0 ms)" in p.lines()
    assert p.basis == v.current


def test_flowlet_wait_is_the_programs_default_without_a_config(view):
    st = view.states(OLD)["s1"].copy()
    st.defaults = [d for d in st.defaults if d.table != FLOWLET_CONFIG]
    assert flowlet_wait_ms(st) == FLOWLET_GAP_MS + FLOWLET_MAX_HOLD_MS == 308


def test_mbb_without_gradual_flips_at_once(view):
    v = View(view.topo, "ocs", 6, gradual=False)
    p = plan("mbb", OLD, NEW, v)
    assert [s.name for s in p.steps] == ["prepare", "to-shadow", "drain", "ocs", "ocs-mirrors", "new-paths", "probe",
                                         "flip"]
    assert p.lines()[-1] == "flip: sync s1,s2,s3,s4 -> new (versions " + AFFECTED_NEW.format(v=0, g="") + ")"


def test_bbm_without_shadow(view):
    p = run_plan(view, "bbm", transforms=[no_shadow])
    assert p.lines() == [
        SETUP,
        "prepare: encode new-no-shadow",
        "ocs: ocs set [(3,4),(2,5)]",
        "routes: sync s1,s2,s3,s4 -> new-no-shadow",
    ]
    want = {n: without_shadow(st) for n, st in view.states(NEW).items()}
    assert p.states == {"new-no-shadow": want, "old": view.states(OLD)}  # the setup is not transformed
    ocs = next(s for s in p.steps if isinstance(s, SetCircuits))
    assert ocs.pairs == ((3, 10), (4, 9), (2, 11), (5, 8))  # duplex_pairs on a 6-port OCS


def test_no_shadow_needs_bbm(view):
    with pytest.raises(ValueError, match="no_shadow with procedure 'mbb'"):
        run_plan(view, "mbb", transforms=[no_shadow])


def test_states_of_the_plan(view):
    p = run_plan(view, "mbb")
    new = view.states(NEW)
    assert p.states["new"] == new
    for sw, paths in p.affected.items():
        shadow = path_versions(p.states["shadow"][sw])
        assert all(shadow[pid] == 1 for pid in paths if pid in shadow)
        assert all(path_versions(p.states["mid"][sw])[pid] == 1 for pid in paths)
    # the shadow starts from what the switches hold when they have been synced
    held = {n: with_versions(st, {99: 0}) for n, st in view.states(OLD).items()}
    v = View(view.topo, "ocs", 6, current=held)
    assert all(99 in path_versions(st) for st in plan("mbb", OLD, NEW, v).states["shadow"].values())


def test_the_setup_gives_the_switches_the_runs_failover_setting(view):
    synced = view.states(OLD)
    # synced with failover on, run with it on: nothing to set up
    p = plan("bbm", OLD, NEW, View(view.topo, "ocs", 6, current=synced))
    assert p.setup == () and p.lines()[0] == "prepare: encode new" and "old" not in p.states
    # run with it off: every synced switch's liveness entries change, before the event
    off = View(view.topo, "ocs", 6, failover=False, current=synced)
    p = plan("bbm", OLD, NEW, off)
    assert p.lines()[0] == "failover-off: sync s1,s2,s3,s4 -> old (keep)"
    assert p.states["old"] == {n: with_failover(st, False) for n, st in synced.items()}
    assert p.basis == p.states["old"]  # what the switches hold once the setup ran (Reconfigurer.run_prepared)
    # only the switches the controller writes: s3 synced and set, s1 never synced (the old circuits' state)
    few = View(view.topo, "ocs", 6, current={"s3": synced["s3"]}, switches=("s1", "s3"))
    p = plan("mbb", OLD, NEW, few)
    assert p.lines()[0] == "failover-on: sync s1 -> old (keep)" and p.states["old"] == {"s1": synced["s1"]}


def test_unknown_procedure(view):
    with pytest.raises(ValueError, match="procedure 'ost'"):
        run_plan(view, "ost")


# -- the states a plan writes -------------------------------------------------------------------------------


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


def test_without_shadow_copies_version_0():

    st = generate_states(ucd4(), "ecmp")["s2"]
    nf = without_shadow(st)

    def paths(s):
        return {(int(e.match["path_id"]), int(e.match["version"])): (e.action, e.params)
                for e in s.entries if e.table.endswith("path")}

    before, after = paths(st), paths(nf)
    assert any(before[(p, 0)] != before[(p, 1)] for p, _ in before)  # ucd4 has shadow paths...
    assert all(after[(p, 1)] == after[(p, 0)] == before[(p, 0)] for p, _ in after)  # ...gone here
