"""Runtime state of match-action tables: entries, match kinds, priorities, default entries, lookup.

Keys are tuples with one element per key field of the table, in the JSON key order:
`Exact(v)` for exact and valid fields, `Lpm(v, prefix_len)`, `Ternary(v, mask)`, `Range(low, high)`,
and for an optional field `Exact(v)`; `None` is a wildcard (allowed for lpm, ternary, range and
optional fields, as P4Runtime omits don't-care fields). Priorities follow P4Runtime: a higher number
wins. Lookup concatenates the key fields into one integer so that exact tables are one dict access,
LPM tables one dict access per prefix length, and ternary tables one mask-and-compare per entry.
"""

from __future__ import annotations

import bisect
import itertools
import logging
import threading
from collections.abc import Callable, Iterator
from typing import Any

from p4sim.switch.profiles import ActionProfile, Group, Member
from p4sim.switch.program import ActionInfo, KeyField, TableInfo, parse_hexstr
from p4sim.switch.values import (
    ActionCall,
    ActionSet,
    AlreadyExists,
    EntryAction,
    Exact,
    FieldMatch,
    GroupRef,
    InvalidArgument,
    Lpm,
    MemberRef,
    NotFound,
    Range,
    ReadOnly,
    ResourceExhausted,
    Ternary,
    check_args,
)

log = logging.getLogger(__name__)


def match_mode(key: tuple[KeyField, ...]) -> str:
    """How a table with this key is looked up: none (no key), exact (one dict), lpm (one dict per
    prefix length), ternary (a scan by priority) or range (a scan that also checks ranges)."""
    kinds = {kf.match_type for kf in key}
    if not key:
        return "none"
    if "range" in kinds:
        return "range"
    if kinds <= {"exact", "valid"}:
        return "exact"
    if kinds <= {"exact", "valid", "lpm"} and sum(kf.match_type == "lpm" for kf in key) == 1:
        return "lpm"
    return "ternary"


def _scan_order(e: Entry) -> tuple[int, int]:
    return (-e.priority, e.handle)


class Entry:
    """A table entry: key, priority, action, handle, direct counter values and direct meter config."""

    __slots__ = ("key", "priority", "action", "handle", "packets", "bytes", "meter", "is_const",
                 "fn", "args", "aid", "member", "group", "_mask", "_value", "_ranges", "idle_timeout_ns")

    def __init__(self, key: tuple[FieldMatch | None, ...], priority: int, action: EntryAction) -> None:
        self.key = key
        self.priority = priority
        self.action = action
        self.handle = 0
        self.packets = 0
        self.bytes = 0
        self.meter: Any = None
        self.is_const = False
        self.fn: Callable[..., None] | None = None
        self.args: tuple[int, ...] = ()
        self.aid = -1
        self.member: Member | None = None
        self.group: Group | None = None
        self._mask = 0
        self._value = 0
        self._ranges: tuple[tuple[int, int, int], ...] = ()
        self.idle_timeout_ns = 0

    def __repr__(self) -> str:
        return f"Entry(key={self.key}, priority={self.priority}, action={self.action}, handle={self.handle})"


_MATCH_CLASS: dict[str, type] = {"exact": Exact, "valid": Exact, "optional": Exact, "lpm": Lpm, "ternary": Ternary,
                                  "range": Range}


