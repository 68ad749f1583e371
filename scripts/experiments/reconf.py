"""One run of a reconfiguration (or route-flip) experiment on a running Emulation.

Timeline: captures at the sender and receiver, ss sampling and nstat snapshots at the sender, the
streams start at 0, the procedure runs at `event_at_s`, the streams end at `duration_s`. The raw
files stay in the run directory (pcaps, iperf3 JSON, ss samples, events); `analyze` turns them into
metrics.json, so a run can be analysed again without running it again.
"""

from __future__ import annotations

import json
import logging
import statistics
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from control.events import EventLog
from control.plan import Transform, no_shadow, without_shadow
from control.procedures import Reconfigurer, circuits_from_ocs
from fabric.contract import PORT_COUNTERS, PORT_DEQ, PORT_ENQ
from fabric.state import affected_paths, with_versions
from p4rt.state import SwitchState
from scripts.analysis.ends import end_metrics, ocs_dark, resent_segments
from scripts.analysis.metrics import (
    data_flow,
    data_packets,
    largest_gap,
    of_connection,
    parse_arrivals,
    receiver_drops,
    reordering,
    rtt_series,
    stream_metrics,
    throughput_series,
    udp_metrics,
)
from scripts.experiments.spec import Spec, Stream, Variant
from scripts.hosts.capture import parse_tcpdump_stats, read_tcp
from scripts.hosts.hostproc import HostProcs, host_intf, nstat, wait_listening
from scripts.hosts.kernel import nstat_delta, parse_ss
from scripts.hosts.machine import busy_pct, cpu_jiffies, loadavg
from topo.circuits import ocs_circuits

log = logging.getLogger(__name__)

BASE_PORT = 5201
WRITE_MS = 8  # a fixed-rate iperf3 writes blocks of this much of its rate (write_bytes)


def write_bytes(rate_mbit: float) -> int:
    """iperf3's block (-l) for a stream at `rate_mbit`: WRITE_MS of its rate, at least 1 KB. iperf3's
    own 128 KB is a burst every 65 ms at 16 Mbit/s and every 262 ms at 4: the silences between
    bursts are what the gap measures would read, and their quiet-time baselines would hide a stall
    of that length."""
    return max(1024, round(rate_mbit * 1e6 / 8 * WRITE_MS / 1000))


def initial_map(spec: Spec, variant: Variant) -> str | None:
    """The circuit map name a variant starts from (None: the topology's default map)."""
    return variant.initial_map or spec.initial_map


def port_count_delta(before: dict, after: dict) -> dict[str, dict[str, dict[int, int]]]:
    """Packets counted per switch, counter and port between two `port_counts` readings."""
    return {s: {c: {p: n - before.get(s, {}).get(c, {}).get(p, 0) for p, n in cells.items()}
                for c, cells in counters.items()} for s, counters in after.items()}


def close_run(meta: dict[str, Any], hosts: Any, nstat_before: dict[str, dict[str, int]], counts_before: dict,
              counts_after: dict) -> None:
    """A run's closing figures into its meta: each host's nstat counters since `nstat_before` (by
    host name), the ports' counts between the two reads, the load average."""
    meta["nstat"] = {h: nstat_delta(nstat_before[h], nstat(hosts[h])) for h in nstat_before}
    meta["port_counts"] = port_count_delta(counts_before, counts_after)
    meta["loadavg_end"] = loadavg()


def write_run(run_dir: Path, meta: dict[str, Any], t_start: float) -> None:
    """run.json: the run's meta, with its start time."""
    meta["t_start"] = t_start
    (run_dir / "run.json").write_text(json.dumps(meta, indent=1, default=str))


