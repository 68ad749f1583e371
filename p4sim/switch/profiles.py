"""Action profiles and action selectors: members, groups with weights and watch ports, one-shot sets.

A selector picks a group member as bmv2 does: the hash of the selector input modulo the number of
active members, members ordered by creation (bmv2's member handles). A member with weight w counts
w times. A member whose watch port is down is inactive (PI deactivates it in bmv2), so a group whose
members all watch down ports behaves as empty: the table lookup is a miss... as in bmv2, where an
empty group makes the table apply the default action.
"""

from __future__ import annotations

import itertools
import logging
import threading
from collections.abc import Callable

from p4sim.switch.program import ActionInfo, ProfileInfo
from p4sim.switch.values import (
    ActionCall,
    ActionSet,
    AlreadyExists,
    InUse,
    InvalidArgument,
    NotFound,
    ResourceExhausted,
    check_args,
)

log = logging.getLogger(__name__)


class Member:
    """An action profile member: an action with arguments."""

    __slots__ = ("id", "action", "fn", "args", "aid", "seq", "refs")

    def __init__(self, member_id: int, action: ActionCall, fn: Callable[..., None], aid: int, seq: int) -> None:
        self.id = member_id
        self.action = action
        self.fn = fn
        self.args = tuple(action.args)
        self.aid = aid
        self.seq = seq
        self.refs = 0


class Group:
    """A selector group: members with weights and watch ports; `active` is what selection uses."""

    __slots__ = ("id", "members", "max_size", "active", "refs", "one_shot")

    def __init__(self, group_id: int, max_size: int, one_shot: bool = False) -> None:
        self.id = group_id
        self.members: list[tuple[Member, int, int | None]] = []
        self.max_size = max_size
        self.active: list[Member] = []
        self.refs = 0
        self.one_shot = one_shot

    def refresh(self, port_up: Callable[[int], bool]) -> None:
        """Recompute the active member list (members whose watch port is up, repeated by weight)."""
        active: list[tuple[int, Member, int]] = []
        for m, weight, watch in self.members:
            if watch is None or port_up(watch):
                active.append((m.seq, m, weight))
        active.sort(key=lambda x: x[0])
        self.active = [m for _, m, w in active for _ in range(w)]

    def pick(self, h: int) -> Member | None:
        """The member a hash value selects, or None if no member is active."""
        a = self.active
        return a[h % len(a)] if a else None


