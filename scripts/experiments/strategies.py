"""One run of seed 003's strategy comparison (kind `strategies`) on a running hybrid leaf-spine Emulation.

A run: back to the strategy's first circuit map and tables; every bulk transfer starts at once
(scripts.experiments.bulk); the controller then changes the circuits as the strategy says, each change one run
of the variant's procedure (bbm: the plain change; mbb: hitless), until the last transfer ends:
- none: never;
- on-demand: once, right after the start, to every ToR pair's circuit (elephants only), then never;
- ut / dt: at every SSE boundary, to the next ToR pair of the round robin (dt: elephants only).
The round robin is timed by the controller (one procedure per slot), not by the OCS's data-plane
schedule: a slot of seconds is what seed 003 ran, and it is the procedure that differs between the
variants (the schedule's ToR policy has no make-before-break of its own).
"""

from __future__ import annotations

import ipaddress
import json
import logging
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from control.events import EventLog
from control.plan import Plan, Transform, no_shadow, without_shadow
from control.procedures import Reconfigurer, circuits_from_ocs
from control.strategies import elephants_only, slot_at, slot_maps
from emulation.links import HostCommand, root_qdisc_drops, run_in
from fabric.contract import DARK_DROPS, PORT_COUNTERS
from fabric.elephants import differentiated
from scripts.experiments.bulk import Transfer, class_summary, elephant_hosts, transfers
from scripts.experiments.reconf import close_run, queue_drops, write_run
from scripts.experiments.spec import Spec, Variant
from scripts.hosts.hostproc import HostProcs, nstat, wait_listening
from scripts.hosts.machine import busy_pct, cpu_jiffies, loadavg
from topo.circuits import ocs_circuits

log = logging.getLogger(__name__)

FRAME_BITS = 1538 * 8  # a full frame on the wire: 1500 B MTU + 14 header + 4 FCS + 20 preamble and gap
DRAIN_MS = 20.0  # control.procedures.Reconfigurer's default: what a 4-frame queue at 4 Mbit/s needs, and more


def drain_ms(topo: Any) -> float:
    """How long an optical port's egress queue takes to empty when full (its switch_queue_pkts frames
    at the OCS's rate), at least DRAIN_MS: mbb waits that long after the last flow has left a circuit
    before it darkens it, so what the queue still holds is not sent into the dark."""
    queue = topo.params.get("switch_queue_pkts")
    if not queue or not topo.ocs:
        return DRAIN_MS
    rate = min(o.rate_mbit for o in topo.ocs)
    return max(DRAIN_MS, 1.25 * queue * FRAME_BITS / (rate * 1000.0))  # 25% for the switch's own delay


def hosts_by_tor(topo: Any) -> dict[str, list[str]]:
    """Switch -> the hosts attached to it, by address."""
    hmap = topo.host_map()
    out: dict[str, list[str]] = {}
    for lk in topo.links:
        for h, sw in ((lk.a, lk.b), (lk.b, lk.a)):
            if h in hmap:
                out.setdefault(sw, []).append(h)
    return {sw: sorted(hs, key=lambda n: ipaddress.IPv4Address(hmap[n].address)) for sw, hs in out.items()}


