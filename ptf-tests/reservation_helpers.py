"""Seed 001's reservation loop for PTF tests (p4src/README.md, "Reservation loop"): the reservation
frame as a scapy layer, the loop's configuration as tablegen writes it, and the schedule the tests
run on (8 slots of 100 ms, 250 ms at the OCS: a packet is far from a boundary most of the time, and each one's slot is
read back from schedule_phase's counters, never predicted)."""

from __future__ import annotations

from scapy.fields import BitField, ByteField, IntField, ShortField
from scapy.layers.l2 import Ether
from scapy.packet import Packet, bind_layers

from fabric.schedule import TimeSchedule
from p4rt.entities import TableEntry
from tablegen.reservation_loop import Loop

ETHERTYPE_RESERVATION = 0x88B9
REQUEST, GRANT, ANNOUNCE = 1, 2, 3
BOOKING = 4  # no kind of the OCS's: its booking passes keep the request's kind, their state set on arrival
SCHED = TimeSchedule(slots=8, day_us=80_000, night_us=20_000)
# the OCS tests' slots are longer: a test reads the phase counters between frames (two P4Runtime reads
# of 16 entries), which took 300 ms on a slow p4sim run, and its frames must fall in the slots it expects
OCS_SCHED = TimeSchedule(slots=8, day_us=200_000, night_us=50_000)
# 1 slot carries up to 10 kB, 2 slots 20 kB, 3 slots any more (a 10 Mbit/s uplink would carry 100 kB;
# the tests choose the lengths)
LENGTHS = [(0, 10_000, 1), (10_001, 20_000, 2), (20_001, (1 << 32) - 1, 3)]


class Reservation(Packet):
    """reservation_h (p4src/include/headers.p4)."""

    name = "Reservation"
    fields_desc = [
        ByteField("kind", REQUEST), ByteField("refused", 0), ShortField("path_id", 0), ShortField("dst_port", 0),
        ShortField("seq", 0), ShortField("req_slot", 0), ShortField("start", 0), ShortField("slots", 0),
        IntField("nbytes", 0), BitField("asked_at", 0, 48), ShortField("in_port", 0), ShortField("cursor", 0),
        ShortField("left", 0), BitField("expires", 0, 48),
    ]


bind_layers(Ether, Reservation, type=ETHERTYPE_RESERVATION)


def frame(**fields: int) -> Ether:
    """A reservation frame as a ToR sends it (broadcast, no source)."""
    return Ether(dst="ff:ff:ff:ff:ff:ff", src="00:00:00:00:00:00", type=ETHERTYPE_RESERVATION) / Reservation(**fields)


def parse(raw: bytes) -> Reservation | None:
    """The reservation header of a frame, or None if it is not one."""
    pkt = Ether(raw)
    return pkt[Reservation] if Reservation in pkt else None


def length_entries() -> list[TableEntry]:
    """`window_length` with LENGTHS."""
    return [TableEntry("window_length", {"bytes": {"low": lo, "high": hi}}, "set_window", {"length": n}, priority=1)
            for lo, hi, n in LENGTHS]


def loop(mode: str = "two-way", sched: TimeSchedule = SCHED, **kw: int) -> Loop:
    """The loop on `sched` (windows of up to 3 slots)."""
    return Loop(mode, slots=sched.slots, slot_us=(sched.day_ns + sched.night_ns) // 1000,
                send_us=sched.day_ns // 1000, rate_mbit=10, max_slots=3, **kw)


def offset(slot: int, base: int, slots: int = SCHED.slots) -> int:
    """Slots from `base` to `slot` in the cycle (0 .. slots - 1)."""
    return (slot - base) % slots