class Reconfiguration:
    """Runs of one variant on one emulation: reset to the initial map, traffic, procedure, analysis."""

    def __init__(self, emu: Any, spec: Spec, variant: Variant) -> None:
        self.emu, self.spec, self.variant = emu, spec, variant
        topo_ocs = emu.topo.ocs[0]
        # a map named in the spec (topo/circuits.py); no name: all dark
        self.initial = ocs_circuits(emu.topo, initial_map(spec, variant) or topo_ocs.default_map or "none", topo_ocs.name)
        self.target = ocs_circuits(emu.topo, variant.target_map or spec.target_map or "none", topo_ocs.name)
        self.driver = emu.ocs.driver()
        self.rec = Reconfigurer(emu.controller, self.driver, mode=variant.mode, spray=emu.spray)
        # the thesis's switches (variant failover: false): no electrical shadow paths, bbm only
        self.transforms: tuple[Transform, ...] = () if variant.failover else (no_shadow,)

    def close(self) -> None:
        """Close the OCS session."""
        self.driver.close()

    def reset(self) -> None:
        """Back to the initial circuits (as the OCS reports them) and tables, after a previous run."""
        have = circuits_from_ocs(self.driver)
        if sorted(have) != sorted(tuple(sorted(c)) for c in self.initial):
            log.info("reset: OCS holds %s; back to %s", have, self.initial)
            self.emu.set_circuits(self.initial)
        self.emu.controller.sync(self.states(self.initial), step="reset")

    def states(self, circuits: list[tuple[int, int]]) -> dict[str, SwitchState]:
        """The variant's states for these circuits (without shadow paths on the thesis's switches)."""
        states = self.rec.states(circuits)
        return states if self.variant.failover else {n: without_shadow(st) for n, st in states.items()}

    def port_counts(self) -> dict[str, dict[str, dict[int, int]]]:
        """Every fabric switch's and the OCS's port counters, packets (where a lost packet was dropped)."""
        devices = [*self.emu.controller.sessions, *(o.name for o in self.emu.topo.ocs)]
        return {s: {c: {p: v[0] for p, v in cells.items()} for c, cells in self.emu.port_counters(s, PORT_COUNTERS).items()}
                for s in devices}

    def shadow_states(self) -> dict:
        """The initial states with the paths the target map changes flipped to their shadow (version 1)."""
        old, new = self.states(self.initial), self.states(self.target)
        affected = affected_paths(old, new, self.rec.addresses, self.rec.ingress)
        return {s: with_versions(st, dict.fromkeys(affected.get(s, ()), 1)) for s, st in old.items()}

    def run(self, run_dir: Path) -> dict[str, Any]:
        """One run into run_dir; returns the metrics (also written to metrics.json)."""
        run_dir.mkdir(parents=True, exist_ok=True)
        self.reset()
        time.sleep(0.5)
        procs = HostProcs(self.emu.record_process)
        hosts = self.emu.hosts
        addr = {h.name: h.address for h in self.emu.topo.hosts}
        dyn = next(s for s in self.spec.streams if s.role == "dynamic")
        events = EventLog(run_dir / "events.jsonl")  # the procedure's steps and the controller's writes
        meta: dict[str, Any] = {"variant": asdict(self.variant), "spec": self.spec.name,
                                "streams": [asdict(s) for s in self.spec.streams], "scale": self.spec.scale,
                                "loadavg_start": loadavg()}
        try:
            counts_before = self.port_counts()
            procs.tcpdump(hosts[dyn.src], host_intf(hosts[dyn.src]), run_dir / "sender.pcap")
            procs.tcpdump(hosts[dyn.dst], host_intf(hosts[dyn.dst]), run_dir / "receiver.pcap")
            before = {n: nstat(hosts[n]) for n in (dyn.src, dyn.dst)}
            # everything the event's writes need is computed now, not at the event (control/procedures.py)
            if self.spec.kind == "route-flip":
                flip = self.shadow_states()
            else:
                prepared = self.rec.prepare(self.variant.procedure, self.target, old=self.initial,
                                            hold_s=self.variant.hold_s, transforms=self.transforms, events=events)
            if dyn.proto == "tcp":  # before the streams: the run's clock starts with the traffic
                procs.ss_sampler(hosts[dyn.src], addr[dyn.dst], run_dir / "ss.txt")
            clients = self._start_streams(procs, run_dir, addr)
            t_start = time.time()
            events.log("traffic-start")
            quiet = quiet_window(t_start, t_start + self.spec.event_at_s)
            time.sleep(max(0.0, quiet[0] - time.time()))
            cpu_quiet = cpu_jiffies()
            time.sleep(max(0.0, quiet[1] - time.time()))
            meta["cpu_busy_quiet_pct"] = busy_pct(cpu_quiet, cpu_jiffies()) if quiet[1] > quiet[0] else None
            time.sleep(max(0.0, t_start + self.spec.event_at_s - time.time()))
            meta["t_event"] = time.time()
            if self.spec.kind == "route-flip":
                plans = self.emu.controller.sync(flip, delete=False, step="route-flip", events=events)
                meta["result"] = {"writes": sum(p.inserts + p.modifies + p.deletes for p in plans.values())}
            else:
                meta["result"] = asdict(self.rec.run_prepared(prepared, events))
            meta["t_event_done"] = time.time()
            for c in clients:
                c.wait(timeout=self.spec.duration_s + 30)
            meta["t_end"] = time.time()
            time.sleep(0.5)  # the last segments reach the receiver's capture
            close_run(meta, hosts, before, counts_before, self.port_counts())
            meta["capture_exit"] = procs.stop_captures()
        finally:
            procs.stop_all()
            events.close()
        write_run(run_dir, meta, t_start)
        metrics = analyze(run_dir, self.spec)
        return metrics

    def _start_streams(self, procs: HostProcs, run_dir: Path, addr: dict[str, str]) -> list:
        hosts = self.emu.hosts
        clients = []
        for i, s in enumerate(self.spec.streams):
            port = BASE_PORT + i
            tag = f"{s.src}-{s.dst}"
            if s.proto == "tcp":
                procs.start(hosts[s.dst], ["iperf3", "-s", "-1", "-p", str(port)], f"iperf3 -s {s.dst}")
                wait_listening(hosts[s.dst], port)
                argv = ["iperf3", "-c", addr[s.dst], "-p", str(port), "-t", str(self.spec.duration_s), "-J",
                        "-i", "0.1", "-C", s.cc]
                if s.rate_mbit:
                    argv += ["-b", f"{s.rate_mbit}M", "-l", str(write_bytes(s.rate_mbit))]
                clients.append(procs.start(hosts[s.src], argv, f"iperf3 -c {tag}", run_dir / f"iperf3-{tag}.json"))
            else:
                pps = s.rate_mbit * 1e6 / 8 / 64 if s.rate_mbit else 1000.0
                procs.start(hosts[s.dst], [sys.executable, "-m", "scripts.hosts.udp", "recv", "--port", str(port),
                                           "--out", str(run_dir / f"udp-{tag}.csv"),
                                           "--seconds", str(self.spec.duration_s + 2)], f"udp recv {s.dst}")
                wait_listening(hosts[s.dst], port, "u")
                clients.append(procs.start(hosts[s.src], [sys.executable, "-m", "scripts.hosts.udp", "send", "--dst",
                                                          addr[s.dst], "--port", str(port), "--pps", f"{pps:.0f}",
                                                          "--seconds", str(self.spec.duration_s)],
                                           f"udp send {tag}", run_dir / f"udp-{tag}.sent"))
        return clients


