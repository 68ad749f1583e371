"""Packet replication engine (bmv2 simple_switch PRE): multicast groups and clone sessions."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass

from p4sim.switch.values import AlreadyExists, InvalidArgument, NotFound

log = logging.getLogger(__name__)

MAX_PORT = 511


@dataclass(slots=True, frozen=True)
class CloneSession:
    """A clone session: replicas (port, rid), class of service, truncation length (0: whole packet)."""

    replicas: tuple[tuple[int, int], ...]
    class_of_service: int = 0
    packet_length_bytes: int = 0


def _check_replicas(what: str, replicas: tuple[tuple[int, int], ...]) -> None:
    seen = set()
    for port, rid in replicas:
        if not 0 <= port <= MAX_PORT:
            raise InvalidArgument(f"{what}: port {port} not in 0..{MAX_PORT}")
        if not 0 <= rid < (1 << 16):
            raise InvalidArgument(f"{what}: replica id {rid} not in 0..65535")
        if (port, rid) in seen:
            raise InvalidArgument(f"{what}: replica (port {port}, rid {rid}) appears twice")
        seen.add((port, rid))


class Pre:
    """Multicast groups (group id -> [(port, rid)]) and clone sessions (id -> CloneSession)."""

    def __init__(self, lock: threading.RLock) -> None:
        self._lock = lock
        self.groups: dict[int, tuple[tuple[int, int], ...]] = {}
        self.sessions: dict[int, CloneSession] = {}

    def insert_group(self, group_id: int, replicas: list[tuple[int, int]]) -> None:
        """Create multicast group group_id (1..65535) with replicas (port, rid)."""
        with self._lock:
            if not 0 < group_id < (1 << 16):
                raise InvalidArgument(f"multicast group id {group_id} not in 1..65535")
            if group_id in self.groups:
                raise AlreadyExists(f"multicast group {group_id} already exists")
            reps = tuple((int(p), int(r)) for p, r in replicas)
            _check_replicas(f"multicast group {group_id}", reps)
            self.groups[group_id] = reps

    def modify_group(self, group_id: int, replicas: list[tuple[int, int]]) -> None:
        """Replace the replicas of an existing multicast group."""
        with self._lock:
            if group_id not in self.groups:
                raise NotFound(f"multicast group {group_id} does not exist")
            reps = tuple((int(p), int(r)) for p, r in replicas)
            _check_replicas(f"multicast group {group_id}", reps)
            self.groups[group_id] = reps

    def delete_group(self, group_id: int) -> None:
        """Delete a multicast group."""
        with self._lock:
            if self.groups.pop(group_id, None) is None:
                raise NotFound(f"multicast group {group_id} does not exist")

    def insert_session(self, session_id: int, session: CloneSession) -> None:
        """Create clone session session_id (1..32767 as bmv2 mirroring sessions)."""
        with self._lock:
            if not 0 < session_id < (1 << 15):
                raise InvalidArgument(f"clone session id {session_id} not in 1..32767")
            if session_id in self.sessions:
                raise AlreadyExists(f"clone session {session_id} already exists")
            _check_replicas(f"clone session {session_id}", session.replicas)
            self.sessions[session_id] = session

    def modify_session(self, session_id: int, session: CloneSession) -> None:
        """Replace an existing clone session."""
        with self._lock:
            if session_id not in self.sessions:
                raise NotFound(f"clone session {session_id} does not exist")
            _check_replicas(f"clone session {session_id}", session.replicas)
            self.sessions[session_id] = session

    def delete_session(self, session_id: int) -> None:
        """Delete a clone session."""
        with self._lock:
            if self.sessions.pop(session_id, None) is None:
                raise NotFound(f"clone session {session_id} does not exist")

    def reset(self) -> None:
        """Remove every group and session."""
        with self._lock:
            self.groups.clear()
            self.sessions.clear()
