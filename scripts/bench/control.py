"""Controller benchmarks: P4Runtime install rate, fat-tree provisioning, mbb control time.

    .venv/bin/python -m scripts.bench.control [install] [fattree] [mbb] [--entries 1000] [--batch 500] [--k 4]
    (default: all three; mbb needs root: it builds ucd4 on veth pairs)

Switches and programs are the run's target (p4sim/target.py: $SWITCH/$P4C, else the real
tools when installed, else p4sim). Figures go to stdout.
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from control.network import Network
from control.procedures import Reconfigurer
from control.switch import Pipeline
from emulation.ocs.delay import DelayModel
from emulation.switchproc import start_switch
from emulation.vethnet import NetTestbed
from fabric.contract import ROUTE, SET_PATH
from p4rt.client import P4RuntimeClient, wildcard
from p4rt.entities import TableEntry
from p4sim.target import Target, free_port
from tablegen.entries import generate_states
from topo.generators import fattree, ucd4

ROOT = Path(__file__).resolve().parents[2]

def compile_program(name: str, build: Path) -> Pipeline:
    """p4src/<name>.p4 compiled by the run's compiler into `build`."""
    Target.from_env().compile(ROOT / "p4src" / f"{name}.p4", build, ROOT / "p4src")
    return Pipeline.load(name, build / f"{name}.p4info.txtpb", build / f"{name}.json")


def bench_install(entries: int, batch: int, build: Path) -> None:
    """Insert `entries` route entries into one switch in batches; print entries/s and ms per 100."""
    fabric = compile_program("fabric", build)
    sw = start_switch(Target.from_env())
    try:
        with P4RuntimeClient(sw.grpc_addr, device_id=1) as c:
            c.set_pipeline(fabric.schema, fabric.config)
            size = c.schema.tables[ROUTE].size
            if entries > size:
                raise ValueError(f"entries {entries}: the route table holds {size}; expected at most that")
            routes = [TableEntry(ROUTE, {"ipv4_dst": f"10.{i >> 8 & 255}.{i & 255}.0/24"}, SET_PATH,
                                 {"path_id": i % 100 + 1}) for i in range(entries)]
            protos = [e.to_proto(c.schema) for e in routes]
            t0 = time.perf_counter()
            c.insert(protos, batch_size=batch)
            dt = time.perf_counter() - t0
            assert len(c.read([wildcard(c.schema, "table_entry", ROUTE)])) == entries
            t1 = time.perf_counter()
            c.delete(protos[:100])
            d100 = (time.perf_counter() - t1) * 1000
        print(  # noqa: T201
              f"install: {entries} entries in batches of {batch}: {dt:.2f} s, {entries / dt:.0f} entries/s; "
              f"one batch of 100 deletes {d100:.1f} ms (thesis PicOS bundle: 3 ms per 100)")
    finally:
        sw.stop()


def bench_fattree(k: int, build: Path) -> None:
    """Provision a k-ary fat-tree (pipelines + every entry) from cold switches; print the time."""
    topo = fattree(k)
    fabric = compile_program("fabric", build)
    states = generate_states(topo, "ecmp")
    n_entries = sum(len(s.entries) + len(s.members) + len(s.groups) + len(s.defaults) for s in states.values())
    farm = []
    for sw in topo.switches:
        sw.grpc_port = free_port()
        farm.append(start_switch(Target.from_env(), device_id=sw.device_id, grpc_port=sw.grpc_port))
    try:
        net = Network(topo, fabric, timeout=30)
        t0 = time.perf_counter()
        net.install(states)
        dt = time.perf_counter() - t0
        t1 = time.perf_counter()
        again = net.install(states)
        dt2 = time.perf_counter() - t1
        net.close()
        assert all(p.empty for p in again.values())
        print(  # noqa: T201
              f"fattree k={k}: {len(topo.switches)} switches, {n_entries} entities: provisioned in {dt:.2f} s "
              f"(pipelines + entries); idempotent re-install (read + diff, 0 writes) {dt2:.2f} s")
    finally:
        for proc in farm:
            proc.stop()


def bench_mbb(runs: int, build: Path) -> None:
    """mbb on ucd4 with an instant OCS: control time (writes) per run, no OCS delay."""
    fabric, ocs = compile_program("fabric", build), compile_program("ocs", build)
    topo = ucd4()
    tb = NetTestbed(topo, fabric, ocs, DelayModel.instant()).start()
    net = Network(topo, fabric, timeout=10)
    try:
        net.install(generate_states(topo, "ecmp"))
        rec = Reconfigurer(net, tb.ocs, mode="ecmp", drain_ms=0)
        maps = topo.ocs[0].circuit_maps
        control, total, pairs = [], [], []
        for i in range(runs):
            target = maps["reconfigured"] if i % 2 == 0 else maps["initial"]
            res = rec.run("mbb", target)
            control.append(res.control_ms)
            total.append(res.total_ms)
            pairs.append(sum(len(p) for p in res.affected.values()))
        print(  # noqa: T201
              f"mbb (ucd4, instant OCS, {runs} runs): control time median {statistics.median(control):.1f} ms "
              f"(min {min(control):.1f}, max {max(control):.1f}); whole run median {statistics.median(total):.1f} ms "
              f"incl. probes; affected ingress paths per run {pairs}")
    finally:
        net.close()
        tb.close()


def main(argv: list[str] | None = None) -> int:
    """Entry point."""
    p = argparse.ArgumentParser(prog="bench_control", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("what", nargs="*", metavar="WHAT", help="install, fattree, mbb (default: all three; mbb as root)")
    p.add_argument("--entries", type=int, default=1000, metavar="N")
    p.add_argument("--batch", type=int, default=500, metavar="N")
    p.add_argument("--k", type=int, default=4, metavar="K")
    p.add_argument("--runs", type=int, default=5, metavar="N")
    args = p.parse_args(argv)
    if unknown := [w for w in args.what if w not in ("install", "fattree", "mbb")]:
        p.error(f"{unknown[0]!r}: expected install, fattree or mbb")
    logging.basicConfig(level=logging.WARNING)
    with tempfile.TemporaryDirectory() as tmp:
        build = Path(tmp)
        try:
            chosen = args.what or ["install", "fattree"] + (["mbb"] if os.geteuid() == 0 else [])
            for what in chosen:
                if what == "install":
                    bench_install(args.entries, args.batch, build)
                elif what == "fattree":
                    bench_fattree(args.k, build)
                else:
                    bench_mbb(args.runs, build)
        except (ValueError, RuntimeError, OSError) as exc:
            print(f"error: {exc}", file=sys.stderr)  # noqa: T201
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
