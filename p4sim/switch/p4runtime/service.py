"""The P4Runtime gRPC service of a p4sim Device (what PI's server is to simple_switch_grpc).

    handle = start_server(device, "127.0.0.1:9559", device_id=1)
    ...
    handle.stop()

Every RPC handler turns any failure into a gRPC status: a bad request never stops the server.
"""

from __future__ import annotations

import logging
import queue
import threading
from concurrent import futures
from importlib import metadata
from typing import TYPE_CHECKING

import grpc
from google.protobuf.message import DecodeError

from p4sim.switch.p4runtime import config as cfg
from p4sim.switch.p4runtime import encode, entries, packetio, resources, value_sets, wire
from p4sim.switch.p4runtime.arbitration import Arbiter, Session
from p4sim.switch.p4runtime.digests import DigestManager
from p4sim.switch.p4runtime.errors import (
    FAILED_PRECONDITION,
    INTERNAL,
    NOT_FOUND,
    PERMISSION_DENIED,
    UNIMPLEMENTED,
    P4RuntimeError,
    batch_status,
    from_state_error,
    invalid,
    simple_status,
)
from p4sim.switch.p4runtime.proto import p4r, p4r_grpc
from p4sim.switch.values import StateError

if TYPE_CHECKING:
    from p4sim.switch.device import Device, Digest

log = logging.getLogger(__name__)

READ_CHUNK = 10_000  # entities per ReadResponse, to stay far below gRPC's 4 MB message limit
STREAM_BACKLOG = 10_000  # messages waiting for a slow StreamChannel client before packet-ins are dropped
_END = object()

try:
    API_VERSION = metadata.version("p4runtime")
except metadata.PackageNotFoundError:  # pragma: no cover
    API_VERSION = "1.4.1"


def _run_update(svc: P4RuntimeService, utype: int, ent: entries.EntryMsg | p4r.Entity) -> P4RuntimeError | None:
    """Apply one update; return its error (None when it succeeded)."""
    b = svc.committed.binding  # type: ignore[union-attr]
    try:
        if utype not in (entries.INSERT, entries.MODIFY, entries.DELETE):
            raise invalid(f"update type {utype} is not INSERT, MODIFY or DELETE")
        if type(ent) is entries.EntryMsg:  # the wire decoder's fast path
            entries.write_table_entry(b, utype, ent)
            return None
        which = ent.WhichOneof("entity")  # type: ignore[union-attr]
        if which == "table_entry":
            entries.write_table_entry(b, utype, entries.entry_msg(ent.table_entry))
        elif which == "action_profile_member":
            resources.write_member(b, utype, ent.action_profile_member)
        elif which == "action_profile_group":
            resources.write_group(b, utype, ent.action_profile_group)
        elif which == "counter_entry":
            resources.write_counter(b, utype, ent.counter_entry)
        elif which == "direct_counter_entry":
            entries.write_direct_counter(b, utype, ent.direct_counter_entry)
        elif which == "meter_entry":
            resources.write_meter(b, utype, ent.meter_entry)
        elif which == "direct_meter_entry":
            entries.write_direct_meter(b, utype, ent.direct_meter_entry)
        elif which == "register_entry":
            resources.write_register(b, utype, ent.register_entry)
        elif which == "packet_replication_engine_entry":
            resources.write_pre(svc.device.pre, utype, ent.packet_replication_engine_entry)
        elif which == "digest_entry":
            svc.digests.write(utype, ent.digest_entry)  # type: ignore[union-attr]
        elif which == "value_set_entry":
            value_sets.write_value_set(b, utype, ent.value_set_entry)
        elif which is None:
            raise invalid("update without an entity")
        else:
            raise P4RuntimeError(UNIMPLEMENTED, f"writing {which} is not supported")
        return None
    except P4RuntimeError as e:
        return e
    except StateError as e:
        return from_state_error(e)
    except ValueError as e:
        return invalid(str(e))
    except Exception as e:  # the server never dies on a request
        log.exception("internal error on update %s", ent)
        return P4RuntimeError(INTERNAL, f"internal error: {type(e).__name__}: {e}")


