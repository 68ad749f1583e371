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

from scripts.hostproc import HostProcs, host_intf, wait_listening
from scripts.spec import Spec, Variant

log = logging.getLogger(__name__)

BASE_PORT = 6000
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


def utilisation(byte_counts: list[int]) -> dict[str, float]:
    """Balance of bytes over parallel paths: mean/max, Jain's index, and the fraction of paths used."""
    if not byte_counts or max(byte_counts) <= 0:
        return {"mean_over_max": 0.0, "jain": 0.0, "paths_used": 0.0}
    top = max(byte_counts)
    n = len(byte_counts)
    return {"mean_over_max": sum(byte_counts) / n / top,
            "jain": sum(byte_counts) ** 2 / (n * sum(b * b for b in byte_counts)),
            "paths_used": sum(1 for b in byte_counts if b > 0.01 * top) / n}


def _read(path: str) -> int:
    return int(Path(path).read_text())


class LoadBalancing:
    """Runs of one forwarding mode on one fat-tree emulation."""

    def __init__(self, emu: Any, spec: Spec, variant: Variant) -> None:
        self.emu, self.spec, self.variant = emu, spec, variant
        self.pairs = pairs_for(emu.topo, spec.workload.pairs)
        self.core = [s.name for s in emu.topo.switches if s.role == "core"]
        self.fabric_intfs = [i.name for n in self.core for i in emu.switches[n].intfList() if i.name != "lo"]

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
                               "link_rate_mbit": rate, "pairs": self.pairs, "classes": {}}
        for cls, size in self.spec.workload.classes.items():
            procs = HostProcs()
            try:
                flows = []
                groups = [self.pairs] if self.spec.workload.concurrent else [[p] for p in self.pairs]
                core0, links0, t0 = self._core_tx(), self._link_tx(), time.monotonic()
                for group in groups:
                    h0 = {c: self._host_bytes(c) for c, _ in group}
                    g0 = self._core_tx()
                    clients = []
                    for i, (_c, s) in enumerate(group):
                        port = BASE_PORT + i
                        procs.start(self.emu.hosts[s], [sys.executable, "-m", "scripts.flows", "serve", "--port",
                                                        str(port), "--size", str(size), "--cc",
                                                        self.spec.workload.cc], f"serve {s}")
                    for i, (_c, s) in enumerate(group):
                        wait_listening(self.emu.hosts[s], BASE_PORT + i)
                    for i, (c, s) in enumerate(group):
                        f = run_dir / f"{cls}-{c}-{s}.json"
                        clients.append((c, s, f, procs.start(self.emu.hosts[c], [
                            sys.executable, "-m", "scripts.flows", "fetch", "--dst", addr[s], "--port",
                            str(BASE_PORT + i)], f"fetch {c}", f)))
                    for c, s, f, p in clients:
                        p.wait(timeout=600)
                        res = json.loads(f.read_text().strip().splitlines()[-1])
                        rx1, tx1 = self._host_bytes(c)  # every byte on the client's link: this flow only
                        rx, tx = rx1 - h0[c][0], tx1 - h0[c][1]
                        res.update(client=c, server=s, payload=size,
                                   goodput_mbps=size * 8 / res["fct_s"] / 1e6,
                                   throughput_mbps=(rx + tx) * 8 / res["fct_s"] / 1e6,
                                   max_direction_mbps=max(rx, tx) * 8 / res["fct_s"] / 1e6)
                        flows.append(res)
                    if len(group) == 1:  # alone in the network: the core counters saw this flow only
                        g1 = self._core_tx()
                        flows[-1]["mnu"] = utilisation([g1[n] - g0[n] for n in self.core])["mean_over_max"]
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
