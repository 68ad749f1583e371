"""The one OCS driver interface (connect/disconnect pairs, set exactly a map, query, port status).

Ports follow the Polatis convention: 1..N are inputs, N+1..2N outputs; a connection is a pair
(input, output) that sends the light of an input to an output. A duplex circuit between two
transceivers a and b is two connections, (a, N+b) and (b, N+a): see `duplex_pairs`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass

Pair = tuple[int, int]


class OcsError(Exception):
    """An OCS refused or failed a command (carries the device's error code when there is one)."""

    def __init__(self, message: str, code: int = 0) -> None:
        super().__init__(message)
        self.code = code


class OcsTimeout(OcsError):
    """The OCS did not answer in time."""


@dataclass(slots=True)
class PortStatus:
    """What the OCS knows about one port: its peer (0 when none) and whether light is through."""

    port: int
    connected_to: int
    light: bool | None  # None when the device cannot tell (a real switch without power monitors)


def check_pairs(pairs: Iterable[Pair], size: int) -> list[Pair]:
    """Validate (input, output) pairs against an N-port switch; raises ValueError naming the bad pair."""
    out: list[Pair] = []
    ins: set[int] = set()
    outs: set[int] = set()
    for pair in pairs:
        try:
            i, o = (int(pair[0]), int(pair[1]))
        except (TypeError, ValueError, IndexError):
            raise ValueError(f"connection {pair!r}: expected (input, output) integers") from None
        if not 1 <= i <= size or not size < o <= 2 * size:
            raise ValueError(f"connection {pair!r}: expected input in 1..{size} and output in {size + 1}..{2 * size}")
        if i in ins or o in outs:
            raise ValueError(f"connection {pair!r}: port used twice in one map")
        ins.add(i)
        outs.add(o)
        out.append((i, o))
    return out


def duplex_pairs(circuits: Iterable[tuple[int, int]], size: int) -> list[Pair]:
    """Connections for duplex circuits between transceiver ports a <-> b (both in 1..N)."""
    out: list[Pair] = []
    for a, b in circuits:
        if not (1 <= a <= size and 1 <= b <= size) or a == b:
            raise ValueError(f"circuit {(a, b)!r}: expected two different ports in 1..{size}")
        out += [(a, size + b), (b, size + a)]
    return out


class OcsDriver(ABC):
    """Common interface of the emulated OCS, the Polatis driver and future TL1 back ends."""

    @property
    @abstractmethod
    def size(self) -> int:
        """N: the number of inputs (and of outputs)."""

    @abstractmethod
    def connect(self, pairs: Iterable[Pair]) -> None:
        """Add connections; ports must be free."""

    @abstractmethod
    def disconnect(self, pairs: Iterable[Pair]) -> None:
        """Remove connections."""

    @abstractmethod
    def set_map(self, pairs: Iterable[Pair]) -> None:
        """Make exactly these connections (others removed)."""

    @abstractmethod
    def query(self) -> dict[int, int]:
        """The current connections, input -> output."""

    @abstractmethod
    def port_status(self, port: int) -> PortStatus:
        """Peer and light of one port."""

    @abstractmethod
    def wait_complete(self, timeout: float | None = None) -> None:
        """Return once the mirrors of every command sent so far have moved (*OPC?)."""

    def close(self) -> None:  # noqa: B027 - optional for drivers without a session
        """Release the session."""

    def __enter__(self) -> OcsDriver:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def parse_pairs(items: list[str]) -> list[tuple[int, int]]:
    """IN:OUT (or A-B) port pairs of the command line."""
    pairs = []
    for item in items:
        a, sep, b = item.replace("-", ":").partition(":")
        if not sep or not a.isdigit() or not b.isdigit():
            raise ValueError(f"connection {item!r}: expected IN:OUT (or A-B) port numbers")
        pairs.append((int(a), int(b)))
    return pairs