class Strategies:
    """Runs of one strategy (variant) on one emulation."""

    def __init__(self, emu: Any, spec: Spec, variant: Variant) -> None:
        self.emu, self.spec, self.variant = emu, spec, variant
        topo = emu.topo
        ocs = topo.ocs[0]
        self.pairs = ocs_circuits(topo, "pairs", ocs.name)
        attach = {p.port: p.switch for p in ocs.ports}
        tor_pairs = [(attach[a], attach[b]) for a, b in self.pairs]
        self.transfers = transfers(spec.bulk, tor_pairs, hosts_by_tor(topo))
        addr = {h.name: h.address for h in topo.hosts}
        self.addr = addr
        self.elephants = [addr[h] for h in elephant_hosts(self.transfers)]
        self.maps = slot_maps(variant.strategy, self.pairs)
        self.driver = emu.ocs.driver()
        self.rec = Reconfigurer(emu.controller, self.driver, mode=variant.mode, spray=emu.spray,
                                drain_ms=drain_ms(topo))
        dt = variant.strategy in ("dt", "on-demand")
        # elephants_only before no_shadow: no_shadow copies version 0 (the circuit) into the shadow
        self.transforms: tuple[Transform, ...] = ((elephants_only(self.elephants),) if dt else ()) + \
            (() if variant.failover else (no_shadow,))

    def close(self) -> None:
        """Close the OCS session."""
        self.driver.close()

    def states(self, circuits: list[tuple[int, int]]) -> dict:
        """The strategy's tables for these circuits (what a procedure's last step leaves)."""
        out = {}
        for n, st in self.rec.states(circuits).items():
            if st.program == "fabric" and self.variant.strategy in ("dt", "on-demand"):
                st = differentiated(st, self.elephants)
            out[n] = st if self.variant.failover else without_shadow(st)
        return out

    def reset(self) -> list[tuple[int, int]]:
        """Back to the strategy's first map (on demand: none) and its tables; returns that map."""
        first = [] if self.variant.strategy == "on-demand" else self.maps[0]
        have = circuits_from_ocs(self.driver)
        if sorted(have) != sorted(tuple(sorted(c)) for c in first):
            self.emu.set_circuits(first)
        self.emu.controller.sync(self.states(first), step="reset")
        # every run starts from the same TCP state: no ssthresh or RTT cached by an earlier run's
        # connections (tcp_metrics, per destination) in the hosts the emulation keeps between runs
        for name in sorted({h for t in self.transfers for h in (t.src, t.dst)}):
            rc, out = run_in(self.emu.hosts[name], HostCommand(["ip", "tcp_metrics", "flush", "all"]))
            if rc != 0:
                raise RuntimeError(f"host {name}: ip tcp_metrics flush failed ({rc}): {out.strip()}")
        return list(first)

    def port_counts(self) -> dict:
        """Port counters (packets) of every switch, and of the OCS with its dark drops: frames that
        reached an OCS port without a circuit (the moved link's strays, seed 003 §4.1)."""
        devices = {**{s: PORT_COUNTERS for s in self.emu.controller.sessions},
                   **{o.name: (*PORT_COUNTERS, DARK_DROPS) for o in self.emu.topo.ocs}}
        return {s: {c: {p: v[0] for p, v in cells.items()} for c, cells in self.emu.port_counters(s, cs).items()}
                for s, cs in devices.items()}

    def qdisc_drops(self) -> dict[str, int]:
        """Per optical link end ("tor:<switch>:<port>", "ocs:<port>"): the frames its egress queue
        (the link's tc qdisc, switch_queue_pkts deep) dropped: congestion, not darkness."""
        out = {}
        for o in self.emu.topo.ocs:
            for p in o.ports:
                for key, intf in ((f"tor:{p.switch}:{p.switch_port}", self.emu.intf(p.switch, p.switch_port)),
                                  (f"ocs:{p.port}", self.emu.intf(o.name, p.port))):
                    out[key] = root_qdisc_drops(intf)
        return out

    def run(self, run_dir: Path) -> dict[str, Any]:
        """One run into run_dir; returns the metrics (also metrics.json)."""
        run_dir.mkdir(parents=True, exist_ok=True)
        current = self.reset()
        time.sleep(0.5)
        hosts = self.emu.hosts
        procs = HostProcs(self.emu.record_process)
        events = EventLog(run_dir / "events.jsonl")
        senders = sorted({t.src for t in self.transfers})
        meta: dict[str, Any] = {"variant": asdict(self.variant), "bulk": asdict(self.spec.bulk),
                                "scale": self.spec.scale, "loadavg_start": loadavg(),
                                "transfers": [asdict(t) for t in self.transfers], "changes": [],
                                "optical_ports": [[p.switch, p.switch_port] for o in self.emu.topo.ocs for p in o.ports]}
        fetchers: list[tuple[str, Any, Path]] = []
        try:
            counts0 = self.port_counts()
            qdisc0 = self.qdisc_drops()
            before = {h: nstat(hosts[h]) for h in senders}
            by_src: dict[str, list[Transfer]] = {}
            for t in self.transfers:
                by_src.setdefault(t.src, []).append(t)
            for src, ts in sorted(by_src.items()):
                procs.start(hosts[src], [sys.executable, "-m", "scripts.experiments.bulk", "serve", "--ports",
                                         ",".join(str(t.port) for t in ts), "--sizes",
                                         ",".join(str(t.size) for t in ts), "--cc", self.spec.bulk.cc],
                            f"bulk serve {src}", run_dir / f"serve-{src}.log")
            for src, ts in sorted(by_src.items()):
                for t in ts:
                    wait_listening(hosts[src], t.port)
            by_dst: dict[tuple[str, str], list[Transfer]] = {}
            for t in self.transfers:
                by_dst.setdefault((t.dst, t.src), []).append(t)
            nxt = self._prepare_first(current, events)
            t0, cpu0 = time.time(), cpu_jiffies()
            events.log("traffic-start")
            for (dst, src), ts in sorted(by_dst.items()):
                f = run_dir / f"fetch-{dst}-{src}.jsonl"
                fetchers.append((dst, procs.start(hosts[dst], [sys.executable, "-m", "scripts.experiments.bulk", "fetch",
                                                              "--dst", self.addr[src], "--ports",
                                                              ",".join(str(t.port) for t in ts)],
                                                  f"bulk fetch {dst}", f), f))
            current = self._drive(t0, current, nxt, fetchers, events, meta)
            meta["t_end"], meta["cpu_busy_pct"] = time.time(), busy_pct(cpu0, cpu_jiffies())
            close_run(meta, hosts, before, counts0, self.port_counts())
            qdisc1 = self.qdisc_drops()
            meta["optical_qdisc_drops"] = {k: qdisc1[k] - qdisc0[k] for k in qdisc1}
        finally:
            procs.stop_all()
            events.close()
        write_run(run_dir, meta, t0)
        return analyze(run_dir)

    def _next_map(self, slot: int) -> list | None:
        """The map of the slot after `slot` (None: a strategy that never changes it)."""
        return self.maps[(slot + 1) % len(self.maps)] if len(self.maps) > 1 else None

    def _prepare(self, want: list | None, current: list, events: EventLog) -> Plan | None:
        """The next change planned and encoded ahead of its time (control/procedures.py), if known."""
        if want is None:
            return None
        return self.rec.prepare(self.variant.procedure, want, old=current, hold_s=self.variant.hold_s,
                                transforms=self.transforms, events=events)

    def _prepare_first(self, current: list, events: EventLog) -> Plan | None:
        """The strategy's first change, prepared before the traffic starts (on a loaded machine an mbb
        plan's setup and encoding took longer than a whole run's transfers: e6's test saw no change)."""
        first = {"on-demand": self.maps[0] if self.maps else None, "ut": self._next_map(0), "dt": self._next_map(0)}
        return self._prepare(first.get(self.variant.strategy), current, events)

    def _drive(self, t0: float, current: list, nxt: Plan | None, fetchers: list, events: EventLog,
               meta: dict) -> list:
        """Change the circuits as the strategy says until every fetcher has exited; returns the map."""
        strategy, bulk = self.variant.strategy, self.spec.bulk
        deadline = t0 + 20 * bulk.sse_s + 600
        slot = 0
        while any(p.poll() is None for _d, p, _f in fetchers):
            now = time.time()
            if now > deadline:
                raise RuntimeError(f"transfers still running {now - t0:.0f} s after the start")
            want = None
            if strategy == "on-demand" and not current:
                want = self.maps[0]
            elif strategy in ("ut", "dt") and len(self.maps) > 1:
                s = slot_at(now - t0, bulk.sse_s, len(self.maps))
                if s != slot:
                    slot, want = s, self.maps[s]
            if want is not None:
                t_change = time.time()
                if nxt is not None and list(nxt.new) == [tuple(c) for c in want] and \
                        list(nxt.old) == [tuple(c) for c in current]:
                    res = self.rec.run_prepared(nxt, events)
                else:
                    res = self.rec.run(self.variant.procedure, want, old=current, hold_s=self.variant.hold_s,
                                       transforms=self.transforms, events=events)
                meta["changes"].append({"t_s": t_change - t0, "to": want, "total_ms": res.total_ms,
                                        "control_ms": res.control_ms, "probes": res.probes})
                current = list(want)
                nxt = self._prepare(self._next_map(slot), current, events) if strategy in ("ut", "dt") else None
                continue
            time.sleep(0.05)
        for dst, p, _f in fetchers:
            if p.returncode != 0:
                raise RuntimeError(f"bulk fetch at {dst}: exit {p.returncode}")
        return current


