"""The controller's standing abuse suite: what a refused request, a failed write or a bad option leaves.

- a two-way request refused (its window beyond one cycle) leaves the horizons as they were, however
  often the agent asks again;
- a grant is all or nothing: a ToR write that fails after the OCS's is undone on the OCS (real switch
  processes of the run's target), and a failed ToR delete does not keep the OCS's from being tried;
- `reconfigure` refuses a NaN, negative or infinite hold or drain before its first write, and a
  procedure that fails midway says what it left and how to recover (and that way recovers);
- a malformed `fabric.conf` for `--target tofino` is one line, not a traceback.
"""

from __future__ import annotations

import time

import pytest

from control.__main__ import main
from control.events import EventLog
from control.grants import Calendar, TwoWay
from control.network import Network
from control.ocs.driver import duplex_pairs
from control.procedures import ProcedureError, Reconfigurer, circuits_from_ocs
from control.reservation import Timing
from control.reservation_agent import PathState, ReservationAgent
from control.switch import SwitchSession
from control.tests.netbed import SwitchFarm
from emulation.ocs.delay import DelayModel
from emulation.ocs.emulator import EmulatedOcs
from emulation.testing import SwitchProcess
from fabric.contract import SLOT_CIRCUIT, SLOT_CROSS_CONNECT, SLOT_PATH, SLOT_PORT
from p4rt.client import P4RuntimeClient, wildcard
from p4rt.entities import TableEntry
from p4rt.testing import SAMPLE_P4INFO
from p4rt.tests.test_bfconfig import bf_output
from tablegen.entries import generate_states
from topo.generators import ucd4
from topo.model import save

# -- a refused two-way request leaves the scheduler as it was ------------------------------------------


def test_refused_two_way_requests_leave_the_horizons_and_idle_ports_free() -> None:
    """Seed 001's loop asks every poll; a burst too long for one cycle (10 slots of 20 ms) is refused
    each time, and once moved the horizons two seconds ahead and starved every other destination."""
    cal = Calendar(epoch_s=0.0, slot_s=0.02, night_s=0.002, slots=10)
    timing = Timing(switch_s=0.002, proc_s=0.001, overhead_s=0.001, rate_bps=10e6)
    sched = TwoWay(4, cal, timing)
    before = ([list(h) for h in sched.horizon.h_in], [list(h) for h in sched.horizon.h_out])
    refused = 0
    for k in range(50):
        try:
            sched.request(0, 1, 1_000_000, 0.49 + k * 0.0001)  # 0.8 s of sending: more than a cycle
        except ValueError:
            refused += 1
    assert refused == 50
    assert (sched.horizon.h_in, sched.horizon.h_out) == before
    g = sched.request(0, 2, 1500, 0.49)  # an idle destination: its window starts within a few slots
    assert g.first - cal.slot_at(0.49) <= 2, g


# -- a grant is all or nothing (real switches) ------------------------------------------------------------

PATH_ID, UPLINK, OCS_IN, OCS_OUT = 7, 3, 1, 2


@pytest.fixture
def grant_bed(pipelines):
    """A fabric ToR and an ocs switch (processes of the run's target) with their pipelines, and a
    reservation agent with one path between them on a 300-slot calendar."""
    fabric, ocs_prog = pipelines
    procs = [SwitchProcess(device_id=1).start(), SwitchProcess(device_id=2).start()]
    sessions = []
    try:
        for name, proc, prog in zip(("tor", "ocs"), procs, (fabric, ocs_prog), strict=True):
            sess = SwitchSession(name, proc.address, proc.device_id, prog, timeout=5)
            sessions.append(sess)
            sess.connect()
        tor, ocs = sessions
        now = time.monotonic()
        cal = Calendar(epoch_s=now - 1.0, slot_s=0.010, night_s=0.001, slots=300, send_s=0.005)
        timing = Timing(switch_s=0.001, proc_s=0.001, overhead_s=0.001, rate_bps=10e6)
        st = PathState(0, 1, PATH_ID, lambda slots: [_slot_path(k) for k in slots],
                       lambda slots: [TableEntry(SLOT_CIRCUIT, {"slot": k, "night": 0, "ingress_port": OCS_IN},
                                                 SLOT_CROSS_CONNECT, {"port": OCS_OUT}) for k in slots])
        agent = ReservationAgent(TwoWay(2, cal, timing), {"tor": tor}, ocs, {"tor": [st]})
        agent._names = {0: "tor"}
        yield agent, st, tor.client, ocs.client, procs[0], cal
    finally:
        for c in sessions:
            c.close()
        for p in procs:
            p.stop()


