"""A switch's clock against this host's CLOCK_MONOTONIC, from clock probes: a packet-out to the CPU
port comes back as a packet-in whose `timestamp` is the switch's time when it arrived
(p4src/README.md). The probe with the shortest round trip bounds the offset best (NTP's rule):
offset = timestamp - midpoint of send and receive, error at most half that round trip.

Time-flow schedules (p4src/README.md) start at an epoch in each switch's own time; a ToR gating
against the OCS needs the OCS's epoch in its own clock: `ClockOffset.to_switch(other.to_host(e))`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass

from fabric.contract import ETHERTYPE_PROBE
from fabric.schedule_clock import timestamp_tick_ns
from p4rt.client import P4RuntimeClient
from p4rt.resources import Packet
from topo.model import CPU_PORT

CLOCK_MAGIC = b"HLCLOCK1"


@dataclass(frozen=True, slots=True)
class ClockOffset:
    """Switch time (us) = host monotonic time (us) + offset_us, within error_us."""

    offset_us: int
    error_us: int

    def to_switch(self, host_s: float) -> int:
        """The switch's time at host monotonic time `host_s` (seconds)."""
        return round(host_s * 1e6) + self.offset_us

    def to_host(self, switch_us: int) -> float:
        """The host monotonic time (seconds) at switch time `switch_us`."""
        return (switch_us - self.offset_us) / 1e6

    def after_guard_us(self, ocs_error_us: int, given: int | None = None) -> int:
        """A ToR's guard after each night of a schedule the OCS keeps: `given`, or by default this
        clock's error bound plus the OCS's, so that the ToR never starts a day before the OCS has."""
        return self.error_us + ocs_error_us if given is None else given


def estimate(samples: list[tuple[float, float, float]]) -> ClockOffset:
    """From (sent s, received s, switch us) round trips: the offset of the shortest."""
    if not samples:
        raise ValueError("clock samples []: expected at least one round trip")
    t1, t2, ts = min(samples, key=lambda s: s[1] - s[0])
    if t2 < t1:
        raise ValueError(f"clock sample sent {t1} received {t2}: expected received after sent")
    return ClockOffset(round(ts - (t1 + t2) / 2 * 1e6), max(1, round((t2 - t1) / 2 * 1e6)))


def probe_frame(nonce: int) -> bytes:
    """A clock probe: broadcast, the probe ether type, CLOCK_MAGIC and a nonce, padded to 60 bytes."""
    frame = b"\xff" * 6 + b"\x02" + bytes(5) + ETHERTYPE_PROBE.to_bytes(2, "big") + CLOCK_MAGIC + nonce.to_bytes(8, "big")
    return frame + bytes(60 - len(frame))


def probe_nonce(payload: bytes) -> int | None:
    """The nonce of a clock probe's payload (None: not a clock probe)."""
    if len(payload) >= 30 and payload[14:22] == CLOCK_MAGIC:
        return int.from_bytes(payload[22:30], "big")
    return None


def measure(send: Callable[[bytes], None], receive: Callable[[float], tuple[bytes, int] | None],
            probes: int = 16, timeout: float = 1.0, tick_ns: int = 1000) -> ClockOffset:
    """Send `probes` clock probes one at a time (send(frame): a packet-out to the CPU port) and pair
    each with its packet-in (receive(timeout) -> (payload, timestamp) or None). The timestamp counts
    ticks of `tick_ns` (fabric/schedule_clock.py `timestamp_tick_ns`: 1000 on v1model, 1024 on TNA); the offset
    is in us whatever the target, as the schedule's lengths and epochs are."""
    samples = []
    base = os.getpid() << 24
    for i in range(probes):
        nonce = base + i
        t1 = time.monotonic()
        send(probe_frame(nonce))
        deadline = t1 + timeout
        while (left := deadline - time.monotonic()) > 0:
            got = receive(left)
            if got is not None and probe_nonce(got[0]) == nonce:
                samples.append((t1, time.monotonic(), got[1] * tick_ns / 1000))
                break
    if not samples:
        raise TimeoutError(f"clock: none of {probes} probes came back within {timeout:.1f} s")
    return estimate(samples)


def measure_client(client: P4RuntimeClient, cpu_port: int = CPU_PORT, probes: int = 16,
                   timeout: float = 1.0) -> ClockOffset:
    """measure() through a client that queues its packet-ins (no on_packet_in callback)."""

    def receive(left: float) -> tuple[bytes, int] | None:
        pkt = client.packet_in(timeout=left)
        return None if pkt is None else (pkt.payload, int(pkt.metadata.get("timestamp", 0)))

    return measure(lambda f: client.packet_out(Packet(f, {"egress_port": cpu_port})), receive, probes, timeout,
                   timestamp_tick_ns(client.schema))
