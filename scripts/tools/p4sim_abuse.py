"""Abuse of a p4sim-switch process, bounded in count and time, for test_reliability.py and
scripts/bench/p4sim_abuse.py: many concurrent P4Runtime streams and unary calls, repeated pipeline
pushes with the switch's resident memory, random and truncated frames through the fabric program,
wildcard Reads of every register cell with Writes beside them, a stream of failing packet-outs that
its client never reads, messages before arbitration. All traffic is on loopback or on veth pairs the
caller creates.

    with p4sim_switch(tmp) as sw:
        served = flood(sw, fabric_program(tmp), streams=500, unary=500)
        pushes = push_pipelines(sw, fabric_program(tmp), 100)
"""

from __future__ import annotations

import asyncio
import logging
import queue
import random
import resource
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
from google.protobuf import text_format

from emulation.switchproc import SwitchProcess, switch_process
from p4sim.compiler import cli as compile_cli
from p4sim.switch.p4runtime.proto import p4i, p4r, p4r_grpc
from p4sim.target import Target

log = logging.getLogger(__name__)

REPO = Path(__file__).resolve().parents[2]
DEVICE_ID = 1
FIRST_ELECTION = 1_000_000  # stream i arbitrates with FIRST_ELECTION - i: the first is primary, the rest backups
_SERVICE = "/p4.v1.P4Runtime/"


@dataclass(slots=True, frozen=True)
class Program:
    """A compiled program: its P4Info and bmv2 JSON."""

    p4info: p4i.P4Info
    json_bytes: bytes
    json_path: Path


@dataclass(slots=True, frozen=True)
class Served:
    """What a flood got: answers per kind out of those asked, and the switch's RSS before and with the streams."""

    streams: int
    streams_asked: int
    unary: int
    unary_asked: int
    late_arbitration: bool  # a new client was answered (primary) with every stream still open
    rss_before_mib: float
    rss_streams_mib: float
    seconds: float

    @property
    def kib_per_stream(self) -> float:
        """Resident memory per idle (arbitrated) stream."""
        return (self.rss_streams_mib - self.rss_before_mib) * 1024 / max(self.streams_asked, 1)

    def __str__(self) -> str:
        return (f"streams served {self.streams}/{self.streams_asked}, unary calls served {self.unary}/"
                f"{self.unary_asked}, late arbitration {'served' if self.late_arbitration else 'NOT served'}; "
                f"switch RSS {self.rss_before_mib:.1f} MiB -> {self.rss_streams_mib:.1f} MiB with the streams "
                f"open ({self.kib_per_stream:.1f} KiB per idle stream); {self.seconds:.1f} s")


@dataclass(slots=True, frozen=True)
class Pushes:
    """Resident memory of the switch after pipeline pushes: {number of pushes: MiB}."""

    rss_mib: dict[int, float]
    seconds: float

    @property
    def growth(self) -> float:
        """RSS after the last push over RSS after the third sample (the tenth push), minus 1. The
        second push is the first to replace a pipeline (the switch starts with none): the
        allocator's high-water mark of one program being built while another is live is reached
        around there, and grows with the program's size, where a leak grows with every push. On a
        loaded machine the allocator went on settling until the tenth push (CI: 61.6 MiB at the
        second, 64.4 at the tenth, 65.1 at the hundredth), so the ninety pushes after it are the
        measure."""
        counts = sorted(self.rss_mib)
        first, last = counts[min(2, len(counts) - 1)], counts[-1]
        return self.rss_mib[last] / self.rss_mib[first] - 1

    def __str__(self) -> str:
        steps = ", ".join(f"{n}: {mib:.1f}" for n, mib in sorted(self.rss_mib.items()))
        return (f"switch RSS (MiB) after pushes {steps}; {self.growth:+.1%} from the tenth push to the last; "
                f"{self.seconds:.1f} s")


