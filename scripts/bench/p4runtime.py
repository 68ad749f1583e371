"""Benchmark: P4Runtime table writes per second into a p4sim switch, in batches of 1,000.

Starts `python -m p4sim switch --no-p4` on a free loopback port (a separate process, as in use),
becomes primary, pushes a program, then times Write RPCs of INSERT batches into an LPM table and
DELETE batches that remove them. Two figures each: "switch", requests serialised before the clock
starts (the RPC, the server's parsing, translation, device tables and response: what a compiled
controller sees), and "python client", where this pure-Python protobuf client also serialises every
request inside the clock ("x2": two batches in flight, so serialising one overlaps applying the other).

    .venv/bin/python -m scripts.bench.p4runtime [--entries 20000] [--batch 1000] [--profile]

--profile calls the service's write in this process (no gRPC) under cProfile instead, and
prints the functions that take the time.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import socket
import subprocess
import sys
import time
from pathlib import Path

import grpc

from p4sim.switch.device import Device
from p4sim.switch.p4runtime.proto import p4r, p4r_grpc
from p4sim.switch.p4runtime.service import P4RuntimeService
from p4sim.switch.p4runtime.testing import load_p4info, program_files
from scripts.bench.route_entries import add_routes

REPO = Path(__file__).resolve().parents[2]
ROUTE_TABLE = "RtIngress.route"
ACTION = "RtIngress.set_nhop"


def free_port() -> int:
    """Return a free TCP port on loopback."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(stub: p4r_grpc.P4RuntimeStub, timeout: float = 20) -> None:
    """Wait until the server answers Capabilities."""
    deadline = time.time() + timeout
    while True:
        try:
            stub.Capabilities(p4r.CapabilitiesRequest(), timeout=1)
            return
        except grpc.RpcError:
            if time.time() > deadline:
                raise
            time.sleep(0.1)


def build_batches(p4info, n: int, batch: int, utype: int) -> list[p4r.WriteRequest]:  # noqa: ANN001
    """Return Write requests of `batch` route entries each, n entries in all (10.x.y.z/32)."""
    table = next(t for t in p4info.tables if t.preamble.name == ROUTE_TABLE)
    action = next(a for a in p4info.actions if a.preamble.name == ACTION)
    reqs = []
    for start in range(0, n, batch):
        req = p4r.WriteRequest(device_id=1, election_id=p4r.Uint128(low=1))
        add_routes(req, table, action, start, min(start + batch, n), utype)
        reqs.append(req)
    return reqs


def bench_program(n: int) -> tuple[object, bytes]:
    """Return P4Info and bmv2 JSON of the test program with the route table sized for n entries."""
    json_path, p4info_path = program_files()
    p4info = load_p4info(p4info_path)
    doc = json.loads(json_path.read_bytes())
    for pl in doc["pipelines"]:
        for t in pl["tables"]:
            if t["name"] == ROUTE_TABLE:
                t["max_size"] = max(n, t["max_size"])
    for t in p4info.tables:
        if t.preamble.name == ROUTE_TABLE:
            t.size = max(n, t.size)
    return p4info, json.dumps(doc).encode()


