"""Benchmark the Mininet emulation: time to ready, iperf3 between pods per mode, memory of the whole run.

For each forwarding mode it brings up a k=4 fat-tree (20 P4 switches, 16 hosts) with the Python API
(emulation.network.Emulation), as `make run-topo` does, and reports: seconds from start to
ready (links, switches, tables), one iperf3 TCP run from pod 0 to pod 3 (h0_0_0 -> h3_1_1: five
switch hops), pingall loss, and the sum of the resident memory of every process of the emulation.
Also the ucd4 testbed with its OCS: ready time and iperf3 over the optical circuit (h2 -> h1).
Needs root. The fat-tree's links are 20 Mbit/s (seed 004) unless --rate says otherwise.

    sudo .venv/bin/python -m scripts.bench.emulation [--modes ecmp,spray,static] [--seconds 5] [--rate 20]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from p4sim.target import Target
from topo import generators

ROOT = Path(__file__).resolve().parents[2]

def one(topo, mode: str, build: Path, seconds: float, pair: tuple[str, str], ocs_args: list[str]) -> dict:
    """Bring a topology up, measure, tear it down."""
    # imported here, not at the top: Mininet is an optional heavy dependency
    from mininet.log import setLogLevel

    from emulation.network import Emulation

    setLogLevel("error")
    t0 = time.monotonic()
    emu = Emulation(topo, mode, build_dir=build, prefix="bn", ocs_args=ocs_args, grpc_base=31000,
                    on_progress=lambda *_: None)
    emu.start()
    try:
        ready = time.monotonic() - t0
        rss = emu.rss_bytes()
        nprocs = len(emu.pids()) + 1
        loss = emu.pingall()
        mbps = emu.iperf3(*pair, seconds=seconds)
    finally:
        t1 = time.monotonic()
        emu.stop()
    down = time.monotonic() - t1
    return {"ready_s": ready, "rss_mib": rss / 2**20, "procs": nprocs, "loss": loss, "mbps": mbps, "stop_s": down}


def main() -> int:
    """Entry point."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--modes", default="ecmp,spray,static", metavar="<m,m>")
    p.add_argument("--seconds", type=float, default=5.0, metavar="S", help="iperf3 duration (default 5)")
    p.add_argument("--rate", type=float, default=20.0, metavar="MBIT", help="fat-tree link rate (default 20)")
    p.add_argument("--build", default=str(ROOT / "build"), metavar="<dir>")
    args = p.parse_args()
    if os.geteuid() != 0:
        print("bench_emulation: needs root (Mininet); skipped")
        return 0
    build = Path(args.build)
    print(Target.from_env().ensure_build(build, ROOT / "p4src"))
    print(f"{'topology':22} {'mode':7} {'ready s':>8} {'stop s':>7} {'MiB RSS':>8} {'procs':>6} "
          f"{'ping loss':>9} {'iperf3 Mbit/s':>14}")
    runs = [(f"fattree k=4 {args.rate:g}M", generators.fattree(4, args.rate), m, ("h0_0_0", "h3_1_1"), [])
            for m in args.modes.split(",")]
    runs.append(("ucd4 + OCS (circuit)", generators.ucd4(), "ecmp", ("h2", "h1"), ["--instant"]))
    for label, topo, mode, pair, ocs_args in runs:
        r = one(topo, mode, build, args.seconds, pair, ocs_args)
        print(f"{label:22} {mode:7} {r['ready_s']:8.1f} {r['stop_s']:7.1f} {r['rss_mib']:8.0f} {r['procs']:6d} "
              f"{r['loss']:8.1f}% {r['mbps']:14.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