def quiet_window(t_start: float, t_event: float) -> tuple[float, float]:
    """The run's quiet window: the streams settled, the event not begun (baseline gaps, the CPU's load)."""
    return t_start + 1.0, t_event - 0.2


def analyze(run_dir: Path, spec: Spec) -> dict[str, Any]:
    """metrics.json of one run from its raw files."""
    meta = json.loads((run_dir / "run.json").read_text())
    t_event = meta["t_event"]
    dyn = Stream(**next(s for s in meta["streams"] if s["role"] == "dynamic"))
    tag = f"{dyn.src}-{dyn.dst}"
    # the gap must overlap [event, procedure done + recovery]; a stall before the event is the
    # emulation's jitter, reported separately as baseline_gap_ms (same measure, quiet window)
    done_s = meta["t_event_done"] - t_event
    window = (0.0, done_s + (0.2 if dyn.proto == "udp" else 2.0))
    quiet = quiet_window(meta["t_start"], t_event)
    out: dict[str, Any] = {"variant": meta["variant"]["name"], "procedure": meta["variant"]["procedure"],
                           "scale": meta.get("scale"), "t_event": t_event, "result": meta.get("result"),
                           "nstat": meta.get("nstat"), "loadavg_start": meta.get("loadavg_start"),
                           "cpu_busy_quiet_pct": meta.get("cpu_busy_quiet_pct"),
                           "loadavg_end": meta.get("loadavg_end")}
    if dyn.proto == "udp":
        arrivals = parse_arrivals((run_dir / f"udp-{tag}.csv").read_text())
        sent = int((run_dir / f"udp-{tag}.sent").read_text().split()[-1])
        um = udp_metrics(arrivals, sent, t_event - window[0], t_event + window[1])
        out.update(asdict(um))
        out["baseline_gap_ms"] = largest_gap([t for _, t in arrivals], *quiet).ms if arrivals else None
        out.update(retransmissions=0, rto_count=0, lost_packets=um.lost, max_gap_ms=um.max_gap_ms,
                   throughput_dip_pct=None)
    else:
        sender = read_tcp(run_dir / "sender.pcap")
        receiver = read_tcp(run_dir / "receiver.pcap")
        m = stream_metrics(sender, t_event, receiver, window, until=meta["t_end"] - 0.5)
        out.update(asdict(m))
        flow = data_flow(sender)
        # the thesis's own measure (sender capture, every packet, ACKs included) keeps its name;
        # max_gap_ms is the largest silence of data at either end (scripts/analysis/ends.py)
        out["thesis_gap_ms"] = m.max_gap_ms
        out["thesis_baseline_gap_ms"] = largest_gap([p.t for p in of_connection(sender, flow)], *quiet).ms
        ends = end_metrics(sender, receiver, flow, t_event, t_event + window[1], quiet, meta["t_start"],
                           meta["t_end"])
        goodput = ends.pop("goodput_series")
        out.update(ends)
        out["max_gap_ms"] = max(ends["sender_data_gap_ms"], ends["receiver_data_gap_ms"])
        out["baseline_gap_ms"] = max(ends["baseline_sender_data_gap_ms"], ends["baseline_receiver_data_gap_ms"])
        out["retransmissions_after_event"] = m.retransmissions - m.retransmissions_before_event
        # true loss from the event on, and all three counts in the procedure's own window (the gaps'
        # window): on a loaded machine the emulation also drops before the event and long after it
        hi = t_event + window[1]
        sent_after = [p for p in sender if t_event <= p.t <= meta["t_end"] - 0.5]
        out["lost_after_event"] = receiver_drops(sent_after, receiver, flow)
        out["lost_in_window"] = receiver_drops([p for p in sent_after if p.t <= hi], receiver, flow)
        out["retransmissions_in_window"] = sum(1 for p in data_packets(sender, flow)
                                               if p.retrans and t_event <= p.t <= hi)
        out["resent_in_window"] = out["resent_after_event"] - resent_segments(sender, flow, hi)
        out["window_s"] = window[1]
        out["reordered_after_event"] = reordering([p for p in sender if p.t <= meta["t_end"] - 0.5], receiver,
                                                  flow, t_event)
        outage_s = ends["receiver_new_data_gap_ms"] / 1000
        out["retx_per_outage_s"] = out["retransmissions_after_event"] / outage_s if outage_s > 0 else None
        emu_dir = run_dir.parent / "emulation"
        dark = ocs_dark(emu_dir / "ocs-events.jsonl", t_event, meta["t_event_done"] + 1.0) \
            if (emu_dir / "ocs-events.jsonl").is_file() else None
        out["ocs_dark_ms"] = dark.ms if dark else None
        for end in ("sender", "receiver"):
            log_file = run_dir / f"{end}.tcpdump.log"
            st = parse_tcpdump_stats(log_file.read_text(errors="replace")) if log_file.is_file() else None
            out[f"{end}_capture_unwritten"] = st.unwritten if st else None
        # a saturating stream fills the bottleneck queue until it drops, whatever the procedure does
        out["congested"] = any(Stream(**s).saturating for s in meta["streams"])
        out["recovery_ms"] = 1000 * (m.gap_end - t_event)  # the thesis's "recovers at T + RTO_min" instant
        series = throughput_series(data_packets(sender, flow), meta["t_start"], 0.1, meta["t_end"])
        after = [v for t, v in series if done_s + (t_event - meta["t_start"]) + 1.0 <= t < series[-1][0] - 0.5]
        out["throughput_after_mbps"] = statistics.median(after) if after else None
        ns = (meta.get("nstat") or {}).get(dyn.src, {})
        # the stream's own timeouts (from its capture); nstat counts every connection of the sender's
        # namespace, iperf3's control connection included, so it is reported next to it only
        out["rto_count"] = m.rto_estimate
        out["nstat_timeouts"] = ns.get("timeouts")
        out["nstat_retrans_segs"] = ns.get("retrans_segs")
        t0 = meta["t_start"]
        out["series"] = {
            "throughput": series,
            "goodput": goodput,
            "rtt": rtt_series(sender, flow, t0)[::5],
            "event_s": t_event - t0,
            "event_done_s": meta["t_event_done"] - t0,
            "steps": step_timeline(run_dir / "events.jsonl", t0),
        }
        ss_file = run_dir / "ss.txt"
        if ss_file.exists():
            # the data connection only (iperf3 also keeps a control connection to the same server)
            ss = [x for x in parse_ss(ss_file.read_text()) if x.local.endswith(f":{flow[1]}")]
            out["series"]["cwnd"] = [(s.t - t0, s.cwnd) for s in ss if s.cwnd is not None]
            out["series"]["ss_rtt"] = [(s.t - t0, s.rtt_ms) for s in ss if s.rtt_ms is not None]
            ccs = [s.cc for s in ss if s.cc]
            out["cc"] = max(set(ccs), key=ccs.count) if ccs else None  # what the sender really ran
        out["static_streams"] = _static_streams(run_dir, meta)
    out.update(queue_loss(meta.get("port_counts"), out["lost_packets"]))
    (run_dir / "metrics.json").write_text(json.dumps(out, default=str))
    return out