def _slot_path(slot: int) -> TableEntry:
    return TableEntry(SLOT_PATH, {"path_id": PATH_ID, "slot": slot}, SLOT_PORT,
                      {"port": UPLINK, "dmac": "00:00:00:00:00:02", "byte_ns": 800, "more_after_day": 0,
                       "more_after_night": 0})


def _held(client: P4RuntimeClient, table: str) -> list[str]:
    return sorted(str(e) for e in client.read_entities([wildcard(client.schema, "table_entry", table)]))


def test_a_tor_write_that_fails_after_the_ocs_is_undone_on_the_ocs(grant_bed) -> None:
    agent, st, tor, ocs, _, cal = grant_bed
    now = time.monotonic()
    agent._serve("tor", st, {PATH_ID: (8, 8 * 1514, 8 * 1514)}, now)  # a first grant, written whole
    [(g, _, _)] = st.pending
    assert len(_held(ocs, "slot_circuit")) == g.count and len(_held(tor, "slot_path")) == g.count
    # the ToR's slots after the first window's second are taken (what leaked grants left), 300 ms of
    # them (the next window starts in there unless its lead, the first write's time, is longer): its
    # write fails in part after the OCS's succeeded
    nxt = g.first + g.count
    squatters = [_slot_path((nxt + k) % cal.slots) for k in range(1, 31)]
    tor.insert(squatters)
    agent._serve("tor", st, {PATH_ID: (30, 30 * 1514, 38 * 1514)}, now + 0.001)
    assert agent.write_errors == 1 and len(st.pending) == 1 and st.stale == []
    assert len(_held(ocs, "slot_circuit")) == g.count  # the failed grant's OCS entries are gone
    assert _held(tor, "slot_path") == sorted([*(str(e) for e in st.pending[0][1]), *(str(e) for e in squatters)])
    tor.delete(squatters)
    agent._serve("tor", st, {PATH_ID: (30, 30 * 1514, 38 * 1514)}, now + 0.002)  # the same slots again
    assert agent.write_errors == 1 and len(st.pending) == 2


def test_a_lost_tor_leaves_no_ocs_entry_of_its_grants(grant_bed) -> None:
    agent, st, tor, ocs, tor_proc, cal = grant_bed
    now = time.monotonic()
    agent._serve("tor", st, {PATH_ID: (8, 8 * 1514, 8 * 1514)}, now)
    [(g, _, _)] = st.pending
    tor_proc.stop()  # the ToR is gone: its delete fails, the OCS's must still be tried
    agent._cleanup([st], g.end(cal) + 2 * cal.slot_s)
    assert _held(ocs, "slot_circuit") == []
    assert st.pending == [] and [len(t) for _, t, o in st.stale] == [g.count] and st.stale[0][2] == []
    agent._serve("tor", st, {PATH_ID: (30, 30 * 1514, 38 * 1514)}, g.end(cal) + 3 * cal.slot_s)
    assert _held(ocs, "slot_circuit") == []  # the ToR's insert failed: the OCS's entries undone
    assert agent.write_errors == 2 and st.pending == []
    assert [(len(t), len(o)) for _, t, o in st.stale] == [(g.count, 0), (st.stale[1][0].count, 0)]  # to retry


# -- reconfigure: waits checked before the first write, failures that say what they left ----------------


@pytest.fixture(scope="module")
def farm():
    farm = SwitchFarm(ucd4()).start()
    yield farm
    farm.stop()


@pytest.fixture
def reconf(pipelines, farm):
    """The ucd4 switches with the ECMP tables of the initial circuits, an emulated OCS on those."""
    events = EventLog()
    net = Network(farm.topo, pipelines[0], events=events, timeout=5)
    net.install(generate_states(farm.topo, "ecmp"))
    n = max(p.port for p in farm.topo.ocs[0].ports)
    ocs = EmulatedOcs(n, DelayModel(mirror_ms=5, lock_ms=5, lock_jitter_ms=0, poll_period_ms=0))
    ocs.set_map(duplex_pairs(farm.topo.ocs[0].circuit_maps["initial"], n), delay=DelayModel.instant())
    yield farm.topo, net, events, ocs
    ocs.close()
    net.close()


