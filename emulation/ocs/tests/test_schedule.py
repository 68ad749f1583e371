import itertools
import time
from pathlib import Path

import pytest

from control.switch import Pipeline, SwitchSession
from emulation.ocs.dataplane import P4RuntimeCircuits
from emulation.ocs.delay import DelayModel
from emulation.ocs.emulator import EmulatedOcs
from emulation.ocs.schedule import (
    Schedule,
    ScheduleRunner,
    dataplane_maps,
    round_robin,
    write_dataplane_schedule,
)
from fabric.schedule import TimeSchedule
from p4rt.client import wildcard
from p4rt.entities import TableEntry
from p4rt.testing import P4simSwitch
from tablegen.schedule import ocs_schedule_entries

GOLDEN = Path(__file__).resolve().parents[3] / "p4sim" / "tests" / "golden"


@pytest.mark.parametrize("n", [2, 3, 4, 7])
def test_round_robin_covers_every_ordered_pair_once(n):
    maps = round_robin(n)
    assert len(maps) == n - 1
    seen = [(i, o - n) for m in maps for i, o in m]
    assert sorted(seen) == sorted(itertools.permutations(range(1, n + 1), 2))
    for m in maps:  # each map is a full permutation: every input and output used once
        assert sorted(i for i, _ in m) == list(range(1, n + 1))
        assert sorted(o for _, o in m) == list(range(n + 1, 2 * n + 1))


def test_round_robin_three_nodes_matches_ocsemu_figure():
    # A->B, B->C, C->A then A->C, B->A, C->B (OCSEMU Fig. 1)
    assert round_robin(3) == [[(1, 5), (2, 6), (3, 4)], [(1, 6), (2, 4), (3, 5)]]


def test_round_robin_subset_and_errors():
    assert round_robin(8, [2, 5]) == [[(2, 13), (5, 10)]]
    with pytest.raises(ValueError, match="at least 2"):
        round_robin(1)
    with pytest.raises(ValueError, match="distinct slots"):
        round_robin(4, [1, 1, 2])
    with pytest.raises(ValueError, match="day 0: expected milliseconds above 0"):
        Schedule(round_robin(3), 0, 1)


def test_runner_cycles_with_dark_nights():
    events = []
    ocs = EmulatedOcs(3, DelayModel.instant(), on_event=events.append)
    runner = ScheduleRunner(ocs, Schedule(round_robin(3), day_ms=40, night_ms=20))
    try:
        runner.start()
        time.sleep(0.05)  # in the first day: map 0 lit
        assert ocs.query() == {1: 5, 2: 6, 3: 4}
        assert all(ocs.port_status(p).light for p in (4, 5, 6))
        time.sleep(0.02)  # in the second night (t=60..80 ms)
        assert ocs.query() == {1: 6, 2: 4, 3: 5}
        assert not any(ocs.port_status(p).light for p in (4, 5, 6))
        time.sleep(0.2)
    finally:
        runner.stop()
        ocs.close()
    assert runner.slots_run >= 4
    lights = [e["t_mono"] for e in events if e["event"] == "light" and e["input"] == 1]
    commands = [e["t_mono"] for e in events if e["event"] == "command"]
    # the night lasts 20 ms after each command
    assert all(0.018 <= lt - c < 0.05 for c, lt in zip(commands, lights, strict=False))


def test_dataplane_maps_are_the_round_robin_in_data_plane_ports() -> None:
    sched = Schedule(round_robin(3), day_ms=10, night_ms=1)
    assert dataplane_maps(sched, 3) == [{1: 2, 2: 3, 3: 1}, {1: 3, 2: 1, 3: 2}]
    assert dataplane_maps(sched, 3, {1: 11, 2: 12, 3: 13}) == [{11: 12, 12: 13, 13: 11}, {11: 13, 12: 11, 13: 12}]
    entries = ocs_schedule_entries(dataplane_maps(sched, 3), TimeSchedule(2, 10_000, 1_000))
    days = [e for e in entries if e.table == "slot_circuit"]
    assert len(days) == 6 and all(e.match["night"] == 0 for e in days)  # every circuit changes


def test_dataplane_schedule_is_written_in_the_programs_clock():
    # the ocs program (v1model, p4sim's golden build) on p4sim's P4Runtime server: the encoding comes
    # from its P4Info, and a schedule v1model cannot count is refused before anything is deleted
    with P4simSwitch() as sw:
        session = SwitchSession("ocs", sw.address, 1, Pipeline.load("ocs", GOLDEN / "ocs.p4info.txtpb", GOLDEN / "ocs.json"),
                                election_id=(0, 10))
        try:
            session.connect()
            client = session.client
            circuits = P4RuntimeCircuits(session)
            schedule = Schedule(round_robin(3), day_ms=10, night_ms=1)
            assert write_dataplane_schedule(circuits, schedule, 3, epoch_us=5) == TimeSchedule(2, 10_000, 1_000, 5)
            want = [e.canonical(client.schema)
                    for e in ocs_schedule_entries(dataplane_maps(schedule, 3), TimeSchedule(2, 10_000, 1_000, 5))]
            got = [str(e) for e in client.read_entities([TableEntry("schedule_config", default=True)])]
            assert got == want[:1] and "set_schedule(epoch_us=5, cycle_scale=" in got[0]
            assert sorted(str(e) for e in client.read_entities([wildcard(client.schema, "table_entry")])) == sorted(want[1:])
            with pytest.raises(ValueError, match="night 1000500 ns: expected whole microseconds"):
                write_dataplane_schedule(circuits, Schedule(round_robin(3), day_ms=10, night_ms=1.0005), 3)
            assert len(client.read_entities([wildcard(client.schema, "table_entry")])) == len(want) - 1
        finally:
            session.close()
