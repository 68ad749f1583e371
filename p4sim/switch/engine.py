"""The v1model packet flow of bmv2 simple_switch around the generated code.

ingress parser -> verify checksums -> ingress -> [I2E clones] [digest] [resubmit] -> multicast
(PRE replicas) or unicast to egress_spec (511 drops) -> egress (egress_spec reset to 0 first)
-> [E2E clones] -> drop if egress_spec is 511 -> update checksums -> deparser -> [recirculate]
-> transmit. instance_type values are simple_switch's: 0 normal, 1 ingress clone, 2 egress clone,
4 recirculated, 5 replicated, 6 resubmitted. Resubmit/recirculate loops are cut after 16 rounds.

What a copy keeps is simple_switch's (targets/simple_switch/simple_switch.cpp, checked against the
binary by p4sim/tests/test_switch_parity.py): a resubmitted or recirculated packet starts with
every metadata field 0 (ingress_port and ingress_global_timestamp included) except its field list,
instance_type and packet_length, and is parsed again; an I2E clone is the original frame parsed
again with the original ingress_port, then all metadata is reset (what the parser set is lost) and
the field list copied; an E2E clone keeps the headers as egress left them, with all metadata reset
but the field list. A unicast packet enters egress with instance_type 0 (also after a resubmit or
recirculation); multicast replicas keep a copy of everything. packet_length in egress is the
length register: the ingress length moved by every add_header/remove_header (setValid/setInvalid).
A priority at or above the number of priority queues drops the packet where it would be queued.
"""

from __future__ import annotations

import logging
import os
from collections import deque
from typing import Any, Protocol

from p4sim.switch.digest import Digest
from p4sim.switch.pre import Pre
from p4sim.switch.program import Program

log = logging.getLogger(__name__)

DROP = 511
# P4SIM_FUSED=0 selects the attribute-based fast path instead of the fused one (for comparisons)
USE_FUSED = os.environ.get("P4SIM_FUSED", "1") != "0"
MAX_LOOPS = 16
NORMAL, I2E, E2E, RECIRC, REPLICATION, RESUBMIT = 0, 1, 2, 4, 5, 6


class Device(Protocol):
    """What the flow needs of a switch (p4sim.switch.device.Device is one)."""

    pre: Pre
    stats: dict[str, int]
    recirculation: Recirculation | None  # while ports run (p4sim.switch.ports): packets back to ingress

    def now_us(self) -> int:
        """The switch clock in microseconds."""

    def digest(self, d: Digest) -> None:
        """Hand a digest message to the control plane."""


class Pipeline(Protocol):
    """What the flow needs of a loaded program (p4sim.switch.pipeline.Pipeline is one)."""

    namespace: dict[str, Any]
    program: Program


