"""Values of the runtime-state API: key field matches, actions, and the errors writes raise."""

from __future__ import annotations

from dataclasses import dataclass

from p4sim.switch.program import ActionInfo


class StateError(ValueError):
    """A runtime-state write that cannot be done; subclasses say why (for P4Runtime status codes)."""


class AlreadyExists(StateError):
    """An entry, member, group or session with that key or id already exists."""


class NotFound(StateError):
    """No entry, member, group or session with that key or id."""


class InvalidArgument(StateError):
    """A malformed write: bad width, wrong match kind, unknown action, missing priority."""


class ReadOnly(StateError):
    """The table or default entry is constant in the program."""


class ResourceExhausted(StateError):
    """The table, profile or group is full."""


class InUse(StateError):
    """A member or group is still referenced by a group or a table entry."""


@dataclass(slots=True, frozen=True)
class Exact:
    """An exact (or valid, or present optional) key field."""

    value: int


@dataclass(slots=True, frozen=True)
class Lpm:
    """A longest-prefix key field."""

    value: int
    prefix_len: int


@dataclass(slots=True, frozen=True)
class Ternary:
    """A ternary key field: matches when (field & mask) == value."""

    value: int
    mask: int


@dataclass(slots=True, frozen=True)
class Range:
    """A range key field: matches low <= field <= high."""

    low: int
    high: int


FieldMatch = Exact | Lpm | Ternary | Range


@dataclass(slots=True, frozen=True)
class ActionCall:
    """An action by name (unique within a table or profile) with its arguments as ints."""

    name: str
    args: tuple[int, ...] = ()


@dataclass(slots=True, frozen=True)
class MemberRef:
    """The action of an indirect table entry: an action profile member."""

    member_id: int


@dataclass(slots=True, frozen=True)
class GroupRef:
    """The action of an indirect table entry: an action selector group."""

    group_id: int


@dataclass(slots=True, frozen=True)
class ActionSet:
    """A one-shot action set for a selector table: (action, weight, watch_port or None) triples."""

    actions: tuple[tuple[ActionCall, int, int | None], ...]


EntryAction = ActionCall | MemberRef | GroupRef | ActionSet


def check_args(ai: ActionInfo, args: tuple[int, ...], where: str) -> None:
    """Raise InvalidArgument unless args match the action's parameters in number and width."""
    if len(args) != len(ai.params):
        raise InvalidArgument(f"{where}: action {ai.name} takes {len(ai.params)} arguments, got {len(args)}")
    for (pname, width), v in zip(ai.params, args, strict=True):
        if not isinstance(v, int) or not 0 <= v < (1 << width):
            raise InvalidArgument(f"{where}: action {ai.name} argument {pname}={v!r} does not fit in {width} bits")
