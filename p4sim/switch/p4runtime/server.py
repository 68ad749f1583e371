"""The P4Runtime gRPC server of a p4sim Device (service.py) on grpc's asyncio server.

    handle = start_server(device, "127.0.0.1:9559", device_id=1)
    ...
    handle.stop()

A StreamChannel is a coroutine on the server's event loop, not a thread: an idle stream costs its
buffers, not a worker, so open streams cannot starve Write, Read or new arbitrations (a thread per
stream, as grpc's thread-pool server gives, stopped the switch at 16 idle streams). This is the
shape of gRPC's own answer for many long-lived streams (the C++ callback API, grpc-java and Go
serve a stream without holding a thread). Work that blocks runs on threads: unary RPCs on a pool
of RPC_WORKERS, pipeline pushes on one thread of their own (they were serialised anyway), stream
messages (arbitration, packet-out, digest acks) in arrival order on one more, so the loop only moves
bytes. Beyond MAX_CONCURRENT_RPCS RPCs in progress (open streams included) a new RPC is refused
at once with RESOURCE_EXHAUSTED (grpc's maximum_concurrent_rpcs), which bounds the memory that
streams can hold (switch README, "The P4Runtime server under load"). Reads run on READ_WORKERS
threads of their own, so however many Reads are in progress the unary pool stays free for Writes, and
each streams its ReadResponses as its thread makes them, READ_AHEAD at most waiting to be sent (a
client that takes none for READ_STALL_S ends its Read, so it cannot keep a read thread).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import AsyncIterator, Callable
from concurrent import futures
from typing import TYPE_CHECKING, Any

import grpc

from p4sim.switch.p4runtime.errors import UNAVAILABLE, P4RuntimeError, RpcAbort, internal, simple_status
from p4sim.switch.p4runtime.proto import p4r
from p4sim.switch.p4runtime.service import P4RuntimeService
from p4sim.switch.p4runtime.tls import ServerTls

if TYPE_CHECKING:
    from p4sim.switch.device import Device
    from p4sim.switch.p4runtime.arbitration import Session

__all__ = ["MAX_CONCURRENT_RPCS", "P4RuntimeService", "ServerHandle", "start_server"]

log = logging.getLogger(__name__)

RPC_WORKERS = 8  # threads for unary RPCs: each holds the GIL or the device lock, more would only queue
READ_WORKERS = 2  # threads for Reads: more Reads wait their turn, not the Writes'
READ_AHEAD = 2  # ReadResponses made and not yet sent, per Read
READ_STALL_S = 30.0  # a Read whose client takes none of them for this long ends (UNAVAILABLE)
MAX_CONCURRENT_RPCS = 4096  # RPCs in progress, open streams included; more get RESOURCE_EXHAUSTED
STREAM_BACKLOG = 10_000  # messages waiting for a slow StreamChannel client before packet-ins are dropped
_END = object()
_EMPTY = b""  # WriteResponse and SetForwardingPipelineConfigResponse have no fields


class _Servicer:
    """The gRPC face of a P4RuntimeService: coroutines that hand the work to its threads."""

    def __init__(self, service: P4RuntimeService) -> None:
        self.service = service
        self.rpc_pool = futures.ThreadPoolExecutor(RPC_WORKERS, thread_name_prefix="p4rt-rpc")
        self.read_pool = futures.ThreadPoolExecutor(READ_WORKERS, thread_name_prefix="p4rt-read")
        self.config_pool = futures.ThreadPoolExecutor(1, thread_name_prefix="p4rt-config")
        self.stream_pool = futures.ThreadPoolExecutor(1, thread_name_prefix="p4rt-stream")

    def shutdown(self) -> None:
        """Stop the worker threads (after the server stopped)."""
        for pool in (self.rpc_pool, self.read_pool, self.config_pool, self.stream_pool):
            pool.shutdown(wait=True, cancel_futures=True)

    async def _call(self, pool: futures.Executor, fn: Callable[..., Any], request: bytes,
                    context: grpc.aio.ServicerContext) -> Any:
        """Run fn(request) on a pool thread; its error becomes the RPC's status."""
        try:
            return await asyncio.get_running_loop().run_in_executor(pool, fn, request)
        except Exception as e:
            await _abort(context, e, fn)

    # Requests arrive as bytes (no deserializer): the service decodes them on its threads, so a
    # malformed request is its INVALID_ARGUMENT and a large one does not hold up the loop.

    async def Capabilities(self, request: bytes, context: grpc.aio.ServicerContext) -> bytes:  # noqa: N802
        """Return the P4Runtime API version."""
        return await self._call(self.rpc_pool, lambda r: self.service.capabilities(r).SerializeToString(),
                                request, context)

    async def SetForwardingPipelineConfig(self, request: bytes, context: grpc.aio.ServicerContext) -> bytes:  # noqa: N802
        """Verify, save, commit or reconcile a pipeline config."""
        await self._call(self.config_pool, self.service.set_pipeline_config, request, context)
        return _EMPTY

    async def GetForwardingPipelineConfig(self, request: bytes, context: grpc.aio.ServicerContext) -> bytes:  # noqa: N802
        """Return the running config."""
        return await self._call(self.rpc_pool, lambda r: self.service.get_pipeline_config(r).SerializeToString(),
                                request, context)

    async def Write(self, request: bytes, context: grpc.aio.ServicerContext) -> bytes:  # noqa: N802
        """Apply a batch of updates."""
        await self._call(self.rpc_pool, self.service.write, request, context)
        return _EMPTY

    async def Read(self, request: bytes, context: grpc.aio.ServicerContext) -> None:  # noqa: N802
        """Stream the ReadResponses of a read as its thread makes them; the thread waits while READ_AHEAD
        of them are not yet sent (a client that reads slowly holds that much), and stops when the RPC ends."""
        loop = asyncio.get_running_loop()
        made: asyncio.Queue[bytes] = asyncio.Queue(READ_AHEAD)
        ended = threading.Event()

        def emit(chunk: bytes) -> None:  # on the read thread
            if ended.is_set():
                raise _ReadEnded
            asyncio.run_coroutine_threadsafe(made.put(chunk), loop).result()

        reading = loop.run_in_executor(self.read_pool, self.service.read, request, emit)
        error: Exception | None = None
        try:
            while not (reading.done() and made.empty()):
                got = asyncio.ensure_future(made.get())
                await asyncio.wait((got, reading), return_when=asyncio.FIRST_COMPLETED)
                if not got.done():
                    got.cancel()
                    continue
                try:  # a client that stops reading must not keep a read thread
                    await asyncio.wait_for(context.write(got.result()), READ_STALL_S)
                except asyncio.TimeoutError:
                    error = P4RuntimeError(UNAVAILABLE, f"Read: the client took nothing for {READ_STALL_S:g} s; "
                                           "expected it to read its responses")
                    break
            else:
                error = reading.exception()
        finally:  # first free the thread (a put it waits on completes; its next emit stops it)
            ended.set()
            while not made.empty():
                made.get_nowait()
            reading.add_done_callback(lambda f: f.cancelled() or f.exception())  # _ReadEnded: expected
        if error is not None:
            await _abort(context, error, self.service.read)

    async def StreamChannel(self, requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext) -> None:  # noqa: N802
        """Arbitration, packet-out and digest acks in; arbitration, packet-in, digests and errors out."""
        loop = asyncio.get_running_loop()
        out: asyncio.Queue[Any] = asyncio.Queue()
        dropped = 0

        def offer(msg: p4r.StreamMessageResponse) -> None:  # on the loop
            # a client that stops reading must not make the switch run out of memory: packet-ins,
            # digest lists and stream errors beyond the backlog are dropped (arbitration always passes:
            # one answer per arbitration the client sends, and it reads those or stops sending them)
            nonlocal dropped
            if out.qsize() >= STREAM_BACKLOG and msg.WhichOneof("update") != "arbitration":
                dropped += 1
                if dropped in (1, 10, 100, 1000) or dropped % 10000 == 0:
                    log.warning("stream %d: client not reading, %d packet-ins/digests/errors dropped", session.id,
                                dropped)
                return
            out.put_nowait(msg)

        def send(msg: p4r.StreamMessageResponse) -> None:  # from any thread
            try:
                loop.call_soon_threadsafe(offer, msg)
            except RuntimeError:  # the loop is closed: the server stopped, this stream is gone
                pass

        session = self.service.open_session(send)
        reader = loop.create_task(self._read_stream(session, requests, out))
        try:
            while True:
                item = await out.get()
                if item is _END:
                    break
                if isinstance(item, P4RuntimeError):
                    await context.abort_with_status(simple_status(item))
                await context.write(item)
        finally:
            reader.cancel()
            self.service.close_session(session)

    async def _read_stream(self, session: Session, requests: AsyncIterator[bytes], out: asyncio.Queue) -> None:
        loop = asyncio.get_running_loop()
        try:
            async for data in requests:
                try:
                    await loop.run_in_executor(self.stream_pool, self.service.stream_message, session, data)
                except P4RuntimeError as e:  # ends the stream (a refused arbitration, a malformed message)
                    out.put_nowait(e)
                    return
        except asyncio.CancelledError:
            raise
        except Exception as e:  # the client went away mid-message
            log.debug("stream %d: reading ended: %r", session.id, e)
        finally:
            out.put_nowait(_END)


