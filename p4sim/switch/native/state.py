"""The narrow interface between the control plane's state and the native data plane.

The P4Runtime server keeps using the runtime-state API of p4sim/switch (tables.py, profiles.py,
externs.py, pre.py): it checks every write and keeps the entries, members and groups it reads
back. The classes here are that API with the data plane's copy in native structures: every write
is also made to the runtime (rt/p4s_api.h), and what the data plane changes (direct and indirect
counters, registers, meter buckets) is read from it. They run under the device's lock, which is
also the native packet loop's (NativeDevice.lock).
"""

from __future__ import annotations

import threading
from typing import Any

from p4sim.switch.externs import (
    CounterArray,
    DirectMeter,
    MeterArray,
    MeterConfig,
    RegisterArray,
    ValueSet,
    check_meter_config,
)
from p4sim.switch.native.lib import ffi, rt
from p4sim.switch.native.loader import NativeProgram
from p4sim.switch.pre import CloneSession, Pre
from p4sim.switch.profiles import ActionProfile, Group, Member
from p4sim.switch.program import ArrayInfo, ProfileInfo, TableInfo
from p4sim.switch.tables import Entry, Table
from p4sim.switch.values import InvalidArgument

NULL = ffi.NULL
METER_KIND = {"trTCM": 0, "srTCM": 1, "sr2C": 2}


def words(v: int, n: int) -> Any:
    """An int as n 64-bit words, least significant first (a table key's layout)."""
    return ffi.new("uint64_t[]", [(v >> (64 * i)) & 0xFFFFFFFFFFFFFFFF for i in range(n)])


def u64s(values: tuple[int, ...] | list[int]) -> Any:
    """Action arguments or values as a uint64_t array (NULL when empty)."""
    return ffi.new("uint64_t[]", list(values)) if values else NULL


def meter_cfg(cfg: MeterConfig | None) -> Any:
    """A meter configuration as the runtime's doubles (NULL: unconfigured)."""
    if cfg is None:
        return NULL
    return ffi.new("double[]", [float(cfg.cir), float(cfg.cburst), float(cfg.pir), float(cfg.pburst),
                                float(cfg.eburst)])


class NativePipe:
    """A native pipeline: the runtime's state of one loaded program (freed with this object)."""

    def __init__(self, program: NativeProgram) -> None:
        ptr = rt().p4s_pipe_new(program.prog)
        if ptr == NULL:
            raise MemoryError("native pipeline: out of memory")
        self.program = program
        self.ptr = ffi.gc(ptr, rt().p4s_pipe_free)

    def state(self, lock: threading.RLock) -> NativeState:
        """The factory of this pipeline's state objects."""
        return NativeState(self, lock)


class NativeEntry(Entry):
    """A table entry whose direct counter lives in the native table (`nat`: its runtime entry)."""

    __slots__ = ("nat",)

    def __init__(self, *args: Any) -> None:
        self.nat: Any = None
        super().__init__(*args)

    def _counter(self) -> tuple[int, int]:
        if self.nat is None:
            return 0, 0
        pk, by = ffi.new("uint64_t *"), ffi.new("uint64_t *")
        rt().p4s_entry_counter(self.nat, pk, by, 0)
        return pk[0], by[0]

    def _set_counter(self, packets: int, nbytes: int) -> None:
        if self.nat is not None:
            rt().p4s_entry_counter(self.nat, ffi.new("uint64_t *", packets), ffi.new("uint64_t *", nbytes), 1)

    @property  # type: ignore[override]
    def packets(self) -> int:
        return self._counter()[0]

    @packets.setter
    def packets(self, v: int) -> None:
        self._set_counter(v, self._counter()[1])

    @property  # type: ignore[override]
    def bytes(self) -> int:
        return self._counter()[1]

    @bytes.setter
    def bytes(self, v: int) -> None:
        self._set_counter(self._counter()[0], v)


