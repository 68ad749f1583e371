"""One run of the load-balancing experiment (seed 004) on a running fat-tree Emulation.

Each flow class (query, short, long) runs over a fixed set of client -> server pairs in different
pods (all at once, or one at a time). Per flow: FCT (client timer, connect to the server's FIN),
goodput = payload / FCT, throughput = every L2 byte on the client's link, both directions / FCT (seed
004 R22-R24); the rate check applies to each direction of the (full-duplex) link.
Per class: mean network utilisation over the core switches (bytes each forwarded, as mean/max and
Jain's index, R26) and the hard check that no flow and no link exceeded the link rate (R24). Run one at
a time, each flow also gets its own `mnu`: mean/max of the bytes it put through each core switch, the
paper's per-flow "mean network utilisation" (0.25 for one path of four, 1 when spread evenly).
"""

from __future__ import annotations

import json
import logging
import random
import sys
import time
from pathlib import Path
from typing import Any

from emulation.links import HostCommand, run_in
from scripts.experiments.spec import Spec, Variant
from scripts.hosts.hostproc import HostProcs, host_intf, wait_listening
from scripts.hosts.kernel import NSTAT_COMMAND, parse_nstat

log = logging.getLogger(__name__)

BASE_PORT = 6000
MPTCP_PORT = 7000  # the servers announce their address with ports MPTCP_PORT+1.. (one extra subflow each)
RATE_TOLERANCE = 1.02  # R24: measured throughput may exceed the link rate by counter granularity only


