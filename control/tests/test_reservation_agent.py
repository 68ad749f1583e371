"""The reservation controller (control/reservation_agent.py): its queue arithmetic, and a path's
request and grant against recording clients; its loop runs end to end on the switches in
scripts/tests/test_seed001.py."""

import pytest

from control.grants import Calendar, TwoWay
from control.reservation import Timing
from control.reservation_agent import PathState, ReservationAgent, conflicts, lead, loop_share, waiting
from p4rt.entities import TableEntry


def circuit(slot, night, a, b):
    return TableEntry("slot_circuit", {"slot": slot, "night": night, "ingress_port": a}, "slot_cross_connect",
                      {"port": b})


def test_conflicts_finds_an_output_lit_from_two_inputs():
    ok = [circuit(3, 0, 1, 2), circuit(3, 0, 2, 1), circuit(4, 0, 3, 2), circuit(4, 1, 1, 2)]
    assert conflicts(ok) == []
    assert conflicts([*ok, circuit(4, 0, 1, 2)]) == ["slot 4 night 0: inputs 3 and 1 -> 2"]


def test_waiting_is_entered_minus_released_minus_expired():
    cells = {"hold_entered": (10, 15000), "hold_released": (6, 9000), "hold_expired": (1, 1500)}
    assert waiting(cells) == (3, 4500, 15000)
    assert waiting({}) == (0, 0, 0)
    # released frames came back round the loop longer by their mark: the bytes are the packets'
    marked = {"hold_entered": (10, 15000), "hold_released": (9, 13644), "hold_expired": (0, 0)}
    assert waiting(marked) == (1, 1500, 15000)


def test_lead_is_a_high_percentile_of_recent_writes_or_the_floor():
    assert lead([], 0.01) == 0.01
    assert lead([0.2], 0.01) == 0.2
    assert lead([0.03] * 16 + [0.05] * 3 + [1.6], 0.01) == 0.05  # one stalled write does not set it
    assert lead([0.2] * 5 + [0.02] * 5, 0.01) == 0.2
    assert lead([5.0] + [0.02] * 20, 0.01) == 0.02  # only the last 20 writes count


def test_agent_refuses_bad_settings():
    with pytest.raises(ValueError, match="poll"):
        ReservationAgent(None, {}, None, {}, poll_s=0)  # type: ignore[arg-type]


class Recorder:
    """A switch's session that keeps the changes asked of it, in order, in a log shared by all."""

    def __init__(self, name, log):
        self.name, self.log = name, log

    def apply(self, add=(), remove=()):
        self.log.append((self.name, "insert" if add else "delete", list(add or remove)))


def agent_with_one_path(now, assembly_s=0.010, loop_passes=0.0):
    cal = Calendar(epoch_s=now - 1.0, slot_s=0.010, night_s=0.001, slots=300, send_s=0.005)
    timing = Timing(switch_s=0.001, proc_s=0.001, overhead_s=0.001, guard_s=0.0, rate_bps=10e6)
    log = []
    st = PathState(0, 1, 7,
                   lambda slots: [TableEntry("slot_path", {"path_id": 7, "slot": k}, "slot_port",
                                             {"port": 3, "dmac": "00:00:00:00:00:02", "byte_ns": 800})
                                  for k in slots],
                   lambda slots: [TableEntry("slot_circuit", {"slot": k, "night": 0, "ingress_port": 1},
                                             "slot_cross_connect", {"port": 2}) for k in slots])
    agent = ReservationAgent(TwoWay(2, cal, timing), {"leaf1": Recorder("leaf1", log)}, Recorder("ocs", log),
                             {"leaf1": [st]}, max_burst=50_000, assembly_s=assembly_s, loop_passes=loop_passes)
    return agent, st, log, cal


def test_a_burst_assembles_for_t_a_then_asks_for_what_waits():
    now = 1000.0
    agent, st, log, cal = agent_with_one_path(now)
    queues = {7: (8, 8 * 1514, 8 * 1514)}  # (packets, bytes waiting, bytes entered)
    agent._serve("leaf1", st, queues, now)
    agent._serve("leaf1", st, queues, now + 0.005)
    assert log == [] and agent.grants == []  # T_a (10 ms) has not passed
    agent._serve("leaf1", st, queues, now + 0.011)
    [g] = agent.grants
    assert g["bytes"] == 8 * 1514 and g["queued"] == 8
    # 9.7 ms of burst in days of 5 ms of sending: 2 slots, the OCS's circuit written before the ToR's
    assert g["count"] == 2
    (who1, op1, ocs), (who2, op2, tor) = log
    assert (who1, op1, who2, op2) == ("ocs", "insert", "leaf1", "insert")
    slots = [(g["first"] + k) % cal.slots for k in range(2)]
    assert [e.match["slot"] for e in ocs] == slots
    assert [e.match["slot"] for e in tor] == slots and {e.params["byte_ns"] for e in tor} == {800}
    # nothing new entered and the window is unfinished: no second request
    agent._serve("leaf1", st, queues, now + 0.030)
    assert len(agent.grants) == 1


def test_a_full_burst_asks_at_once():
    now = 1000.0
    agent, st, log, _ = agent_with_one_path(now)
    agent._serve("leaf1", st, {7: (40, 60_000, 60_000)}, now)
    [g] = agent.grants
    assert g["bytes"] == 50_000  # the largest burst granted at once


def test_loop_share_is_the_wait_for_a_paths_first_packet_and_its_pace():
    # 40 of 50 held packets on the path, 4000 passes a second: one of its packets every 0.31 ms,
    # 3200 a second, far faster than 10 Mbit/s sends full frames (826 a second): full pace
    assert loop_share(40, 50, 1514, 4000, 10e6) == (pytest.approx(1 / 3200), 1.0)
    # 2 of 200 held: 40 a second, a 25 ms wait, and 1/20 of what the uplink could send
    assert loop_share(2, 200, 1514, 4000, 10e6) == (pytest.approx(1 / 40), pytest.approx(40 * 8 * 1514 / 10e6))
    assert loop_share(8, 8, 1514, 0, 10e6) == (0.0, 1.0)  # no loop
    assert loop_share(0, 8, 1514, 4000, 10e6) == (0.0, 1.0)


def test_a_window_allows_for_what_the_hold_loop_costs():
    """7 full frames (8.5 ms at 10 Mbit/s) with a 5 ms first day and 10 ms slots take 2 slots held
    alone (the first comes round in 0.25 ms); held among 393 others of other paths, the path's
    frames come round 70 times a second with 4000 passes: a 14 ms wait, and at 70 x 1514 B a
    second (0.85 Mbit/s) the pace is floored at a quarter of the uplink's: 34 + 14 ms, 6 slots."""
    now = 1000.0
    agent, st, log, _ = agent_with_one_path(now, assembly_s=0.0, loop_passes=4000)
    agent._serve("leaf1", st, {7: (7, 7 * 1514, 7 * 1514)}, now + 0.02, held_all=7)
    assert agent.grants[0]["count"] == 2
    agent2, st2, _, _ = agent_with_one_path(now, assembly_s=0.0, loop_passes=4000)
    agent2._serve("leaf1", st2, {7: (7, 7 * 1514, 7 * 1514)}, now + 0.02, held_all=400)
    assert agent2.grants[0]["count"] == 6