class NativeTable(Table):
    """A table whose entries and default entry are also in the native pipeline."""

    entry_class = NativeEntry

    def __init__(self, info: TableInfo, actions: dict, fns: dict, profile: ActionProfile | None,
                 lock: threading.RLock, pipe: NativePipe) -> None:
        self._pipe = pipe
        self._ti = pipe.program.layout.tables[info.name]
        self._nw = pipe.program.layout.key_words[info.name]
        super().__init__(info, actions, fns, profile, lock)

    def _sync_action(self, e: NativeEntry) -> None:
        m = e.member.nat if e.member is not None else NULL
        g = e.group.nat if e.group is not None else NULL
        if rt().p4s_entry_action(e.nat, e.aid, len(e.args), u64s(e.args), m, g) < 0:
            raise MemoryError("native table: out of memory")

    def _index_add(self, e: Entry) -> None:
        super()._index_add(e)
        ranges = [x for sh, full, lo, hi in e._ranges for x in (sh, full.bit_length(), lo, hi)]
        nat = rt().p4s_entry_add(self._pipe.ptr, self._ti, words(e._value, self._nw), words(e._mask, self._nw),
                                 e.priority, e.handle, len(e._ranges), u64s(ranges))
        if nat == NULL:
            super()._index_remove(e)
            raise MemoryError("native table: out of memory")
        e.nat = nat  # type: ignore[attr-defined]
        self._sync_action(e)  # type: ignore[arg-type]

    def _index_remove(self, e: Entry) -> None:
        super()._index_remove(e)
        rt().p4s_entry_del(self._pipe.ptr, self._ti, e.nat)  # type: ignore[attr-defined]
        e.nat = None  # type: ignore[attr-defined]

    def modify(self, key: tuple, action: Any, priority: int = 0) -> Entry:
        with self._lock:
            e = super().modify(key, action, priority)
            self._sync_action(e)  # type: ignore[arg-type]
            return e

    def _sync_default(self) -> None:
        d = self.default
        if d is None:
            rt().p4s_default_clear(self._pipe.ptr, self._ti)
        elif rt().p4s_default_set(self._pipe.ptr, self._ti, d.aid, len(d.args), u64s(d.args)) == NULL:
            raise MemoryError("native table: out of memory")

    def set_default(self, call: Any) -> None:
        with self._lock:
            super().set_default(call)
            self._sync_default()

    def reset_default(self) -> None:
        with self._lock:
            super().reset_default()
            self._sync_default()


class NativeProfile(ActionProfile):
    """An action profile or selector whose members and groups (their active members) are also native."""

    def _member(self, member_id: int, call: Any) -> Member:
        m = super()._member(member_id, call)
        nat = rt().p4s_member_new(m.aid, len(m.args), u64s(m.args))
        if nat == NULL:
            raise MemoryError("native profile: out of memory")
        m.nat = ffi.gc(nat, rt().p4s_member_free)
        return m

    def modify_member(self, member_id: int, call: Any) -> Member:
        with self._lock:
            m = super().modify_member(member_id, call)
            rt().p4s_member_set(m.nat, m.aid, len(m.args), u64s(m.args))
            return m

    def _sync(self, g: Group) -> None:
        if g.nat is None:
            nat = rt().p4s_group_new()
            if nat == NULL:
                raise MemoryError("native profile: out of memory")
            g.nat = ffi.gc(nat, rt().p4s_group_free)
        active = ffi.new("p4s_member *[]", [m.nat for m in g.active]) if g.active else NULL
        if rt().p4s_group_set(g.nat, len(g.active), active) < 0:
            raise MemoryError("native profile: out of memory")

    def _fill(self, g: Group, members: list) -> None:
        super()._fill(g, members)
        self._sync(g)

    def one_shot(self, aset: Any) -> Group:
        with self._lock:
            g = super().one_shot(aset)
            self._sync(g)
            return g

    def refresh(self) -> None:
        with self._lock:
            super().refresh()
            for g in [*self.groups.values(), *self._one_shots]:
                self._sync(g)


