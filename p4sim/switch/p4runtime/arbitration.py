"""Client arbitration: StreamChannel sessions per role, the primary is the highest election ID.

Behaviour of PI (p4lang/PI proto/README.md "Arbitration", as simple_switch_grpc does it):
- first update: an election ID already used in the role ends the stream with INVALID_ARGUMENT;
- a later update on the same stream with another device ID ends it with FAILED_PRECONDITION;
- when the primary of a role changes (arrival, new election ID, disconnection), every session of the
  role is told, `status` OK for the primary and ALREADY_EXISTS for the backups; otherwise only the
  sender is answered. `election_id` in the answer is the primary's.
- only the primary writes, sends packet-outs and receives packet-ins and digests. For debugging, PI
  accepts a Write with no election ID while no client has one; so do we.
"""

from __future__ import annotations

import itertools
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from p4sim.switch.p4runtime.errors import (
    FAILED_PRECONDITION,
    INVALID_ARGUMENT,
    NOT_FOUND,
    PERMISSION_DENIED,
    P4RuntimeError,
)
from p4sim.switch.p4runtime.proto import code_pb2, p4r

log = logging.getLogger(__name__)

_ids = itertools.count(1)


def election_value(msg: p4r.Uint128) -> int:
    """Return a Uint128 election ID as one int."""
    return (msg.high << 64) | msg.low


@dataclass(slots=True, eq=False)
class Session:
    """One StreamChannel: its role, election ID (None until arbitrated) and its outgoing queue."""

    send: Callable[[p4r.StreamMessageResponse], None]
    id: int = field(default_factory=lambda: next(_ids))
    device_id: int | None = None
    role: str = ""
    election_id: int | None = None
    role_config: object | None = None
    ignored: int = 0  # messages ignored (before arbitration, unsupported): logged at 1, 10, 100, ...


class Arbiter:
    """The sessions of one device and the primary of each role."""

    def __init__(self, device_id: int) -> None:
        self.device_id = device_id
        self._lock = threading.Lock()
        self._sessions: list[Session] = []

    def primary(self, role: str = "") -> Session | None:
        """Return the primary session of a role (the highest election ID), or None."""
        best: Session | None = None
        for s in self._sessions:
            if s.role == role and s.election_id is not None and (
                    best is None or s.election_id > best.election_id):  # type: ignore[operator]
                best = s
        return best

    def sessions(self) -> list[Session]:
        """Return a snapshot of the arbitrated sessions."""
        with self._lock:
            return list(self._sessions)

    def arbitrate(self, session: Session, update: p4r.MasterArbitrationUpdate) -> None:
        """Handle a MasterArbitrationUpdate; raise P4RuntimeError to end the stream with that code."""
        role = update.role.name if update.HasField("role") else ""
        election = election_value(update.election_id) if update.HasField("election_id") else None
        with self._lock:
            if update.device_id != self.device_id:
                code = FAILED_PRECONDITION if session.device_id is not None else NOT_FOUND
                raise P4RuntimeError(code, f"device id {update.device_id} is not this switch's ({self.device_id})")
            first = session.device_id is None
            if not first and role != session.role:
                raise P4RuntimeError(FAILED_PRECONDITION,
                                     f"role {role!r} differs from this stream's role {session.role!r}")
            if not first and election == session.election_id:
                self._answer([session], role)
                return
            if election is not None:
                for s in self._sessions:
                    if s is not session and s.role == role and s.election_id == election:
                        raise P4RuntimeError(INVALID_ARGUMENT,
                                             f"election id {election} is already used by another client")
            before = self.primary(role)
            session.device_id = update.device_id
            session.role = role
            session.election_id = election
            if update.role.HasField("config"):
                session.role_config = update.role.config
            if first:
                self._sessions.append(session)
            after = self.primary(role)
            changed = after is not before
            targets = [s for s in self._sessions if s.role == role] if changed else [session]
            log.info("arbitration: session %d role %r election %s; primary is session %s",
                     session.id, role, election, after.id if after else None)
            self._answer(targets, role)

    def remove(self, session: Session) -> None:
        """Forget a closed stream; tell the others if it was the primary."""
        with self._lock:
            if session not in self._sessions:
                return
            before = self.primary(session.role)
            self._sessions.remove(session)
            if before is session:
                after = self.primary(session.role)
                log.info("arbitration: primary session %d left; primary is now %s", session.id,
                         after.id if after else None)
                self._answer([s for s in self._sessions if s.role == session.role], session.role)

    def _answer(self, targets: list[Session], role: str) -> None:
        primary = self.primary(role)
        for s in targets:
            resp = p4r.StreamMessageResponse()
            arb = resp.arbitration
            arb.device_id = self.device_id
            if role:
                arb.role.name = role
            if primary is not None:
                arb.election_id.high = primary.election_id >> 64  # type: ignore[operator]
                arb.election_id.low = primary.election_id & ((1 << 64) - 1)  # type: ignore[operator]
            if s is primary:
                arb.status.code = code_pb2.OK
                arb.status.message = "Is primary"
            elif primary is not None:
                arb.status.code = code_pb2.ALREADY_EXISTS
                arb.status.message = "Is backup"
            else:
                arb.status.code = code_pb2.NOT_FOUND
                arb.status.message = "No primary"
            s.send(resp)

    def check_writer(self, role: str, election_id: tuple[int, int] | None) -> None:
        """Raise PERMISSION_DENIED unless the (high, low) election ID is the primary's of the role (PI rule)."""
        with self._lock:
            primary = self.primary(role)
            if election_id is None:
                if primary is None:
                    return  # PI: no client arbitrated, no election id: accepted (debugging)
                raise P4RuntimeError(PERMISSION_DENIED, "write without election id while a primary exists")
            value = (election_id[0] << 64) | election_id[1]
            if primary is None or primary.election_id != value:
                raise P4RuntimeError(PERMISSION_DENIED,
                                     f"election id {value} is not the primary's for role {role!r}")

    def is_primary(self, session: Session) -> bool:
        """Return True if the session is the primary of its role."""
        with self._lock:
            return session.device_id is not None and self.primary(session.role) is session

    def primaries(self) -> list[Session]:
        """Return the primary session of every role (packet-ins and digests go to these)."""
        with self._lock:
            roles = {s.role for s in self._sessions}
            return [p for p in (self.primary(r) for r in roles) if p is not None]