class _ReadEnded(Exception):
    """The Read's RPC ended (cancelled, or its client gone): its thread stops reading."""


async def _abort(context: grpc.aio.ServicerContext, e: Exception, fn: Callable[..., Any]) -> None:
    """End the RPC with the status of the error its work raised."""
    if isinstance(e, P4RuntimeError):
        await context.abort_with_status(simple_status(e))
    elif isinstance(e, RpcAbort):
        await context.abort_with_status(e.status)
    else:  # the server never dies on a request
        log.error("%s failed", getattr(fn, "__name__", "RPC"), exc_info=e)
        await context.abort_with_status(simple_status(internal(e)))


def _handlers(servicer: _Servicer) -> grpc.GenericRpcHandler:
    """The P4Runtime method handlers on bytes (the service decodes and encodes)."""
    unary = grpc.unary_unary_rpc_method_handler
    handlers = {
        "Write": unary(servicer.Write),
        "Read": grpc.unary_stream_rpc_method_handler(servicer.Read),
        "SetForwardingPipelineConfig": unary(servicer.SetForwardingPipelineConfig),
        "GetForwardingPipelineConfig": unary(servicer.GetForwardingPipelineConfig),
        "StreamChannel": grpc.stream_stream_rpc_method_handler(
            servicer.StreamChannel, response_serializer=p4r.StreamMessageResponse.SerializeToString),
        "Capabilities": unary(servicer.Capabilities),
    }
    return grpc.method_handlers_generic_handler("p4.v1.P4Runtime", handlers)