def queue_drops(counts: dict[str, dict[str, dict[Any, int]]]) -> dict[str, int]:
    """Per switch, the frames its egress queues dropped over a run: port_enq - port_deq, every port."""
    return {s: sum(c.get(PORT_ENQ, {}).values()) - sum(c.get(PORT_DEQ, {}).values()) for s, c in counts.items()}


def queue_loss(counts: dict | None, lost: int) -> dict[str, Any]:
    """Where the run's lost packets can have gone: the switches' queue drops (every packet: data, ACKs,
    probes), and the stream's lost data packets beyond them (a lower bound of the drops elsewhere: in
    the dark, by a table, in a host). bmv2's port queue holds 64 frames, and a switch that a loaded
    machine stalls overflows it when it resumes: that loss is the emulation's, not the procedure's."""
    if not counts:
        return {"queue_drops": None, "queue_drops_by_switch": None, "lost_beyond_queue_drops": None}
    by_switch = queue_drops(counts)
    total = sum(by_switch.values())
    return {"queue_drops": total, "queue_drops_by_switch": {s: n for s, n in by_switch.items() if n},
            "lost_beyond_queue_drops": max(0, lost - total)}


def step_timeline(events_file: Path, t0: float) -> list[tuple[str, float, float]]:
    """(step, start s, end s) of the procedure's steps from the run's event log, relative to t0."""
    starts: dict[str, float] = {}
    out = []
    if not events_file.exists():
        return out
    for line in events_file.read_text().splitlines():
        e = json.loads(line)
        if e.get("event") == "step-start":
            starts[e["step"]] = e["t_wall"] - t0
        elif e.get("event") == "step-done" and e.get("step") in starts:
            out.append((e["step"], starts.pop(e["step"]), e["t_wall"] - t0))
    return out


def _static_streams(run_dir: Path, meta: dict[str, Any]) -> dict[str, float]:
    """Mean received rate (Mbit/s) of every stream from its iperf3 JSON."""
    out = {}
    for s in meta["streams"]:
        f = run_dir / f"iperf3-{s['src']}-{s['dst']}.json"
        if s["proto"] == "tcp" and f.exists():
            try:
                d = json.loads(f.read_text())
                out[f"{s['src']}-{s['dst']}"] = d["end"]["sum_received"]["bits_per_second"] / 1e6
            except (ValueError, KeyError):
                out[f"{s['src']}-{s['dst']}"] = float("nan")
    return out
