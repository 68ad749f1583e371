"""p4sim (native and Python data paths) and bmv2 (reference and optimised builds) side by side, in one
run: the same fabric JSON (p4c's when installed), the same traffic, the same harness.

Columns: p4sim-native (p4sim-switch), p4sim-python (p4sim-switch --data-plane python), bmv2 (the
reference simple_switch_grpc on PATH) and bmv2-opt (simple_switch_grpc built for speed, --bmv2-opt;
docs/figures.md says how), each started with the same command shape on two veth pairs and
provisioned over P4Runtime as tablegen would a ToR; and, for forwarding, `kernel`: the same harness
with the switch replaced by a plain kernel forward (tc mirred from one veth to the other), the
veth pairs' own limit. Figures:
- forwarding at 64 B and 1500 B: frames per second that reach the sink interface (its counter),
  offered by a sender process in native code (sendmmsg) as fast as it can;
- CPU per frame: the switch process's CPU time over the frames it forwarded, in microseconds;
- P4Runtime writes per second: INSERT then DELETE of N `route` entries in batches of 1,000;
- resident memory of one switch process, provisioned and after the traffic; and per added switch:
  p4sim runs 1 and 1 + ADDED switches in one process as the emulation hosts them (each on its own two
  veth pairs with the emulation's ring size, the program pushed and provisioned), the difference over
  ADDED; bmv2 runs a process a switch;
- fat-tree k in Mininet (`--k 4,8,16`): time to ready (tables installed) and its stages (links:
  Mininet's hosts and links; switches; tables), resident memory, a sample of cross-pod pings, and
  what the run left behind (processes, interfaces). A fat-tree that would
  need more memory than the machine has (from the previous k's) is skipped, saying so.
Ratios are p4sim-native's over each other column. Needs root. The machine is shared: compare the
columns of one run, not figures of different runs.

    sudo .venv/bin/python -m scripts.bench.targets [--seconds 3] [--entries 4000] [--k 4,8,16] [--added 10]
        [--bmv2-opt /work/bmv2-opt/install/bin/simple_switch_grpc] [--only p4sim-native,bmv2-opt]
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import logging
import os
import random
import shlex
import subprocess
import sys
import time
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path

from emulation.state import cpu_seconds, interface_exists
from emulation.switchhost import DEVICE_OPTIONS
from emulation.switchproc import stop, switch_process, wait_ready
from fabric.contract import PATH, PATH_STATIC, PORT_MAC, ROUTE, SET_PATH, SET_SMAC
from p4rt.client import P4RuntimeClient
from p4rt.entities import TableEntry
from p4sim.switch.testdata.veth import is_root, veth_pairs
from p4sim.target import REAL_SWITCH, Target, choose_compiler, choose_switch, free_port, hosts_devices
from scripts.bench.switch import SIZES, frame
from tablegen.entries import liveness, port_watch
from topo import generators

ROOT = Path(__file__).resolve().parents[2]

log = logging.getLogger("bench_targets")
BATCH = 1000
BMV2_OPT = "/work/bmv2-opt/install/bin/simple_switch_grpc"
STAGES = ("links", "switches", "tables")  # emulation stages of a fat-tree's time to ready
NATIVE = "p4sim-native"


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
    client.insert(members + watch_members)
    client.insert(groups + watch_groups)
    client.insert(entries)
    client.insert([TableEntry(PORT_MAC, {"egress_port": p}, SET_SMAC, {"smac": f"0a:00:00:00:00:{p:02x}"})
                   for p in ports])
    client.insert([TableEntry(PATH, {"path_id": 5, "version": 0}, PATH_STATIC,
                              {"port": 2, "dmac": "02:00:00:00:00:02"}),
                   TableEntry(ROUTE, {"ipv4_dst": "10.0.2.0/24"}, SET_PATH, {"path_id": 5})])


def push(addr: str, device_id: int, build: Path) -> P4RuntimeClient:
    """A connected client of the switch at addr with the fabric program pushed and provisioned."""
    client = P4RuntimeClient(addr, device_id=device_id)
    client.connect()
    client.set_pipeline_files(build / "fabric.p4info.txtpb", build / "fabric.json")
    provision(client, [1, 2])
    return client


def writes_per_second(client: P4RuntimeClient, n: int) -> tuple[float, float]:
    """(inserts/s, deletes/s) of n /32 `route` entries in batches of BATCH."""
    base = int(ipaddress.IPv4Address("20.0.0.0"))
    entries = [TableEntry(ROUTE, {"ipv4_dst": f"{ipaddress.IPv4Address(base + i)}/32"}, SET_PATH,
                          {"path_id": 5}) for i in range(n)]
    t0 = time.perf_counter()
    client.insert(entries, batch_size=BATCH)
    t1 = time.perf_counter()
    client.delete(entries, batch_size=BATCH)
    t2 = time.perf_counter()
    return n / (t1 - t0), n / (t2 - t1)


def _rx_packets(ifname: str) -> int:
    with open(f"/sys/class/net/{ifname}/statistics/rx_packets") as f:
        return int(f.read())


SENDER = """import sys
from p4sim.switch.native.lib import rt
data = open(sys.argv[2], "rb").read()
size = int(sys.argv[3])
rt().p4s_blast(sys.argv[1].encode(), data, len(data) // size, size, float(sys.argv[4]))
"""


def offer(src: str, sink: str, size: int, seconds: float, pid: int | None) -> tuple[float, float]:
    """Offer frames of `size` bytes at src as fast as the sender (the runtime's sendmmsg loop, a process
    of its own) can for `seconds`: (frames/s at the sink, microseconds of the process pid's CPU per
    frame forwarded; 0 without a pid)."""
    frames = Path(f"/tmp/bench-targets-{os.getpid()}.frames")
    frames.write_bytes(b"".join(frame(size, i) for i in range(64)))
    sender = subprocess.Popen([sys.executable, "-c", SENDER, src, str(frames), str(size), str(seconds + 1.0)],
                              cwd=ROOT)
    try:
        time.sleep(0.5)  # the steady state: the switch's input full at both ends
        got0, cpu0, t0 = _rx_packets(sink), cpu_seconds(pid) if pid else 0.0, time.perf_counter()
        time.sleep(seconds)
        got, dt = _rx_packets(sink) - got0, time.perf_counter() - t0
        cpu = (cpu_seconds(pid) or 0.0) - (cpu0 or 0.0) if pid else 0.0
    finally:
        sender.wait()
        frames.unlink(missing_ok=True)
    time.sleep(0.5)  # let the switch drain before the next run
    return got / dt, (cpu / got * 1e6 if got else 0.0)


def forwarding(out: dict[str, float], src: str, sink: str, seconds: float, pid: int | None) -> None:
    """The forwarding rows of one column."""
    for size in SIZES:
        fps, us = offer(src, sink, size, seconds, pid)
        out[f"forwarding {size} B frames/s"] = fps
        if pid:
            out[f"CPU per frame {size} B us"] = us


def bench_switch(target: Target, build: Path, seconds: float, n_writes: int) -> dict[str, float]:
    """The per-switch figures of one column."""
    out: dict[str, float] = {}
    with veth_pairs(2, "bt") as pairs:
        ports = {1: pairs[0][0], 2: pairs[1][0]}
        t0 = time.perf_counter()
        with switch_process(target, build / "fabric.json", ports, timeout=60) as sw:
            client = push(sw.grpc_addr, sw.device_id, build)
            out["start + pipeline s"] = time.perf_counter() - t0
            out["RSS provisioned MiB"] = rss_mib(sw.pid)
            out["P4Runtime inserts/s"], out["P4Runtime deletes/s"] = writes_per_second(client, n_writes)
            forwarding(out, pairs[0][1], pairs[1][1], seconds, sw.pid)
            out["RSS after traffic MiB"] = rss_mib(sw.pid)
            client.close()
    return out


def kernel_forward(seconds: float) -> dict[str, float]:
    """The harness with a plain kernel forward between the two switch-side veths (tc mirred)."""
    out: dict[str, float] = {}
    with veth_pairs(2, "bk") as pairs:
        a, b = pairs[0][0], pairs[1][0]
        subprocess.run(["tc", "qdisc", "add", "dev", a, "ingress"], check=True, capture_output=True)
        subprocess.run(["tc", "filter", "add", "dev", a, "parent", "ffff:", "u32", "match", "u32", "0", "0",
                        "action", "mirred", "egress", "redirect", "dev", b], check=True, capture_output=True)
        forwarding(out, pairs[0][1], pairs[1][1], seconds, None)
    return out


@contextmanager
def host_process(switch: str, specs: list[list[str]]):  # noqa: ANN201 - a context of a Popen
    """A switch process running every device of `specs` (p4sim-switch --devices), stopped by its PID."""
    path = Path(f"/tmp/bench-targets-{os.getpid()}.devices.json")
    path.write_text(json.dumps(specs))
    proc = subprocess.Popen([*shlex.split(switch), "--devices", str(path)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    try:
        yield proc
    finally:
        stop(proc, timeout=30)
        path.unlink(missing_ok=True)


def memory_per_switch(target: Target, build: Path, added: int) -> dict[str, float]:
    """p4sim: resident memory per switch added to a process (1 then 1 + added switches, each on two veth
    pairs, pushed and provisioned); bmv2: a process a switch, so one provisioned process."""
    if not hosts_devices(target.switch):
        with veth_pairs(2, "bm") as pairs, switch_process(target, build / "fabric.json",
                                                          {1: pairs[0][0], 2: pairs[1][0]}, timeout=60) as sw:
            push(sw.grpc_addr, sw.device_id, build).close()
            return {"memory per added switch MiB": rss_mib(sw.pid)}
    rss = []
    for n in (1, 1 + added):
        with veth_pairs(2 * n, "bm") as pairs:
            addrs = [f"127.0.0.1:{free_port()}" for _ in range(n)]
            specs = [[*DEVICE_OPTIONS, "-i", f"1@{pairs[2 * i][0]}", "-i", f"2@{pairs[2 * i + 1][0]}", "--device-id",
                      str(i + 1), "--no-p4", "--", "--grpc-server-addr", addrs[i], "--cpu-port", "255"]
                     for i in range(n)]
            with host_process(target.switch, specs) as proc:
                for i, addr in enumerate(addrs):
                    wait_ready(proc, int(addr.rpartition(":")[2]), 60)
                    push(addr, i + 1, build).close()
                time.sleep(1.0)
                rss.append(rss_mib(proc.pid))
    return {"memory per added switch MiB": (rss[1] - rss[0]) / added}


def cross_pod_pings(emu, n: int = 8) -> int:  # noqa: ANN001
    """Pings between hosts of different pods that pass, of n (a seeded sample)."""
    hosts = emu.topo.hosts
    rng = random.Random(1)
    ok = 0
    for _ in range(n):
        a = rng.choice(hosts)
        b = rng.choice([h for h in hosts if h.name.split("_")[0] != a.name.split("_")[0]] or hosts)
        rc, _ = emu.run(a.name, f"ping -c1 -W2 {b.address}")
        ok += rc == 0
    return ok


def bench_fattree(target: Target, build: Path, k: int) -> dict[str, float]:
    """Time to ready, RSS, cross-pod pings and leftovers of a fat-tree in Mininet on this target."""
    from emulation.network import Emulation  # Mininet is an optional heavy dependency

    stages: dict[str, float] = {}
    last = [time.perf_counter()]

    def progress(stage: str, _detail: str) -> None:  # each stage's own time (links: Mininet's hosts and links)
        now = time.perf_counter()
        stages[stage] = now - last[0]
        last[0] = now

    emu = Emulation.isolated(generators.fattree(k), "ecmp", build_dir=build, switch_bin=target.switch,
                             on_progress=progress)
    planned = emu.names.interfaces()
    t0 = last[0] = time.perf_counter()
    try:
        emu.start()
        ready = time.perf_counter() - t0
        rss = emu.rss_bytes() / 2**20
        pings = cross_pod_pings(emu)
        pids = list(emu.pids().values())
    finally:
        emu.stop()
    time.sleep(1.0)
    left = sum(1 for pid in pids if os.path.exists(f"/proc/{pid}")) + sum(1 for i in planned if interface_exists(i))
    return {f"fat-tree k={k} ready s": ready, **{f"fat-tree k={k} {st} s": stages[st] for st in STAGES if st in stages},
            f"fat-tree k={k} RSS MiB": rss,
            f"fat-tree k={k} cross-pod pings ok of 8": pings, f"fat-tree k={k} left behind": left}


def mem_available_mib() -> float:
    """MemAvailable in MiB."""
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) / 1024
    return 0.0


def columns(bmv2_opt: str | None) -> dict[str, Target]:
    """The switches to compare, by column name (those installed here)."""
    p4c = choose_compiler()
    sim = choose_switch(str(Path(sys.executable).parent / "p4sim-switch"))
    out = {NATIVE: Target(p4c, sim), "p4sim-python": Target(p4c, f"{sim} --data-plane python")}
    try:
        out["bmv2"] = Target(p4c, choose_switch(REAL_SWITCH))
    except ValueError:
        log.warning("bmv2: %s not installed, its column left out", REAL_SWITCH)
    if bmv2_opt and os.access(bmv2_opt, os.X_OK):
        out["bmv2-opt"] = Target(p4c, bmv2_opt)
    elif bmv2_opt:
        log.warning("bmv2-opt: %s not built (docs/figures.md says how), its column left out", bmv2_opt)
    return out


def table(results: dict[str, dict[str, float]]) -> str:
    """The figures side by side, then p4sim-native's ratio to each other column."""
    names = list(results)
    figures = list(dict.fromkeys(f for r in results.values() for f in r))
    others = [n for n in names if n != NATIVE and n in results]
    lines = [f"{'figure':40}" + "".join(f"{n:>14}" for n in names)
             + "".join(f"{'native/' + n.replace('p4sim-', ''):>16}" for n in others)]
    for fig in figures:
        vals = [results[n].get(fig) for n in names]
        line = f"{fig:40}" + "".join("{:>14}".format("-" if v is None else f"{v:,.1f}" if v < 100 else f"{v:,.0f}")
                                     for v in vals)
        mine = results.get(NATIVE, {}).get(fig)
        for n in others:
            theirs = results[n].get(fig)
            line += f"{mine / theirs:15.2f}x" if mine is not None and theirs else f"{'':16}"
        lines.append(line)
    return "\n".join(lines)


def main() -> int:
    """Entry point."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=3.0, metavar="S", help="offered-load time per frame size")
    ap.add_argument("--entries", type=int, default=4000, metavar="N",
                    help="route entries written (default 4000; the table holds 4096)")
    ap.add_argument("--added", type=int, default=10, metavar="N", help="switches added for the memory figure")
    ap.add_argument("--k", default="4,8", metavar="K[,K]", help="fat-trees to bring up (default 4,8; '' for none)")
    ap.add_argument("--bmv2-opt", default=BMV2_OPT, metavar="PATH",
                    help=f"simple_switch_grpc built for speed (default {BMV2_OPT}; docs/figures.md)")
    ap.add_argument("--only", default="", metavar="COL[,COL]", help="these columns only (kernel for the veth limit)")
    ap.add_argument("--build", default=str(ROOT / "build" / "bench"), metavar="DIR")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    if not is_root():
        print("bench_targets: needs root (veth pairs, Mininet); skipped")
        return 0
    build = Path(args.build)
    cols = columns(args.bmv2_opt)
    only = [c for c in args.only.split(",") if c]
    if only:
        cols = {n: t for n, t in cols.items() if n in only}
    print(Target(choose_compiler(), next(iter(cols.values())).switch).ensure_build(build, ROOT / "p4src")
          if cols else "no switch columns")
    results: dict[str, dict[str, float]] = {}
    try:
        if not only or "kernel" in only:
            results["kernel"] = kernel_forward(args.seconds)
        for name, t in cols.items():
            print(f"-- {name}: {t.switch}", flush=True)
            results[name] = {}
            for what, fn in (("switch", lambda t=t: bench_switch(t, build, args.seconds, args.entries)),
                             ("memory", lambda t=t: memory_per_switch(t, build, args.added))):
                _measure(results[name], what, fn)
            fat_trees(results[name], t, build, [int(x) for x in args.k.split(",") if x])
            print(table({name: results[name]}), flush=True)
    finally:
        print(f"\nprogram: p4src/fabric.p4 compiled by {Path(shlex.split(choose_compiler())[0]).name}")
        print(table(results))
    return 0


def _measure(into: dict[str, float], what: str, fn: Callable[[], dict[str, float]]) -> bool:
    """Add fn's figures; a failure is one line (its figures stay out of the table), not the end of the run."""
    try:
        into.update(fn())
        return True
    except (RuntimeError, OSError, ValueError, subprocess.SubprocessError) as e:
        print(f"   {what}: failed: {str(e).splitlines()[0][:300]}", flush=True)
        return False


def fat_trees(into: dict[str, float], t: Target, build: Path, ks: list[int]) -> None:
    """The fat-trees of one column, each skipped when the last one's memory says it would not fit."""
    last: tuple[int, float] | None = None
    for k in ks:
        # the switches (5 k^2 / 4 of them) hold most of the memory
        if last is not None and last[1] * (k / last[0]) ** 2 > 0.8 * mem_available_mib():
            print(f"   fat-tree k={k} skipped: about {last[1] * (k / last[0]) ** 2 / 1024:.0f} GiB needed "
                  f"(from k={last[0]}), {mem_available_mib() / 1024:.0f} GiB available", flush=True)
            continue
        if _measure(into, f"fat-tree k={k}", lambda k=k: bench_fattree(t, build, k)):
            last = (k, into[f"fat-tree k={k} RSS MiB"])
            print(f"   fat-tree k={k}: ready in {into[f'fat-tree k={k} ready s']:.1f} s", flush=True)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
