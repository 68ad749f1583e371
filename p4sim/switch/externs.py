"""Stateful externs of v1model: counter arrays, register arrays and meter arrays (bmv2 semantics).

Indices outside an array are ignored by the data plane (bmv2 logs and skips them) and rejected
with InvalidArgument by the control-plane methods.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass

from p4sim.switch.program import ArrayInfo
from p4sim.switch.values import InvalidArgument

log = logging.getLogger(__name__)

GREEN, YELLOW, RED = 0, 1, 2


class _Array:
    """An indexed extern array: its ArrayInfo, and the pipeline's lock its control-plane writes take."""

    kind = ""  # "counter", "register", "meter": how errors name it

    def __init__(self, info: ArrayInfo, lock: threading.RLock) -> None:
        self.info = info
        self.name = info.name
        self.size = info.size
        self._lock = lock

    def _check_index(self, index: int) -> None:
        if not 0 <= index < self.size:
            raise InvalidArgument(f"{self.kind} {self.name}: index {index} not in 0..{self.size - 1}")


class CounterArray(_Array):
    """Packet and byte counts per index (bmv2 counters always count both)."""

    kind = "counter"

    def __init__(self, info: ArrayInfo, lock: threading.RLock) -> None:
        super().__init__(info, lock)
        self.packets = [0] * info.size
        self.bytes = [0] * info.size

    def count(self, index: int, nbytes: int) -> None:
        """Data plane: count one packet of nbytes at index (out of range: ignored)."""
        if 0 <= index < self.size:
            self.packets[index] += 1
            self.bytes[index] += nbytes

    def read(self, index: int) -> tuple[int, int]:
        """(packets, bytes) at index."""
        self._check_index(index)
        return self.packets[index], self.bytes[index]

    def write(self, index: int, packets: int, nbytes: int) -> None:
        """Set (packets, bytes) at index."""
        with self._lock:
            self._check_index(index)
            self.packets[index], self.bytes[index] = packets, nbytes

    def reset(self) -> None:
        """Zero every index."""
        with self._lock:
            self.packets = [0] * self.size
            self.bytes = [0] * self.size


class RegisterArray(_Array):
    """Register cells of a fixed width, values are unsigned ints."""

    kind = "register"

    def __init__(self, info: ArrayInfo, lock: threading.RLock) -> None:
        super().__init__(info, lock)
        self.bitwidth = info.bitwidth
        self._mask = (1 << info.bitwidth) - 1
        self.cells = [0] * info.size

    def read(self, index: int) -> int:
        """The value at index."""
        self._check_index(index)
        return self.cells[index]

    def write(self, index: int, value: int) -> None:
        """Set the value at index; InvalidArgument if it does not fit the register width."""
        with self._lock:
            self._check_index(index)
            if not 0 <= value <= self._mask:
                raise InvalidArgument(f"register {self.name}: value {value:#x} does not fit in {self.bitwidth} bits")
            self.cells[index] = value

    def reset(self) -> None:
        """Zero every cell."""
        with self._lock:
            self.cells = [0] * self.size


METER_KINDS = ("trTCM", "srTCM", "sr2C")


@dataclass(slots=True, frozen=True)
class MeterConfig:
    """A meter configuration, rates in units/s and bursts in units, as P4Runtime's MeterConfig.

    kind follows P4Info's MeterSpec.Type: "trTCM" (TWO_RATE_THREE_COLOR, RFC 2698, what bmv2 does:
    cir/cburst/pir/pburst), "srTCM" (SINGLE_RATE_THREE_COLOR, RFC 2697: cir/cburst/eburst) or "sr2C"
    (SINGLE_RATE_TWO_COLOR: cir/cburst, GREEN or RED)."""

    cir: int
    cburst: int
    pir: int = 0
    pburst: int = 0
    eburst: int = 0
    kind: str = "trTCM"


class _Bucket:
    __slots__ = ("cfg", "tc", "tp", "last_us")

    def __init__(self, cfg: MeterConfig, now_us: int) -> None:
        self.cfg = cfg
        self.tc = float(cfg.cburst)
        # the second bucket: peak (trTCM) or excess (srTCM); none for a two-colour meter
        self.tp = float(cfg.eburst if cfg.kind == "srTCM" else cfg.pburst if cfg.kind == "trTCM" else 0)
        self.last_us = now_us

    def execute(self, units: int, now_us: int) -> int:
        cfg = self.cfg
        if cfg.kind != "trTCM":
            return self._single_rate(units, now_us)
        dt = (now_us - self.last_us) / 1e6
        if dt > 0:
            self.tc = min(float(cfg.cburst), self.tc + dt * cfg.cir)
            self.tp = min(float(cfg.pburst), self.tp + dt * cfg.pir)
            self.last_us = now_us
        # RFC 2698 colour-blind trTCM, as bmv2's Meter
        if self.tp < units:
            return RED
        if self.tc < units:
            self.tp -= units
            return YELLOW
        self.tp -= units
        self.tc -= units
        return GREEN

    def _single_rate(self, units: int, now_us: int) -> int:
        # RFC 2697 colour-blind srTCM: tokens at cir fill the committed bucket, its overflow the
        # excess bucket; a two-colour meter has no excess bucket
        cfg = self.cfg
        dt = (now_us - self.last_us) / 1e6
        if dt > 0:
            add = self.tc + dt * cfg.cir
            self.tc = min(float(cfg.cburst), add)
            if cfg.kind == "srTCM":
                self.tp = min(float(cfg.eburst), self.tp + (add - self.tc))
            self.last_us = now_us
        if self.tc >= units:
            self.tc -= units
            return GREEN
        if cfg.kind == "srTCM" and self.tp >= units:
            self.tp -= units
            return YELLOW
        return RED


