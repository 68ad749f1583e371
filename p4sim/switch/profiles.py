"""Action profiles and action selectors: members, groups with weights and watch ports, one-shot sets.

A selector picks a group member as bmv2 with PI does (PI's pibmv2::GroupSelection): the hash of the
selector input modulo the number of active members, the active members ordered by bmv2 member
handle. bmv2 gives a new member the lowest free handle of its profile, so a member created after a
deletion can sort before older ones. PI programs a member of weight w as w bmv2 members: the
member's own handle and w - 1 copies, created (lowest free handles again) when a group first needs
them, in member id order, and deleted when no group needs them any more. A member whose watch port
is down is inactive (PI deactivates it). A group whose members are all inactive makes the lookup a
miss here; bmv2 with PI computes h % 0 there and crashes (p4src/README.md: never let it happen).
"""

from __future__ import annotations

import heapq
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
    """An action profile member: an action with arguments, and its bmv2 member handles (the first
    its own, the others copies for weights; see the module docstring)."""

    __slots__ = ("id", "action", "fn", "args", "aid", "handles", "weights", "refs", "nat")

    def __init__(self, member_id: int, action: ActionCall, fn: Callable[..., None], aid: int, handle: int) -> None:
        self.id = member_id
        self.action = action
        self.fn = fn
        self.args = tuple(action.args)
        self.aid = aid
        self.handles = [handle]
        # weight -> how many groups use the member with that weight (PI's weight_counts; the member
        # itself counts as one use of weight 1)
        self.weights: dict[int, int] = {1: 1}
        self.refs = 0
        self.nat: object = None  # its copy in a native pipeline (p4sim.switch.native.state)


class Handles:
    """bmv2's handle allocation: the lowest free handle."""

    def __init__(self) -> None:
        self._next = 0
        self._free: list[int] = []

    def take(self) -> int:
        """The lowest free handle."""
        if self._free:
            return heapq.heappop(self._free)
        self._next += 1
        return self._next - 1

    def give(self, handle: int) -> None:
        """Free a handle."""
        heapq.heappush(self._free, handle)


class Group:
    """A selector group: members with weights and watch ports; `active` is what selection uses."""

    __slots__ = ("id", "members", "max_size", "active", "refs", "one_shot", "nat")

    def __init__(self, group_id: int, max_size: int, one_shot: bool = False) -> None:
        self.id = group_id
        self.members: list[tuple[Member, int, int | None]] = []
        self.max_size = max_size
        self.active: list[Member] = []
        self.refs = 0
        self.one_shot = one_shot
        self.nat: object = None  # its copy in a native pipeline (p4sim.switch.native.state)

    def refresh(self, port_up: Callable[[int], bool]) -> None:
        """Recompute the active members: every bmv2 member (handle) of a member whose watch port is
        up, in handle order."""
        active: list[tuple[int, Member]] = []
        for m, weight, watch in self.members:
            if watch is None or port_up(watch):
                active += [(h, m) for h in m.handles[:weight]]
        active.sort(key=lambda x: x[0])
        self.active = [m for _, m in active]

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
        self._handles = Handles()
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
        return Member(member_id, call, self._fns[ai.id], ai.id, self._handles.take())

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
            ai = self._actions.get(call.name)
            if ai is None:
                raise InvalidArgument(f"action profile {self.name}: action {call.name!r} is not one of {sorted(self._actions)}")
            check_args(ai, call.args, f"action profile {self.name}")
            m.action, m.fn, m.args, m.aid = call, self._fns[ai.id], tuple(call.args), ai.id
            return m

    def delete_member(self, member_id: int) -> None:
        """Remove a member; InUse if a group or entry still references it."""
        with self._lock:
            m = self.get_member(member_id)
            if m.refs:
                raise InUse(f"action profile {self.name}: member {member_id} is used by {m.refs} group(s)/entries")
            for h in m.handles:
                self._handles.give(h)
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
        old = g.members
        # PI: copies for the new weights first (in member id order), the unused ones deleted after
        for m, weight, _ in sorted(entries, key=lambda e: e[0].id):
            while len(m.handles) < weight:
                m.handles.append(self._handles.take())
        for m, weight, _ in old:
            m.refs -= 1
            m.weights[weight] -= 1
        for m, weight, _ in entries:
            m.refs += 1
            m.weights[weight] = m.weights.get(weight, 0) + 1
        g.members = entries
        for m in {id(m): m for m, _, _ in old + entries}.values():
            self._purge_copies(m)
        g.refresh(self._port_up)

    def _purge_copies(self, m: Member) -> None:
        """Delete the copies of a member that no group's weight needs any more (PI)."""
        need = max(w for w, n in m.weights.items() if n > 0)
        while len(m.handles) > need:
            self._handles.give(m.handles.pop())

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
            for i, (call, weight, _) in enumerate(aset.actions):
                if weight < 1:
                    raise InvalidArgument(f"action profile {self.name}: one-shot action {i} weight {weight} must be >= 1")
                ai = self._actions.get(call.name)
                if ai is None:
                    raise InvalidArgument(f"action profile {self.name}: action {call.name!r} is not one of "
                                          f"{sorted(self._actions)}")
                check_args(ai, call.args, f"action profile {self.name}")
            for i, (call, weight, watch) in enumerate(aset.actions):
                m = self._member(-1 - i, call)
                m.handles += [self._handles.take() for _ in range(weight - 1)]
                g.members.append((m, weight, watch))
            g.refresh(self._port_up)
            self._one_shots.append(g)
            return g

    def drop_one_shot(self, g: Group) -> None:
        """Forget a one-shot group whose table entry was deleted or modified."""
        with self._lock:
            if g in self._one_shots:
                self._one_shots.remove(g)
                for m, _, _ in g.members:
                    for h in m.handles:
                        self._handles.give(h)

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