def _read_entity(svc: P4RuntimeService, ent: p4r.Entity, out: list[p4r.Entity | bytes]) -> None:
    b = svc.committed.binding  # type: ignore[union-attr]
    which = ent.WhichOneof("entity")
    if which == "table_entry":
        entries.read_table_entries(b, ent.table_entry, out)
    elif which == "action_profile_member":
        resources.read_members(b, ent.action_profile_member, out)
    elif which == "action_profile_group":
        resources.read_groups(b, ent.action_profile_group, out)
    elif which == "counter_entry":
        resources.read_counters(b, ent.counter_entry, out)
    elif which == "direct_counter_entry":
        entries.read_direct_counters(b, ent.direct_counter_entry, out)
    elif which == "meter_entry":
        resources.read_meters(b, ent.meter_entry, out)
    elif which == "direct_meter_entry":
        entries.read_direct_meters(b, ent.direct_meter_entry, out)
    elif which == "register_entry":
        resources.read_registers(b, ent.register_entry, out)
    elif which == "packet_replication_engine_entry":
        resources.read_pre(svc.device.pre, ent.packet_replication_engine_entry, out)
    elif which == "digest_entry":
        svc.digests.read(ent.digest_entry, out)  # type: ignore[union-attr]
    elif which == "value_set_entry":
        value_sets.read_value_sets(b, ent.value_set_entry, out)
    elif which is None:
        raise invalid("read request with an empty entity")
    else:
        raise P4RuntimeError(UNIMPLEMENTED, f"reading {which} is not supported")


