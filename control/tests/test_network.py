"""The network controller on p4sim switch processes: install, idempotence, restart recovery, modes,
and the bbm / mbb-timed procedures against the OCS emulator (no data plane needed for these)."""

import pytest

from control.events import EventLog
from control.network import Network
from control.ocs.driver import duplex_pairs
from control.procedures import ProcedureError, Reconfigurer, circuits_from_ocs
from control.switch import wait_until
from control.tests.netbed import SwitchFarm, compile_program
from emulation.ocs.delay import DelayModel
from emulation.ocs.emulator import EmulatedOcs
from fabric.state import path_versions
from p4rt.client import wildcard
from p4rt.entities import TableEntry
from tablegen.entries import generate_states
from topo.generators import leafspine, ucd4


@pytest.fixture(scope="module")
def fabric(tmp_path_factory):
    return compile_program("fabric", tmp_path_factory.mktemp("build"))


@pytest.fixture(scope="module")
def farm(fabric):
    farm = SwitchFarm(ucd4()).start()
    yield farm
    farm.stop()


@pytest.fixture
def bed(fabric, farm):
    """A fresh controller on the shared switches (every test installs, so reconcile resets them)."""
    events = EventLog()
    net = Network(farm.topo, fabric, events=events, timeout=5)
    yield farm.topo, farm, net, events
    net.close()


def entries_of(net, name):
    s = net.sessions[name]
    return sorted(str(e) for e in s.client.read_entities([wildcard(s.schema, "table_entry")]))


def test_install_is_idempotent_and_complete(bed):
    topo, farm, net, events = bed
    states = generate_states(topo, "ecmp")
    plans = net.install(states)
    assert all(p.inserts > 0 and p.deletes == 0 for p in plans.values())
    want = sorted(e.canonical(net.sessions["s2"].schema) for e in states["s2"].entries)
    assert entries_of(net, "s2") == want
    again = net.install(states)
    assert all(p.empty for p in again.values()), {n: p.lines for n, p in again.items()}


def test_reconcile_removes_stale_and_fixes_changed(bed):
    topo, farm, net, events = bed
    states = generate_states(topo, "ecmp")
    net.install(states)
    s1 = net.sessions["s1"]

    stale = TableEntry("route", {"ipv4_dst": "10.99.0.0/16"}, "route_drop", {})
    s1.client.insert([stale])
    changed = states["s1"].copy()
    for e in changed.entries:
        if e.table == "port_mac":
            e.params = {"smac": "02:00:00:00:00:99"}
            break
    s1.client.modify([changed.entries[[e.table for e in changed.entries].index("port_mac")]])
    plan = s1.sync(states["s1"])
    assert plan.deletes == 1 and plan.modifies == 1 and plan.inserts == 0, plan.lines
    assert any(line.startswith("- route ipv4_dst=10.99.0.0/16") for line in plan.lines)
    assert s1.sync(states["s1"]).empty


def test_switch_restart_is_reconciled(bed):
    topo, farm, net, events = bed
    states = generate_states(topo, "ecmp")
    net.install(states)
    before = entries_of(net, "s3")
    net.start_watch(period=0.1)
    farm.procs["s3"].stop()
    farm.procs["s3"].start()
    assert wait_until(lambda: any(r["event"] == "reconciled" and r["switch"] == "s3" for r in events.records), 15)
    assert entries_of(net, "s3") == before
    assert net.sessions["s3"].reconnects == 1


def test_set_mode_rewrites_only_the_difference(fabric):
    topo = leafspine(leaves=2, spines=2, hosts_per_leaf=1)
    farm = SwitchFarm(topo).start()
    net = Network(topo, fabric, timeout=5)
    try:
        net.install(generate_states(topo, "ecmp"))
        for mode in ("static", "spray", "ecmp"):
            want = generate_states(topo, mode)
            plans = net.install(want)
            assert sum(p.inserts + p.modifies + p.deletes for p in plans.values()) > 0, mode
            assert all(net.sessions[n].sync(want[n]).empty for n in want)
            leaf = next(n for n in want if n.startswith("l"))
            paths = [e for e in want[leaf].entries if e.table == "path" and e.match.get("version") == 0]
            kinds = {e.action for e in paths}
            assert kinds == {"static": {"path_static"}, "spray": {"path_spray_random"},
                             "ecmp": {"path_ecmp"}}[mode], kinds
    finally:
        net.close()
        farm.stop()


