"""The time-sliced schedule for PTF tests (p4src/README.md, "Time-flow tables"): the clock's entries
as tablegen writes them, and which night or day of which slot the switch put a packet in.

PTF controls time only coarsely, so the tests never predict the slot a packet falls in: they read
it back from `schedule_phase`'s direct counter (one entry per night and per day) and check that the
packet did what that slot says. Slots are long (hundreds of ms) so a packet is far from a boundary
most of the time; a packet that crossed one between two passes is told apart by the counters.
"""

from __future__ import annotations

from typing import Any

from fabric.schedule import TimeSchedule
from p4rt.entities import TableEntry
from tablegen.schedule import clock_entries

Phase = tuple[int, bool]  # (slot, night)


class ScheduleMixin:
    """Installs a schedule clock on the switch under test and reads the phase counters back."""

    def install_clock(self: Any, sched: TimeSchedule, before_us: int = 0, after_us: int = 0) -> None:
        """schedule_config's default and one schedule_phase entry per night and day."""
        self.phases: dict[Phase, list[TableEntry]] = {}
        entries = []
        for e in clock_entries(sched, before_us, after_us):
            if e.default:
                self.set_default(e.table, e.action, e.params)
                continue
            entries.append(e)
            self.phases.setdefault((e.params["slot"], bool(e.params["night"])), []).append(e)
        self.insert(*entries)

    def phase_counts(self: Any) -> dict[Phase, int]:
        """Packets each (slot, night) has classified so far."""
        return {k: sum(self.read_direct_counter(e)[0] for e in v) for k, v in self.phases.items()}

    def classified(self: Any, before: dict[Phase, int]) -> list[Phase]:
        """The phases that classified packets since `before` (one per pass through the clock)."""
        now = self.phase_counts()
        out = []
        for k, n in sorted(now.items()):
            out += [k] * (n - before[k])
        return out


def check_clock_probe(test: Any) -> None:
    """A packet-out to the CPU port comes back as a packet-in stamped with the switch's time, which
    advances with the host's (two measurements 300 ms apart agree within their error bounds)."""
    import time

    from control.clock import measure_client

    first = measure_client(test.client, test.cpu_port, probes=8)
    time.sleep(0.3)
    second = measure_client(test.client, test.cpu_port, probes=8)
    test.assertLess(first.error_us, 200_000, f"round trip bound {first}")
    drift = abs(second.offset_us - first.offset_us)
    test.assertLessEqual(drift, first.error_us + second.error_us + 1000, f"{first} then {second}")
    test.assertGreater(first.to_switch(time.monotonic()), 0, "switch time since start is positive")
