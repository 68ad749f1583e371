"""A ToR restarted in the middle of a schedule run is reconciled to the schedule, on every compiler x
switch pairing: its time-flow tables and a grant are parts of its desired state
(SwitchState.with_tables, SwitchSession.apply), so the watcher's reconcile writes them back rather
than deleting them as entries written beside it. (The OCS switch's schedule: emulation/ocs/tests/
test_emulator_dataplane.py.)"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from control.events import EventLog
from control.network import Network
from control.switch import Pipeline, wait_until
from control.tests.netbed import ROOT
from emulation.testing import SwitchProcess
from fabric.contract import SCHEDULE_CONFIG, SLOT_POLICY, TOR_TIME_FLOW_TABLES
from fabric.schedule import TimeSchedule
from p4rt.client import wildcard
from p4rt.entities import TableEntry
from p4sim.target import Target, free_port, missing_pairings, pairings
from tablegen.entries import generate_states
from tablegen.schedule import cycle_maps, duplex, route_paths, slot_path_entry, tor_schedule_entries
from topo.generators import ucd4

TOR = "s2"
P4SRC = ROOT / "p4src"
PAIRINGS = [pytest.param(t, id=t.name) for t in pairings()] + [
    pytest.param(None, id=name, marks=pytest.mark.skip(reason=why)) for name, why in missing_pairings().items()]


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Callable[[Target], Pipeline]:
    """fabric compiled once per compiler of the pairings."""
    done: dict[str, Pipeline] = {}

    def get(target: Target) -> Pipeline:
        if target.p4c not in done:
            out = tmp_path_factory.mktemp("fabric")
            target.compile(P4SRC / "fabric.p4", out, P4SRC)
            done[target.p4c] = Pipeline.load("fabric", out / "fabric.p4info.txtpb", out / "fabric.json")
        return done[target.p4c]

    return get


@pytest.mark.parametrize("target", PAIRINGS)
def test_switch_restart_in_a_schedule_run_is_reconciled_to_the_schedule(
        target: Target, compiled: Callable[[Target], Pipeline]) -> None:
    topo = ucd4()
    pipe = compiled(target)
    sw = next(s for s in topo.switches if s.name == TOR)
    sw.grpc_port = free_port()
    proc = SwitchProcess(sw.device_id, grpc_port=sw.grpc_port, target=target).start()
    events = EventLog()
    net = Network(topo, pipe, events=events, timeout=5, names=[TOR])
    try:
        states = generate_states(topo, "ecmp")
        net.install({TOR: states[TOR]})
        ocs = topo.ocs[0]
        maps = duplex(cycle_maps(ocs, ["initial", "reconfigured"]))
        schedule = tor_schedule_entries(topo, ocs, TOR, route_paths(states[TOR]), maps, TimeSchedule(2, 10_000, 1_000))
        net.sync({TOR: net.desired()[TOR].with_tables(TOR_TIME_FLOW_TABLES, schedule)}, trust_cache=True)
        sess = net.sessions[TOR]
        policy = next(e for e in schedule if e.table == SLOT_POLICY)
        grant = slot_path_entry(int(policy.match["path_id"]), 1, 2, "02:00:00:00:00:07", 800, 0, 0)
        sess.apply(add=[grant])
        before = _entries(sess)
        assert grant.canonical(sess.schema) in before and len(before) == len(states[TOR].entries) + len(schedule)
        clock = [str(e) for e in sess.read([TableEntry(SCHEDULE_CONFIG, default=True)])]
        assert "set_schedule" in clock[0]
        net.start_watch(period=0.1)
        proc.stop()
        proc.start()
        assert wait_until(lambda: any(r["event"] == "reconciled" for r in events.records), 20)
        assert _entries(sess) == before
        assert [str(e) for e in sess.read([TableEntry(SCHEDULE_CONFIG, default=True)])] == clock
        sess.apply(remove=[grant])  # a grant that ended leaves the desired state too
        assert grant.canonical(sess.schema) not in _entries(sess)
        assert sess.sync(sess.desired).empty
    finally:
        net.close()
        proc.stop()


def _entries(sess) -> list[str]:  # noqa: ANN001 - a SwitchSession
    return sorted(str(e) for e in sess.client.read_entities([wildcard(sess.schema, "table_entry")]))
