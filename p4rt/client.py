"""The P4Runtime gRPC client: the only I/O layer of the controller.

Arbitration (election id, role) over the StreamChannel, pipeline push, batched writes, reads with
wildcards, packet-in/out and digests. Every gRPC failure becomes a `P4RuntimeError`. Thread-safe:
unary calls go straight to grpc (thread-safe), stream sends go through one queue.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol

import grpc

from p4rt.entities import TableEntry
from p4rt.errors import P4RuntimeError
from p4rt.proto import code_pb2, p4i, p4r, p4r_grpc
from p4rt.resources import CounterEntry, DigestList, Packet, decode_entity
from p4rt.schema import P4Schema
from p4rt.tls import TlsOptions

log = logging.getLogger(__name__)

_CHANNEL_OPTIONS = [
    ("grpc.max_send_message_length", 256 << 20),
    ("grpc.max_receive_message_length", 256 << 20),
    # a failed batch carries one p4.v1.Error per update in the trailers; the 16 KiB default cuts it off
    ("grpc.max_metadata_size", 64 << 20),
]
_STOP = object()
# How long a refused election id ("already used" by a session that is closing) is retried on connect.
ELECTION_RELEASE_S = 3.0


class Encodable(Protocol):
    """Anything that encodes itself into a p4r.Entity with a schema (p4rt.entities, p4rt.resources)."""

    def to_proto(self, schema: P4Schema) -> p4r.Entity:
        """Encode with the widths and ids of `schema`."""
        ...


EntityLike = Encodable | p4r.Entity


def parse_address(address: str) -> str:
    """Check a "<host>:<port>" gRPC address and return it."""
    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"address {address!r}: expected <host>:<port>")
    return address


class P4RuntimeClient:
    """A P4Runtime controller session with one device."""

    def __init__(self, address: str, device_id: int = 0, election_id: tuple[int, int] = (0, 1),
                 role: str = "", schema: P4Schema | None = None, timeout: float = 10.0,
                 packet_queue_size: int = 10000, tls: TlsOptions | None = None) -> None:
        self.address = parse_address(address)
        self.tls = tls  # None: plain TCP (a switch on loopback)
        self.device_id = device_id
        self.election_id = election_id
        self.role = role
        self.schema = schema
        self.timeout = timeout
        self._channel: grpc.Channel | None = None
        self._stub: p4r_grpc.P4RuntimeStub | None = None
        self._requests: queue.Queue[Any] = queue.Queue()
        self._stream: Any = None
        self._reader: threading.Thread | None = None
        self._lock = threading.Lock()
        self._arbitrated = threading.Event()
        self._primary = False
        self._primary_election_id: tuple[int, int] | None = None
        self._closed = threading.Event()
        self.packets: queue.Queue[Packet] = queue.Queue(maxsize=packet_queue_size)
        self.digests: queue.Queue[DigestList] = queue.Queue(maxsize=packet_queue_size)
        self.stream_errors: queue.Queue[p4r.StreamError] = queue.Queue()
        self.dropped_packets = 0
        self._on_packet: Callable[[Packet], None] | None = None
        self._on_disconnect: Callable[[P4RuntimeError], None] | None = None
        self._on_arbitration: Callable[[bool, tuple[int, int] | None], None] | None = None
        self.stream_failure: P4RuntimeError | None = None
        self.pipeline_cookie: int | None = None

    # -- session ----------------------------------------------------------------------------------

    def connect(self, timeout: float | None = None) -> bool:
        """Open the channel and the stream, send arbitration; return True when this client is primary.

        A server may still hold the stream of a session that just closed with the same election id
        (bmv2's PI notices a cancelled stream asynchronously) and refuse the id as "already used":
        that refusal is retried for up to ELECTION_RELEASE_S before it is raised.
        """
        timeout = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + ELECTION_RELEASE_S
        while True:
            try:
                return self._connect_once(timeout)
            except P4RuntimeError as exc:
                if (exc.code != grpc.StatusCode.INVALID_ARGUMENT or "already used" not in str(exc)
                        or time.monotonic() > deadline):
                    raise
                log.debug("%s: election id %s still held by a closing session; retrying", self.address,
                          self.election_id)
                time.sleep(0.05)

    def _connect_once(self, timeout: float) -> bool:
        with self._lock:
            self._close_locked()
            self._closed.clear()
            self._arbitrated.clear()
            self.stream_failure = None
            if self.tls is None:
                self._channel = grpc.insecure_channel(self.address, options=_CHANNEL_OPTIONS)
            else:
                self._channel = grpc.secure_channel(self.address, self.tls.credentials(),
                                                    options=_CHANNEL_OPTIONS + self.tls.channel_options())
            try:
                grpc.channel_ready_future(self._channel).result(timeout=timeout)
            except grpc.FutureTimeoutError:
                self._channel.close()
                self._channel = None
                how = "" if self.tls is None else (" over TLS (or the TLS handshake failed: check the CA, "
                                                   "the client certificate and the server name)")
                raise P4RuntimeError(grpc.StatusCode.UNAVAILABLE, f"no P4Runtime server at {self.address}{how} "
                                     f"after {timeout:.1f} s", operation="connect") from None
            self._stub = p4r_grpc.P4RuntimeStub(self._channel)
            self._requests = queue.Queue()
            self._stream = self._stub.StreamChannel(self._request_iter(self._requests))
            self._reader = threading.Thread(target=self._read_stream, args=(self._stream,),
                                            name=f"p4rt-{self.address}", daemon=True)
            self._reader.start()
            self._requests.put(p4r.StreamMessageRequest(arbitration=self._arbitration()))
        if not self._arbitrated.wait(timeout):
            failure = self.stream_failure
            self.close()
            if failure is not None:
                raise failure
            raise P4RuntimeError(grpc.StatusCode.DEADLINE_EXCEEDED,
                                 f"no arbitration answer from {self.address} within {timeout:.1f} s",
                                 operation="connect")
        if self.stream_failure is not None and not self._primary:
            raise self.stream_failure
        log.info("connected to %s device %d: %s", self.address, self.device_id,
                 "primary" if self._primary else "backup")
        return self._primary

    def become_primary(self, election_id: tuple[int, int], timeout: float | None = None) -> bool:
        """Send a new election id on the open stream; return True when this client became primary."""
        self.election_id = election_id
        self._arbitrated.clear()
        self._send(p4r.StreamMessageRequest(arbitration=self._arbitration()))
        if not self._arbitrated.wait(self.timeout if timeout is None else timeout):
            raise P4RuntimeError(grpc.StatusCode.DEADLINE_EXCEEDED, "no arbitration answer",
                                 operation="arbitration")
        return self._primary

    @property
    def is_primary(self) -> bool:
        """True while the device says this client is the primary controller."""
        return self._primary

    @property
    def connected(self) -> bool:
        """True while the stream channel is open."""
        return self._stream is not None and self.stream_failure is None and not self._closed.is_set()

    def close(self) -> None:
        """Close the stream and the channel; safe to call twice."""
        with self._lock:
            self._close_locked()

    def _close_locked(self) -> None:
        self._closed.set()
        self._primary = False
        self._requests.put(_STOP)
        if self._stream is not None:
            self._stream.cancel()
        if self._reader is not None and self._reader is not threading.current_thread():
            self._reader.join(timeout=2.0)
        if self._channel is not None:
            self._channel.close()
        self._stream = self._reader = self._channel = self._stub = None

    def __enter__(self) -> P4RuntimeClient:
        self.connect()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def on_packet_in(self, callback: Callable[[Packet], None] | None) -> None:
        """Call `callback(packet)` from the stream thread for each packet-in instead of queueing it."""
        self._on_packet = callback

    def on_disconnect(self, callback: Callable[[P4RuntimeError], None] | None) -> None:
        """Call `callback(error)` when the stream breaks (server gone, switch restart)."""
        self._on_disconnect = callback

    def on_arbitration(self, callback: Callable[[bool, tuple[int, int] | None], None] | None) -> None:
        """Call `callback(primary, election_id)` from the stream thread on every arbitration message:
        the answer to ours, and the server's notices when the primary changes (P4Runtime spec, "Client
        Arbitration Notifications"; election_id is the primary's, or the highest the server saw)."""
        self._on_arbitration = callback

    # -- stream -----------------------------------------------------------------------------------

    def _arbitration(self) -> p4r.MasterArbitrationUpdate:
        arb = p4r.MasterArbitrationUpdate(device_id=self.device_id)
        arb.election_id.high, arb.election_id.low = self.election_id
        if self.role:
            arb.role.name = self.role
        return arb

    @staticmethod
    def _request_iter(requests: queue.Queue[Any]) -> Iterator[p4r.StreamMessageRequest]:
        while True:
            item = requests.get()
            if item is _STOP:
                return
            yield item

    def _send(self, request: p4r.StreamMessageRequest) -> None:
        if not self.connected:
            raise P4RuntimeError(grpc.StatusCode.UNAVAILABLE, "stream channel is not open", operation="stream")
        self._requests.put(request)

    def _read_stream(self, stream: Any) -> None:
        try:
            for msg in stream:
                self._dispatch(msg)
        except grpc.RpcError as exc:
            if self._closed.is_set():
                return
            err = P4RuntimeError.from_rpc_error(exc, "stream")
            self.stream_failure = err
            self._primary = False
            self._arbitrated.set()
            log.warning("%s: stream lost: %s", self.address, err)
            if self._on_disconnect is not None:
                self._on_disconnect(err)
            return
        if not self._closed.is_set():
            err = P4RuntimeError(grpc.StatusCode.UNAVAILABLE, "server closed the stream", operation="stream")
            self.stream_failure = err
            self._primary = False
            self._arbitrated.set()
            if self._on_disconnect is not None:
                self._on_disconnect(err)

    def _dispatch(self, msg: p4r.StreamMessageResponse) -> None:
        which = msg.WhichOneof("update")
        if which == "arbitration":
            arb = msg.arbitration
            self._primary = arb.status.code == code_pb2.OK
            self._primary_election_id = (arb.election_id.high, arb.election_id.low) \
                if arb.HasField("election_id") else None
            if self._on_arbitration is not None:
                self._on_arbitration(self._primary, self._primary_election_id)
            self._arbitrated.set()
        elif which == "packet":
            packet = Packet.from_packet_in(self.schema, msg.packet)
            if self._on_packet is not None:
                self._on_packet(packet)
                return
            try:
                self.packets.put_nowait(packet)
            except queue.Full:
                self.dropped_packets += 1
        elif which == "digest":
            try:
                self.digests.put_nowait(DigestList.from_proto(self.schema, msg.digest))
            except queue.Full:
                log.warning("%s: digest queue full, dropping list %d", self.address, msg.digest.list_id)
        elif which == "error":
            log.warning("%s: stream error: %s", self.address, msg.error.message)
            self.stream_errors.put(msg.error)

    def packet_out(self, packet: Packet | p4r.PacketOut) -> None:
        """Send one packet-out (a Packet is encoded with the "packet_out" header of the schema)."""
        if isinstance(packet, Packet):
            packet = packet.to_packet_out(self._need_schema())
        self._send(p4r.StreamMessageRequest(packet=packet))

    def packet_in(self, timeout: float | None = None) -> Packet | None:
        """The next queued packet-in, or None after `timeout` seconds."""
        try:
            return self.packets.get(timeout=timeout)
        except queue.Empty:
            return None

    def digest(self, timeout: float | None = None, ack: bool = True) -> DigestList | None:
        """The next digest list (acknowledged by default), or None after `timeout` seconds."""
        try:
            dl = self.digests.get(timeout=timeout)
        except queue.Empty:
            return None
        if ack:
            self._send(p4r.StreamMessageRequest(
                digest_ack=p4r.DigestListAck(digest_id=dl.digest_id, list_id=dl.list_id)))
        return dl

    # -- unary RPCs -------------------------------------------------------------------------------

    def _need_stub(self) -> p4r_grpc.P4RuntimeStub:
        if self._stub is None:
            raise P4RuntimeError(grpc.StatusCode.UNAVAILABLE, "not connected", operation="rpc")
        return self._stub

    def _need_schema(self) -> P4Schema:
        if self.schema is None:
            raise ValueError("client schema is None: expected a P4Info (set_pipeline or get_pipeline first)")
        return self.schema

    def _set_election(self, req: Any) -> None:
        req.election_id.high, req.election_id.low = self.election_id
        if self.role:
            req.role = self.role

    def capabilities(self) -> str:
        """The server's P4Runtime API version."""
        try:
            return self._need_stub().Capabilities(p4r.CapabilitiesRequest(), timeout=self.timeout).p4runtime_api_version
        except grpc.RpcError as exc:
            raise P4RuntimeError.from_rpc_error(exc, "capabilities") from None

    def set_pipeline(self, p4info: p4i.P4Info | P4Schema, device_config: bytes, cookie: int = 0) -> None:
        """Push a pipeline (P4Info + target config, bmv2 JSON for bmv2/p4sim) with VERIFY_AND_COMMIT."""
        info = p4info.p4info if isinstance(p4info, P4Schema) else p4info
        req = p4r.SetForwardingPipelineConfigRequest(
            device_id=self.device_id,
            action=p4r.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT)
        self._set_election(req)
        req.config.p4info.CopyFrom(info)
        req.config.p4_device_config = device_config
        req.config.cookie.cookie = cookie
        try:
            self._need_stub().SetForwardingPipelineConfig(req, timeout=self.timeout)
        except grpc.RpcError as exc:
            raise P4RuntimeError.from_rpc_error(exc, "set pipeline") from None
        self.schema = p4info if isinstance(p4info, P4Schema) else P4Schema(info)
        self.pipeline_cookie = cookie
        log.info("%s: pipeline set (%d tables)", self.address, len(self.schema.tables))

    def set_pipeline_files(self, p4info_path: str | Path, config_path: str | Path, cookie: int = 0) -> None:
        """Push a pipeline from a P4Info file and a device config file (bmv2 JSON)."""
        self.set_pipeline(P4Schema.load(p4info_path), Path(config_path).read_bytes(), cookie)

    def get_pipeline(self) -> P4Schema | None:
        """Fetch the device's P4Info (None when it has no pipeline) and adopt it as the schema."""
        req = p4r.GetForwardingPipelineConfigRequest(
            device_id=self.device_id, response_type=p4r.GetForwardingPipelineConfigRequest.P4INFO_AND_COOKIE)
        try:
            resp = self._need_stub().GetForwardingPipelineConfig(req, timeout=self.timeout)
        except grpc.RpcError as exc:
            if exc.code() == grpc.StatusCode.FAILED_PRECONDITION:
                return None
            raise P4RuntimeError.from_rpc_error(exc, "get pipeline") from None
        if not resp.config.HasField("p4info") or not resp.config.p4info.tables and not resp.config.p4info.actions:
            return None
        self.schema = P4Schema(resp.config.p4info)
        self.pipeline_cookie = resp.config.cookie.cookie
        return self.schema

    def _entity(self, e: EntityLike) -> p4r.Entity:
        return e if isinstance(e, p4r.Entity) else e.to_proto(self._need_schema())

    def write(self, updates: Sequence[p4r.Update], batch_size: int = 0,
              atomicity: int = p4r.WriteRequest.CONTINUE_ON_ERROR) -> None:
        """Send updates in WriteRequests of `batch_size` (0: one request); raise on the first failing batch."""
        size = batch_size or max(1, len(updates))
        for start in range(0, len(updates), size):
            req = p4r.WriteRequest(device_id=self.device_id, atomicity=atomicity)
            self._set_election(req)
            req.updates.extend(updates[start:start + size])
            try:
                self._need_stub().Write(req, timeout=self.timeout)
            except grpc.RpcError as exc:
                raise P4RuntimeError.from_rpc_error(exc, "write", index_offset=start) from None

    def _updates(self, kind: int, entities: Iterable[EntityLike]) -> list[p4r.Update]:
        return [p4r.Update(type=kind, entity=self._entity(e)) for e in entities]

    def insert(self, entities: Iterable[EntityLike], batch_size: int = 0) -> None:
        """INSERT entities (entity objects or p4r.Entity)."""
        self.write(self._updates(p4r.Update.INSERT, entities), batch_size)

    def modify(self, entities: Iterable[EntityLike], batch_size: int = 0) -> None:
        """MODIFY entities (default entries are always modified)."""
        self.write(self._updates(p4r.Update.MODIFY, entities), batch_size)

    def delete(self, entities: Iterable[EntityLike], batch_size: int = 0) -> None:
        """DELETE entities."""
        self.write(self._updates(p4r.Update.DELETE, entities), batch_size)

    def read(self, entities: Iterable[EntityLike]) -> list[p4r.Entity]:
        """Read entities; unset ids and fields are wildcards (see wildcard())."""
        req = p4r.ReadRequest(device_id=self.device_id)
        if self.role:
            req.role = self.role
        req.entities.extend(self._entity(e) for e in entities)
        out: list[p4r.Entity] = []
        try:
            for resp in self._need_stub().Read(req, timeout=self.timeout):
                out.extend(resp.entities)
        except grpc.RpcError as exc:
            raise P4RuntimeError.from_rpc_error(exc, "read") from None
        return out

    def read_entities(self, entities: Iterable[EntityLike]) -> list[Any]:
        """Read and decode into entity objects with the client's schema."""
        schema = self._need_schema()
        return [decode_entity(schema, e) for e in self.read(entities)]

    # -- table and counter helpers ------------------------------------------------------------------

    def install(self, entries: Sequence[TableEntry]) -> None:
        """INSERT the entries, then MODIFY the default ones (a table's default always exists): what a
        keyless table's default switches on (a schedule's clock) starts once the rest is written."""
        self.insert([e for e in entries if not e.default])
        self.modify([e for e in entries if e.default])

    def clear_tables(self, tables: Iterable[str]) -> None:
        """DELETE every entry but the defaults of the named tables."""
        for table in tables:
            held = [e for e in self.read_entities([wildcard(self.schema, "table_entry", table)])
                    if isinstance(e, TableEntry) and not e.default]
            if held:
                self.delete(held)

    def counter_packets(self, names: Iterable[str], indexes: Sequence[int]) -> dict[str, int]:
        """Packets of each indirect counter, summed over the indexes."""
        out = {}
        for name in names:
            got = self.read_entities([CounterEntry(name, i) for i in indexes])
            out[name] = sum(c.packets for c in got if isinstance(c, CounterEntry))
        return out


def wildcard(schema: P4Schema | None, kind: str, name: str | None = None) -> p4r.Entity:
    """A read-wildcard entity: every entry of `kind` (one of the p4r.Entity field names), or of one object."""
    e = p4r.Entity()
    if kind == "table_entry":
        e.table_entry.table_id = schema.tables[name].preamble.id if name and schema else 0
    elif kind == "action_profile_member":
        e.action_profile_member.action_profile_id = schema.action_profiles[name].preamble.id if name and schema else 0
    elif kind == "action_profile_group":
        e.action_profile_group.action_profile_id = schema.action_profiles[name].preamble.id if name and schema else 0
    elif kind == "counter_entry":
        e.counter_entry.counter_id = schema.counters[name].preamble.id if name and schema else 0
    elif kind == "direct_counter_entry":
        e.direct_counter_entry.table_entry.table_id = schema.tables[name].preamble.id if name and schema else 0
    elif kind == "meter_entry":
        e.meter_entry.meter_id = schema.meters[name].preamble.id if name and schema else 0
    elif kind == "register_entry":
        e.register_entry.register_id = schema.registers[name].preamble.id if name and schema else 0
    elif kind == "multicast_group_entry":
        e.packet_replication_engine_entry.multicast_group_entry.multicast_group_id = 0
    elif kind == "clone_session_entry":
        e.packet_replication_engine_entry.clone_session_entry.session_id = 0
    else:
        raise ValueError(f"entity kind {kind!r}: expected a p4r.Entity field name such as 'table_entry'")
    return e
