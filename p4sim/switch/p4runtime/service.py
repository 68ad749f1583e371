"""The P4Runtime service of a p4sim Device (what PI's server is to simple_switch_grpc), without gRPC.

Every method takes a request as its serialized bytes (or message) and returns the response, or
raises P4RuntimeError (the RPC's status) or RpcAbort (a status with details: a failed Write batch).
A bad request never stops the service: malformed bytes, invalid UTF-8 in a string field included,
are INVALID_ARGUMENT; anything unexpected is INTERNAL with its message, and logged.
server.py serves these methods over gRPC; scripts/bench/p4runtime.py --profile calls them directly.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from importlib import metadata
from typing import TYPE_CHECKING, Any, TypeVar

from google.protobuf.message import DecodeError, Message

from p4sim.switch.p4runtime import config as cfg
from p4sim.switch.p4runtime import encode, entries, packetio, resources, value_sets, wire
from p4sim.switch.p4runtime.arbitration import Arbiter, Session
from p4sim.switch.p4runtime.digests import DigestManager
from p4sim.switch.p4runtime.errors import (
    FAILED_PRECONDITION,
    NOT_FOUND,
    PERMISSION_DENIED,
    RESOURCE_EXHAUSTED,
    UNIMPLEMENTED,
    P4RuntimeError,
    RpcAbort,
    batch_status,
    from_state_error,
    internal,
    invalid,
)
from p4sim.switch.p4runtime.proto import p4r
from p4sim.switch.values import StateError

if TYPE_CHECKING:
    from p4sim.switch.device import Device
    from p4sim.switch.digest import Digest

log = logging.getLogger(__name__)

# A Read streams what it selects in ReadResponses of READ_CHUNK entities, each made when the one
# before is sent, so it holds one chunk of entities at a time however much it selects (a wildcard
# over every register cell of the fabric program, 116,224 entities, once took 310 MiB at once); it
# may select MAX_READ_ENTITIES at most (RESOURCE_EXHAUSTED past that: read a table or a register).
READ_CHUNK = 1_000
MAX_READ_ENTITIES = 65_536
# A StreamError carries the packet-out that failed (P4Runtime spec 16.1), its payload cut to this
# many bytes: enough to tell which packet, and no copy of a large one per error.
ERROR_PAYLOAD = 64
M = TypeVar("M", bound=Message)

try:
    API_VERSION = metadata.version("p4runtime").split("+", 1)[0]  # no local label (hitless/protogen.py's +upb)
except metadata.PackageNotFoundError:  # pragma: no cover
    API_VERSION = "1.4.1"


def decode(cls: type[M], data: bytes | M) -> M:
    """Parse a request; INVALID_ARGUMENT naming the message for malformed bytes, or the string field
    that is not UTF-8."""
    if not isinstance(data, bytes):
        return data
    try:
        return cls.FromString(data)
    except (DecodeError, UnicodeDecodeError) as e:
        raise invalid(f"malformed {cls.DESCRIPTOR.name}: {_reason(e, cls, data)}") from None


def _reason(e: Exception, cls: type[Message], data: bytes) -> str:
    if isinstance(e, UnicodeDecodeError):
        # the pure-Python runtime appends "in field: p4.v1.WriteRequest.role" to the reason; keep that part
        where = str(e).rpartition(" in field: ")[2] if " in field: " in str(e) else "a string field"
        return f"{where} is not valid UTF-8"
    where = wire.bad_utf8_field(cls.DESCRIPTOR, data)  # upb's DecodeError does not say
    if where is not None:
        return f"{where} is not valid UTF-8"
    return str(e) or type(e).__name__


def _run_update(svc: P4RuntimeService, utype: int, ent: entries.EntryMsg | p4r.Entity) -> P4RuntimeError | None:
    """Apply one update; return its error (None when it succeeded)."""
    try:
        if utype not in (entries.INSERT, entries.MODIFY, entries.DELETE):
            raise invalid(f"update type {utype} is not INSERT, MODIFY or DELETE")
        if type(ent) is entries.EntryMsg:  # the wire decoder's fast path
            entries.write_table_entry(svc.committed.binding, utype, ent)  # type: ignore[union-attr]
            return None
        which = ent.WhichOneof("entity")  # type: ignore[union-attr]
        if which is None:
            raise invalid("update without an entity")
        if which not in _ENTITIES:
            raise P4RuntimeError(UNIMPLEMENTED, f"writing {which} is not supported")
        _ENTITIES[which][0](svc, utype, getattr(ent, which))
        return None
    except P4RuntimeError as e:
        return e
    except StateError as e:
        return from_state_error(e)
    except ValueError as e:
        return invalid(str(e))
    except Exception as e:  # the server never dies on a request
        log.exception("internal error on update %s", ent)
        return internal(e)


def _read_entity(svc: P4RuntimeService, ent: p4r.Entity, out: list[p4r.Entity | bytes]) -> None:
    which = ent.WhichOneof("entity")
    if which is None:
        raise invalid("read request with an empty entity")
    if which not in _ENTITIES:
        raise P4RuntimeError(UNIMPLEMENTED, f"reading {which} is not supported")
    _ENTITIES[which][1](svc, getattr(ent, which), out)


_Write = Callable[["P4RuntimeService", int, Any], None]  # (service, update type, entity message)
_Read = Callable[["P4RuntimeService", Any, list], None]  # (service, entity message, out)


def _of_binding(write: Callable[[cfg.Binding, int, Any], None],
                read: Callable[[cfg.Binding, Any, list], None]) -> tuple[_Write, _Read]:
    """The handlers of an entity kind the committed pipeline binding holds."""
    return (lambda svc, utype, msg: write(svc.committed.binding, utype, msg),  # type: ignore[union-attr]
            lambda svc, msg, out: read(svc.committed.binding, msg, out))  # type: ignore[union-attr]


# Entity kind (the Entity oneof) -> how to write and read it.
_ENTITIES: dict[str, tuple[_Write, _Read]] = {
    "table_entry": _of_binding(lambda b, utype, msg: entries.write_table_entry(b, utype, entries.entry_msg(msg)),
                               entries.read_table_entries),
    "action_profile_member": _of_binding(resources.write_member, resources.read_members),
    "action_profile_group": _of_binding(resources.write_group, resources.read_groups),
    "counter_entry": _of_binding(resources.write_counter, resources.read_counters),
    "direct_counter_entry": _of_binding(entries.write_direct_counter, entries.read_direct_counters),
    "meter_entry": _of_binding(resources.write_meter, resources.read_meters),
    "direct_meter_entry": _of_binding(entries.write_direct_meter, entries.read_direct_meters),
    "register_entry": _of_binding(resources.write_register, resources.read_registers),
    "packet_replication_engine_entry": (lambda svc, utype, msg: resources.write_pre(svc.device.pre, utype, msg),
                                        lambda svc, msg, out: resources.read_pre(svc.device.pre, msg, out)),
    "digest_entry": (lambda svc, utype, msg: svc.digests.write(utype, msg),  # type: ignore[union-attr]
                     lambda svc, msg, out: svc.digests.read(msg, out)),  # type: ignore[union-attr]
    "value_set_entry": _of_binding(value_sets.write_value_set, value_sets.read_value_sets),
}


class P4RuntimeService:
    """The P4Runtime service of one device."""

    def __init__(self, device: Device, device_id: int) -> None:
        self.device = device
        self.device_id = device_id
        self.arbiter = Arbiter(device_id)
        self.committed: cfg.Committed | None = None
        self.saved: tuple[cfg.Binding, p4r.ForwardingPipelineConfig] | None = None
        self.digests: DigestManager | None = None
        self._config_lock = threading.Lock()
        device.on_cpu_frame = self._on_cpu_frame
        device.on_digest = self._on_digest

    def close(self) -> None:
        """Detach from the device and stop the digest timer."""
        if self.device.on_cpu_frame == self._on_cpu_frame:
            self.device.on_cpu_frame = None
        if self.device.on_digest == self._on_digest:
            self.device.on_digest = None
        if self.digests is not None:
            self.digests.stop()

    # --- helpers -------------------------------------------------------------------------------

    def _check_device(self, device_id: int) -> None:
        if device_id != self.device_id:
            raise P4RuntimeError(NOT_FOUND, f"device id {device_id} is not this switch's ({self.device_id})")

    def _check_pipeline(self) -> None:
        if self.committed is None:
            raise P4RuntimeError(FAILED_PRECONDITION, "no forwarding pipeline config set on this device")

    def _to_primaries(self, msg: p4r.StreamMessageResponse) -> None:
        for s in self.arbiter.primaries():
            s.send(msg)

    # --- RPCs (server.py calls these on its worker threads) -------------------------------------

    def capabilities(self, data: bytes | p4r.CapabilitiesRequest) -> p4r.CapabilitiesResponse:
        """Return the P4Runtime API version."""
        decode(p4r.CapabilitiesRequest, data)
        return p4r.CapabilitiesResponse(p4runtime_api_version=API_VERSION)

    def set_pipeline_config(self, data: bytes | p4r.SetForwardingPipelineConfigRequest) -> None:
        """VERIFY, VERIFY_AND_SAVE, VERIFY_AND_COMMIT, COMMIT or RECONCILE_AND_COMMIT a config."""
        request = decode(p4r.SetForwardingPipelineConfigRequest, data)
        try:
            self._check_device(request.device_id)
            election = request.election_id
            self.arbiter.check_writer(request.role,
                                      (election.high, election.low) if request.HasField("election_id") else None)
            with self._config_lock:
                self._set_config(request)
        except P4RuntimeError as e:
            log.warning("SetForwardingPipelineConfig: %s", e)
            raise

    def _set_config(self, request: p4r.SetForwardingPipelineConfigRequest) -> None:
        # Loading and binding run outside the device lock (packets keep flowing); install and commit
        # run inside it, so no Write or packet sees the new pipeline before its binding is in place.
        # The binding is installed first: the service then holds no reference to the old pipeline
        # when the device commits the new one and frees the old (Device.commit_pipeline).
        action = request.action
        A = cfg.Action
        if action in (A.VERIFY, A.VERIFY_AND_SAVE, A.VERIFY_AND_COMMIT):
            binding = cfg.verify(self.device, request.config)
            if action == A.VERIFY_AND_SAVE:
                self.saved = (binding, request.config)
            elif action == A.VERIFY_AND_COMMIT:
                with self.device.lock:
                    self._install(binding, request.config)
                    cfg.commit(self.device, binding)
        elif action == A.COMMIT:
            if self.saved is None:
                raise P4RuntimeError(FAILED_PRECONDITION, "COMMIT without a config saved by VERIFY_AND_SAVE")
            binding, config = self.saved
            with self.device.lock:
                self._install(binding, config)
                cfg.commit(self.device, binding)
        elif action == A.RECONCILE_AND_COMMIT:
            with self.device.lock:
                binding = cfg.reconcile(self.device, self.committed, request.config)
                self._install(binding, request.config, keep_digests=True)
                cfg.commit(self.device, binding, keep_pre=True)
        else:
            raise invalid(f"unknown SetForwardingPipelineConfig action {action}")

    def _install(self, binding: cfg.Binding, config: p4r.ForwardingPipelineConfig,
                 keep_digests: bool = False) -> None:
        stored = p4r.ForwardingPipelineConfig()
        stored.CopyFrom(config)
        old_digests = self.digests
        self.digests = DigestManager(binding.schema, self._to_primaries)
        if old_digests is not None:
            if keep_digests:
                for ent in _digest_entries(old_digests):
                    try:
                        self.digests.write(entries.INSERT, ent)
                    except P4RuntimeError:
                        pass
            old_digests.stop()
        self.committed = cfg.Committed(binding, stored)
        self.saved = None
        log.info("forwarding pipeline committed: %d tables, %d actions", len(binding.tables),
                 len(binding.schema.actions))

    def get_pipeline_config(self, data: bytes | p4r.GetForwardingPipelineConfigRequest
                            ) -> p4r.GetForwardingPipelineConfigResponse:
        """Return the running config (P4Info, device config and/or cookie as asked)."""
        request = decode(p4r.GetForwardingPipelineConfigRequest, data)
        self._check_device(request.device_id)
        return cfg.get_response(self.committed, request.response_type)

    def write(self, data: bytes | p4r.WriteRequest) -> None:
        """Apply a batch of updates; a failed batch raises RpcAbort: UNKNOWN with one p4.v1.Error per update."""
        try:
            msg = wire.decode_write(data) if isinstance(data, bytes) else wire.from_proto(data)
        except (DecodeError, UnicodeDecodeError) as e:
            raise invalid(f"malformed WriteRequest: {_reason(e, p4r.WriteRequest, data)}") from None
        self._check_device(msg.device_id)
        self.arbiter.check_writer(msg.role, msg.election_id)
        self._check_pipeline()
        if msg.atomicity != p4r.WriteRequest.CONTINUE_ON_ERROR:
            raise P4RuntimeError(UNIMPLEMENTED, "only CONTINUE_ON_ERROR atomicity is supported")
        results: list[P4RuntimeError | None] = []
        failed = False
        with self.device.lock:  # the batch is atomic with respect to packets
            for utype, ent in msg.updates:
                err = _run_update(self, utype, ent)
                results.append(err)
                failed = failed or err is not None
        if failed:
            bad = [(i, err) for i, err in enumerate(results) if err is not None]
            for i, err in bad[:10]:
                log.info("Write: update %d: %s", i, err)
            if len(bad) > 10:
                log.info("Write: %d more updates failed", len(bad) - 10)
            raise RpcAbort(batch_status(results))

    def read(self, data: bytes | p4r.ReadRequest, emit: Callable[[bytes], None] | None = None) -> list[bytes]:
        """The entities the (wildcard) entities of the request select, as serialized ReadResponses of
        READ_CHUNK entities: each handed to `emit` as soon as it is made (the server streams them),
        else returned. RESOURCE_EXHAUSTED once it selects more than MAX_READ_ENTITIES."""
        request = decode(p4r.ReadRequest, data)
        self._check_device(request.device_id)
        self._check_pipeline()
        made: list[bytes] = []
        out = _Chunks(emit or made.append)
        try:
            for ent in request.entities:  # state objects lock themselves; packets keep flowing
                _read_entity(self, ent, out)  # type: ignore[arg-type]
        except StateError as e:
            raise from_state_error(e) from None
        out.flush(last=True)
        return made

    # --- StreamChannel ---------------------------------------------------------------------------

    def open_session(self, send: Callable[[p4r.StreamMessageResponse], None]) -> Session:
        """A new StreamChannel; `send` queues a message to its client (from any thread, never blocks)."""
        return Session(send=send)

    def close_session(self, session: Session) -> None:
        """Forget a closed StreamChannel (the other sessions of its role learn of a new primary)."""
        self.arbiter.remove(session)

    def stream_message(self, session: Session, data: bytes | p4r.StreamMessageRequest) -> None:
        """Handle one StreamMessageRequest.

        Raises P4RuntimeError for errors that end the stream (a malformed message, a refused
        arbitration); other errors go back on the stream as a StreamError.
        """
        req = decode(p4r.StreamMessageRequest, data)
        which = req.WhichOneof("update")
        try:
            if which == "arbitration":
                self.arbiter.arbitrate(session, req.arbitration)
            elif session.device_id is None:
                _ignored(session, f"{which} before arbitration")
            elif which == "packet":
                self._packet_out(session, req.packet)
            elif which == "digest_ack":
                if self.digests is not None:
                    self.digests.ack(req.digest_ack)
            else:
                _ignored(session, f"unsupported message {which}")
        except P4RuntimeError as e:
            if which == "arbitration":
                raise
            session.send(_stream_error(e, req))
        except Exception as e:
            log.exception("stream %d: failed to handle %s", session.id, which)
            session.send(_stream_error(internal(e), req))

    def _packet_out(self, session: Session, msg: p4r.PacketOut) -> None:
        if not self.arbiter.is_primary(session):
            raise P4RuntimeError(PERMISSION_DENIED, "only the primary client may send packet-outs")
        self._check_pipeline()
        cpu = self.device.cpu_port
        if cpu is None:
            raise P4RuntimeError(FAILED_PRECONDITION, "the switch has no CPU port (--cpu-port)")
        frame = packetio.packet_out_frame(self.committed.binding.schema.packet_out, msg)  # type: ignore[union-attr]
        self.device.inject(cpu, frame)

    # --- device hooks (data-plane threads) -----------------------------------------------------

    def _on_cpu_frame(self, frame: bytes) -> None:
        committed = self.committed
        if committed is None:
            return
        try:
            pin = packetio.packet_in_message(committed.binding.schema.packet_in, frame)
        except P4RuntimeError as e:
            log.warning("packet-in dropped: %s", e)
            return
        resp = p4r.StreamMessageResponse()
        resp.packet.CopyFrom(pin)
        self._to_primaries(resp)

    def _on_digest(self, digest: Digest) -> None:
        committed, digests = self.committed, self.digests
        if committed is None or digests is None:
            return
        did = committed.binding.digest_by_learn_id.get(digest.learn_id)
        if did is not None:
            digests.on_digest(did, tuple(digest.values))


class _Chunks:
    """Where a read puts what it selects (readers only `append`): every READ_CHUNK entities become one
    ReadResponse handed to `emit`; RESOURCE_EXHAUSTED past MAX_READ_ENTITIES."""

    __slots__ = ("emit", "batch", "count", "sent")

    def __init__(self, emit: Callable[[bytes], None]) -> None:
        self.emit, self.batch, self.count, self.sent = emit, [], 0, 0

    def append(self, ent: p4r.Entity | bytes) -> None:
        """One selected entity (an Entity, or its bytes already encoded)."""
        self.count += 1
        if self.count > MAX_READ_ENTITIES:
            self.flush()  # the client has the first MAX_READ_ENTITIES, then the status
            raise P4RuntimeError(RESOURCE_EXHAUSTED, f"Read selects more than {MAX_READ_ENTITIES} entities; "
                                 "expected fewer: read one table, register or counter (or an index) at a time")
        self.batch.append(ent if type(ent) is bytes else ent.SerializeToString())
        if len(self.batch) == READ_CHUNK:
            self.flush()

    def flush(self, last: bool = False) -> None:
        """Hand over the entities gathered (at the end, at least one response, empty if nothing was selected)."""
        if self.batch or (last and not self.sent):
            self.emit(encode.read_response(self.batch))
            self.batch, self.sent = [], self.sent + 1


def _ignored(session: Session, what: str) -> None:
    """Log a message a stream ignores, at 1, 10, 100, ... of them (a client can send them without end)."""
    session.ignored += 1
    n = session.ignored
    if n == 10 ** (len(str(n)) - 1):
        log.warning("stream %d: %s ignored (%d ignored on this stream)", session.id, what, n)


def _stream_error(err: P4RuntimeError, req: p4r.StreamMessageRequest) -> p4r.StreamMessageResponse:
    resp = p4r.StreamMessageResponse()
    se = resp.error
    se.canonical_code = err.code
    se.message = err.message
    which = req.WhichOneof("update")
    if which == "packet":
        se.packet_out.packet_out.metadata.extend(req.packet.metadata)
        se.packet_out.packet_out.payload = req.packet.payload[:ERROR_PAYLOAD]
    elif which == "digest_ack":
        se.digest_list_ack.digest_list_ack.CopyFrom(req.digest_ack)
    return resp


def _digest_entries(manager: DigestManager) -> list[p4r.DigestEntry]:
    out: list[p4r.Entity] = []
    manager.read(p4r.DigestEntry(), out)
    return [e.digest_entry for e in out]
