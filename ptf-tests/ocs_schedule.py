"""ocs.p4's time-flow tables: the cross-connect of each slot, chosen by the slot computed from the
packet's own timestamp; nights drop on changing ports (night_drops), unlit ports by day too
(unlit_drops). Each packet's slot is read back from schedule_phase's counters (schedule_helpers)."""

from __future__ import annotations

import time

from ocs_circuit import OcsTest, frames
from ptf import testutils
from ptf.testutils import group
from schedule_helpers import ScheduleMixin, check_clock_probe

from fabric.contract import SLOT_CIRCUIT
from fabric.schedule import TimeSchedule
from p4rt.entities import TableEntry
from tablegen.schedule import duplex, ocs_schedule_entries

# Two slots of 150 ms night + 450 ms day: a packet sent every 70 ms samples every night.
SCHED = TimeSchedule(slots=2, day_us=450_000, night_us=150_000)


class ScheduleTest(OcsTest, ScheduleMixin):
    """OcsTest with a schedule written as tablegen writes it."""

    def install_schedule(self, maps: list[list[tuple[int, int]]]) -> None:
        """The clock, then slot_circuit for `maps` (one per slot)."""
        self.install_clock(SCHED)
        self.insert(*(e for e in ocs_schedule_entries(duplex(maps), SCHED) if e.table == SLOT_CIRCUIT))

    def sample(self, port: int, duration: float, lit: dict[tuple[int, bool], int | None]
               ) -> list[tuple[tuple[int, bool], int | None]]:
        """Send a frame on `port` every 70 ms or so for `duration` s; each time read back the phase the
        OCS put it in, then expect it on lit[phase] (None: dropped and counted). Robust to a slow
        switch: the phase is read before the frame is awaited."""
        frame = frames()[0]
        drops = {"night_drops": self.read_counter("night_drops", port)[0],
                 "unlit_drops": self.read_counter("unlit_drops", port)[0]}
        out = []
        end = time.monotonic() + duration
        while time.monotonic() < end:
            before = self.phase_counts()
            self.send(port, frame)
            phases: list[tuple[int, bool]] = []
            deadline = time.monotonic() + 3.0
            while not phases and time.monotonic() < deadline:
                phases = self.classified(before)
            self.assertEqual(len(phases), 1, f"one frame classified {phases}")
            phase, want = phases[0], lit[phases[0]]
            if want is None:
                kind = "night_drops" if phase[1] else "unlit_drops"
                drops[kind] += 1
                self.assertEqual(self.wait_counter(kind, port, drops[kind])[0], drops[kind], f"{kind} in {phase}")
                got = self.collect(timeout=0.05, limit=1)
                self.assertEqual(got, [], f"frame in {phase} left")
            else:
                got = self.collect(timeout=2.0, limit=1)
                self.assertEqual([(p, f) for p, f in got], [(want, frame)], f"frame in {phase}")
            out.append((phase, want))
            time.sleep(0.05)
        return out


@group("ocs")
class TimeFlowTest(ScheduleTest):
    """A frame leaves by its slot's circuit (slot 0: 1 -> 2, slot 1: 1 -> 3) and a night drops it."""

    def runTest(self) -> None:
        self.install_schedule([[(1, 2), (3, 4)], [(1, 3), (2, 4)]])
        want = {(0, False): 2, (1, False): 3, (0, True): None, (1, True): None}
        seen = self.sample(1, 2.6, want)
        self.assertEqual(set(p for p, _ in seen), set(want), f"every night and day sampled: {seen}")
        testutils.verify_no_other_packets(self)


@group("ocs")
class UnchangedCircuitTest(ScheduleTest):
    """A circuit in both slots (1 <-> 2) stays lit through the nights; port 3, lit to 4 in slot 0
    only, drops at night (night_drops) and by slot 1's day (unlit_drops)."""

    def runTest(self) -> None:
        self.install_schedule([[(1, 2), (3, 4)], [(1, 2)]])
        self.sample(1, 1.3, {(0, False): 2, (1, False): 2, (0, True): 2, (1, True): 2})
        want = {(0, False): 4, (1, False): None, (0, True): None, (1, True): None}
        seen = self.sample(3, 2.6, want)
        self.assertEqual(set(p for p, _ in seen), set(want), f"every night and day sampled: {seen}")
        testutils.verify_no_other_packets(self)


@group("ocs")
class ScheduleOffTest(ScheduleTest):
    """Without set_schedule (default schedule_off) the static circuit table forwards, and a
    schedule whose epoch is in the future has not started."""

    def runTest(self) -> None:
        self.connect(1, 2)
        frame = frames()[1]
        self.send(1, frame)
        testutils.verify_packet(self, frame, 2)
        future = TimeSchedule(slots=2, day_us=450_000, night_us=150_000, epoch_us=1 << 46)
        self.install_clock(future)
        self.insert(TableEntry("slot_circuit", {"slot": 0, "night": 0, "ingress_port": 1},
                               "slot_cross_connect", {"port": 3}))
        self.send_expect(1, frame, frame, 2)


@group("ocs")
class ClockProbeTest(ScheduleTest):
    """The packet-in timestamp: a clock probe measures the switch's clock against the host's."""

    def runTest(self) -> None:
        check_clock_probe(self)