class _Flow:
    """One frame's journey through a pipeline; collects what it transmits."""

    __slots__ = ("dev", "pl", "ns", "out", "sm", "P", "T", "now")

    def __init__(self, dev: Device, pl: Pipeline) -> None:
        self.dev = dev
        self.pl = pl
        self.ns = pl.namespace
        self.out: list[tuple[int, bytes]] = []
        self.P = self.ns["P"]
        self.T = self.ns["TEMPLATE"]
        self.sm = self.ns["STD_ATTRS"]
        self.now = dev.now_us()

    def new(self, frame: bytes, port: int, itype: int, src: Any = None, field_list: int | None = None,
            ts: int | None = None) -> Any:
        """A packet about to be parsed from frame (entering ingress): standard metadata for a frame
        from `port` at time `ts` (None: now), then `field_list` copied from src, then instance_type
        and packet_length, as simple_switch orders them; the parser runs last (a parser that assigns
        preserved fields overwrites them)."""
        p = self.P()
        sm = self.sm
        p._b = frame
        p._ilen = len(frame)
        p._now = self.now
        setattr(p, sm["ingress_port"], port)
        if "ingress_global_timestamp" in sm:
            setattr(p, sm["ingress_global_timestamp"], self.now if ts is None else ts)
        if field_list is not None:
            self.preserve(src, p, field_list)
        setattr(p, sm["packet_length"], len(frame))
        if "instance_type" in sm:
            setattr(p, sm["instance_type"], itype)
        ns = self.ns
        ns["parse"](p, frame)
        ns["verify_checksums"](p)
        return p

    def preserve(self, src: Any, dst: Any, field_list: int) -> None:
        for attr in self.pl.namespace["FIELD_LISTS"].get(field_list, ()):
            setattr(dst, attr, getattr(src, attr))

    def ingress(self, p: Any, depth: int = 0) -> None:
        self.ns["ingress"](p)
        p._exit = False
        self.after_ingress(p, depth)

    def after_ingress(self, p: Any, depth: int) -> None:
        sm = self.sm
        if p._clone_i2e is not None:
            sid, fl = p._clone_i2e
            self.clone(p, sid, fl, I2E, p._b, depth)
        if p._digest is not None:
            self.digest(p)
        if p._resubmit is not None:
            if depth >= MAX_LOOPS:
                log.warning("resubmit loop cut after %d rounds", depth)
                return
            # the original frame again, with metadata reset: ingress_port and the timestamp are 0
            q = self.new(p._b, 0, RESUBMIT, p, p._resubmit, ts=0)
            self.ingress(q, depth + 1)
            return
        mgid = getattr(p, sm["mcast_grp"]) if "mcast_grp" in sm else 0
        if mgid:
            replicas = self.dev.pre.groups.get(mgid, ())
            for port, rid in replicas:
                q = self.P()
                q.__dict__ = p.__dict__.copy()
                setattr(q, sm["egress_port"], port)
                if "egress_rid" in sm:
                    setattr(q, sm["egress_rid"], rid)
                if "instance_type" in sm:
                    setattr(q, sm["instance_type"], REPLICATION)
                self.egress(q, depth)
            return
        spec = getattr(p, sm["egress_spec"])
        if spec == DROP:
            return
        setattr(p, sm["egress_port"], spec)
        if "instance_type" in sm:
            setattr(p, sm["instance_type"], NORMAL)
        self.egress(p, depth)

    def clone(self, p: Any, sid: int, fl: int, itype: int, frame: bytes | None, depth: int) -> None:
        session = self.dev.pre.sessions.get(sid)
        if session is None:
            return
        sm = self.sm
        for port, rid in session.replicas:
            if frame is not None:
                # I2E: the original frame parsed again with its ingress_port; then every metadata
                # field is reset (the parser's assignments too) and the field list copied
                q = self.new(frame, getattr(p, sm["ingress_port"]), itype)
            else:  # E2E: the headers as egress left them, metadata reset
                q = self.P()
                q.__dict__ = p.__dict__.copy()
                q._clone_e2e = q._recirc = None
            for attr in self.pl.namespace["META_ATTRS"]:
                setattr(q, attr, 0)
            self.preserve(p, q, fl)
            if "instance_type" in sm:
                setattr(q, sm["instance_type"], itype)
            setattr(q, sm["egress_port"], port)
            if "egress_rid" in sm:
                setattr(q, sm["egress_rid"], rid)
            if session.packet_length_bytes:
                q._trunc = session.packet_length_bytes
            self.egress(q, depth + 1)

    def digest(self, p: Any) -> None:
        ll = self.pl.program.learn_lists.get(p._digest)
        if ll is None:
            return
        attrs = self.pl.namespace["LEARN_ATTRS"][ll.id]
        self.dev.digest(Digest(ll.id, ll.name, tuple(getattr(p, a) for a in attrs)))

    def egress(self, p: Any, depth: int) -> None:
        ns, sm = self.ns, self.sm
        if "priority" in sm and getattr(p, sm["priority"]) >= ns["NB_QUEUES"]:
            log.debug("priority %d beyond the %d queue(s): dropped", getattr(p, sm["priority"]), ns["NB_QUEUES"])
            return
        port = getattr(p, sm["egress_port"])
        setattr(p, sm["egress_spec"], 0)
        setattr(p, sm["packet_length"], p._ilen + p._dlen)
        if ns["QUEUE_TIME"]:
            tq = self.dev.now_us()
            te = self.dev.now_us()
        else:
            tq = te = self.now
        if "enq_timestamp" in sm:
            setattr(p, sm["enq_timestamp"], tq & 0xFFFFFFFF)
        if "deq_timedelta" in sm:
            setattr(p, sm["deq_timedelta"], (te - tq) & 0xFFFFFFFF)
        if "egress_global_timestamp" in sm:
            setattr(p, sm["egress_global_timestamp"], te)
        ns["egress"](p)
        p._exit = False
        self.after_egress(p, port, depth)

    def after_egress(self, p: Any, port: int, depth: int) -> None:
        ns, sm = self.ns, self.sm
        if p._clone_e2e is not None and depth < MAX_LOOPS:
            sid, fl = p._clone_e2e
            p._clone_e2e = None
            self.clone(p, sid, fl, E2E, None, depth)
        if getattr(p, sm["egress_spec"]) == DROP:
            return
        ns["update_checksums"](p)
        frame = ns["deparse"](p)
        if p._recirc is not None:
            later = self.dev.recirculation
            if later is None and depth >= MAX_LOOPS:
                log.warning("recirculate loop cut after %d rounds", depth)
                return
            # the deparsed frame, with metadata reset: ingress_port and the timestamp are 0
            q = self.new(frame, 0, RECIRC, p, p._recirc, ts=0)
            if later is not None:
                # with ports (PortIO), as bmv2: back into the input, to pass ingress again after
                # this frame, later in time, with no limit on rounds (the program bounds them)
                later.put(self.pl, q)
                return
            self.ingress(q, depth + 1)
            return
        if p._trunc and len(frame) > p._trunc:
            frame = frame[:p._trunc]
        self.out.append((port, frame))