def instant_ocs(topo):
    n = max(p.port for p in topo.ocs[0].ports)
    ocs = EmulatedOcs(n, DelayModel(mirror_ms=25, lock_ms=50, lock_jitter_ms=0, poll_period_ms=0))
    ocs.set_map(duplex_pairs(topo.ocs[0].circuit_maps["initial"], n), delay=DelayModel.instant())
    return ocs


@pytest.fixture
def reconf_bed(bed):
    """bed with the ECMP states installed and an emulated OCS on the initial circuits (closed afterwards)."""
    topo, farm, net, events = bed
    net.install(generate_states(topo, "ecmp"))
    ocs = instant_ocs(topo)
    yield topo, farm, net, events, ocs
    ocs.close()


@pytest.mark.parametrize("procedure", ["bbm", "mbb-timed"])
def test_procedures_end_in_the_new_state(reconf_bed, procedure):
    topo, farm, net, events, ocs = reconf_bed
    rec = Reconfigurer(net, ocs, mode="ecmp")
    new = topo.ocs[0].circuit_maps["reconfigured"]
    res = rec.run(procedure, new, hold_s=0.2)
    assert circuits_from_ocs(ocs) == sorted(tuple(sorted(c)) for c in new)
    want = rec.states(new)
    assert all(net.sessions[n].sync(want[n]).empty for n in want)  # nothing left to fix
    kinds = [r["event"] for r in events.records]
    assert kinds[-1] == "procedure-done"
    if procedure == "mbb-timed":
        assert res.steps["hold"] >= 200
        assert res.affected  # some ToR paths went to the shadow and back
        assert list(res.steps) == ["prepare", "to-shadow", "drain", "ocs", "ocs-mirrors", "hold", "new-paths",
                                   "flip"]
    else:
        assert list(res.steps) == ["prepare", "ocs", "routes"]


def test_mbb_timed_ocs_failure_leaves_traffic_on_the_shadow(reconf_bed):
    topo, farm, net, events, ocs = reconf_bed

    def broken(pairs, delay=None):
        raise TimeoutError("OCS did not answer")

    rec = Reconfigurer(net, ocs, mode="ecmp")
    old = rec.states(circuits_from_ocs(ocs))
    ocs.set_map = broken
    with pytest.raises(ProcedureError) as exc:
        rec.run("mbb-timed", topo.ocs[0].circuit_maps["reconfigured"], hold_s=0)
    assert exc.value.step == "ocs"
    # every ingress ToR now forwards the affected paths on version 1 (the electrical shadow)
    shadowed = {n: path_versions(st) for n, st in net.desired().items()}
    assert any(1 in v.values() for v in shadowed.values())
    for n, st in net.desired().items():
        assert net.sessions[n].sync(st).empty  # switches hold exactly that state
        assert {e.canonical(net.sessions[n].schema) for e in st.entries if e.table != "path_version"} == \
            {e.canonical(net.sessions[n].schema) for e in old[n].entries if e.table != "path_version"}
    assert events.records[-1]["event"] == "procedure-error"


def test_mbb_without_light_stays_on_the_shadow(reconf_bed):
    # these switches have no ports, so the probes over the new circuit can never come back
    topo, farm, net, events, ocs = reconf_bed
    rec = Reconfigurer(net, ocs, mode="ecmp", probe_timeout=0.3)
    new = topo.ocs[0].circuit_maps["reconfigured"]
    with pytest.raises(ProcedureError) as exc:
        rec.run("mbb", new)
    assert exc.value.step == "probe" and "no packet-in" in str(exc.value)
    # the new paths are written, but every affected path at its ingress ToR is on version 1
    want_new = rec.states(new)
    for n, st in net.desired().items():
        assert net.sessions[n].sync(st).empty
        on_shadow = {p for p, v in path_versions(st).items() if v == 1}
        assert on_shadow == rec_affected(rec, n, new)
        assert [e for e in st.entries if e.table == "route"] == [e for e in want_new[n].entries
                                                                 if e.table == "route"]


def rec_affected(rec, switch, new):
    return set(rec.plan("mbb", new, topo_initial(rec)).affected.get(switch, []))


def topo_initial(rec):
    return rec.net.topo.ocs[0].circuit_maps["initial"]


