"""The difference between two desired states of one device, as entity objects (pure, no schema).

In an order that is safe to apply: inserts and modifies bottom-up (members, groups, entries and
default entries, then the packet replication engine), then deletes top-down (entries, groups,
members), so no entry ever points at a missing group or member. Each change prints as one line of
the entities' canonical strings ("+ route ipv4_dst=10.0.1.0/24 -> set_path(path_id=3)").

`p4rt.reconcile` plans the writes from what a switch *holds* (read back as protobufs) to a desired
state; it compares encoded entities, since only the encoding makes two spellings of one value equal
("10.0.0.0/8" and "10.0.0.1/8", a MAC in either case). Two desired states, as here, are compared as
written.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from p4rt.state import SwitchState

KINDS = ("member", "group", "entry", "default", "multicast", "clone")


@dataclass(slots=True, frozen=True)
class Change:
    """One entity to insert, modify or delete; old/new are the entities of the two states."""

    op: str  # "insert" | "modify" | "delete"
    kind: str  # one of KINDS
    old: Any = None
    new: Any = None

    def __str__(self) -> str:
        """One canonical line: "+ new", "- old" or "~ old => new"."""
        if self.op == "insert":
            return f"+ {self.new}"
        if self.op == "delete":
            return f"- {self.old}"
        return f"~ {self.old} => {self.new}"


def _entry_key(e: Any) -> tuple[Any, ...]:
    return (e.table, json.dumps(e.match, sort_keys=True, default=str), e.priority)


_SECTIONS: tuple[tuple[str, Callable[[SwitchState], Iterable[Any]], Callable[[Any], Any]], ...] = (
    ("member", lambda s: s.members, lambda m: (m.profile, m.member_id)),
    ("group", lambda s: s.groups, lambda g: (g.profile, g.group_id)),
    ("entry", lambda s: s.entries, _entry_key),
    ("default", lambda s: s.defaults, lambda d: d.table),
    ("multicast", lambda s: s.multicast, lambda m: m.group_id),
    ("clone", lambda s: s.clones, lambda c: c.session_id),
)
_DELETE_ORDER = {"entry": 0, "default": 0, "multicast": 0, "clone": 0, "group": 1, "member": 2}


def diff_states(old: SwitchState, new: SwitchState) -> list[Change]:
    """The changes that turn `old` into `new` (one device), in a safe order."""
    if old.name != new.name:
        raise ValueError(f"states of {old.name!r} and {new.name!r}: expected two states of one switch")
    ups: list[Change] = []
    downs: list[Change] = []
    for kind, items, key in _SECTIONS:
        a = {key(x): x for x in items(old)}
        b = {key(x): x for x in items(new)}
        for k, x in b.items():
            if k not in a:
                ups.append(Change("insert", kind, None, x))
            elif a[k].to_dict() != x.to_dict():
                ups.append(Change("modify", kind, a[k], x))
        downs.extend(Change("delete", kind, x, None) for k, x in a.items() if k not in b)
    downs.sort(key=lambda c: _DELETE_ORDER[c.kind])
    return ups + downs