def run(dev: Device, pl: Pipeline, port: int, frame: bytes) -> list[tuple[int, bytes]]:
    """Process one frame arriving on `port`; return the (port, frame) pairs transmitted."""
    ns = pl.namespace
    fast = (ns["FUSED"] if USE_FUSED else None) or ns["FAST"]
    try:
        if fast is not None:
            return fast(frame, port, dev.now_us(), dev, pl)
        f = _Flow(dev, pl)
        f.ingress(f.new(frame, port, NORMAL))
        return f.out
    except Exception:  # a program bug must not kill the switch: drop the frame
        dev.stats["errors"] += 1
        log.exception("packet processing failed; frame dropped (%d bytes on port %d)", len(frame), port)
        return []


def resume(dev: Device, pl: Pipeline, p: Any) -> list[tuple[int, bytes]]:
    """Run a recirculated packet (Recirculation) through ingress again; return what it transmits."""
    try:
        f = _Flow(dev, pl)
        f.ingress(p, 0)
        return f.out
    except Exception:  # a program bug must not kill the switch: drop the frame
        dev.stats["errors"] += 1
        log.exception("recirculated packet processing failed; frame dropped")
        return []


class Recirculation:
    """Recirculated packets waiting for ingress (bmv2's input buffer: 1024 packets, then drops)."""

    CAPACITY = 1024

    def __init__(self) -> None:
        self.queue: deque[tuple[Pipeline, Any]] = deque()
        self.dropped = 0

    def __len__(self) -> int:
        return len(self.queue)

    def put(self, pl: Pipeline, p: Any) -> None:
        """Queue a packet for ingress; beyond CAPACITY it is dropped (and counted)."""
        if len(self.queue) >= self.CAPACITY:
            self.dropped += 1
            return
        self.queue.append((pl, p))

    def take(self) -> tuple[Pipeline, Any]:
        """The oldest packet waiting."""
        return self.queue.popleft()


def continue_slow(dev: Device, pl: Pipeline, p: Any, eport: int | None, now: int) -> list[tuple[int, bytes]]:
    """Continue the general flow after FAST's ingress (eport None) or egress (eport the port)."""
    f = _Flow(dev, pl)
    f.now = now
    if eport is None:
        f.after_ingress(p, 0)
    else:
        f.after_egress(p, eport, 0)
    return f.out