class NativeCounterArray(CounterArray):
    """A counter array in the native pipeline."""

    def __init__(self, info: ArrayInfo, lock: threading.RLock, pipe: NativePipe) -> None:
        self.info, self.name, self.size, self._lock = info, info.name, info.size, lock
        self._pipe, self._i = pipe, pipe.program.layout.counters[info.name]

    def count(self, index: int, nbytes: int) -> None:
        if 0 <= index < self.size:
            p, b = self.read(index)
            self.write(index, p + 1, b + nbytes)

    def read(self, index: int) -> tuple[int, int]:
        self._check_index(index)
        pk, by = ffi.new("uint64_t *"), ffi.new("uint64_t *")
        rt().p4s_counter(self._pipe.ptr, self._i, index, pk, by, 0)
        return pk[0], by[0]

    def write(self, index: int, packets: int, nbytes: int) -> None:
        with self._lock:
            self._check_index(index)
            rt().p4s_counter(self._pipe.ptr, self._i, index, ffi.new("uint64_t *", packets),
                             ffi.new("uint64_t *", nbytes), 1)

    def reset(self) -> None:
        with self._lock:
            rt().p4s_counter_reset(self._pipe.ptr, self._i)

    @property  # type: ignore[override]
    def packets(self) -> list[int]:
        return [self.read(i)[0] for i in range(self.size)]

    @packets.setter
    def packets(self, values: list[int]) -> None:
        for i, v in enumerate(values):
            self.write(i, v, self.read(i)[1])

    @property  # type: ignore[override]
    def bytes(self) -> list[int]:
        return [self.read(i)[1] for i in range(self.size)]

    @bytes.setter
    def bytes(self, values: list[int]) -> None:
        for i, v in enumerate(values):
            self.write(i, self.read(i)[0], v)


class NativeRegisterArray(RegisterArray):
    """A register array in the native pipeline."""

    def __init__(self, info: ArrayInfo, lock: threading.RLock, pipe: NativePipe) -> None:
        self.info, self.name, self.size, self._lock = info, info.name, info.size, lock
        self.bitwidth = info.bitwidth
        self._mask = (1 << info.bitwidth) - 1
        self._pipe, self._i = pipe, pipe.program.layout.registers[info.name]

    def read(self, index: int) -> int:
        self._check_index(index)
        return int(rt().p4s_register(self._pipe.ptr, self._i, index, 0, 0))

    def write(self, index: int, value: int) -> None:
        with self._lock:
            self._check_index(index)
            if not 0 <= value <= self._mask:
                raise InvalidArgument(f"register {self.name}: value {value:#x} does not fit in {self.bitwidth} bits")
            rt().p4s_register(self._pipe.ptr, self._i, index, value, 1)

    def reset(self) -> None:
        with self._lock:
            rt().p4s_register_reset(self._pipe.ptr, self._i)

    @property  # type: ignore[override]
    def cells(self) -> list[int]:
        return [self.read(i) for i in range(self.size)]

    @cells.setter
    def cells(self, values: list[int]) -> None:
        for i, v in enumerate(values):
            self.write(i, v)


class NativeMeterArray(MeterArray):
    """A meter array in the native pipeline (configurations are also kept here, to read back)."""

    def __init__(self, info: ArrayInfo, lock: threading.RLock, pipe: NativePipe) -> None:
        self.info, self.name, self.size, self._lock = info, info.name, info.size, lock
        self.by_bytes = info.meter_type == "bytes"
        self._pipe, self._i = pipe, pipe.program.layout.meters[info.name]
        self._configs: dict[int, MeterConfig] = {}

    def execute(self, index: int, nbytes: int, now_us: int) -> int:
        raise NotImplementedError("the native data plane runs this meter")

    def get_config(self, index: int) -> MeterConfig | None:
        self._check_index(index)
        return self._configs.get(index)

    def set_config(self, index: int, cfg: MeterConfig | None, now_us: int = 0) -> None:
        with self._lock:
            self._check_index(index)
            if cfg is None:
                self._configs.pop(index, None)
                rt().p4s_meter(self._pipe.ptr, self._i, index, 0, NULL, now_us)
                return
            check_meter_config(self.name, cfg)
            self._configs[index] = cfg
            rt().p4s_meter(self._pipe.ptr, self._i, index, METER_KIND[cfg.kind], meter_cfg(cfg), now_us)

    def reset(self) -> None:
        with self._lock:
            self._configs.clear()
            rt().p4s_meter_reset(self._pipe.ptr, self._i)