def _norm_key_field(kf: KeyField, m: FieldMatch | None, table: str) -> FieldMatch | None:
    """Check one key field against its declaration; return its canonical form (wildcards as None)."""
    full = (1 << kf.bitwidth) - 1
    kind = kf.match_type

    def bad(what: str) -> InvalidArgument:
        return InvalidArgument(f"table {table} field {kf.name}: {what}")

    def fits(v: int, what: str) -> None:
        if not 0 <= v <= full:
            raise bad(f"{what} {v:#x} does not fit in {kf.bitwidth} bits")

    if m is None:
        if kind in ("exact", "valid"):
            raise bad(f"an {kind} field cannot be a wildcard")
        return None
    if kind not in _MATCH_CLASS:
        raise bad(f"unsupported match kind {kind!r}")
    if not isinstance(m, _MATCH_CLASS[kind]):
        article = "an" if kind in ("exact", "optional", "lpm") else "a"
        raise bad(f"expected {_MATCH_CLASS[kind].__name__} for {article} {kind} field, got {m!r}")
    if isinstance(m, Exact):
        fits(m.value, "value")
        return m
    if isinstance(m, Lpm):
        if not 0 <= m.prefix_len <= kf.bitwidth:
            raise bad(f"prefix length {m.prefix_len} not in 0..{kf.bitwidth}")
        fits(m.value, "value")
        if m.value & ~(full ^ ((1 << (kf.bitwidth - m.prefix_len)) - 1)):
            raise bad(f"value {m.value:#x} has bits set past /{m.prefix_len}")
        return None if m.prefix_len == 0 else m
    if isinstance(m, Ternary):
        fits(m.value, "value")
        fits(m.mask, "mask")
        if m.value & ~m.mask:
            raise bad(f"value {m.value:#x} has bits outside mask {m.mask:#x}")
        return None if m.mask == 0 else m
    fits(m.low, "low")
    fits(m.high, "high")
    if m.low > m.high:
        raise bad(f"range low {m.low:#x} > high {m.high:#x}")
    return None if (m.low == 0 and m.high == full) else m


