"""Digests: DigestEntry configs, batching of digest messages into DigestLists, acks and dedup.

P4Runtime spec section "DigestEntry": a digest is only streamed once the controller inserted its
DigestEntry. `max_timeout_ns` 0 sends every digest at once, otherwise a list is sent when it holds
`max_list_size` digests (0: no limit) or its first digest waited `max_timeout_ns`. Data of lists sent
and not yet acknowledged is not sent again, until the DigestListAck or `ack_timeout_ns`.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from p4sim.switch.p4runtime import codec
from p4sim.switch.p4runtime.entries import DELETE, INSERT
from p4sim.switch.p4runtime.errors import ALREADY_EXISTS, NOT_FOUND, P4RuntimeError, invalid
from p4sim.switch.p4runtime.proto import p4r
from p4sim.switch.p4runtime.schema import DigestInfo, Schema

log = logging.getLogger(__name__)


@dataclass(slots=True)
class _Stream:
    """The state of one configured digest."""

    info: DigestInfo
    config: p4r.DigestEntry.Config
    pending: list[tuple[int, ...]] = field(default_factory=list)
    first_ns: int = 0
    outstanding: dict[int, tuple[list[tuple[int, ...]], int]] = field(default_factory=dict)  # list id -> data, deadline
    cache: set[tuple[int, ...]] = field(default_factory=set)


class DigestManager:
    """Digest configs and buffers of one pipeline; `send` delivers a StreamMessageResponse."""

    def __init__(self, schema: Schema, send: Callable[[p4r.StreamMessageResponse], None]) -> None:
        self._schema = schema
        self._send = send
        self._lock = threading.Condition()
        self._streams: dict[int, _Stream] = {}
        self._list_ids = itertools.count(1)
        self._stopped = False
        self._thread = threading.Thread(target=self._timer, name="p4rt-digests", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the timer thread."""
        with self._lock:
            self._stopped = True
            self._lock.notify_all()
        self._thread.join(timeout=2)

    # --- control plane -------------------------------------------------------------------------

    def write(self, utype: int, msg: p4r.DigestEntry) -> None:
        """INSERT, MODIFY or DELETE a DigestEntry."""
        info = self._schema.digest(msg.digest_id)
        with self._lock:
            if utype == DELETE:
                if self._streams.pop(info.id, None) is None:
                    raise P4RuntimeError(NOT_FOUND, f"digest {info.name!r} is not configured")
                return
            if not msg.HasField("config"):
                raise invalid(f"digest entry for {info.name!r} has no config")
            cfg = msg.config
            if cfg.max_timeout_ns < 0 or cfg.ack_timeout_ns < 0 or cfg.max_list_size < 0:
                raise invalid(f"negative value in digest config of {info.name!r}")
            if utype == INSERT:
                if info.id in self._streams:
                    raise P4RuntimeError(ALREADY_EXISTS, f"digest {info.name!r} is already configured")
                self._streams[info.id] = _Stream(info, p4r.DigestEntry.Config())
            elif info.id not in self._streams:
                raise P4RuntimeError(NOT_FOUND, f"digest {info.name!r} is not configured")
            self._streams[info.id].config.CopyFrom(cfg)
            self._lock.notify_all()

    def read(self, req: p4r.DigestEntry, out: list[p4r.Entity]) -> None:
        """Append the configured digests a (wildcard) read selects."""
        if req.digest_id:
            self._schema.digest(req.digest_id)
        with self._lock:
            for did, st in sorted(self._streams.items()):
                if req.digest_id and did != req.digest_id:
                    continue
                ent = p4r.Entity()
                ent.digest_entry.digest_id = did
                ent.digest_entry.config.CopyFrom(st.config)
                out.append(ent)

    def ack(self, msg: p4r.DigestListAck) -> None:
        """Forget the data of an acknowledged list (it may be sent again)."""
        with self._lock:
            st = self._streams.get(msg.digest_id)
            if st is None:
                return
            done = st.outstanding.pop(msg.list_id, None)
            if done is not None:
                st.cache.difference_update(done[0])

    # --- data plane ----------------------------------------------------------------------------

    def on_digest(self, digest_id: int, values: tuple[int, ...]) -> None:
        """Take one digest message from the data plane."""
        with self._lock:
            st = self._streams.get(digest_id)
            if st is None or values in st.cache or values in st.pending:
                return
            if not st.pending:
                st.first_ns = time.monotonic_ns()
            st.pending.append(values)
            cfg = st.config
            if cfg.max_timeout_ns == 0 or (cfg.max_list_size and len(st.pending) >= cfg.max_list_size):
                self._flush(st)
            else:
                self._lock.notify_all()

    def _flush(self, st: _Stream) -> None:
        data, st.pending = st.pending, []
        list_id = next(self._list_ids)
        now = time.monotonic_ns()
        if st.config.ack_timeout_ns:
            st.outstanding[list_id] = (data, now + st.config.ack_timeout_ns)
            st.cache.update(data)
        resp = p4r.StreamMessageResponse()
        dl = resp.digest
        dl.digest_id, dl.list_id, dl.timestamp = st.info.id, list_id, time.time_ns()
        widths = st.info.member_widths
        for values in data:
            d = dl.data.add()
            if len(widths) == 1 and len(values) == 1:
                d.bitstring = codec.encode(values[0])
            else:
                for v in values:
                    d.struct.members.add().bitstring = codec.encode(v)
        self._send(resp)

    def _timer(self) -> None:
        with self._lock:
            while not self._stopped:
                now = time.monotonic_ns()
                wake = now + 1_000_000_000
                for st in self._streams.values():
                    if st.pending:
                        due = st.first_ns + st.config.max_timeout_ns
                        if due <= now:
                            self._flush(st)
                        else:
                            wake = min(wake, due)
                    for list_id, (data, deadline) in list(st.outstanding.items()):
                        if deadline <= now:
                            del st.outstanding[list_id]
                            st.cache.difference_update(data)
                        else:
                            wake = min(wake, deadline)
                self._lock.wait(max(0.0, (wake - now) / 1e9))