def test_lost_switch_mid_procedure_then_restored_on_the_shadow(reconf_bed):
    topo, farm, net, events, ocs = reconf_bed
    rec = Reconfigurer(net, ocs, mode="ecmp")
    real_set_map = ocs.set_map

    def set_map_and_lose_s2(pairs, delay=None):
        real_set_map(pairs, delay)
        farm.procs["s2"].stop()  # the switch dies while the circuits move

    ocs.set_map = set_map_and_lose_s2
    try:
        with pytest.raises(ProcedureError) as exc:
            rec.run("mbb-timed", topo.ocs[0].circuit_maps["reconfigured"], hold_s=0.05)
        assert exc.value.step == "new-paths"
        shadow_s2 = net.sessions["s2"].desired
        assert 1 in path_versions(shadow_s2).values()
        farm.procs["s2"].start()
        net.start_watch(period=0.1)
        assert wait_until(lambda: any(r["event"] == "reconciled" and r["switch"] == "s2"
                                      for r in events.records), 15)
        assert net.sessions["s2"].sync(shadow_s2).empty  # restored to the shadow state, nothing stale
    finally:
        net.stop_watch()


# -- another controller takes over and leaves (P4Runtime spec, "Client Arbitration Notifications") -------


def _circuit_states(topo, name):
    return generate_states(topo, "ecmp", {topo.ocs[0].name: topo.ocs[0].circuit_maps[name]})


def _held(net, name):
    s = net.sessions[name]
    return sorted(str(e) for e in s.client.read_entities([wildcard(s.schema, "table_entry")]))


def _taken_over(topo, fabric, events):
    """A installs the initial map and watches; B, with a higher election id, installs the other map."""
    a = Network(topo, fabric, election_id=(0, 1), events=events, timeout=5)
    b = Network(topo, fabric, election_id=(0, 2), timeout=5)
    try:
        a.install(_circuit_states(topo, "initial"))
        a.start_watch(period=0.1)
        b.install(_circuit_states(topo, "reconfigured"))
    except BaseException:
        b.close()
        a.close()
        raise
    return a, b


def test_watcher_rereads_after_another_controller_took_over_and_left(fabric, farm):
    """A watches; B (higher election id) moves the network to the other circuit map and exits; then a
    switch restarts. A must restore B's view there, not its own stale one (half the network in each)."""
    topo = farm.topo
    events = EventLog()
    a, b = _taken_over(topo, fabric, events)
    try:
        assert wait_until(lambda: {r["switch"] for r in events.records if r["event"] == "primary-lost"}
                          == set(a.sessions), 5)
        want = {n: _held(b, n) for n in b.sessions}
        assert want["s3"] != sorted(e.canonical(b.sessions["s3"].schema)
                                    for e in _circuit_states(topo, "initial")["s3"].entries)
        b.close()
        assert wait_until(lambda: {r["switch"] for r in events.records if r["event"] == "resynced"}
                          == set(a.sessions), 5), events.records
        farm.procs["s3"].stop()
        farm.procs["s3"].start()
        assert wait_until(lambda: any(r["event"] == "reconciled" and r["switch"] == "s3"
                                      for r in events.records), 15), events.records
        assert {n: _held(a, n) for n in a.sessions} == want  # the whole network in B's circuit map
    finally:
        b.close()
        a.close()


def test_watcher_refuses_to_restore_a_view_it_could_not_reread(fabric, farm):
    """A switch that restarts while another controller is primary: when that controller leaves, the
    watcher does not write its own stale view there; it says so."""
    topo = farm.topo
    events = EventLog()
    a, b = _taken_over(topo, fabric, events)
    try:
        assert wait_until(lambda: any(r["event"] == "primary-lost" and r["switch"] == "s2"
                                      for r in events.records), 5)
        farm.procs["s2"].stop()
        farm.procs["s2"].start()
        b.close()
        assert wait_until(lambda: any(r["event"] == "restore-refused" and r["switch"] == "s2"
                                      for r in events.records), 15), events.records
        refused = next(r for r in events.records if r["event"] == "restore-refused")
        assert "election id (0, 2)" in refused["reason"] and "control install" in refused["reason"]
        assert not any(r["event"] == "reconciled" and r["switch"] == "s2" for r in events.records)
        assert a.sessions["s2"].client.get_pipeline() is None or not _held(a, "s2")  # nothing stale written
        a.install(_circuit_states(topo, "initial"))  # an explicit install takes the network over again
        assert a.sessions["s2"].sync(_circuit_states(topo, "initial")["s2"]).empty
    finally:
        b.close()
        a.close()