class P4RuntimeService(p4r_grpc.P4RuntimeServicer):
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

    # --- RPCs ----------------------------------------------------------------------------------

    def Capabilities(self, request, context):  # noqa: ANN001, ANN201, N802
        """Return the P4Runtime API version."""
        return p4r.CapabilitiesResponse(p4runtime_api_version=API_VERSION)

    def SetForwardingPipelineConfig(self, request, context):  # noqa: ANN001, ANN201, N802
        """VERIFY, VERIFY_AND_SAVE, VERIFY_AND_COMMIT, COMMIT or RECONCILE_AND_COMMIT a config."""
        try:
            self._check_device(request.device_id)
            election = request.election_id
            self.arbiter.check_writer(request.role,
                                      (election.high, election.low) if request.HasField("election_id") else None)
            with self._config_lock:
                self._set_config(request)
            return p4r.SetForwardingPipelineConfigResponse()
        except P4RuntimeError as e:
            log.warning("SetForwardingPipelineConfig: %s", e)
            context.abort_with_status(simple_status(e))
        except Exception as e:
            log.exception("SetForwardingPipelineConfig failed")
            context.abort_with_status(simple_status(P4RuntimeError(INTERNAL, f"internal error: {e}")))

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

    def GetForwardingPipelineConfig(self, request, context):  # noqa: ANN001, ANN201, N802
        """Return the running config (P4Info, device config and/or cookie as asked)."""
        try:
            self._check_device(request.device_id)
            return cfg.get_response(self.committed, request.response_type)
        except P4RuntimeError as e:
            context.abort_with_status(simple_status(e))
        except Exception as e:
            log.exception("GetForwardingPipelineConfig failed")
            context.abort_with_status(simple_status(P4RuntimeError(INTERNAL, f"internal error: {e}")))

    def Write(self, request, context):  # noqa: ANN001, ANN201, N802
        """Apply a batch of updates; a failed batch is UNKNOWN with one p4.v1.Error per update.

        `request` is the serialized WriteRequest (see _handlers) or a WriteRequest message.
        """
        try:
            try:
                msg = wire.decode_write(request) if isinstance(request, bytes) else wire.from_proto(request)
            except DecodeError as e:
                raise invalid(f"malformed WriteRequest: {e}") from None
            self._check_device(msg.device_id)
            self.arbiter.check_writer(msg.role, msg.election_id)
            self._check_pipeline()
            if msg.atomicity != p4r.WriteRequest.CONTINUE_ON_ERROR:
                raise P4RuntimeError(UNIMPLEMENTED, "only CONTINUE_ON_ERROR atomicity is supported")
        except P4RuntimeError as e:
            context.abort_with_status(simple_status(e))
            return None
        except Exception as e:
            log.exception("Write failed")
            context.abort_with_status(simple_status(P4RuntimeError(INTERNAL, f"internal error: {e}")))
            return None
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
            context.abort_with_status(batch_status(results))
        return p4r.WriteResponse()

    def Read(self, request, context):  # noqa: ANN001, ANN201, N802
        """Stream the entities the (wildcard) entities of the request select, as ReadResponse bytes."""
        out: list[p4r.Entity | bytes] = []
        try:
            self._check_device(request.device_id)
            self._check_pipeline()
            for ent in request.entities:  # state objects lock themselves; packets keep flowing
                _read_entity(self, ent, out)
        except P4RuntimeError as e:
            context.abort_with_status(simple_status(e))
            return
        except StateError as e:
            context.abort_with_status(simple_status(from_state_error(e)))
            return
        except Exception as e:
            log.exception("Read failed")
            context.abort_with_status(simple_status(P4RuntimeError(INTERNAL, f"internal error: {e}")))
            return
        for i in range(0, max(len(out), 1), READ_CHUNK):
            chunk = out[i:i + READ_CHUNK]
            yield encode.read_response([e if type(e) is bytes else e.SerializeToString() for e in chunk])

    def StreamChannel(self, request_iterator, context):  # noqa: ANN001, ANN201, N802
        """Arbitration, packet-out in, packet-in, digests and errors out."""
        q: queue.SimpleQueue = queue.SimpleQueue()
        dropped = [0]

        def send(msg: p4r.StreamMessageResponse) -> None:
            # a client that stops reading must not make the switch run out of memory: packet-ins and
            # digest lists beyond the backlog are dropped (arbitration and errors always pass)
            if q.qsize() >= STREAM_BACKLOG and msg.WhichOneof("update") in ("packet", "digest"):
                dropped[0] += 1
                if dropped[0] in (1, 10, 100, 1000) or dropped[0] % 10000 == 0:
                    log.warning("stream %d: client not reading, %d packet-ins/digests dropped", session.id,
                                dropped[0])
                return
            q.put(msg)

        session = Session(send=send)
        reader = threading.Thread(target=self._stream_reader, args=(session, request_iterator, q),
                                  name=f"p4rt-stream-{session.id}", daemon=True)
        reader.start()
        context.add_callback(lambda: q.put(_END))
        try:
            while True:
                item = q.get()
                if item is _END:
                    break
                if isinstance(item, P4RuntimeError):
                    context.abort_with_status(simple_status(item))
                    break
                yield item
        finally:
            self.arbiter.remove(session)

    def _stream_reader(self, session: Session, requests, q: queue.SimpleQueue) -> None:  # noqa: ANN001
        try:
            for req in requests:
                which = req.WhichOneof("update")
                try:
                    if which == "arbitration":
                        self.arbiter.arbitrate(session, req.arbitration)
                    elif session.device_id is None:
                        log.warning("stream %d: %s before arbitration, ignored", session.id, which)
                    elif which == "packet":
                        self._packet_out(session, req.packet)
                    elif which == "digest_ack":
                        if self.digests is not None:
                            self.digests.ack(req.digest_ack)
                    else:
                        log.warning("stream %d: unsupported message %s ignored", session.id, which)
                except P4RuntimeError as e:
                    if which == "arbitration":
                        q.put(e)
                        return
                    q.put(_stream_error(e, req))
                except Exception as e:
                    log.exception("stream %d: failed to handle %s", session.id, which)
                    q.put(_stream_error(P4RuntimeError(INTERNAL, f"internal error: {e}"), req))
        except grpc.RpcError:
            pass  # the client went away
        except Exception:
            log.exception("stream %d: reader failed", session.id)
        finally:
            q.put(_END)

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


