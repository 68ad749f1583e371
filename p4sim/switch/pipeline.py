"""A loaded program: the bmv2 JSON compiled to Python, with fresh runtime state for every object.

Runtime state is keyed by the JSON names (p4c's fully qualified names, the same as P4Info's):
`tables`, `profiles` (action profiles and selectors), `counters` (indirect counter arrays),
`direct_counters` (direct counter name -> table name), `registers`, `meters` (indirect),
`direct_meters` (direct meter name -> DirectMeter, with `.info.binding` the table).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TypeVar

from p4sim.switch import heap
from p4sim.switch.codegen import source as codegen
from p4sim.switch.externs import CounterArray, DirectMeter, MeterArray, RegisterArray, ValueSet
from p4sim.switch.profiles import ActionProfile
from p4sim.switch.program import Program, parse_program
from p4sim.switch.tables import Table

log = logging.getLogger(__name__)


class Pipeline:
    """A program ready to run: compiled code plus its tables, profiles, counters, registers, meters."""

    def __init__(self, json_bytes: bytes, port_up: Callable[[int], bool], lock: threading.RLock,
                 nb_queues: int = 1) -> None:
        self.json_bytes = bytes(json_bytes)
        # simple_switch's --priority-queues: a packet whose priority is not below it is dropped
        self.nb_queues = nb_queues
        self.program: Program = parse_program(self.json_bytes)
        self.lock = lock
        prog = self.program
        _check_memory(prog)
        self.counters = {n: CounterArray(i, lock) for n, i in prog.counters.items() if not i.is_direct}
        self.direct_counters = {n: i.binding for n, i in prog.counters.items() if i.is_direct}
        self.registers = {n: RegisterArray(i, lock) for n, i in prog.registers.items()}
        self.meters = {n: MeterArray(i, lock) for n, i in prog.meters.items() if not i.is_direct}
        self.direct_meters = {n: DirectMeter(i) for n, i in prog.meters.items() if i.is_direct}
        self.value_sets = {n: ValueSet(n, w, lock) for n, w in prog.parse_vsets.items()}
        # the generated code needs the state objects; the tables need the generated action functions
        self.code, consts = codegen.generate(prog)
        self.namespace = codegen.load(self.code, consts, prog, self)
        fns: dict[int, Callable[..., None]] = self.namespace["ACTIONS"]
        self.profiles = {n: ActionProfile(i, prog.profile_actions(n), fns, port_up, lock)
                         for n, i in prog.profiles.items()}
        self.tables = {n: Table(i, prog.actions, fns, self.profiles.get(i.action_profile or ""), lock)
                       for n, i in prog.tables.items()}
        codegen.bind(self.namespace, self)
        log.info("pipeline loaded: %d tables, %d actions, %d lines of generated code",
                 len(self.tables), len(prog.actions), self.code.count("\n"))

    def table(self, name: str) -> Table:
        """A table by JSON name, or by unique suffix (`route` for `FabricIngress.route`)."""
        return _by_name(self.tables, name, "table")

    def profile(self, name: str) -> ActionProfile:
        """An action profile or selector by JSON name or unique suffix."""
        return _by_name(self.profiles, name, "action profile")

    def counter(self, name: str) -> CounterArray:
        """An indirect counter array by JSON name or unique suffix."""
        return _by_name(self.counters, name, "counter")

    def register(self, name: str) -> RegisterArray:
        """A register array by JSON name or unique suffix."""
        return _by_name(self.registers, name, "register")

    def value_set(self, name: str) -> ValueSet:
        """The parser value set called name (unique suffix)."""
        return _by_name(self.value_sets, name, "value set")

    def meter(self, name: str) -> MeterArray:
        """An indirect meter array by JSON name or unique suffix."""
        return _by_name(self.meters, name, "meter")

    def refresh_ports(self) -> None:
        """Recompute selector groups after a port status change (watch ports)."""
        for p in self.profiles.values():
            p.refresh()


# What a cell of an array costs up front (a list slot each: packets and bytes for a counter).
CELL_BYTES = {"counter": 16, "register": 8, "meter": 8}


def _check_memory(prog: Program) -> None:
    """ValueError naming the largest array when the arrays the program allocates at load time need
    more memory than the machine has available (bmv2 aborts with std::bad_alloc there)."""
    arrays = [a for arrays in (prog.counters, prog.meters, prog.registers) for a in arrays.values()
              if not a.is_direct]
    if not arrays:
        return
    need = sum(a.size * CELL_BYTES[a.kind] for a in arrays)
    available = heap.available_bytes()
    if need > available:
        big = max(arrays, key=lambda a: a.size * CELL_BYTES[a.kind])
        raise ValueError(f"{big.kind} {big.name}: size {big.size} needs {_gib(big.size * CELL_BYTES[big.kind])} "
                         f"(all arrays {_gib(need)}), more than the {_gib(available)} available on this machine")


def _gib(n: int) -> str:
    return f"{n / 2**30:.1f} GiB"


T = TypeVar("T")


def _by_name(d: dict[str, T], name: str, kind: str) -> T:
    if name in d:
        return d[name]
    cands = [k for k in d if k.endswith("." + name)]
    if len(cands) == 1:
        return d[cands[0]]
    if not cands:
        raise ValueError(f"{kind} {name!r} not found; known: {', '.join(sorted(d)) or 'none'}")
    raise ValueError(f"{kind} {name!r} is ambiguous: {', '.join(sorted(cands))}")
