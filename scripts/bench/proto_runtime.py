"""Benchmark: one P4Runtime workload under protobuf 3.20's pure-Python runtime and under .venv's upb runtime.

The workload, on the route table of p4sim's test program (LPM /32, two action parameters): build a
WriteRequest of N table entries, serialise it, parse it back, read every field of every entry (what a
server translating it reads), parse the program's P4Info text 100 times, and apply the request in
p4sim's P4Runtime service in-process (no gRPC; p4sim's switch imported from this checkout needs only
grpc and protobuf). It runs in a child process of each Python, alternately (old, new, old, new, ...),
and the median of the rounds is shown. The old runtime is p4runtime-shell's environment
(.venv-p4rt-shell: protobuf 3.20.3 and p4runtime's original modules; `make setup` makes it).

    .venv/bin/python -m scripts.bench.proto_runtime [--entries 10000] [--rounds 3] [--old-python PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
OLD_PYTHON = REPO / ".venv-p4rt-shell" / "bin" / "python"
P4INFO = REPO / "p4sim" / "switch" / "p4runtime" / "testdata" / "rt_basic.p4info.txtpb"
ROUTE_TABLE = "RtIngress.route"
ACTION = "RtIngress.set_nhop"
STEPS = ("build", "serialise", "parse", "read fields", "P4Info text x100", "service apply")


def _timed(steps: dict[str, float], name: str, t0: float) -> float:
    now = time.perf_counter()
    steps[name] = now - t0
    return now


def _service_apply(p4info, data: bytes, n: int) -> float | None:  # noqa: ANN001
    """Seconds p4sim's P4RuntimeService takes to apply the serialised request; None without the project."""
    try:
        from p4sim.switch.device import Device
        from p4sim.switch.p4runtime.proto import p4r
        from p4sim.switch.p4runtime.service import P4RuntimeService
        from scripts.bench.p4runtime import bench_program
    except ImportError:  # an environment without what p4sim's switch imports
        return None
    service = P4RuntimeService(Device(cpu_port=255, device_id=1), 1)
    _, device_config = bench_program(n)
    info = p4r.SetForwardingPipelineConfigRequest().config.p4info
    info.ParseFromString(p4info.SerializeToString())
    for t in info.tables:
        if t.preamble.name == ROUTE_TABLE:
            t.size = max(n, t.size)
    req = p4r.SetForwardingPipelineConfigRequest(device_id=1,
                                                 action=p4r.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT)
    req.config.p4info.CopyFrom(info)
    req.config.p4_device_config = device_config
    service.set_pipeline_config(req)
    t0 = time.perf_counter()
    service.write(data)
    secs = time.perf_counter() - t0
    assert len(service.device.pipeline.tables[ROUTE_TABLE]) == n, "the service did not apply every entry"
    service.close()
    return secs


def worker(n: int) -> dict:
    """The workload in this Python: seconds per step, and which protobuf ran it."""
    from google.protobuf import __version__ as pb_version
    from google.protobuf import text_format
    from google.protobuf.internal import api_implementation
    from p4.config.v1 import p4info_pb2
    from p4.v1 import p4runtime_pb2 as p4r

    sys.path.insert(0, str(REPO))  # this file runs by path, in either environment
    from scripts.bench.route_entries import add_routes

    text = P4INFO.read_text()
    p4info = text_format.Parse(text, p4info_pb2.P4Info())
    table = next(t for t in p4info.tables if t.preamble.name == ROUTE_TABLE)
    action = next(a for a in p4info.actions if a.preamble.name == ACTION)
    steps: dict[str, float] = {}
    t = time.perf_counter()
    req = p4r.WriteRequest(device_id=1)  # no election id: the in-process service has no primary client
    add_routes(req, table, action, 0, n, p4r.Update.INSERT)
    t = _timed(steps, "build", t)
    data = req.SerializeToString()
    t = _timed(steps, "serialise", t)
    parsed = p4r.WriteRequest.FromString(data)
    t = _timed(steps, "parse", t)
    total = 0
    for u in parsed.updates:
        te = u.entity.table_entry
        total += te.table_id + te.action.action.action_id
        for fm in te.match:
            total += fm.field_id + len(fm.lpm.value) + fm.lpm.prefix_len
        for p in te.action.action.params:
            total += p.param_id + len(p.value)
    t = _timed(steps, "read fields", t)
    for _ in range(100):
        text_format.Parse(text, p4info_pb2.P4Info())
    _timed(steps, "P4Info text x100", t)
    steps["service apply"] = _service_apply(p4info, data, n)
    return {"runtime": f"protobuf {pb_version} ({api_implementation.Type()})", "steps": steps,
            "bytes": len(data), "check": total}


def run(python: Path, n: int, env: dict[str, str]) -> dict:
    """One round of the workload in a child process of `python`."""
    res = subprocess.run([str(python), str(Path(__file__).resolve()), "--worker", "--entries", str(n)],
                         capture_output=True, text=True, env=env, cwd=REPO, check=False)
    if res.returncode != 0:
        last = res.stderr.strip().splitlines()
        raise RuntimeError(f"{python}: exited {res.returncode}: {last[-1] if last else ''}")
    return json.loads(res.stdout)


def main() -> int:
    """Entry point."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--entries", type=int, default=10_000, metavar="N", help="table entries (default 10000)")
    ap.add_argument("--rounds", type=int, default=3, metavar="N", help="rounds of each runtime (default 3)")
    ap.add_argument("--old-python", type=Path, default=OLD_PYTHON, metavar="PATH",
                    help="the Python of the old runtime (default .venv-p4rt-shell/bin/python)")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(worker(args.entries)))
        return 0
    pythons = {"old": args.old_python, "new": Path(sys.executable)}
    if not args.old_python.exists():
        print(f"{args.old_python}: missing (make setup creates .venv-p4rt-shell); only the new runtime runs")
        del pythons["old"]
    env = {k: v for k, v in os.environ.items() if k != "PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION"}
    load = os.getloadavg()
    rounds: dict[str, list[dict]] = {k: [] for k in pythons}
    for _ in range(args.rounds):
        for key, python in pythons.items():
            rounds[key].append(run(python, args.entries, env))
    first = {k: v[0] for k, v in rounds.items()}
    assert len({r["bytes"] for r in first.values()}) == 1, "the runtimes serialised different requests"
    print(f"P4Runtime messages: a WriteRequest of {args.entries:,} table entries ({first['new']['bytes']:,} bytes), "
          f"median of {args.rounds} rounds, seconds; load average before {load[0]:.1f} on {os.cpu_count()} CPUs")
    names = {k: first[k]["runtime"] for k in pythons}
    print(f"  {'step':18s}" + "".join(f"{names[k]:>28s}" for k in pythons) + ("     old/new" if len(pythons) == 2 else ""))
    for step in STEPS:
        med = {}
        for k in pythons:
            values = [r["steps"][step] for r in rounds[k] if r["steps"].get(step) is not None]
            med[k] = statistics.median(values) if values else None
        cells = "".join(f"{med[k]:28.4f}" if med[k] is not None else f"{'-':>28s}" for k in pythons)
        ratio = ""
        if len(pythons) == 2 and med["old"] is not None and med["new"]:
            ratio = f"{med['old'] / med['new']:11.1f}x"
        print(f"  {step:18s}{cells}{ratio}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