def _stream_error(err: P4RuntimeError, req: p4r.StreamMessageRequest) -> p4r.StreamMessageResponse:
    resp = p4r.StreamMessageResponse()
    se = resp.error
    se.canonical_code = err.code
    se.message = err.message
    which = req.WhichOneof("update")
    if which == "packet":
        se.packet_out.packet_out.CopyFrom(req.packet)
    elif which == "digest_ack":
        se.digest_list_ack.digest_list_ack.CopyFrom(req.digest_ack)
    return resp


def _digest_entries(manager: DigestManager) -> list[p4r.DigestEntry]:
    out: list[p4r.Entity] = []
    manager.read(p4r.DigestEntry(), out)
    return [e.digest_entry for e in out]


def _handlers(service: P4RuntimeService) -> grpc.GenericRpcHandler:
    """The P4Runtime method handlers; Write takes the raw request bytes (decoded by wire.py)."""
    unary = grpc.unary_unary_rpc_method_handler
    handlers = {
        "Write": unary(service.Write, request_deserializer=None,
                       response_serializer=p4r.WriteResponse.SerializeToString),
        "Read": grpc.unary_stream_rpc_method_handler(
            service.Read, request_deserializer=p4r.ReadRequest.FromString,
            response_serializer=None),  # Read yields serialized ReadResponses (encode.py)
        "SetForwardingPipelineConfig": unary(
            service.SetForwardingPipelineConfig,
            request_deserializer=p4r.SetForwardingPipelineConfigRequest.FromString,
            response_serializer=p4r.SetForwardingPipelineConfigResponse.SerializeToString),
        "GetForwardingPipelineConfig": unary(
            service.GetForwardingPipelineConfig,
            request_deserializer=p4r.GetForwardingPipelineConfigRequest.FromString,
            response_serializer=p4r.GetForwardingPipelineConfigResponse.SerializeToString),
        "StreamChannel": grpc.stream_stream_rpc_method_handler(
            service.StreamChannel, request_deserializer=p4r.StreamMessageRequest.FromString,
            response_serializer=p4r.StreamMessageResponse.SerializeToString),
        "Capabilities": unary(service.Capabilities, request_deserializer=p4r.CapabilitiesRequest.FromString,
                              response_serializer=p4r.CapabilitiesResponse.SerializeToString),
    }
    return grpc.method_handlers_generic_handler("p4.v1.P4Runtime", handlers)


class ServerHandle:
    """A running P4Runtime server: its bound address and stop()."""

    def __init__(self, server: grpc.Server, service: P4RuntimeService, address: str) -> None:
        self.server = server
        self.service = service
        self.address = address

    def stop(self, grace: float = 0.5) -> None:
        """Stop serving, end the streams and detach from the device."""
        self.server.stop(grace).wait(timeout=grace + 2)
        self.service.close()


def start_server(device: Device, address: str, device_id: int, max_workers: int = 16) -> ServerHandle:
    """Serve P4Runtime for a device on address (`ip:port`; port 0 picks a free one); ValueError if busy."""
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="p4rt"),
                         options=[("grpc.max_receive_message_length", 256 << 20),
                                  ("grpc.max_send_message_length", 256 << 20),
                                  ("grpc.so_reuseport", 0)])
    service = P4RuntimeService(device, device_id)
    server.add_generic_rpc_handlers((_handlers(service),))
    host, sep, port_s = address.rpartition(":")
    if not sep or not port_s.isdigit():
        raise ValueError(f"gRPC address {address!r}: expected <ip>:<port>")
    try:
        port = server.add_insecure_port(address)
    except RuntimeError as e:
        service.close()
        raise ValueError(f"gRPC address {address}: cannot listen ({e})") from None
    if port == 0:
        service.close()
        raise ValueError(f"gRPC address {address}: cannot listen (address in use or not local)")
    server.start()
    bound = f"{host}:{port}"
    log.info("P4Runtime server listening on %s (device id %d)", bound, device_id)
    return ServerHandle(server, service, bound)