class NativeDirectMeter(DirectMeter):
    """A direct meter whose buckets live on the native entries."""

    def set_config(self, entry: object, cfg: MeterConfig | None, now_us: int = 0) -> None:
        super().set_config(entry, cfg, now_us)
        kind = METER_KIND[cfg.kind] if cfg is not None else 0
        if rt().p4s_entry_meter(entry.nat, kind, meter_cfg(cfg), now_us) < 0:  # type: ignore[attr-defined]
            raise MemoryError("native meter: out of memory")


class NativeValueSet(ValueSet):
    """A parser value set also held by the native parser."""

    def __init__(self, name: str, width: int, lock: threading.RLock, pipe: NativePipe) -> None:
        super().__init__(name, width, lock)
        self._pipe, self._i = pipe, pipe.program.layout.vsets[name]

    def set_members(self, values: list[int]) -> None:
        with self._lock:
            super().set_members(values)
            rt().p4s_vset(self._pipe.ptr, self._i, len(self.members), u64s(sorted(self.members)))


class NativeState:
    """Makes a native pipeline's state objects (p4sim.switch.pipeline.PythonState's interface)."""

    def __init__(self, pipe: NativePipe, lock: threading.RLock) -> None:
        self.pipe = pipe
        self.lock = lock

    def counter(self, info: ArrayInfo) -> CounterArray:
        """An indirect counter array."""
        return NativeCounterArray(info, self.lock, self.pipe)

    def register(self, info: ArrayInfo) -> RegisterArray:
        """A register array."""
        return NativeRegisterArray(info, self.lock, self.pipe)

    def meter(self, info: ArrayInfo) -> MeterArray:
        """An indirect meter array."""
        return NativeMeterArray(info, self.lock, self.pipe)

    def direct_meter(self, info: ArrayInfo) -> DirectMeter:
        """A direct meter."""
        return NativeDirectMeter(info)

    def value_set(self, name: str, width: int) -> ValueSet:
        """A parser value set."""
        return NativeValueSet(name, width, self.lock, self.pipe)

    def profile(self, info: ProfileInfo, actions: dict, fns: dict, port_up: Any) -> ActionProfile:
        """An action profile or selector."""
        return NativeProfile(info, actions, fns, port_up, self.lock)

    def table(self, info: TableInfo, actions: dict, fns: dict, profile: ActionProfile | None) -> Table:
        """A match-action table."""
        return NativeTable(info, actions, fns, profile, self.lock, self.pipe)


class NativePre(Pre):
    """The packet replication engine, also in the native device."""

    def __init__(self, lock: threading.RLock, dev: Any) -> None:
        super().__init__(lock)
        self._dev = dev

    def _set(self, session: int, ident: int, replicas: tuple[tuple[int, int], ...], trunc: int = 0) -> None:
        ports = ffi.new("uint16_t[]", [p for p, _ in replicas] or [0])
        rids = ffi.new("uint16_t[]", [r for _, r in replicas] or [0])
        if rt().p4s_pre_set(self._dev, session, ident, len(replicas), ports, rids, trunc) < 0:
            raise MemoryError("native replication engine: out of memory")

    def insert_group(self, group_id: int, replicas: list[tuple[int, int]]) -> None:
        with self._lock:
            super().insert_group(group_id, replicas)
            self._set(0, group_id, self.groups[group_id])

    def modify_group(self, group_id: int, replicas: list[tuple[int, int]]) -> None:
        with self._lock:
            super().modify_group(group_id, replicas)
            self._set(0, group_id, self.groups[group_id])

    def delete_group(self, group_id: int) -> None:
        with self._lock:
            super().delete_group(group_id)
            rt().p4s_pre_del(self._dev, 0, group_id)

    def insert_session(self, session_id: int, session: CloneSession) -> None:
        with self._lock:
            super().insert_session(session_id, session)
            self._set(1, session_id, session.replicas, session.packet_length_bytes)

    def modify_session(self, session_id: int, session: CloneSession) -> None:
        with self._lock:
            super().modify_session(session_id, session)
            self._set(1, session_id, session.replicas, session.packet_length_bytes)

    def delete_session(self, session_id: int) -> None:
        with self._lock:
            super().delete_session(session_id)
            rt().p4s_pre_del(self._dev, 1, session_id)

    def reset(self) -> None:
        with self._lock:
            super().reset()
            rt().p4s_pre_reset(self._dev)