def pairs_for(topo: Any, n: int, seed: int = 4) -> list[tuple[str, str]]:
    """n client -> server pairs, each host used once, server in another pod (fixed by seed)."""
    hosts = [h.name for h in topo.hosts]
    pod = {h: h.split("_")[0] for h in hosts}
    rng = random.Random(seed)
    clients = hosts[: len(hosts) // 2]
    servers = hosts[len(hosts) // 2:]
    for _ in range(1000):
        rng.shuffle(servers)
        if all(pod[c] != pod[s] for c, s in zip(clients, servers, strict=False)):
            break
    out = list(zip(clients, servers, strict=False))
    if not 1 <= n <= len(out):
        raise ValueError(f"pairs {n}: expected 1..{len(out)} for {len(hosts)} hosts")
    return out[:n]


def noisy_pairs(topo: Any, clients: int, fan_in: int, seed: int = 4) -> list[tuple[str, str]]:
    """(client, server) pairs of seed 004's noisy network: `clients` hosts each fetch from `fan_in`
    other hosts at once (fixed by seed; the paper redrew them every run, its text says fixed)."""
    hosts = [h.name for h in topo.hosts]
    if clients * (fan_in + 1) > len(hosts):
        raise ValueError(f"noisy {clients} clients x {fan_in} servers: expected at most {len(hosts)} hosts in all")
    rng = random.Random(seed)
    picked = rng.sample(hosts, clients * (fan_in + 1))
    cs, servers = picked[:clients], picked[clients:]
    return [(c, servers[i * fan_in + j]) for i, c in enumerate(cs) for j in range(fan_in)]


def utilisation(byte_counts: list[int]) -> dict[str, float]:
    """Balance of bytes over parallel paths: mean/max, Jain's index, and the fraction of paths used."""
    if not byte_counts or max(byte_counts) <= 0:
        return {"mean_over_max": 0.0, "jain": 0.0, "paths_used": 0.0}
    top = max(byte_counts)
    n = len(byte_counts)
    return {"mean_over_max": sum(byte_counts) / n / top,
            "jain": sum(byte_counts) ** 2 / (n * sum(b * b for b in byte_counts)),
            "paths_used": sum(1 for b in byte_counts if b > 0.01 * top) / n}


def mptcp_commands(address: str, subflows: int) -> list[list[str]]:
    """`ip mptcp` commands that give every MPTCP connection to a host `subflows` subflows in all.

    Upstream Linux has no ndiffports (seed 004's path manager, 4 subflows between the same two
    addresses). The in-kernel path manager gets the same from endpoints: the server announces its
    own address with n-1 more ports (signal endpoints), and the client opens one subflow to each,
    each with its own 5-tuple, so ECMP can hash them apart."""
    if subflows < 1:
        raise ValueError(f"subflows {subflows}: expected >= 1")
    extra = subflows - 1
    cmds = [["ip", "mptcp", "endpoint", "flush"],
            ["ip", "mptcp", "limits", "set", "subflows", str(extra), "add_addr_accepted", str(extra)]]
    cmds += [["ip", "mptcp", "endpoint", "add", address, "port", str(MPTCP_PORT + i), "signal"]
             for i in range(1, subflows)]
    return cmds


def mptcp_versions() -> dict[str, str]:
    """The kernel and the MPTCP implementation the run used (seed 004 R16: record them)."""
    import platform
    import subprocess

    def out(argv: list[str]) -> str:
        try:
            return subprocess.run(argv, capture_output=True, text=True, timeout=10).stdout.strip()
        except OSError as exc:
            return f"unavailable: {exc}"

    return {"kernel": platform.release(), "kernel_version": platform.version(),
            "mptcp": "upstream Linux MPTCP (RFC 8684, MPTCPv1), in-kernel path manager",
            "net.mptcp.enabled": out(["sysctl", "-n", "net.mptcp.enabled"]),
            "net.mptcp.pm_type": out(["sysctl", "-n", "net.mptcp.pm_type"]),
            "iproute2": out(["ip", "-V"])}


def _read(path: str) -> int:
    return int(Path(path).read_text())


class LoadBalancing:
    """Runs of one forwarding mode on one fat-tree emulation."""

    def __init__(self, emu: Any, spec: Spec, variant: Variant) -> None:
        self.emu, self.spec, self.variant = emu, spec, variant
        w = spec.workload
        self.noisy = w.pattern == "noisy"
        self.pairs = noisy_pairs(emu.topo, w.clients, w.fan_in) if self.noisy else pairs_for(emu.topo, w.pairs)
        self.core = [s.name for s in emu.topo.switches if s.role == "core"]
        self.fabric_intfs = [i.name for n in self.core for i in emu.switches[n].intfList() if i.name != "lo"]
        self.mptcp = variant.mptcp_subflows
        if self.mptcp:
            for h in emu.topo.hosts:
                for argv in mptcp_commands(h.address, self.mptcp):  # argument lists, no shell
                    rc, out = run_in(emu.hosts[h.name], HostCommand(argv))
                    if rc != 0:
                        raise RuntimeError(f"host {h.name}: {' '.join(argv)}: {out.strip()} ({rc})")

    def _joins(self, name: str) -> int:
        """MP_JOIN handshakes a host has completed as the passive side (its extra subflows)."""
        return parse_nstat(self.emu.hosts[name].cmd(" ".join(NSTAT_COMMAND))).get("MPTcpExtMPJoinAckRx", 0)

    def close(self) -> None:
        """Nothing to close."""

    def _core_tx(self) -> dict[str, int]:
        return {n: sum(_read(f"/sys/class/net/{i.name}/statistics/tx_bytes")
                       for i in self.emu.switches[n].intfList() if i.name != "lo") for n in self.core}

    def _link_tx(self) -> dict[str, int]:
        out = {}
        for sw in self.emu.switches.values():
            for i in sw.intfList():
                if i.name != "lo":
                    out[i.name] = _read(f"/sys/class/net/{i.name}/statistics/tx_bytes")
        return out

    def _host_bytes(self, name: str) -> tuple[int, int]:
        """(rx, tx) bytes of a host's link."""
        node = self.emu.hosts[name]
        intf = host_intf(node)
        rx, tx = node.cmd(f"cat /sys/class/net/{intf}/statistics/rx_bytes /sys/class/net/{intf}/statistics/tx_bytes").split()
        return int(rx), int(tx)

    def run(self, run_dir: Path) -> dict[str, Any]:
        """One run (every class) into run_dir; returns the metrics (also metrics.json)."""
        run_dir.mkdir(parents=True, exist_ok=True)
        addr = {h.name: h.address for h in self.emu.topo.hosts}
        rate = self.spec.link_rate_mbit
        out: dict[str, Any] = {"variant": self.variant.name, "mode": self.variant.mode, "scale": self.spec.scale,
                               "link_rate_mbit": rate, "pairs": self.pairs, "classes": {},
                               "mptcp_subflows": self.mptcp, "versions": mptcp_versions() if self.mptcp else None}
        extra = ["--mptcp"] if self.mptcp else []
        for cls, size in self.spec.workload.classes.items():
            procs = HostProcs(self.emu.record_process)
            try:
                flows = []
                concurrent = self.spec.workload.concurrent or self.noisy
                groups = [self.pairs] if concurrent else [[p] for p in self.pairs]
                core0, links0, t0 = self._core_tx(), self._link_tx(), time.monotonic()
                for group in groups:
                    h0 = {c: self._host_bytes(c) for c, _ in group}
                    j0 = {s: self._joins(s) for _, s in group} if self.mptcp else {}
                    g0 = self._core_tx()
                    clients = []
                    for i, (_c, s) in enumerate(group):
                        port = BASE_PORT + i
                        procs.start(self.emu.hosts[s], [sys.executable, "-m", "scripts.hosts.flows", "serve", "--port",
                                                        str(port), "--size", str(size), "--cc",
                                                        self.spec.workload.cc, *extra], f"serve {s}")
                    for i, (_c, s) in enumerate(group):
                        wait_listening(self.emu.hosts[s], BASE_PORT + i)
                    for i, (c, s) in enumerate(group):
                        f = run_dir / f"{cls}-{c}-{s}.json"
                        clients.append((c, s, f, procs.start(self.emu.hosts[c], [
                            sys.executable, "-m", "scripts.hosts.flows", "fetch", "--dst", addr[s], "--port",
                            str(BASE_PORT + i), *extra], f"fetch {c}", f)))
                    for c, s, f, p in clients:
                        p.wait(timeout=900)
                        res = json.loads(f.read_text().strip().splitlines()[-1])
                        res.update(client=c, server=s, payload=size, goodput_mbps=size * 8 / res["fct_s"] / 1e6)
                        if not self.noisy:
                            rx1, tx1 = self._host_bytes(c)  # every byte on the client's link: this flow only
                            rx, tx = rx1 - h0[c][0], tx1 - h0[c][1]
                            res.update(throughput_mbps=(rx + tx) * 8 / res["fct_s"] / 1e6,
                                       max_direction_mbps=max(rx, tx) * 8 / res["fct_s"] / 1e6)
                        if self.mptcp:  # the subflows this connection really had (1 + joins at its server)
                            res["subflows"] = 1 + self._joins(s) - j0[s]
                        flows.append(res)
                    if len(group) == 1:  # alone in the network: the core counters saw this flow only
                        g1 = self._core_tx()
                        flows[-1]["mnu"] = utilisation([g1[n] - g0[n] for n in self.core])["mean_over_max"]
                    if self.noisy:
                        # fan-in flows share their client's link, whose bytes cannot be split between
                        # them: throughput per client (every L2 byte on its link / until its last flow
                        # ended) with its goodput (payload / the same time); each flow keeps its goodput
                        for c in dict.fromkeys(c for c, _ in group):
                            mine = [f for f in flows if f["client"] == c]
                            span = max(f["t_start"] + f["fct_s"] for f in mine) - min(f["t_start"] for f in mine)
                            rx1, tx1 = self._host_bytes(c)
                            rx, tx = rx1 - h0[c][0], tx1 - h0[c][1]
                            for f in mine:
                                f.update(client_span_s=span, client_goodput_mbps=size * len(mine) * 8 / span / 1e6,
                                         client_throughput_mbps=(rx + tx) * 8 / span / 1e6,
                                         max_direction_mbps=max(rx, tx) * 8 / span / 1e6)
                elapsed = time.monotonic() - t0
                core1, links1 = self._core_tx(), self._link_tx()
            finally:
                procs.stop_all()
            link_mbps = {k: (links1[k] - links0[k]) * 8 / elapsed / 1e6 for k in links0}
            # the link is full duplex: each direction on its own must stay under the link rate
            over = [f for f in flows if f["max_direction_mbps"] > rate * RATE_TOLERANCE]
            out["classes"][cls] = {
                "flows": flows,
                "utilisation": utilisation([core1[n] - core0[n] for n in self.core]),
                "core_bytes": {n: core1[n] - core0[n] for n in self.core},
                "max_link_mbps": max(link_mbps.values(), default=0.0),
                "rate_check_ok": not over and max(link_mbps.values(), default=0.0) <= rate * RATE_TOLERANCE,
                "flows_over_rate": len(over),
            }
        (run_dir / "metrics.json").write_text(json.dumps(out, default=str))
        return out