def optical_lost(counts: dict, optical_ports: list[list[Any]]) -> int:
    """Frames lost at the optical links over a run: sent by a ToR's optical port and not received by
    the OCS, received by the OCS on a port without a circuit (dark_drops), and sent by the OCS and not
    received by the ToR. That is the links' own queue drops (congestion: `optical_queue_drops`) plus
    what went into a dark link (no carrier), mbb's probes sent before light included."""
    if not counts or not optical_ports:
        return 0
    def tor(counter: str) -> int:
        return sum(counts[s][counter].get(str(p), counts[s][counter].get(p, 0)) for s, p in optical_ports)
    ocs = [c for name, c in counts.items() if DARK_DROPS in c]
    ocs_rx = sum(sum(c["port_rx"].values()) for c in ocs)
    ocs_tx = sum(sum(c["port_tx"].values()) for c in ocs)
    dark = sum(sum(c[DARK_DROPS].values()) for c in ocs)
    return max(0, tor("port_tx") - ocs_rx) + dark + max(0, ocs_tx - tor("port_rx"))


def analyze(run_dir: Path) -> dict[str, Any]:
    """metrics.json of one run from its raw files: every transfer's completion time and rate."""
    meta = json.loads((run_dir / "run.json").read_text())
    by_port = {(t["dst"], t["port"]): t for t in meta["transfers"]}
    flows = []
    for f in sorted(run_dir.glob("fetch-*.jsonl")):
        dst = f.name.removeprefix("fetch-").split("-")[0]
        for line in f.read_text().splitlines():
            if not line.startswith("{"):
                continue
            r = json.loads(line)
            t = by_port[(dst, r["port"])]
            if r["bytes"] != t["size"]:
                raise ValueError(f"{f.name} port {r['port']}: {r['bytes']} bytes; expected {t['size']}")
            flows.append({**t, "fct_s": r["fct_s"], "bytes": r["bytes"], "t_start": r["t_start"] - meta["t_start"]})
    if len(flows) != len(meta["transfers"]):
        raise ValueError(f"{run_dir}: {len(flows)} transfers finished; expected {len(meta['transfers'])}")
    ns = meta.get("nstat") or {}
    drops = queue_drops(meta["port_counts"]) if meta.get("port_counts") else {}
    out = {"variant": meta["variant"]["name"], "strategy": meta["variant"]["strategy"],
           "procedure": meta["variant"]["procedure"], "scale": meta.get("scale"), "bulk": meta["bulk"],
           "classes": class_summary(flows), "flows": flows, "changes": meta["changes"],
           "retrans_segs": sum(v.get("retrans_segs", 0) for v in ns.values()),
           "timeouts": sum(v.get("timeouts", 0) for v in ns.values()),
           "queue_drops": sum(drops.values()) if drops else None,
           "ocs_dark_drops": sum(sum(c.get(DARK_DROPS, {}).values()) for c in (meta.get("port_counts") or {}).values()),
           "optical_lost": optical_lost(meta.get("port_counts") or {}, meta.get("optical_ports") or []),
           "optical_queue_drops": sum((meta.get("optical_qdisc_drops") or {}).values())
           if "optical_qdisc_drops" in meta else None,
           "probes": sum(c.get("probes", 0) for c in meta["changes"]),
           "makespan_s": meta["t_end"] - meta["t_start"],
           "loadavg_start": meta.get("loadavg_start"), "loadavg_end": meta.get("loadavg_end"),
           "cpu_busy_pct": meta.get("cpu_busy_pct")}
    (run_dir / "metrics.json").write_text(json.dumps(out, default=str))
    return out