@pytest.mark.parametrize("hold", [-1.0, float("nan"), float("inf"), 1e300])
def test_a_bad_hold_is_refused_before_the_first_write(reconf, hold: float) -> None:
    topo, net, events, ocs = reconf
    before = circuits_from_ocs(ocs)
    writes = len(events.records)
    rec = Reconfigurer(net, ocs, mode="ecmp")
    with pytest.raises(ValueError, match=r"hold_s .*: expected seconds from 0 to 3600"):
        rec.run("mbb-timed", topo.ocs[0].circuit_maps["reconfigured"], hold_s=hold)
    assert circuits_from_ocs(ocs) == before and len(events.records) == writes  # nothing moved or logged
    want = generate_states(topo, "ecmp")
    assert all(net.sessions[n].sync(want[n]).empty for n in want)


@pytest.mark.parametrize(("option", "value"), [("--hold", "-1"), ("--hold", "nan"), ("--drain-ms", "inf"),
                                               ("--drain-ms", "-5"), ("--probe-timeout", "nan")])
def test_reconfigure_refuses_bad_waits_before_connecting(option: str, value: str, tmp_path,
                                                         capsys: pytest.CaptureFixture) -> None:
    """Refused as the arguments are read: no switch or OCS is reached (none listens at these addresses)."""
    topo = tmp_path / "topo.json"
    topo.write_text("{}")
    with pytest.raises(SystemExit) as e:
        main(["reconfigure", "--topo", str(topo), "--procedure", "mbb-timed", "--circuits", "reconfigured",
              "--ocs", "127.0.0.1:1", "--host", "127.0.0.1", option, value])
    assert e.value.code == 2
    assert f"argument {option}: value {value}" in capsys.readouterr().err.splitlines()[-1]


def test_a_procedure_failing_midway_says_what_it_left_and_how_to_recover(reconf) -> None:
    topo, net, events, ocs = reconf
    new = topo.ocs[0].circuit_maps["reconfigured"]
    rec = Reconfigurer(net, ocs, mode="ecmp")
    real = ocs.wait_complete

    def mirrors_stuck(timeout=None):
        raise TimeoutError("mirrors did not settle")

    ocs.wait_complete = mirrors_stuck
    with pytest.raises(ProcedureError) as exc:
        rec.run("mbb-timed", new, hold_s=0)
    msg = str(exc.value)
    assert "\n" not in msg and exc.value.step == "ocs-mirrors"
    assert (f"left the OCS on the new circuits {[tuple(c) for c in new]}, the affected routes on their electrical "
            "shadow paths; to recover, run the procedure again") in msg, msg
    assert events.records[-1]["left"] == exc.value.left
    ocs.wait_complete = real
    rec.run("mbb-timed", new, hold_s=0)  # the recovery it names: again, from what the OCS holds
    want = rec.states(new)
    assert all(net.sessions[n].sync(want[n]).empty for n in want)


# -- a malformed fabric.conf for --target tofino: one line, no traceback -----------------------------------

@pytest.mark.parametrize(("conf", "message"), [
    ('{"p4_devices": [{"p4_programs": [5]}]}', "p4_programs[0] is 5, expected a JSON object"),
    ('{"p4_devices": [{"p4_programs": [{"program-name": "fabric", "bfrt-config": "bfrt.json", "p4_pipelines": [7]}]}]}',
     "p4_pipelines[0] is 7, expected a JSON object"),
    ("[" * 100_000, "not JSON (maximum recursion depth exceeded"),
    ('{"p4_devices": [{"p4_programs": [{"program-name": "fabric", "bfrt-config": "a\\u0000b"}]}]}',
     "cannot read (embedded null byte)"),
    ('{"p4_devices": [{"p4_programs": [{"program-name": "fabric", "bfrt-config": "bfrt.json", "p4_pipelines": '
     '[{"p4_pipeline_name": "pipe", "pipe_scope": [true], "context": "x", "config": "x"}]}]}]}',
     "pipe_scope of pipe is [True], expected a list of pipe numbers"),
])
def test_a_malformed_fabric_conf_is_one_line(tmp_path, capsys: pytest.CaptureFixture, conf: str, message: str) -> None:
    """`control status --target tofino` once printed a 33-42 line traceback for each of these."""
    build = tmp_path / "tofino"
    bf_output(build)
    (build / "fabric.p4info.txtpb").write_text(SAMPLE_P4INFO)
    (build / "fabric.conf").write_text(conf)
    save(ucd4(), tmp_path / "ucd4.json")
    assert main(["status", "--topo", str(tmp_path / "ucd4.json"), "--target", "tofino", "--build", str(build)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "bf-p4c conf" in err and message in err, err