class ServerHandle:
    """A running P4Runtime server: its bound address, its service and stop()."""

    def __init__(self, server: grpc.aio.Server, servicer: _Servicer, loop: asyncio.AbstractEventLoop,
                 thread: threading.Thread, address: str) -> None:
        self.server = server
        self.service = servicer.service
        self.address = address
        self._servicer = servicer
        self._loop = loop
        self._thread = thread

    def stop(self, grace: float = 0.5) -> None:
        """Stop serving (streams end), stop the event loop and the worker threads, detach from the device."""
        if self._loop.is_closed():
            return
        try:
            asyncio.run_coroutine_threadsafe(self.server.stop(grace), self._loop).result(timeout=grace + 5)
        except futures.TimeoutError:
            log.warning("P4Runtime server did not stop within %.1f s", grace + 5)
        _stop_loop(self._loop, self._thread)
        self._servicer.shutdown()
        self.service.close()


def _stop_loop(loop: asyncio.AbstractEventLoop, thread: threading.Thread) -> None:
    loop.call_soon_threadsafe(loop.stop)
    thread.join(timeout=5)
    if not thread.is_alive():
        loop.close()


def start_server(device: Device, address: str, device_id: int,
                 max_concurrent_rpcs: int = MAX_CONCURRENT_RPCS, tls: ServerTls | None = None) -> ServerHandle:
    """Serve P4Runtime for a device on address (`ip:port`; port 0 picks a free one), over TLS if given;
    ValueError if busy."""
    host, sep, port_s = address.rpartition(":")
    if not sep or not port_s.isdigit():
        raise ValueError(f"gRPC address {address!r}: expected <ip>:<port>")
    service = P4RuntimeService(device, device_id)
    servicer = _Servicer(service)
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="p4rt-loop", daemon=True)
    thread.start()

    async def serve() -> tuple[grpc.aio.Server, int]:
        server = grpc.aio.server(maximum_concurrent_rpcs=max_concurrent_rpcs,
                                 options=[("grpc.max_receive_message_length", 256 << 20),
                                          ("grpc.max_send_message_length", 256 << 20),
                                          ("grpc.so_reuseport", 0)])
        server.add_generic_rpc_handlers((_handlers(servicer),))
        try:
            port = (server.add_secure_port(address, tls.credentials()) if tls is not None
                    else server.add_insecure_port(address))
        except RuntimeError as e:
            raise ValueError(f"gRPC address {address}: cannot listen ({e})") from None
        if port == 0:
            raise ValueError(f"gRPC address {address}: cannot listen (address in use or not local)")
        await server.start()
        return server, port

    try:
        server, port = asyncio.run_coroutine_threadsafe(serve(), loop).result(timeout=30)
    except BaseException:
        _stop_loop(loop, thread)
        servicer.shutdown()
        service.close()
        raise
    bound = f"{host}:{port}"
    log.info("P4Runtime server listening on %s (device id %d%s)", bound, device_id,
             "" if tls is None else ", TLS" + (" with client certificates" if tls.require_client_auth else ""))
    return ServerHandle(server, servicer, loop, thread, bound)