def run(address: str, n: int, batch: int) -> dict[str, float]:
    """Push the program, time INSERT then DELETE batches; return writes/s of each."""
    channel = grpc.insecure_channel(address, options=[("grpc.max_send_message_length", 256 << 20)])
    stub = p4r_grpc.P4RuntimeStub(channel)
    wait_ready(stub)
    out = iter([p4r.StreamMessageRequest(arbitration=p4r.MasterArbitrationUpdate(
        device_id=1, election_id=p4r.Uint128(low=1)))])
    stream = stub.StreamChannel(_hold(out))
    next(stream)  # arbitration answer
    p4info, device_config = bench_program(n)
    req = p4r.SetForwardingPipelineConfigRequest(device_id=1, election_id=p4r.Uint128(low=1),
                                                 action=p4r.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT)
    req.config.p4info.CopyFrom(p4info)
    req.config.p4_device_config = device_config
    stub.SetForwardingPipelineConfig(req)
    raw_write = channel.unary_unary("/p4.v1.P4Runtime/Write", request_serializer=None,
                                    response_deserializer=p4r.WriteResponse.FromString)
    result = {}
    inserts = build_batches(p4info, n, batch, p4r.Update.INSERT)
    deletes = build_batches(p4info, n, batch, p4r.Update.DELETE)
    raw_read = channel.unary_stream("/p4.v1.P4Runtime/Read", request_serializer=None,
                                    response_deserializer=None)
    read_all = p4r.ReadRequest(device_id=1, entities=[p4r.Entity(table_entry=p4r.TableEntry())]).SerializeToString()
    # 1. the switch: requests serialised before the clock starts (what a C++/Go controller sends)
    for name, reqs in (("insert", inserts), ("delete", deletes)):
        data = [r.SerializeToString() for r in reqs]
        t0 = time.perf_counter()
        for d in data:
            raw_write(d)
        result[f"{name} (switch)"] = n / (time.perf_counter() - t0)
        if name == "insert":  # read them all back (wildcard read, responses left serialised)
            t0 = time.perf_counter()
            size = sum(len(r) for r in raw_read(read_all))
            result["read (switch)"] = n / (time.perf_counter() - t0)
            assert size > 20 * n, f"read returned {size} bytes for {n} entries"
    # 2. end to end with this pure-Python client, which serialises each request in the clock: one
    # batch at a time, then two batches in flight (serialising one while the switch applies the other)
    for name, reqs in (("insert", inserts), ("delete", deletes)):
        t0 = time.perf_counter()
        for r in reqs:
            stub.Write(r)
        result[f"{name} (python client)"] = n / (time.perf_counter() - t0)
    for name, reqs in (("insert", inserts), ("delete", deletes)):
        t0 = time.perf_counter()
        pending = None
        for r in reqs:
            fut = stub.Write.future(r)
            if pending is not None:
                pending.result()
            pending = fut
        pending.result()
        result[f"{name} (python client x2)"] = n / (time.perf_counter() - t0)
    stream.cancel()
    channel.close()
    return result


def _hold(first):  # noqa: ANN001, ANN202
    yield from first
    while True:  # keep the stream (and so the primary role) open until cancelled
        time.sleep(3600)
        yield from ()


def profile(n: int, batch: int) -> int:
    """Call the service's write in this process (no gRPC) under cProfile; print the top functions."""
    service = P4RuntimeService(Device(cpu_port=255, device_id=1), 1)
    p4info, device_config = bench_program(n)
    req = p4r.SetForwardingPipelineConfigRequest(device_id=1,
                                                 action=p4r.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT)
    req.config.p4info.CopyFrom(p4info)
    req.config.p4_device_config = device_config
    service.set_pipeline_config(req)
    data = []
    for r in build_batches(p4info, n, batch, p4r.Update.INSERT):
        r.ClearField("election_id")  # no client arbitrated: PI accepts writes without election id
        data.append(r.SerializeToString())
    prof = cProfile.Profile()
    t0 = time.perf_counter()
    prof.enable()
    for d in data:
        service.write(d)
    prof.disable()
    print(f"Write (service.write) in-process under cProfile: {n / (time.perf_counter() - t0):,.0f} writes/s")
    pstats.Stats(prof).sort_stats("tottime").print_stats(20)
    service.close()
    return 0


def main() -> int:
    """Entry point."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--entries", type=int, default=20_000, metavar="N", help="entries to write (default 20000)")
    ap.add_argument("--batch", type=int, default=1000, metavar="N", help="updates per Write (default 1000)")
    ap.add_argument("--profile", action="store_true", help="profile the service's write in-process")
    args = ap.parse_args()
    if args.profile:
        return profile(args.entries, args.batch)
    load = os.getloadavg()  # the figures scale with what else runs on this machine
    port = free_port()
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.Popen([sys.executable, "-m", "p4sim", "switch", "--no-p4", "--device-id", "1",
                             "--grpc-server-addr", f"127.0.0.1:{port}"], env=env, cwd=REPO,
                            stderr=subprocess.DEVNULL)
    try:
        res = run(f"127.0.0.1:{port}", args.entries, args.batch)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    print(f"P4Runtime table writes, batches of {args.batch}, {args.entries} entries (LPM /32, 2 params),")
    print("and one wildcard read of them all (entries/s); load average before the run "
          f"{load[0]:.1f} on {os.cpu_count()} CPUs:")
    for name, rate in res.items():
        print(f"  {name:24s} {rate:10,.0f} /s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