def check_meter_config(name: str, cfg: MeterConfig) -> None:
    """InvalidArgument unless rates and bursts are non-negative and, for a trTCM, cir <= pir (bmv2 rule)."""
    if cfg.kind not in METER_KINDS:
        raise InvalidArgument(f"meter {name}: kind {cfg.kind!r}, expected one of {', '.join(METER_KINDS)}")
    if min(cfg.cir, cfg.cburst, cfg.pir, cfg.pburst, cfg.eburst) < 0:
        raise InvalidArgument(f"meter {name}: negative rate or burst in {cfg}")
    if cfg.kind == "trTCM" and cfg.cir > cfg.pir:
        raise InvalidArgument(f"meter {name}: cir {cfg.cir} > pir {cfg.pir} (a trTCM needs cir <= pir)")


class MeterArray(_Array):
    """Meters per index (trTCM as bmv2, or single-rate); an unconfigured index marks every packet GREEN (as bmv2)."""

    kind = "meter"

    def __init__(self, info: ArrayInfo, lock: threading.RLock) -> None:
        super().__init__(info, lock)
        self.by_bytes = info.meter_type == "bytes"
        self._buckets: list[_Bucket | None] = [None] * info.size

    def execute(self, index: int, nbytes: int, now_us: int) -> int:
        """Data plane: the colour (0 green, 1 yellow, 2 red) of one packet at index."""
        if not 0 <= index < self.size:
            return GREEN
        b = self._buckets[index]
        if b is None:
            return GREEN
        return b.execute(nbytes if self.by_bytes else 1, now_us)

    def get_config(self, index: int) -> MeterConfig | None:
        """The configuration at index, or None if unconfigured."""
        self._check_index(index)
        b = self._buckets[index]
        return None if b is None else b.cfg

    def set_config(self, index: int, cfg: MeterConfig | None, now_us: int = 0) -> None:
        """Configure index (None: back to unconfigured, all GREEN); buckets start full."""
        with self._lock:
            self._check_index(index)
            if cfg is None:
                self._buckets[index] = None
            else:
                check_meter_config(self.name, cfg)
                self._buckets[index] = _Bucket(cfg, now_us)

    def reset(self) -> None:
        """Unconfigure every index."""
        with self._lock:
            self._buckets = [None] * self.size


class DirectMeter:
    """A direct meter: one meter per table entry, stored on the entry (Entry.meter)."""

    def __init__(self, info: ArrayInfo) -> None:
        self.info = info
        self.name = info.name
        self.by_bytes = info.meter_type == "bytes"

    @staticmethod
    def config(entry_meter: object) -> MeterConfig | None:
        """The configuration stored on an entry, or None."""
        return entry_meter.cfg if isinstance(entry_meter, _Bucket) else None

    def set_config(self, entry: object, cfg: MeterConfig | None, now_us: int = 0) -> None:
        """Configure the meter of one table entry (None: unconfigured)."""
        if cfg is not None:
            check_meter_config(self.name, cfg)
        entry.meter = None if cfg is None else _Bucket(cfg, now_us)  # type: ignore[attr-defined]

    def execute(self, entry: object, nbytes: int, now_us: int) -> int:
        """Data plane: the colour of one packet hitting entry."""
        b = entry.meter  # type: ignore[attr-defined]
        if b is None:
            return GREEN
        return b.execute(nbytes if self.by_bytes else 1, now_us)


class ValueSet:
    """A parser value set (bmv2 parse_vset): exact values of `width` bits. The generated parser holds
    `members` itself, so writes change the set in place."""

    def __init__(self, name: str, width: int, lock: threading.RLock) -> None:
        self.name = name
        self.width = width
        self.members: set[int] = set()
        self._lock = lock

    def set_members(self, values: list[int]) -> None:
        """Replace every member (P4Runtime's MODIFY of a ValueSetEntry); values must fit the width."""
        for v in values:
            if not 0 <= v < 1 << self.width:
                raise InvalidArgument(f"value set {self.name}: value {v:#x} does not fit {self.width} bits")
        with self._lock:
            self.members.clear()
            self.members.update(values)

    def entries(self) -> list[int]:
        """The members, sorted."""
        with self._lock:
            return sorted(self.members)
