"""How many servers a fat-tree emulation needs, from measured per-switch and per-host costs (issue 37).

    python -m scripts.tools.cluster_sizing [--rate-mbit 1] [--server-gib 24] [--server-cores 2]

Prints a Markdown table per switch target: for k = 16, 24, 48, the memory and the switches' CPU at
`rate_mbit` of uniform all-to-all traffic from every host, the servers that memory and CPU each ask
for, the links between servers under placement by pod (emulation/cluster.py) and what each server's
network must carry for them. Every input is a measurement named below; the model is arithmetic, not a
run (docs/cluster-sizing.md says what it leaves out).
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass

# docs/figures.md, `scripts.bench.targets --k 4,8,16` (2026-11-28): p4sim-native shares a process
# between switches (57 MiB a process, 2.7 MiB a switch added); bmv2 runs a process a switch (96 MiB
# provisioned, 206 MiB after traffic); CPU a 1500-byte frame: 1.9 us (p4sim-native), 109 us (bmv2 that
# day; 333 us on 2026-12-03, docs/e1-both-ends.md)
# A Mininet host: (k=16's 7.3 GiB - 16 p4sim processes - 320 switches) / 1024 hosts = 5.6 MiB
HOST_MIB = 5.6
FRAME_BYTES = 1500
VXLAN_OVERHEAD = 50  # bytes a frame gains in a tunnel (emulation/cluster.py)


@dataclass(frozen=True)
class SwitchCost:
    """One switch target's measured costs."""

    name: str
    process_mib: float       # a process's base
    switch_mib: float        # each switch it runs
    switches_a_process: int  # how many one process runs (1: a process each)
    us_a_frame: float        # CPU a 1500-byte frame


TARGETS = (SwitchCost("p4sim-native (16 switches a process)", 57.0, 2.7, 16, 1.9),
           SwitchCost("bmv2 (a process a switch, after traffic)", 0.0, 206.0, 1, 109.0))


def fat_tree(k: int) -> tuple[int, int, int]:
    """(switches, hosts, aggregation-to-core links) of a k-ary fat-tree."""
    return 5 * k * k // 4, k ** 3 // 4, k ** 3 // 4


def mean_hops(k: int) -> float:
    """Switches a frame crosses on average under uniform all-to-all traffic: 1 to a host of the same
    edge switch, 3 within a pod, 5 between pods."""
    hosts = k ** 3 / 4
    same_edge, same_pod = k / 2 - 1, k * k / 4 - k / 2
    other = hosts - 1 - same_edge - same_pod
    return (same_edge * 1 + same_pod * 3 + other * 5) / (hosts - 1)


def row(k: int, t: SwitchCost, rate_mbit: float, server_gib: float, server_cores: int) -> str:
    switches, hosts, core_links = fat_tree(k)
    processes = math.ceil(switches / t.switches_a_process)
    mem_gib = (processes * t.process_mib + switches * t.switch_mib + hosts * HOST_MIB) / 1024
    frames = hosts * rate_mbit * 1e6 / (FRAME_BYTES * 8)  # frames a second the hosts send
    cores = frames * mean_hops(k) * t.us_a_frame / 1e6
    servers = max(1, math.ceil(mem_gib / (0.8 * server_gib)), math.ceil(cores / (0.5 * server_cores)))
    # placed by pod over `servers`: a pod's links stay on its server, a core switch's k links go to
    # every pod, so about (servers - 1) / servers of the aggregation-to-core links cross
    crossing = round(core_links * (servers - 1) / servers)
    inter_pod = (hosts - k * k / 4) / (hosts - 1)  # share of a host's traffic that leaves its pod
    # a frame between pods crosses up to a core and down again: each leg on another server with
    # (servers - 1) / servers; what one server's network sends (and receives)
    per_server_mbit = (hosts * rate_mbit * inter_pod * 2 * (servers - 1) / servers / servers
                       * (FRAME_BYTES + VXLAN_OVERHEAD) / FRAME_BYTES)
    return (f"| {k} | {switches} / {hosts} | {mem_gib:.1f} | {cores:.1f} | {servers} | {crossing} | "
            f"{per_server_mbit:.0f} |")


def main(argv: list[str] | None = None) -> int:
    """Print the tables."""
    p = argparse.ArgumentParser(prog="python -m scripts.tools.cluster_sizing", description=__doc__.split("\n\n")[0])
    p.add_argument("--rate-mbit", type=float, default=1.0, help="each host's traffic, uniform all-to-all (default 1)")
    p.add_argument("--server-gib", type=float, default=24.0, help="a server's memory (default 24)")
    p.add_argument("--server-cores", type=int, default=2, help="a server's cores (default 2)")
    args = p.parse_args(argv)
    if not (args.rate_mbit > 0 and args.server_gib > 0 and args.server_cores > 0):
        p.error("expected a rate, memory and cores above 0")
    for t in TARGETS:
        print(f"\n{t.name}, {args.rate_mbit:g} Mbit/s a host, servers of {args.server_gib:g} GiB and "
              f"{args.server_cores} cores (80% of memory, 50% of cores used):\n")
        print("| k | switches / hosts | memory GiB | switch cores | servers | links between servers | "
              "each server's network, Mbit/s |")
        print("|---|---|---|---|---|---|---|")
        for k in (16, 24, 48):
            print(row(k, t, args.rate_mbit, args.server_gib, args.server_cores))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
