"""Controller benchmarks: P4Runtime install rate, fat-tree provisioning, mbb control time.

    python -m control.bench install [--entries 1000] [--batch 500]
    python -m control.bench fattree [--k 4]
    python -m control.bench mbb [--runs 5]          (root: builds ucd4 on veth pairs)

Switches are p4sim-switch processes (or $SWITCH), programs compiled by p4sim-compile (or $P4C),
or taken from $P4_BUILD_DIR. Figures go to stdout.
"""

from __future__ import annotations

import argparse
import logging
import statistics
import sys
import tempfile
import time
from pathlib import Path

from control.entities import TableEntry
from control.network import Network, generate_states
from control.tests.netbed import SwitchFarm, compile_program
from control.tests.switch_proc import SwitchProcess


def bench_install(entries: int, batch: int, build: Path) -> None:
    """Insert `entries` route entries into one switch in batches; print entries/s and ms per 100."""
    from control.client import P4RuntimeClient, wildcard

    fabric = compile_program("fabric", build)
    sw = SwitchProcess(device_id=1).start()
    try:
        with P4RuntimeClient(sw.address, device_id=1) as c:
            c.set_pipeline(fabric.schema, fabric.config)
            size = c.schema.tables["route"].size
            if entries > size:
                raise ValueError(f"entries {entries}: the route table holds {size}; expected at most that")
            routes = [TableEntry("route", {"ipv4_dst": f"10.{i >> 8 & 255}.{i & 255}.0/24"}, "set_path",
                                 {"path_id": i % 100 + 1}) for i in range(entries)]
            protos = [e.to_proto(c.schema) for e in routes]
            t0 = time.perf_counter()
            c.insert(protos, batch_size=batch)
            dt = time.perf_counter() - t0
            assert len(c.read([wildcard(c.schema, "table_entry", "route")])) == entries
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
    from topo.generators import fattree

    topo = fattree(k)
    fabric = compile_program("fabric", build)
    states = generate_states(topo, "ecmp")
    n_entries = sum(len(s.entries) + len(s.members) + len(s.groups) + len(s.defaults) for s in states.values())
    farm = SwitchFarm(topo).start()
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
        farm.stop()


def bench_mbb(runs: int, build: Path) -> None:
    """mbb on ucd4 with an instant OCS: control time (writes) per run, no OCS delay."""
    from control.ocs.delay import DelayModel
    from control.procedures import Reconfigurer
    from control.tests.testbed import NetTestbed
    from topo.generators import ucd4

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
    p = argparse.ArgumentParser(prog="python -m control.bench", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("what", choices=("install", "fattree", "mbb"))
    p.add_argument("--entries", type=int, default=1000, metavar="N")
    p.add_argument("--batch", type=int, default=500, metavar="N")
    p.add_argument("--k", type=int, default=4, metavar="K")
    p.add_argument("--runs", type=int, default=5, metavar="N")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    with tempfile.TemporaryDirectory() as tmp:
        build = Path(tmp)
        try:
            if args.what == "install":
                bench_install(args.entries, args.batch, build)
            elif args.what == "fattree":
                bench_fattree(args.k, build)
            else:
                bench_mbb(args.runs, build)
        except (ValueError, RuntimeError, OSError) as exc:
            print(f"error: {exc}", file=sys.stderr)  # noqa: T201
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
