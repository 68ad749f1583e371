"""p4sim and bmv2 side by side, in one run: the same fabric JSON (p4c's when installed), the same traffic.

Per switch (p4sim-switch and, when installed, simple_switch_grpc; both started with the same command
shape on two veth pairs and provisioned over P4Runtime exactly as tablegen would a ToR):
- forwarding rate at 64 B and 1500 B: frames per second that reach the sink, offered by a sender
  process as fast as it can (the switch is the bottleneck for both targets);
- P4Runtime writes per second: INSERT then DELETE of N `route` entries in batches of 1,000 through the
  project's client;
- resident memory of the switch process, provisioned and after the traffic;
- time to ready of a fat-tree k=4 and k=8 in Mininet (`--k 4,8`; `--k ""` skips it), and its RSS.
Ratios are bmv2 / p4sim. Needs root (veth pairs, Mininet). The machine is shared: compare the two
columns of one run, not figures of different runs.

    sudo .venv/bin/python scripts/bench_targets.py [--seconds 3] [--entries 5000] [--k 4,8]
"""

from __future__ import annotations

import argparse
import ipaddress
import logging
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from emulation.switchproc import switch_process  # noqa: E402
from emulation.target import Target, choose_compiler, label, pairings  # noqa: E402
from p4rt.client import P4RuntimeClient  # noqa: E402
from p4rt.entities import ActionProfileGroup, ActionProfileMember, TableEntry  # noqa: E402
from p4sim.switch.testdata.veth import is_root, veth_pairs  # noqa: E402
from scripts.bench_switch import SIZES, _offer, frame  # noqa: E402
from tablegen.entries import liveness, port_watch  # noqa: E402

log = logging.getLogger("bench_targets")
BATCH = 1000


def rss_mib(pid: int) -> float:
    """Resident memory of a process in MiB."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def provision(client: P4RuntimeClient, ports: list[int]) -> None:
    """What tablegen writes for these ports (liveness, port-watch groups, port MACs), and a route
    10.0.2.0/24 over static path 5 to port 2."""
    members, groups, entries = liveness(ports)
    watch_members, watch_groups = port_watch(ports)
    client.insert([ActionProfileMember.from_dict(m) for m in members + watch_members])
    client.insert([ActionProfileGroup.from_dict(g) for g in groups + watch_groups])
    client.insert([TableEntry.from_dict(e) for e in entries])
    client.insert([TableEntry("port_mac", {"egress_port": p}, "set_smac", {"smac": f"0a:00:00:00:00:{p:02x}"})
                   for p in ports])
    client.insert([TableEntry("path", {"path_id": 5, "version": 0}, "path_static",
                              {"port": 2, "dmac": "02:00:00:00:00:02"}),
                   TableEntry("route", {"ipv4_dst": "10.0.2.0/24"}, "set_path", {"path_id": 5})])


def writes_per_second(client: P4RuntimeClient, n: int) -> tuple[float, float]:
    """(inserts/s, deletes/s) of n /32 `route` entries in batches of BATCH."""
    base = int(ipaddress.IPv4Address("20.0.0.0"))
    entries = [TableEntry("route", {"ipv4_dst": f"{ipaddress.IPv4Address(base + i)}/32"}, "set_path",
                          {"path_id": 5}) for i in range(n)]
    t0 = time.perf_counter()
    client.insert(entries, batch_size=BATCH)
    t1 = time.perf_counter()
    client.delete(entries, batch_size=BATCH)
    t2 = time.perf_counter()
    return n / (t1 - t0), n / (t2 - t1)


def bench_switch(target: Target, build: Path, seconds: float, n_writes: int) -> dict[str, float]:
    """Every per-switch figure for one target's switch."""
    out: dict[str, float] = {}
    with veth_pairs(2, "bt") as pairs:
        ports = {1: pairs[0][0], 2: pairs[1][0]}
        t0 = time.perf_counter()
        with switch_process(target, build / "fabric.json", ports, timeout=60) as sw:
            client = P4RuntimeClient(sw.grpc_addr, device_id=sw.device_id)
            client.connect()
            client.set_pipeline_files(build / "fabric.p4info.txtpb", build / "fabric.json")
            out["start + pipeline s"] = time.perf_counter() - t0
            provision(client, [1, 2])
            out["RSS provisioned MiB"] = rss_mib(sw.pid)
            ins, dels = writes_per_second(client, n_writes)
            out["P4Runtime inserts/s"], out["P4Runtime deletes/s"] = ins, dels
            for size in SIZES:
                frames = [frame(size, i) for i in range(64)]
                fps, _ = _offer(pairs[0][1], pairs[1][1], frames, seconds, 1)
                out[f"forwarding {size} B frames/s"] = fps
            out["RSS after traffic MiB"] = rss_mib(sw.pid)
            client.close()
    return out


def bench_fattree(target: Target, build: Path, k: int) -> dict[str, float]:
    """Time to ready and RSS of a fat-tree in Mininet on this target's switch."""
    from emulation.network import Emulation
    from topo import generators

    emu = Emulation(generators.fattree(k), "ecmp", build_dir=build, switch_bin=target.switch,
                    prefix=f"b{label(target.switch)[0]}")
    t0 = time.perf_counter()
    try:
        emu.start()
        ready = time.perf_counter() - t0
        rss = emu.rss_bytes() / 2**20
    finally:
        emu.stop()
    return {f"fat-tree k={k} ready s": ready, f"fat-tree k={k} RSS MiB": rss}


def main() -> int:
    """Entry point."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=3.0, metavar="S", help="offered-load time per frame size")
    ap.add_argument("--entries", type=int, default=4000, metavar="N",
                    help="route entries written (default 4000; the table holds 4096)")
    ap.add_argument("--k", default="4,8", metavar="K[,K]", help="fat-trees to bring up (default 4,8; '' for none)")
    ap.add_argument("--build", default=str(ROOT / "build" / "bench"), metavar="DIR")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    if not is_root():
        print("bench_targets: needs root (veth pairs, Mininet); skipped")
        return 0
    # One program for both switches: p4c's JSON where p4c is installed, else p4sim's.
    build = Path(args.build)
    switches = {label(t.switch): t.switch for t in pairings()}
    targets = [Target(choose_compiler(), sw) for sw in switches.values()]
    print(Target(choose_compiler(), targets[0].switch).ensure_build(build, ROOT / "p4src"))
    results: dict[str, dict[str, float]] = {}
    for t in targets:
        name = label(t.switch)
        print(f"-- {name}: {t.switch}", flush=True)
        results[name] = bench_switch(t, build, args.seconds, args.entries)
        for k in filter(None, args.k.split(",")):
            results[name].update(bench_fattree(t, build, int(k)))
    names = list(results)
    print(f"\nprogram: p4src/fabric.p4 compiled by {label(choose_compiler())}")
    print(f"{'figure':32}" + "".join(f"{n:>14}" for n in names) + ("    bmv2/p4sim" if len(names) == 2 else ""))
    for fig in results[names[0]]:
        vals = [results[n].get(fig, float("nan")) for n in names]
        line = f"{fig:32}" + "".join(f"{v:14,.1f}" if v < 100 else f"{v:14,.0f}" for v in vals)
        if len(vals) == 2 and vals[0]:
            line += f"    {vals[1] / vals[0]:10.2f}x"
        print(line)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
