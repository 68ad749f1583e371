import threading
import time

import pytest

from control.ocs.driver import duplex_pairs
from emulation.ocs.delay import DelayModel
from emulation.ocs.emulator import EmulatedOcs


class Recorder:
    """Collects what the emulator does to the data plane and links, with times."""

    def __init__(self):
        self.calls = []
        self.lock = threading.Lock()
        self.circuits = {}
        self.links = {}

    def set_circuit(self, i, o):
        with self.lock:
            self.circuits[i] = o
            self.calls.append(("set", i, o, time.monotonic()))

    def clear_circuit(self, i):
        with self.lock:
            self.circuits.pop(i, None)
            self.calls.append(("clear", i, time.monotonic()))

    def set_link(self, port, up):
        with self.lock:
            self.links[port] = up
            self.calls.append(("link", port, up, time.monotonic()))


def fast(mirror=10, lock=20, poll=30):
    return DelayModel(mirror_ms=mirror, lock_ms=lock, lock_jitter_ms=0, poll_period_ms=poll,
                      missed_poll_prob=0, missed_poll_jitter_ms=0)


@pytest.fixture
def rec():
    return Recorder()


def test_timeline_dark_light_up(rec):
    ocs = EmulatedOcs(4, fast(), rec, rec)
    try:
        t0 = time.monotonic()
        ocs.connect(duplex_pairs([(1, 2)], 4))
        assert ocs.query() == {1: 6, 2: 5}
        assert not ocs.port_status(1).light and ocs.port_status(1).connected_to == 6
        ocs.wait_complete()
        assert time.monotonic() - t0 >= 0.010
        assert ocs.wait_settled(2)
        assert rec.circuits == {1: 2, 2: 1} and rec.links == {1: True, 2: True}
        assert ocs.port_status(6).light and ocs.port_up(2)
        sets = [c for c in rec.calls if c[0] == "set"]
        ups = [c for c in rec.calls if c[0] == "link"]
        assert all(0.029 <= c[3] - t0 < 0.2 for c in sets)  # light after mirror + lock = 30 ms
        assert all(0.059 <= c[3] - t0 < 0.3 for c in ups)  # up after the poll = 60 ms
        # re-point slot 1 to slot 3: slot 1's and 2's old circuit goes dark at once
        rec.calls.clear()
        t1 = time.monotonic()
        ocs.set_map(duplex_pairs([(1, 3)], 4))
        time.sleep(0.015)
        assert rec.circuits == {} and rec.links[1] is False and rec.links[2] is False
        assert ocs.wait_settled(2)
        assert rec.circuits == {1: 3, 3: 1} and rec.links[1] and rec.links[3] and not rec.links[2]
        assert time.monotonic() - t1 >= 0.059
    finally:
        ocs.close()


def test_superseded_change_leaves_no_stale_circuit(rec):
    ocs = EmulatedOcs(4, fast(mirror=5, lock=50, poll=10), rec, rec)
    try:
        ocs.connect([(1, 6)])
        ocs.set_map([(1, 7)])  # before the first light came back
        assert ocs.wait_settled(2)
        assert rec.circuits == {1: 3}
        assert ("set", 1, 2) not in [c[:3] for c in rec.calls]
    finally:
        ocs.close()


def test_conflicts_and_ranges(rec):
    ocs = EmulatedOcs(4, DelayModel.instant(), rec, rec)
    try:
        ocs.connect([(1, 5)])
        with pytest.raises(ValueError, match="already connected"):
            ocs.connect([(2, 5)])
        with pytest.raises(ValueError, match="not connected"):
            ocs.disconnect([(2, 6)])
        with pytest.raises(ValueError, match="expected input in 1..4"):
            ocs.connect([(5, 6)])
        with pytest.raises(ValueError, match="used twice"):
            ocs.set_map([(1, 5), (2, 5)])
        assert ocs.peer(5) == 1 and ocs.peer(1) == 5 and ocs.peer(2) == 0
        ocs.disconnect([(1, 5)])
        assert ocs.query() == {}
        ocs.connect([(1, 5), (2, 6)])
        ocs.reset()
        assert ocs.query() == {}
    finally:
        ocs.close()


def test_port_map_and_events(rec):
    events = []
    ocs = EmulatedOcs(2, DelayModel.instant(), rec, rec, port_map={1: 11, 2: 12}, on_event=events.append)
    try:
        ocs.connect(duplex_pairs([(1, 2)], 2))
        assert ocs.wait_settled(2)
        assert rec.circuits == {11: 12, 12: 11}
        kinds = [e["event"] for e in events]
        assert kinds[0] == "command" and kinds.count("light") == 2 and kinds.count("port-up") == 2
        assert all("t_mono" in e and "t_wall" in e for e in events)
        with pytest.raises(ValueError, match="slots \\[2\\]"):
            EmulatedOcs(2, port_map={1: 1})
    finally:
        ocs.close()


def test_measured_port_flaps_through_the_timeline_match_table_4_3():
    # 485 circuits switched at once; each port's command-to-port-up time comes from the event log
    from emulation.ocs.cli import measure_port_flaps
    from emulation.ocs.delay import THESIS_TABLE_4_3, summarize

    stats = summarize(measure_port_flaps(DelayModel(seed=1), 485))
    assert stats["n"] == 485
    for key in ("25%", "50%", "75%", "mean", "min", "max"):
        assert stats[key] == pytest.approx(THESIS_TABLE_4_3[key], rel=0.05), key