class Table:
    """One table's entries and default entry. Mutating methods are thread-safe (device lock)."""

    entry_class: type[Entry] = Entry

    def __init__(self, info: TableInfo, actions: dict[int, ActionInfo], action_fns: dict[int, Callable[..., None]],
                 profile: ActionProfile | None, lock: threading.RLock) -> None:
        self.info = info
        self.name = info.name
        self.profile = profile
        self._lock = lock
        self._actions = {actions[a].name: actions[a] for a in info.action_ids}
        self._fns = action_fns
        self._handles = itertools.count(1)
        self._entries: dict[int, Entry] = {}
        self._by_key: dict[tuple[Any, ...], Entry] = {}
        self._widths = [kf.bitwidth for kf in info.key]
        self._shifts: list[int] = []
        total = 0
        for w in reversed(self._widths):
            self._shifts.insert(0, total)
            total += w
        self._total_bits = total
        self.mode = match_mode(info.key)
        self._exact: dict[int, Entry] = {}
        self._lpm: dict[int, dict[int, Entry]] = {}
        self._lpm_order: list[tuple[int, dict[int, Entry]]] = []
        self._scan: list[Entry] = []
        self.lookup = self._lookup_fn()  # type: ignore[method-assign]
        self.default: Entry | None = None
        self.default_const = False
        self._init_default: ActionCall | None = None
        de = info.default_entry
        if de is not None:
            ai = actions[de.action_id]
            self._init_default = ActionCall(ai.name, de.action_data)
            self.default_const = de.action_const and de.action_entry_const
        self.reset_default()
        for i, ce in enumerate(info.const_entries):
            self._add_const(ce, i)

    # --- helpers -------------------------------------------------------------------------------

    def action_info(self, name: str) -> ActionInfo:
        """The ActionInfo of an action of this table, by name; InvalidArgument if not one of its actions."""
        ai = self._actions.get(name)
        if ai is None:
            raise InvalidArgument(f"table {self.name}: action {name!r} is not one of {sorted(self._actions)}")
        return ai

    def _bind(self, call: ActionCall) -> tuple[Callable[..., None], tuple[int, ...], int]:
        ai = self.action_info(call.name)
        check_args(ai, call.args, f"table {self.name}")
        return self._fns[ai.id], tuple(call.args), ai.id

    def _add_const(self, ce: dict[str, Any], index: int) -> None:
        key: list[FieldMatch | None] = []
        for kf, mk in zip(self.info.key, ce["match_key"], strict=True):
            mt = mk["match_type"]
            if mt in ("exact", "optional"):
                key.append(Exact(parse_hexstr(mk["key"])))
            elif mt == "valid":
                key.append(Exact(int(bool(mk["key"]))))
            elif mt == "lpm":
                plen = int(mk["prefix_length"])
                v = parse_hexstr(mk["key"]) & ((((1 << plen) - 1) << (kf.bitwidth - plen)) if plen else 0)
                key.append(Lpm(v, plen))
            elif mt == "ternary":
                mask = parse_hexstr(mk["mask"])
                key.append(Ternary(parse_hexstr(mk["key"]) & mask, mask))
            elif mt == "range":
                key.append(Range(parse_hexstr(mk["start"]), parse_hexstr(mk["end"])))
            else:
                raise ValueError(f"table {self.name}: const entry match_type {mt!r} is not supported")
        ae = ce["action_entry"]
        act = ActionCall(self._action_name(int(ae["action_id"])), tuple(parse_hexstr(v) for v in ae.get("action_data", [])))
        # bmv2 JSON: a lower number is a higher priority; P4Runtime: higher wins. First entry wins on ties.
        prio = (1 << 24) - int(ce.get("priority", index + 1)) if self.info.needs_priority else 0
        e = self._make(tuple(key), prio, act)
        e.is_const = True
        self._store(e)

    def _action_name(self, aid: int) -> str:
        for ai in self._actions.values():
            if ai.id == aid:
                return ai.name
        raise ValueError(f"table {self.name}: action id {aid} is not one of the table's actions")

    def _make(self, key: tuple[FieldMatch | None, ...], priority: int, action: EntryAction) -> Entry:
        if len(key) != len(self.info.key):
            raise InvalidArgument(f"table {self.name}: key has {len(key)} fields, expected {len(self.info.key)}")
        nkey = tuple(_norm_key_field(kf, m, self.name) for kf, m in zip(self.info.key, key, strict=True))
        if self.info.needs_priority:
            if priority <= 0:
                raise InvalidArgument(f"table {self.name}: priority {priority} must be > 0 for a ternary/range/optional table")
        elif priority != 0:
            raise InvalidArgument(f"table {self.name}: priority {priority} given for a table without ternary/range/optional fields")
        e = self.entry_class(nkey, priority, action)
        self._bind_action(e, action)
        mask = value = 0
        ranges = []
        for kf, m, sh in zip(self.info.key, nkey, self._shifts, strict=True):
            full = (1 << kf.bitwidth) - 1
            if m is None:
                continue
            if isinstance(m, Exact):
                mask |= full << sh
                value |= m.value << sh
            elif isinstance(m, Lpm):
                pm = full ^ ((1 << (kf.bitwidth - m.prefix_len)) - 1)
                mask |= pm << sh
                value |= m.value << sh
            elif isinstance(m, Ternary):
                mask |= m.mask << sh
                value |= m.value << sh
            else:
                ranges.append((sh, full, m.low, m.high))
        e._mask, e._value, e._ranges = mask, value, tuple((sh, full, lo, hi) for sh, full, lo, hi in ranges)
        return e

    def _bind_action(self, e: Entry, action: EntryAction) -> None:
        if isinstance(action, ActionCall):
            if self.info.type != "simple":
                raise InvalidArgument(f"table {self.name}: an indirect table needs a member, group or action set, got {action}")
            e.fn, e.args, e.aid = self._bind(action)
            return
        if self.profile is None:
            raise InvalidArgument(f"table {self.name}: a direct table needs an ActionCall, got {action}")
        if isinstance(action, MemberRef):
            e.member = self.profile.get_member(action.member_id)
        elif isinstance(action, GroupRef):
            if self.profile.info.selector_algo is None:
                raise InvalidArgument(f"table {self.name}: profile {self.profile.name} has no selector, groups are not allowed")
            e.group = self.profile.get_group(action.group_id)
        elif isinstance(action, ActionSet):
            if self.profile.info.selector_algo is None:
                raise InvalidArgument(f"table {self.name}: profile {self.profile.name} has no selector, action sets are not allowed")
            e.group = self.profile.one_shot(action)
        else:
            raise InvalidArgument(f"table {self.name}: unsupported entry action {action!r}")

    def _store(self, e: Entry) -> None:
        ident = (e.key, e.priority)
        if ident in self._by_key:
            raise AlreadyExists(f"table {self.name}: an entry with key {e.key} priority {e.priority} already exists")
        if len(self._entries) >= self.info.max_size > 0 and not e.is_const:
            raise ResourceExhausted(f"table {self.name}: full ({self.info.max_size} entries)")
        e.handle = next(self._handles)
        self._entries[e.handle] = e
        self._by_key[ident] = e
        self._ref(e, +1)
        self._index_add(e)

    def _ref(self, e: Entry, delta: int) -> None:
        if self.profile is None:
            return
        if e.member is not None:
            self.profile.ref_member(e.member.id, delta)
        elif e.group is not None and not e.group.one_shot:
            self.profile.ref_group(e.group.id, delta)
        elif e.group is not None and delta < 0:
            self.profile.drop_one_shot(e.group)

    def _index_add(self, e: Entry) -> None:
        if self.mode == "exact":
            self._exact[e._value] = e
        elif self.mode == "lpm":
            plen = bin(e._mask).count("1")
            d = self._lpm.get(plen)
            if d is None:
                d = self._lpm[plen] = {}
                self._rebuild_lpm_order()
            d[e._value] = e
        elif self.mode in ("ternary", "range"):
            # highest priority first; equal priorities in insertion order
            bisect.insort(self._scan, e, key=_scan_order)

    def _index_remove(self, e: Entry) -> None:
        if self.mode == "exact":
            del self._exact[e._value]
        elif self.mode == "lpm":
            plen = bin(e._mask).count("1")
            d = self._lpm[plen]
            del d[e._value]
            if not d:
                del self._lpm[plen]
                self._rebuild_lpm_order()
        elif self.mode in ("ternary", "range"):
            self._scan.remove(e)

    def _rebuild_lpm_order(self) -> None:
        full = (1 << self._total_bits) - 1
        lpm_i = next(i for i, kf in enumerate(self.info.key) if kf.match_type == "lpm")
        w, sh = self._widths[lpm_i], self._shifts[lpm_i]
        order = []
        for plen in sorted(self._lpm, reverse=True):
            # plen counts mask bits: exact fields are full, so the lpm prefix is plen - (others)
            others = self._total_bits - w
            p = plen - others
            lpm_mask = (((1 << p) - 1) << (w - p)) << sh if p > 0 else 0
            mask = (full ^ (((1 << w) - 1) << sh)) | lpm_mask
            order.append((mask, self._lpm[plen]))
        self._lpm_order = order

    # --- data plane ----------------------------------------------------------------------------

    def _lookup_fn(self) -> Callable[[int], Entry | None]:
        """The lookup specialised to the table's match mode (bound once: the generated code calls it)."""
        if self.mode == "exact":
            return self._exact.get
        if self.mode == "lpm":
            def lpm(k: int) -> Entry | None:
                for mask, d in self._lpm_order:
                    e = d.get(k & mask)
                    if e is not None:
                        return e
                return None
            return lpm
        if self.mode == "ternary":
            def ternary(k: int) -> Entry | None:
                for e in self._scan:
                    if k & e._mask == e._value:
                        return e
                return None
            return ternary
        return self._lookup_generic

    def lookup(self, k: int) -> Entry | None:
        """The entry matching the concatenated key value k, or None (a miss)."""
        return self._lookup_generic(k)

    def _lookup_generic(self, k: int) -> Entry | None:
        mode = self.mode
        if mode == "exact":
            return self._exact.get(k)
        if mode == "lpm":
            for mask, d in self._lpm_order:
                e = d.get(k & mask)
                if e is not None:
                    return e
            return None
        if mode == "ternary":
            for e in self._scan:
                if k & e._mask == e._value:
                    return e
            return None
        if mode == "range":
            for e in self._scan:
                if k & e._mask == e._value:
                    for sh, full, lo, hi in e._ranges:
                        v = (k >> sh) & full
                        if v < lo or v > hi:
                            break
                    else:
                        return e
            return None
        return None

    # --- control plane -------------------------------------------------------------------------

    def insert(self, key: tuple[FieldMatch | None, ...], action: EntryAction, priority: int = 0) -> Entry:
        """Add an entry; AlreadyExists for a duplicate key+priority, ReadOnly for a const table."""
        with self._lock:
            if self.info.is_const:
                raise ReadOnly(f"table {self.name}: entries are const in the program")
            e = self._make(key, priority, action)
            self._store(e)
            return e

    def modify(self, key: tuple[FieldMatch | None, ...], action: EntryAction, priority: int = 0) -> Entry:
        """Change the action of an existing entry (counters are kept); NotFound if absent."""
        with self._lock:
            e = self.get(key, priority)
            if e.is_const:
                raise ReadOnly(f"table {self.name}: entries are const in the program")
            probe = Entry(e.key, e.priority, action)
            self._bind_action(probe, action)
            self._ref(e, -1)
            e.action, e.fn, e.args, e.aid = action, probe.fn, probe.args, probe.aid
            e.member, e.group = probe.member, probe.group
            self._ref(e, +1)
            return e

    def delete(self, key: tuple[FieldMatch | None, ...], priority: int = 0) -> None:
        """Remove an entry; NotFound if absent."""
        with self._lock:
            e = self.get(key, priority)
            if e.is_const:
                raise ReadOnly(f"table {self.name}: entries are const in the program")
            self._ref(e, -1)
            self._index_remove(e)
            del self._entries[e.handle]
            del self._by_key[(e.key, e.priority)]

    def get(self, key: tuple[FieldMatch | None, ...], priority: int = 0) -> Entry:
        """The entry with exactly this key and priority; NotFound if absent."""
        if len(key) != len(self.info.key):
            raise InvalidArgument(f"table {self.name}: key has {len(key)} fields, expected {len(self.info.key)}")
        nkey = tuple(_norm_key_field(kf, m, self.name) for kf, m in zip(self.info.key, key, strict=True))
        e = self._by_key.get((nkey, priority))
        if e is None:
            raise NotFound(f"table {self.name}: no entry with key {nkey} priority {priority}")
        return e

    def entry(self, handle: int) -> Entry:
        """The entry with this handle; NotFound if absent."""
        e = self._entries.get(handle)
        if e is None:
            raise NotFound(f"table {self.name}: no entry with handle {handle}")
        return e

    def entries(self) -> list[Entry]:
        """A snapshot of all entries (const ones included), in insertion order."""
        with self._lock:
            return list(self._entries.values())

    def __iter__(self) -> Iterator[Entry]:
        return iter(self.entries())

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        """Delete every non-const entry."""
        with self._lock:
            for e in list(self._entries.values()):
                if not e.is_const:
                    self.delete(e.key, e.priority)

    def get_default(self) -> ActionCall | None:
        """The current default action (None when the program sets none: a miss does nothing)."""
        return None if self.default is None else self.default.action  # type: ignore[return-value]

    def set_default(self, call: ActionCall) -> None:
        """Set the default action; ReadOnly if the program declares it const."""
        with self._lock:
            if self.default_const:
                raise ReadOnly(f"table {self.name}: the default action is const in the program")
            e = Entry((), 0, call)
            e.fn, e.args, e.aid = self._bind(call)
            self.default = e

    def reset_default(self) -> None:
        """Restore the default action the program declares."""
        with self._lock:
            if self._init_default is None:
                self.default = None
                return
            e = Entry((), 0, self._init_default)
            e.fn, e.args, e.aid = self._bind(self._init_default)
            self.default = e

    def reset_counters(self) -> None:
        """Zero the direct counters of every entry."""
        with self._lock:
            for e in self._entries.values():
                e.packets = e.bytes = 0