class ActionProfile:
    """An action profile or selector. Mutating methods are thread-safe (device lock)."""

    def __init__(self, info: ProfileInfo, actions: dict[str, ActionInfo], action_fns: dict[int, Callable[..., None]],
                 port_up: Callable[[int], bool], lock: threading.RLock) -> None:
        self.info = info
        self.name = info.name
        self._actions = actions
        self._fns = action_fns
        self._port_up = port_up
        self._lock = lock
        self._seq = itertools.count()
        self.members: dict[int, Member] = {}
        self.groups: dict[int, Group] = {}
        self._one_shots: list[Group] = []

    @property
    def has_selector(self) -> bool:
        """True for an action selector (groups allowed)."""
        return self.info.selector_algo is not None

    def _member(self, member_id: int, call: ActionCall) -> Member:
        ai = self._actions.get(call.name)
        if ai is None:
            raise InvalidArgument(f"action profile {self.name}: action {call.name!r} is not one of {sorted(self._actions)}")
        check_args(ai, call.args, f"action profile {self.name}")
        return Member(member_id, call, self._fns[ai.id], ai.id, next(self._seq))

    def insert_member(self, member_id: int, call: ActionCall) -> Member:
        """Add a member; AlreadyExists if the id is taken."""
        with self._lock:
            if member_id in self.members:
                raise AlreadyExists(f"action profile {self.name}: member {member_id} already exists")
            if self.info.max_size and len(self.members) >= self.info.max_size:
                raise ResourceExhausted(f"action profile {self.name}: full ({self.info.max_size} members)")
            m = self._member(member_id, call)
            self.members[member_id] = m
            return m

    def modify_member(self, member_id: int, call: ActionCall) -> Member:
        """Change a member's action in place (groups and entries using it see the change)."""
        with self._lock:
            m = self.get_member(member_id)
            new = self._member(member_id, call)
            m.action, m.fn, m.args, m.aid = new.action, new.fn, new.args, new.aid
            return m

    def delete_member(self, member_id: int) -> None:
        """Remove a member; InUse if a group or entry still references it."""
        with self._lock:
            m = self.get_member(member_id)
            if m.refs:
                raise InUse(f"action profile {self.name}: member {member_id} is used by {m.refs} group(s)/entries")
            del self.members[member_id]

    def get_member(self, member_id: int) -> Member:
        """The member with this id; NotFound if absent."""
        m = self.members.get(member_id)
        if m is None:
            raise NotFound(f"action profile {self.name}: no member {member_id}")
        return m

    def _fill(self, g: Group, members: list[tuple[int, int, int | None]]) -> None:
        seen = set()
        entries = []
        for mid, weight, watch in members:
            if mid in seen:
                raise InvalidArgument(f"action profile {self.name}: member {mid} appears twice in group {g.id}")
            seen.add(mid)
            if weight < 1:
                raise InvalidArgument(f"action profile {self.name}: member {mid} weight {weight} must be >= 1")
            entries.append((self.get_member(mid), weight, watch))
        if g.max_size and sum(w for _, w, _ in entries) > g.max_size:
            raise ResourceExhausted(f"action profile {self.name}: group {g.id} exceeds max_size {g.max_size}")
        for m, _, _ in g.members:
            m.refs -= 1
        for m, _, _ in entries:
            m.refs += 1
        g.members = entries
        g.refresh(self._port_up)

    def insert_group(self, group_id: int, members: list[tuple[int, int, int | None]], max_size: int = 0) -> Group:
        """Add a group of (member_id, weight, watch_port or None); AlreadyExists if the id is taken."""
        with self._lock:
            if not self.has_selector:
                raise InvalidArgument(f"action profile {self.name}: not a selector, groups are not allowed")
            if group_id in self.groups:
                raise AlreadyExists(f"action profile {self.name}: group {group_id} already exists")
            g = Group(group_id, max_size)
            self._fill(g, members)
            self.groups[group_id] = g
            return g

    def modify_group(self, group_id: int, members: list[tuple[int, int, int | None]]) -> Group:
        """Replace a group's members (entries pointing at it see the change at once)."""
        with self._lock:
            g = self.get_group(group_id)
            self._fill(g, members)
            return g

    def delete_group(self, group_id: int) -> None:
        """Remove a group; InUse if a table entry still references it."""
        with self._lock:
            g = self.get_group(group_id)
            if g.refs:
                raise InUse(f"action profile {self.name}: group {group_id} is used by {g.refs} table entries")
            self._fill(g, [])
            del self.groups[group_id]

    def get_group(self, group_id: int) -> Group:
        """The group with this id; NotFound if absent."""
        g = self.groups.get(group_id)
        if g is None:
            raise NotFound(f"action profile {self.name}: no group {group_id}")
        return g

    def one_shot(self, aset: ActionSet) -> Group:
        """An anonymous group for a P4Runtime one-shot action set (owned by one table entry)."""
        with self._lock:
            g = Group(-1, 0, one_shot=True)
            for i, (call, weight, watch) in enumerate(aset.actions):
                if weight < 1:
                    raise InvalidArgument(f"action profile {self.name}: one-shot action {i} weight {weight} must be >= 1")
                g.members.append((self._member(-1 - i, call), weight, watch))
            g.refresh(self._port_up)
            self._one_shots.append(g)
            return g

    def drop_one_shot(self, g: Group) -> None:
        """Forget a one-shot group whose table entry was deleted or modified."""
        with self._lock:
            if g in self._one_shots:
                self._one_shots.remove(g)

    def ref_member(self, member_id: int, delta: int) -> None:
        """Count a table entry's reference to a member (used by tables)."""
        self.members[member_id].refs += delta

    def ref_group(self, group_id: int, delta: int) -> None:
        """Count a table entry's reference to a group (used by tables)."""
        self.groups[group_id].refs += delta

    def refresh(self) -> None:
        """Recompute every group's active members after a port status change."""
        with self._lock:
            for g in self.groups.values():
                g.refresh(self._port_up)
            for g in self._one_shots:
                g.refresh(self._port_up)