def fabric_program(out_dir: Path) -> Program:
    """p4src/fabric.p4 compiled by p4sim-compile into out_dir."""
    json_path, p4info_path = out_dir / "fabric.json", out_dir / "fabric.p4info.txtpb"
    rc = compile_cli.main([str(REPO / "p4src/fabric.p4"), "-I", str(REPO / "p4src"), "-o", str(json_path),
                           "--p4runtime-files", str(p4info_path)])
    if rc != 0:
        raise RuntimeError("p4sim-compile failed on p4src/fabric.p4")
    return Program(text_format.Parse(p4info_path.read_text(), p4i.P4Info()), json_path.read_bytes(), json_path)


def p4sim_target() -> Target:
    """p4sim-compile and p4sim-switch of this environment."""
    tools = Path(sys.executable).parent
    return Target.from_env(p4c=str(tools / "p4sim-compile"), switch=str(tools / "p4sim-switch"))


@contextmanager
def p4sim_switch(log_dir: Path, json_path: Path | None = None,
                 ports: dict[int, str] | None = None) -> Iterator[SwitchProcess]:
    """A p4sim-switch process on a free loopback port (stopped by its PID afterwards)."""
    with switch_process(p4sim_target(), json_path, ports or {}, log_dir=log_dir, device_id=DEVICE_ID) as sw:
        yield sw


