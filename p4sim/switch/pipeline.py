"""A loaded program: the bmv2 JSON compiled to Python, with fresh runtime state for every object.

Runtime state is keyed by the JSON names (p4c's fully qualified names, the same as P4Info's):
`tables`, `profiles` (action profiles and selectors), `counters` (indirect counter arrays),
`direct_counters` (direct counter name -> table name), `registers`, `meters` (indirect),
`direct_meters` (direct meter name -> DirectMeter, with `.info.binding` the table).
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections.abc import Callable
from hashlib import sha256
from typing import Any, TypeVar

from p4sim.switch import heap
from p4sim.switch.codegen import source as codegen
from p4sim.switch.externs import CounterArray, DirectMeter, MeterArray, RegisterArray, ValueSet
from p4sim.switch.profiles import ActionProfile
from p4sim.switch.program import ArrayInfo, ProfileInfo, Program, TableInfo, parse_program
from p4sim.switch.tables import Table

log = logging.getLogger(__name__)


class PythonState:
    """Makes the state objects of a pipeline that the Python data path runs."""

    def __init__(self, lock: threading.RLock) -> None:
        self.lock = lock

    def counter(self, info: ArrayInfo) -> CounterArray:
        """An indirect counter array."""
        return CounterArray(info, self.lock)

    def register(self, info: ArrayInfo) -> RegisterArray:
        """A register array."""
        return RegisterArray(info, self.lock)

    def meter(self, info: ArrayInfo) -> MeterArray:
        """An indirect meter array."""
        return MeterArray(info, self.lock)

    def direct_meter(self, info: ArrayInfo) -> DirectMeter:
        """A direct meter."""
        return DirectMeter(info)

    def value_set(self, name: str, width: int) -> ValueSet:
        """A parser value set."""
        return ValueSet(name, width, self.lock)

    def profile(self, info: ProfileInfo, actions: dict, fns: dict, port_up: Callable[[int], bool]) -> ActionProfile:
        """An action profile or selector."""
        return ActionProfile(info, actions, fns, port_up, self.lock)

    def table(self, info: TableInfo, actions: dict, fns: dict, profile: ActionProfile | None) -> Table:
        """A match-action table."""
        return Table(info, actions, fns, profile, self.lock)


class Pipeline:
    """A program ready to run: compiled code plus its tables, profiles, counters, registers, meters.

    native=True: the program runs as native code (p4sim.switch.native) when it can; `native` is then
    its native pipeline, else None (and `code`/`namespace` hold the Python data path)."""

    def __init__(self, json_bytes: bytes, port_up: Callable[[int], bool], lock: threading.RLock,
                 nb_queues: int = 1, native: bool = False) -> None:
        self.json_bytes = bytes(json_bytes)
        # simple_switch's --priority-queues: a packet whose priority is not below it is dropped
        self.nb_queues = nb_queues
        self.program: Program = shared_program(self.json_bytes)
        self.lock = lock
        prog = self.program
        _check_memory(prog)
        self.native: Any = None
        if native:
            from p4sim.switch.native.loader import native_program
            from p4sim.switch.native.state import NativePipe

            loaded = native_program(self.json_bytes, prog)
            self.native = NativePipe(loaded) if loaded is not None else None
        make = self.native.state(lock) if self.native is not None else PythonState(lock)
        self.counters = {n: make.counter(i) for n, i in prog.counters.items() if not i.is_direct}
        self.direct_counters = {n: i.binding for n, i in prog.counters.items() if i.is_direct}
        self.registers = {n: make.register(i) for n, i in prog.registers.items()}
        self.meters = {n: make.meter(i) for n, i in prog.meters.items() if not i.is_direct}
        self.direct_meters = {n: make.direct_meter(i) for n, i in prog.meters.items() if i.is_direct}
        self.value_sets = {n: make.value_set(n, w) for n, w in prog.parse_vsets.items()}
        self.code: str | None = None
        self.namespace: dict[str, Any] | None = None
        fns: dict[int, Callable[..., None] | None] = dict.fromkeys(prog.actions)
        if self.native is None:
            # the generated code needs the state objects; the tables need the generated action functions
            self.code, consts = codegen.generate(prog)
            self.namespace = codegen.load(self.code, consts, prog, self)
            fns = self.namespace["ACTIONS"]
        self.profiles = {n: make.profile(i, prog.profile_actions(n), fns, port_up) for n, i in prog.profiles.items()}
        self.tables = {n: make.table(i, prog.actions, fns, self.profiles.get(i.action_profile or ""))
                       for n, i in prog.tables.items()}
        if self.namespace is not None:
            codegen.bind(self.namespace, self)
        log.info("pipeline loaded: %d tables, %d actions, %s", len(self.tables), len(prog.actions),
                 "native code" if self.native is not None else f"{self.code.count(chr(10))} lines of Python")

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


_programs: weakref.WeakValueDictionary[str, Program] = weakref.WeakValueDictionary()
_programs_lock = threading.Lock()


def shared_program(json_bytes: bytes) -> Program:
    """The parsed program of a JSON, shared by every pipeline of this process that runs the same JSON
    (a Program is read-only once parsed; devices of one process often run one program)."""
    key = sha256(json_bytes).hexdigest()
    with _programs_lock:
        prog = _programs.get(key)
        if prog is None:
            prog = parse_program(json_bytes)
            _programs[key] = prog
        return prog


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
