"""A small in-process P4Runtime server for testing the client's gRPC layer before a switch exists.

It implements the protocol rules the client depends on (arbitration by highest election id, write
errors in 'grpc-status-details-bin', wildcard reads, packet-out echoed back as packet-in), with
table entries kept by key. It is a test peer, not a data plane.
"""

from __future__ import annotations

import queue
import threading
from concurrent import futures

import grpc

from p4rt.proto import code_pb2, p4r, p4r_grpc, status_pb2


class LoopbackP4RuntimeServer(p4r_grpc.P4RuntimeServicer):
    def __init__(self) -> None:
        self.entries: dict[bytes, p4r.TableEntry] = {}
        self.pipeline: p4r.ForwardingPipelineConfig | None = None
        self.lock = threading.Lock()
        self.streams: dict[int, tuple[tuple[int, int], queue.Queue]] = {}
        self.server: grpc.Server | None = None
        self.port = 0

    def start(self) -> int:
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
        p4r_grpc.add_P4RuntimeServicer_to_server(self, self.server)
        self.port = self.server.add_insecure_port("127.0.0.1:0")
        self.server.start()
        return self.port

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop(grace=0).wait()

    # arbitration
    def _primary(self) -> tuple[int, int] | None:
        return max((eid for eid, _ in self.streams.values()), default=None)

    def _is_primary(self, election) -> bool:
        return self._primary() == (election.high, election.low)

    def _announce(self) -> None:
        primary = self._primary()
        for eid, q in self.streams.values():
            resp = p4r.StreamMessageResponse()
            resp.arbitration.device_id = 1
            resp.arbitration.election_id.high, resp.arbitration.election_id.low = primary
            resp.arbitration.status.code = code_pb2.OK if eid == primary else code_pb2.ALREADY_EXISTS
            q.put(resp)

    def StreamChannel(self, request_iterator, context):
        out: queue.Queue = queue.Queue()
        key = id(out)

        def reader():
            try:
                for req in request_iterator:
                    which = req.WhichOneof("update")
                    if which == "arbitration":
                        eid = (req.arbitration.election_id.high, req.arbitration.election_id.low)
                        with self.lock:
                            self.streams[key] = (eid, out)
                            self._announce()
                    elif which == "packet":
                        resp = p4r.StreamMessageResponse()
                        resp.packet.payload = req.packet.payload
                        for md in req.packet.metadata:
                            resp.packet.metadata.add(metadata_id=md.metadata_id, value=md.value)
                        out.put(resp)
            except grpc.RpcError:
                pass
            finally:
                with self.lock:
                    self.streams.pop(key, None)
                    if self.streams:
                        self._announce()
                out.put(None)

        threading.Thread(target=reader, daemon=True).start()
        while True:
            item = out.get()
            if item is None or not context.is_active():
                return
            yield item

    def SetForwardingPipelineConfig(self, request, context):
        with self.lock:
            if not self._is_primary(request.election_id):
                context.abort(grpc.StatusCode.PERMISSION_DENIED, "not primary")
            self.pipeline = request.config
            self.entries.clear()
        return p4r.SetForwardingPipelineConfigResponse()

    def GetForwardingPipelineConfig(self, request, context):
        if self.pipeline is None:
            context.abort(grpc.StatusCode.FAILED_PRECONDITION, "no pipeline")
        return p4r.GetForwardingPipelineConfigResponse(config=self.pipeline)

    def Capabilities(self, request, context):
        return p4r.CapabilitiesResponse(p4runtime_api_version="1.4.1")

    def Write(self, request, context):
        with self.lock:
            if not self._is_primary(request.election_id):
                context.abort(grpc.StatusCode.PERMISSION_DENIED, "not primary")
            errors = []
            for u in request.updates:
                e = u.entity.table_entry
                k = p4r.TableEntry(table_id=e.table_id, priority=e.priority)
                k.match.extend(e.match)
                key = k.SerializeToString(deterministic=True)
                err = p4r.Error(canonical_code=code_pb2.OK)
                if u.type == p4r.Update.INSERT:
                    if key in self.entries:
                        err = p4r.Error(canonical_code=code_pb2.ALREADY_EXISTS, message="entry exists")
                    else:
                        self.entries[key] = e
                elif u.type == p4r.Update.MODIFY:
                    if key not in self.entries:
                        err = p4r.Error(canonical_code=code_pb2.NOT_FOUND, message="no such entry")
                    else:
                        self.entries[key] = e
                elif u.type == p4r.Update.DELETE:
                    if self.entries.pop(key, None) is None:
                        err = p4r.Error(canonical_code=code_pb2.NOT_FOUND, message="no such entry")
                errors.append(err)
            if any(e.canonical_code != code_pb2.OK for e in errors):
                status = status_pb2.Status(code=code_pb2.UNKNOWN, message="write failed")
                for err in errors:
                    status.details.add().Pack(err)
                context.set_trailing_metadata([("grpc-status-details-bin", status.SerializeToString())])
                context.abort(grpc.StatusCode.UNKNOWN, "write failed")
        return p4r.WriteResponse()

    def Read(self, request, context):
        with self.lock:
            resp = p4r.ReadResponse()
            for ent in request.entities:
                tid = ent.table_entry.table_id
                for e in self.entries.values():
                    if tid in (0, e.table_id):
                        resp.entities.add().table_entry.CopyFrom(e)
        yield resp