def rss_mib(pid: int, key: str = "VmRSS") -> float:
    """Resident memory of a process (VmRSS; VmHWM: its peak), MiB."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024
    raise ValueError(f"process {pid}: no {key}")


def raise_fd_limit(needed: int) -> None:
    """Raise this process's soft limit of open files to `needed` (children inherit it); ValueError
    if the hard limit is lower."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft >= needed:
        return
    if hard != resource.RLIM_INFINITY and hard < needed:
        raise ValueError(f"open files: {needed} needed, the hard limit is {hard}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))


def pipeline_request(program: Program, election: int | None = None,
                     action: int = p4r.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT
                     ) -> p4r.SetForwardingPipelineConfigRequest:
    """A SetForwardingPipelineConfig request for the program."""
    req = p4r.SetForwardingPipelineConfigRequest(device_id=DEVICE_ID, action=action)
    if election is not None:
        req.election_id.low = election
    req.config.p4info.CopyFrom(program.p4info)
    req.config.p4_device_config = program.json_bytes
    return req


def _route_entry(program: Program, i: int) -> p4r.Entity:
    """A `route` entry 10.<i>.0.0/16 -> drop-free `set_path(path_id=1)` of the fabric program."""
    table = next(t for t in program.p4info.tables if t.preamble.name.endswith(".route"))
    action = next(a for a in program.p4info.actions if a.preamble.name.endswith(".set_path"))
    ent = p4r.Entity()
    te = ent.table_entry
    te.table_id = table.preamble.id
    fm = te.match.add(field_id=table.match_fields[0].id)
    fm.lpm.value = bytes((10, i >> 8 & 0xFF, i & 0xFF, 0))
    fm.lpm.prefix_len = 24
    te.action.action.action_id = action.preamble.id
    te.action.action.params.add(param_id=action.params[0].id, value=b"\x01")
    return ent


# ---- streams and unary calls -------------------------------------------------------------------

def flood(sw: SwitchProcess, program: Program, streams: int = 500, unary: int = 500,
          timeout: float = 60.0) -> Served:
    """Open `streams` StreamChannels (each its own connection, each arbitrated), then with all of
    them open make `unary` concurrent calls (Capabilities, GetForwardingPipelineConfig, Read, Write,
    each on its own connection) and a new client's arbitration (primary of a role of its own, so
    that the others' writes stay valid); count the answers."""
    raise_fd_limit(2 * (streams + unary) + 256)
    return asyncio.run(_flood(sw, program, streams, unary, timeout))


async def _flood(sw: SwitchProcess, program: Program, n_streams: int, n_unary: int, timeout: float) -> Served:
    t0 = time.monotonic()
    rss_before = rss_mib(sw.pid)
    channels: list[grpc.aio.Channel] = []

    def channel() -> grpc.aio.Channel:
        ch = grpc.aio.insecure_channel(sw.grpc_addr, options=[("grpc.use_local_subchannel_pool", 1)])
        channels.append(ch)
        return ch

    calls = []
    try:
        # the pipeline, pushed by the client that will be primary (highest election id) before it streams
        first = channel()
        streams = []
        for i in range(n_streams):
            call = (first if i == 0 else channel()).stream_stream(
                _SERVICE + "StreamChannel", request_serializer=p4r.StreamMessageRequest.SerializeToString,
                response_deserializer=p4r.StreamMessageResponse.FromString)()
            calls.append(call)
            streams.append(call)
        answered = await _within(timeout, [_arbitrate(s, FIRST_ELECTION - i) for i, s in enumerate(streams)])
        served_streams = sum(answered)
        if served_streams < n_streams:  # the rest cannot be served either
            return Served(served_streams, n_streams, 0, n_unary, False, rss_before, rss_mib(sw.pid),
                          time.monotonic() - t0)
        rss_streams = rss_mib(sw.pid)
        await first.unary_unary(_SERVICE + "SetForwardingPipelineConfig",
                                request_serializer=p4r.SetForwardingPipelineConfigRequest.SerializeToString,
                                response_deserializer=p4r.SetForwardingPipelineConfigResponse.FromString)(
            pipeline_request(program, FIRST_ELECTION), timeout=timeout)
        unary = [_unary(channel(), program, i) for i in range(n_unary)]
        late = channel().stream_stream(
            _SERVICE + "StreamChannel", request_serializer=p4r.StreamMessageRequest.SerializeToString,
            response_deserializer=p4r.StreamMessageResponse.FromString)()
        calls.append(late)
        results = await _within(timeout, [*unary, _arbitrate(late, 1, primary=True, role="late")])
        return Served(served_streams, n_streams, sum(results[:-1]), n_unary, results[-1], rss_before,
                      rss_streams, time.monotonic() - t0)
    finally:
        for call in calls:
            call.cancel()
        await asyncio.gather(*(ch.close() for ch in channels), return_exceptions=True)


async def _within(timeout: float, coros: list) -> list[bool]:
    """Run the coroutines concurrently for at most `timeout` seconds: True for each that returned True."""
    tasks = [asyncio.ensure_future(c) for c in coros]
    await asyncio.wait(tasks, timeout=timeout)
    out = []
    for t in tasks:
        if not t.done():
            t.cancel()
            out.append(False)
        elif t.cancelled() or t.exception() is not None:
            if not t.cancelled() and all(out):
                log.warning("flood: a call failed: %r", t.exception())  # the first failure only
            out.append(False)
        else:
            out.append(t.result() is True)
    return out


async def _arbitrate(call: grpc.aio.StreamStreamCall, election: int, primary: bool | None = None,
                     role: str = "") -> bool:
    req = p4r.StreamMessageRequest()
    req.arbitration.device_id = DEVICE_ID
    req.arbitration.election_id.low = election
    if role:
        req.arbitration.role.name = role
    await call.write(req)
    while True:
        msg = await call.read()
        if msg is grpc.aio.EOF:
            return False
        if msg.WhichOneof("update") == "arbitration":
            code = msg.arbitration.status.code
            return code == 0 if primary else code in (0, 6)  # OK (primary), ALREADY_EXISTS (backup)


async def _unary(ch: grpc.aio.Channel, program: Program, i: int) -> bool:
    kind = i % 4
    if kind == 0:
        resp = await ch.unary_unary(_SERVICE + "Capabilities",
                                    request_serializer=p4r.CapabilitiesRequest.SerializeToString,
                                    response_deserializer=p4r.CapabilitiesResponse.FromString)(
            p4r.CapabilitiesRequest())
        return bool(resp.p4runtime_api_version)
    if kind == 1:
        req = p4r.GetForwardingPipelineConfigRequest(
            device_id=DEVICE_ID, response_type=p4r.GetForwardingPipelineConfigRequest.COOKIE_ONLY)
        await ch.unary_unary(_SERVICE + "GetForwardingPipelineConfig",
                             request_serializer=p4r.GetForwardingPipelineConfigRequest.SerializeToString,
                             response_deserializer=p4r.GetForwardingPipelineConfigResponse.FromString)(req)
        return True
    if kind == 2:
        req = p4r.ReadRequest(device_id=DEVICE_ID)
        req.entities.add().table_entry.table_id = 0  # every table
        read = ch.unary_stream(_SERVICE + "Read", request_serializer=p4r.ReadRequest.SerializeToString,
                               response_deserializer=p4r.ReadResponse.FromString)(req)
        async for _ in read:
            pass
        return True
    req = p4r.WriteRequest(device_id=DEVICE_ID)
    req.election_id.low = FIRST_ELECTION
    req.updates.add(type=p4r.Update.INSERT).entity.CopyFrom(_route_entry(program, i))
    await ch.unary_unary(_SERVICE + "Write", request_serializer=p4r.WriteRequest.SerializeToString,
                         response_deserializer=p4r.WriteResponse.FromString)(req)
    return True


# ---- pipeline pushes ---------------------------------------------------------------------------

def push_pipelines(sw: SwitchProcess, program: Program, n: int = 100,
                   measure_at: tuple[int, ...] = (1, 2, 10, 50)) -> Pushes:
    """Push the program n times (VERIFY_AND_COMMIT, no client arbitrated); the switch's RSS after
    the pushes in measure_at and after the last."""
    req = pipeline_request(program)
    rss: dict[int, float] = {}
    t0 = time.monotonic()
    with grpc.insecure_channel(sw.grpc_addr) as ch:
        push = ch.unary_unary(_SERVICE + "SetForwardingPipelineConfig",
                              request_serializer=p4r.SetForwardingPipelineConfigRequest.SerializeToString,
                              response_deserializer=p4r.SetForwardingPipelineConfigResponse.FromString)
        for i in range(1, n + 1):
            push(req, timeout=60)
            if i in measure_at or i == n:
                rss[i] = rss_mib(sw.pid)
    return Pushes(rss, time.monotonic() - t0)


# ---- frames ------------------------------------------------------------------------------------

def fuzz_frames(good: bytes, n_random: int, seed: int = 1) -> list[bytes]:
    """Every truncation of `good`, then n_random frames: random bytes, and `good` with random bytes
    changed (so that the parser goes deep before it meets them)."""
    rng = random.Random(seed)
    out = [good[:n] for n in range(14, len(good))]
    for i in range(n_random):
        if i % 2:
            out.append(rng.randbytes(rng.randint(14, 1514)))
        else:
            f = bytearray(good + rng.randbytes(rng.randint(0, 64)))
            for _ in range(rng.randint(1, 8)):
                f[rng.randrange(12, len(f))] = rng.randrange(256)
            out.append(bytes(f[:rng.randint(14, len(f))]))
    return out


# ---- Reads, stream errors and messages before arbitration ---------------------------------------

def reset_peak(pid: int) -> None:
    """Reset a process's VmHWM to its RSS now (proc(5): clear_refs 5), so the next peak is this step's."""
    with open(f"/proc/{pid}/clear_refs", "w") as f:
        f.write("5")


def _stub(addr: str) -> tuple[grpc.Channel, Any]:
    ch = grpc.insecure_channel(addr)
    return ch, p4r_grpc.P4RuntimeStub(ch)


def _arbitration(election: int = FIRST_ELECTION) -> p4r.StreamMessageRequest:
    req = p4r.StreamMessageRequest()
    req.arbitration.device_id = DEVICE_ID
    req.arbitration.election_id.low = election
    return req


def _primary(sw: SwitchProcess, program: Program) -> tuple[grpc.Channel, Any, Any]:
    """A channel, its stub and a StreamChannel arbitrated as primary, the program pushed."""
    ch, stub = _stub(sw.grpc_addr)
    requests: queue.Queue = queue.Queue()
    requests.put(_arbitration())
    stream = stub.StreamChannel(iter(requests.get, None))
    next(stream)
    stub.SetForwardingPipelineConfig(pipeline_request(program, FIRST_ELECTION), timeout=60)
    return ch, stub, (stream, requests)


def register_read() -> p4r.ReadRequest:
    """A Read of every cell of every register (`register_entry {}`)."""
    req = p4r.ReadRequest(device_id=DEVICE_ID)
    req.entities.add().register_entry.SetInParent()
    return req


@dataclass(slots=True, frozen=True)
class Reads:
    """A wildcard register Read (its answer and the switch's peak RSS growth) and Writes made while
    `stalled` Reads wait on clients that do not read their answers (the slowest Write's seconds)."""

    entities: int
    status: str
    peak_growth_mib: float
    seconds: float
    stalled: int
    writes: int
    slowest_write_s: float

    def __str__(self) -> str:
        return (f"a register_entry {{}} Read: {self.entities} entities then {self.status} in {self.seconds:.1f} s, "
                f"switch peak RSS {self.peak_growth_mib:+.0f} MiB; {self.writes} Writes while {self.stalled} such "
                f"Reads wait on clients that do not read: the slowest took {self.slowest_write_s:.2f} s")


def reads(sw: SwitchProcess, program: Program, stalled: int = 8, writes: int = 20, timeout: float = 60) -> Reads:
    """A wildcard register Read of the fabric program, then Writes while `stalled` Reads are in progress."""
    ch, stub, (stream, requests) = _primary(sw, program)
    try:
        reset_peak(sw.pid)
        peak0, t0 = rss_mib(sw.pid, "VmHWM"), time.monotonic()
        n, status = 0, "OK"
        try:
            for resp in stub.Read(register_read(), timeout=timeout):
                n += len(resp.entities)
        except grpc.RpcError as e:
            status = f"{e.code().name}: {e.details()}"
        seconds, growth = time.monotonic() - t0, rss_mib(sw.pid, "VmHWM") - peak0
        held = [stub.Read(register_read(), timeout=timeout) for _ in range(stalled)]  # never iterated
        time.sleep(1)  # they are in progress: each thread waits on its client
        slowest = 0.0
        for i in range(writes):
            req = p4r.WriteRequest(device_id=DEVICE_ID)
            req.election_id.low = FIRST_ELECTION
            req.updates.add(type=p4r.Update.INSERT).entity.CopyFrom(_route_entry(program, 1000 + i))
            w0 = time.monotonic()
            stub.Write(req, timeout=timeout)
            slowest = max(slowest, time.monotonic() - w0)
        for call in held:
            call.cancel()
        return Reads(n, status, growth, seconds, stalled, writes, slowest)
    finally:
        requests.put(None)
        ch.close()


@dataclass(slots=True, frozen=True)
class StreamFlood:
    """What a client that never reads its stream cost the switch: RSS growth after `packet_outs` packet-outs
    of `payload` bytes that each fail, and the log lines of `early` messages sent before arbitration."""

    packet_outs: int
    payload: int
    rss_growth_mib: float
    early: int
    log_lines: int

    def __str__(self) -> str:
        return (f"{self.packet_outs} failing packet-outs of {self.payload >> 10} KiB on a stream never read: switch "
                f"RSS +{self.rss_growth_mib:.0f} MiB; {self.early} messages before arbitration: {self.log_lines} "
                "log lines")


def stream_flood(sw: SwitchProcess, packet_outs: int = 200, payload: int = 1 << 20, early: int = 20_000,
                 settle: float = 3.0) -> StreamFlood:
    """Packet-outs on a switch without a pipeline (each answered by a StreamError) from a client that never
    reads, then `early` packet messages before any arbitration on another stream; the switch's log
    counted in lines."""
    ch, stub = _stub(sw.grpc_addr)
    try:
        lines0 = len(sw.log_path.read_text(errors="replace").splitlines()) if sw.log_path else 0
        rss0 = rss_mib(sw.pid)
        requests: queue.Queue = queue.Queue()
        requests.put(_arbitration())
        out = p4r.StreamMessageRequest()
        out.packet.payload = b"\xab" * payload
        for _ in range(packet_outs):
            requests.put(out)
        stream = stub.StreamChannel(iter(requests.get, None))
        next(stream)  # the arbitration's answer; nothing more is read
        time.sleep(settle)
        growth = rss_mib(sw.pid) - rss0
        requests.put(None)
        stream.cancel()
        tiny = p4r.StreamMessageRequest()
        tiny.packet.SetInParent()
        early_stream = stub.StreamChannel(iter([tiny] * early))
        for _ in early_stream:
            pass
        time.sleep(0.5)
        lines = len(sw.log_path.read_text(errors="replace").splitlines()) - lines0 if sw.log_path else -1
        return StreamFlood(packet_outs, payload, growth, early, lines)
    finally:
        ch.close()
