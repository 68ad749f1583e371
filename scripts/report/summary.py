"""Summaries of an experiment's runs: per-variant statistics, a Markdown table, and the JSON the demo
writes. Every run that has metrics counts; failed runs are listed, never dropped silently."""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path
from typing import Any

from fabric.contract import MODES
from scripts.analysis.metrics import percentile
from scripts.experiments.spec import Spec
from scripts.hosts.machine import CPU_BUSY_MAX

# seed 000, Abstract and Ch. 5 (single stream, 50 runs each) and section 4.3 (dual stream)
THESIS = {
    "single": {"bbm": {"max_gap_ms": 598.0, "loss_pct": 2.8}, "mbb-timed": {"max_gap_ms": 121.0, "loss_pct": 0.93}},
    "steering": {"bbm": {"max_gap_ms": 727.0, "loss_pct": 1.28}, "mbb-timed": {"max_gap_ms": 185.0, "loss_pct": 0.44}},
}
HITLESS_GAP_MS = 50.0
RECONF_KEYS = ("retransmissions", "retransmissions_before_event", "rto_count", "rtos_before_event", "lost_packets",
               "max_gap_ms", "throughput_dip_pct", "loss_pct", "reordered", "spurious_retransmissions", "rtt_ms_max",
               "baseline_gap_ms", "recovery_ms", "throughput_after_mbps",
               # both ends (scripts/analysis/ends.py, issue 19)
               "thesis_gap_ms", "thesis_baseline_gap_ms", "sender_data_gap_ms", "receiver_data_gap_ms",
               "receiver_new_data_gap_ms", "baseline_sender_data_gap_ms", "baseline_receiver_data_gap_ms",
               "baseline_receiver_new_data_gap_ms", "ocs_dark_ms", "zero_window_acks", "holds", "hold_total_ms",
               "hold_longest_ms", "rtt_before_hold_ms", "drain_probes", "retransmissions_after_event", "resent_after_event",
               "reordered_after_event", "rx_dip_pct", "rx_dip_control_pct", "rx_dip_floor_pct", "goodput_mbps_before",
               "retx_per_outage_s", "sender_capture_unwritten", "receiver_capture_unwritten",
               "lost_after_event", "lost_in_window", "retransmissions_in_window", "resent_in_window",
               # where packets were lost (scripts/experiments/reconf.py queue_loss)
               "queue_drops", "lost_beyond_queue_drops")


def load_runs(out: Path, spec: Spec) -> dict[str, dict[str, Any]]:
    """Per variant: the metrics of every finished run and the failed run directories."""
    res = {}
    for v in spec.variants:
        runs, failed = [], []
        for i in range(spec.runs):
            d = out / v.name / f"run-{i:03d}"
            if (d / "metrics.json").exists():
                runs.append(json.loads((d / "metrics.json").read_text()))
            elif (d / "error.txt").exists():
                failed.append(d.name)
        res[v.name] = {"runs": runs, "failed": failed}
    return res


def stats(values: list[float]) -> dict[str, float]:
    """n, mean, min, median, p90, max of the finite values."""
    vals = sorted(v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v)))
    if not vals:
        return {"n": 0}
    return {"n": len(vals), "mean": statistics.fmean(vals), "min": vals[0], "median": statistics.median(vals),
            "p90": percentile(vals, 90), "max": vals[-1]}


def hitless_run(r: dict[str, Any]) -> bool:
    """From the event on, at both ends: a largest data gap under HITLESS_GAP_MS at the sender and at the
    receiver, no true loss, no retransmission of any kind (tshark's flags and repeats by sequence), no
    RTO and no reordering. With a saturating stream its drops at the full bottleneck queue are
    congestion's: there loss and retransmissions are reported, and only spurious ones count."""
    def n(key: str, default: float = 1) -> float:
        v = r.get(key, default)
        return default if v is None else v

    rtos = n("rto_count") - (r.get("rtos_before_event") or 0)
    gaps = max(n("sender_data_gap_ms", n("max_gap_ms", 1e9)), n("receiver_data_gap_ms", n("max_gap_ms", 1e9)))
    if r.get("congested"):
        clean = n("spurious_retransmissions") == 0
    else:
        retx = n("retransmissions_after_event", n("retransmissions") - (r.get("retransmissions_before_event") or 0))
        clean = retx == 0 and n("resent_after_event", 0) == 0 and n("lost_after_event", n("lost_packets", 0)) == 0
    return clean and rtos == 0 and n("reordered_after_event", 0) == 0 and gaps < HITLESS_GAP_MS


GAP_OVER_BASELINE = 1.5  # a hitless run's largest data gap at either end: at most this times its quiet-time one


def truly_hitless(r: dict[str, Any]) -> bool:
    """The whole run, both ends (issue 29's acceptance): no lost segment, no retransmission of any kind (the
    captures' and the sender kernel's own count), no RTO; each end's largest data gap within
    GAP_OVER_BASELINE times its quiet-time one; the receiver's goodput dip at the event no deeper than
    the deepest dip before it (its noise floor). A missing measure fails the run."""
    need = ("lost_packets", "retransmissions", "resent_segments", "nstat_retrans_segs", "rto_count", "nstat_timeouts",
            "sender_data_gap_ms", "baseline_sender_data_gap_ms", "receiver_data_gap_ms",
            "baseline_receiver_data_gap_ms", "rx_dip_pct", "rx_dip_floor_pct")
    if any(r.get(k) is None for k in need):
        return False
    clean = not any(r[k] for k in need[:6])
    gaps = r["sender_data_gap_ms"] <= GAP_OVER_BASELINE * r["baseline_sender_data_gap_ms"] and \
        r["receiver_data_gap_ms"] <= GAP_OVER_BASELINE * r["baseline_receiver_data_gap_ms"]
    return clean and gaps and r["rx_dip_pct"] <= r["rx_dip_floor_pct"]


def clean_in_window(r: dict[str, Any]) -> bool:
    """The verdict limited to the procedure's window [event, done + 2 s] (the gaps' window): what the
    procedure did, apart from the emulation's own drops later in the run (a loaded machine)."""
    keys = ("lost_in_window", "retransmissions_in_window", "resent_in_window")
    if any(r.get(k) is None for k in keys):
        return False
    narrowed = dict(r, lost_after_event=r["lost_in_window"], retransmissions_after_event=r["retransmissions_in_window"],
                    resent_after_event=r["resent_in_window"])
    return hitless_run(narrowed)


def reconf_summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """One procedure: mean of each demo metric, full statistics, and the hitless verdict per run."""
    out: dict[str, Any] = {"runs": len(runs)}
    for k in RECONF_KEYS:
        s = stats([r.get(k) for r in runs])
        out[k] = s.get("mean")
        out[f"{k}_stats"] = s
    hitless = [hitless_run(r) for r in runs]
    out["hitless_runs"] = sum(hitless)
    out["clean_in_window_runs"] = sum(clean_in_window(r) for r in runs)
    out["truly_hitless_runs"] = sum(truly_hitless(r) for r in runs)
    out["loadavg_1m_stats"] = stats([r["loadavg_start"][0] for r in runs if r.get("loadavg_start")])
    busy = [r["cpu_busy_quiet_pct"] for r in runs if r.get("cpu_busy_quiet_pct") is not None]
    out["cpu_busy_quiet_stats"] = stats(busy)
    out["busy_quiet_runs"] = sum(b > CPU_BUSY_MAX for b in busy)
    tg = [r.get("thesis_gap_ms", r.get("max_gap_ms")) for r in runs]
    tg = [g for g in tg if g is not None]
    # seed 000 section 4.2.4: "75% of the link unavailability is below 200ms ... one half ... below 20ms"
    out["thesis_gap_share_below_200"] = sum(g < 200 for g in tg) / len(tg) if tg else None
    out["thesis_gap_share_below_20"] = sum(g < 20 for g in tg) / len(tg) if tg else None
    out["captures_closed"] = sum(1 for r in runs if r.get("sender_closed") and r.get("receiver_closed"))
    out["hitless_all"] = bool(runs) and all(hitless)
    out["throughput_mbps"] = stats([r.get("throughput_mbps") for r in runs]).get("mean")
    return out


def lb_summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """One forwarding mode: throughput, goodput, FCT percentiles per class, utilisation, rate check."""
    flows = [f for r in runs for c in r["classes"].values() for f in c["flows"]]
    classes = sorted({k for r in runs for k in r["classes"]})
    fct = {}
    for cls in classes:
        vals = sorted(1000 * f["fct_s"] for r in runs for f in r["classes"].get(cls, {}).get("flows", []))
        fct[cls] = {"p50": percentile(vals, 50), "p90": percentile(vals, 90), "p99": percentile(vals, 99),
                    "mean": statistics.fmean(vals) if vals else float("nan")}
    util = {cls: stats([r["classes"][cls]["utilisation"]["mean_over_max"] for r in runs if cls in r["classes"]])
            .get("mean") for cls in classes}
    jain = {cls: stats([r["classes"][cls]["utilisation"]["jain"] for r in runs if cls in r["classes"]]).get("mean")
            for cls in classes}
    used = stats([c["utilisation"]["paths_used"] for r in runs for c in r["classes"].values()]).get("mean")
    checks = [c["rate_check_ok"] for r in runs for c in r["classes"].values()]
    mnu = [f["mnu"] for f in flows if f.get("mnu") is not None]

    def by_class(key: str) -> dict[str, float | None]:
        return {cls: stats([f[key] for r in runs for f in r["classes"].get(cls, {}).get("flows", [])
                            if f.get(key) is not None]).get("mean") for cls in classes}

    versions = next((r["versions"] for r in runs if r.get("versions")), None)
    return {
        "mptcp_subflows": runs[0].get("mptcp_subflows", 0) if runs else 0,
        "subflows_seen": stats([f["subflows"] for f in flows if f.get("subflows") is not None]).get("mean"),
        "versions": versions,
        "flow_mnu_by_class": by_class("mnu"),
        "client_goodput_mbps_by_class": by_class("client_goodput_mbps"),
        "client_throughput_mbps_by_class": by_class("client_throughput_mbps"),
        "runs": len(runs),
        "throughput_mbps": stats([f.get("throughput_mbps") for f in flows]).get("mean"),
        "goodput_mbps": stats([f["goodput_mbps"] for f in flows]).get("mean"),
        "goodput_mbps_by_class": {cls: stats([f["goodput_mbps"] for r in runs
                                              for f in r["classes"].get(cls, {}).get("flows", [])]).get("mean")
                                  for cls in classes},
        "fct_ms": fct,
        "utilisation": stats([u for u in util.values() if u is not None]).get("mean"),
        "utilisation_by_class": util,
        "jain_by_class": jain,
        "core_paths_used": used,
        "flow_mnu": stats(mnu).get("mean") if mnu else None,  # flows run alone only (lb.py)
        "max_link_mbps": max((c["max_link_mbps"] for r in runs for c in r["classes"].values()), default=0.0),
        "rate_check_ok": bool(checks) and all(checks),
    }


def summarize(out: Path, spec: Spec) -> dict[str, Any]:
    """The experiment's summary (also written to <out>/summary.json and summary.md)."""
    data = load_runs(out, spec)
    variants = {}
    for name, d in data.items():
        if spec.kind == "load-balancing":
            s = lb_summary(d["runs"]) if d["runs"] else {"runs": 0}
        elif spec.kind == "schedule":
            from scripts.experiments.schedule import schedule_summary  # here: it brings the controller along

            s = schedule_summary(d["runs"])
        else:
            s = reconf_summary(d["runs"])
        s["failed_runs"] = d["failed"]
        variants[name] = s
    summary = {"experiment": spec.name, "kind": spec.kind, "scale": spec.scale,
               "link_rate_mbit": spec.link_rate_mbit, "reference_rate_mbit": spec.reference_rate_mbit,
               "variants": variants}
    (out / "summary.json").write_text(json.dumps(summary, indent=1, default=str))
    (out / "summary.md").write_text(markdown(spec, summary))
    return summary


def _f(v: Any, fmt: str = ".1f") -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    return format(v, fmt) if isinstance(v, (int, float)) else str(v)


def thesis_gap(s: dict[str, Any]) -> float | None:
    """The thesis's gap of a summary (older runs have only max_gap_ms, which was that measure)."""
    return s.get("thesis_gap_ms") if s.get("thesis_gap_ms") is not None else s.get("max_gap_ms")


def _mm(s: dict[str, Any], key: str, fmt: str = ".0f") -> str:
    st = s.get(f"{key}_stats") or {}
    return f"{_f(st.get('mean'), fmt)} / {_f(st.get('median'), fmt)} / {_f(st.get('max'), fmt)}"


# seed 000 section 4.2.4 and Abstract, single stream, 50 runs each (OST = bbm, MBB = mbb-timed)
THESIS_POINTS = (
    ("link unavailability, mean ms (sender sniffer gap)", "thesis_gap_ms", "mean", "598", "121"),
    ("runs with unavailability < 200 ms", "thesis_gap_share_below_200", None, "- (2-3 x RTO_min)", "75%"),
    ("runs with unavailability < 20 ms", "thesis_gap_share_below_20", None, "-", "50%"),
    ("RTO expiries per run, max", "rto_count", "max", "2", "1"),
    ("packet loss = retransmitted / sent, mean %", "loss_pct", "mean", "2.8 (2 in s4.2.4), max 9.5",
     "0.93 (0.9), max 3.4"),
    ("throughput dip, % of the rate", "throughput_dip_pct", "mean", "~60 (6 of 10 Gbit/s)", "~6 (0.6 of 10)"),
    ("RTT, max ms", "rtt_ms_max", "max", "hundreds", "<= 2.5 (a 0.2 ms hit)"),
)


def thesis_points_markdown(v: dict[str, Any]) -> list[str]:
    """Seed 000's single-stream figures point by point against ours (its own measures: sender capture)."""
    procs = [p for p in ("bbm", "mbb-timed", "mbb") if v.get(p, {}).get("runs")]
    if not procs:
        return []
    lines = ["", "### Seed 000 (single stream, section 4.2.4 and Abstract) point by point", "",
             "The thesis's measures, as it defined them (sender capture; loss = retransmission ratio). "
             "OST = bbm, MBB = mbb-timed; mbb has no thesis counterpart (the thesis did not reach hitless).", "",
             "| figure | thesis OST | " + " | ".join(f"ours {p}" for p in procs[:1]) + " | thesis MBB | "
             + " | ".join(f"ours {p}" for p in procs[1:]) + " |",
             "|---|---|" + "---|" * len(procs[:1]) + "---|" + "---|" * len(procs[1:])]
    def val(p: str, key: str, stat: str | None) -> str:
        s = v[p]
        if stat is None:
            x = s.get(key)
            return _f(100 * x if x is not None else None, ".0f") + "%"
        x = (s.get(f"{key}_stats") or {}).get(stat)
        return _f(x, ".2f" if key in ("loss_pct", "rto_count") else ".0f")

    for label, key, stat, ost, mbb in THESIS_POINTS:
        lines.append(f"| {label} | {ost} | " + " | ".join(val(p, key, stat) for p in procs[:1]) + f" | {mbb} | "
                     + " | ".join(val(p, key, stat) for p in procs[1:]) + " |")
    return lines


def busy_lines(v: dict[str, Any]) -> list[str]:
    """How busy the cores were before the event, per variant, where the runs read it."""
    busy = {n: s for n, s in v.items() if (s.get("cpu_busy_quiet_stats") or {}).get("n")}
    if not busy:
        return []
    return ["", "Cores busy before the event (% of both, in each run's quiet window; above "
            f"{CPU_BUSY_MAX:.0f}% the machine had no room left for the event's own work, and what such a run "
            "measures is the machine: `--rate` runs the dynamic stream slower): "
            + "; ".join(f"{n} mean {_f(s['cpu_busy_quiet_stats'].get('mean'), '.0f')}, max "
                        f"{_f(s['cpu_busy_quiet_stats'].get('max'), '.0f')}, {s['busy_quiet_runs']} of "
                        f"{s['cpu_busy_quiet_stats']['n']} runs above" for n, s in busy.items()) + "."]


def both_ends_markdown(v: dict[str, Any], scale: float | None) -> list[str]:
    """The tables of issue 19: data gaps at both ends, the holds, true loss, goodput dip and its noise
    floor, the retransmission ratio per second of outage, the captures' completeness."""
    lines = ["", "### Gaps at both ends (ms; mean / median / max over runs)", "",
             "Sender data: largest gap between data segments at the sender. Receiver data: the same at the "
             "receiver. Receiver new data: largest gap between arrivals of bytes never seen before (what the "
             "application waits for). Thesis gap: sender capture, every packet (the thesis's link "
             "unavailability). OCS dark: first port down to last port up in the OCS log of the same run.", "",
             "| variant | runs | sender data | receiver data | receiver new data | thesis gap | OCS dark | "
             "quiet-time max: sender data / receiver data / thesis |", "|---|---|---|---|---|---|---|---|"]
    for name, s in v.items():
        if not s.get("runs"):
            continue
        q = [_f((s.get(f"{k}_stats") or {}).get("max"), ".0f") for k in
             ("baseline_sender_data_gap_ms", "baseline_receiver_data_gap_ms", "thesis_baseline_gap_ms")]
        lines.append(f"| {name} | {s['runs']} | {_mm(s, 'sender_data_gap_ms')} | {_mm(s, 'receiver_data_gap_ms')} | "
                     f"{_mm(s, 'receiver_new_data_gap_ms')} | {_mm(s, 'thesis_gap_ms')} | {_mm(s, 'ocs_dark_ms')} | "
                     f"{' / '.join(q)} |")
    lines += ["", "### What the procedure cost (per run: mean / max over runs)", "",
              "Zero-window ACKs: ACKs with a zero window the sender saw (mbb's drain holds the sender with "
              "them). Hold: from the first zero-window ACK to the ACK that opens the window again. Drain probes: "
              "segments at the receiver the sender never sent (matched by sequence, ACK, length and IP id). "
              "Retransmissions from the event on: tshark's flags / repeated bytes by sequence. Hitless: the verdict "
              "above, from the event to the end of the run; clean in the procedure's window: the same verdict with "
              "loss and retransmissions counted in [event, procedure done + 2 s] only. Queue drops: frames "
              "(data, ACKs, probes) a switch's or the OCS's full egress queue dropped over the run (port_enq - "
              "port_deq; bmv2 holds 64 frames a port, and a switch that a loaded machine stalls overflows it when it "
              "resumes: the emulation's loss, not the procedure's); beyond them: true drops of the stream that "
              "no queue drop can account for (a lower bound of the drops in the dark or by a table).", "",
              "| variant | zero-window ACKs | holds | hold total ms | longest hold ms | drain probes | "
              "retx from event (tshark / by seq) | spurious | RTOs | true drops (whole run / from event / in window) | "
              "queue drops | true drops beyond them | reordered from event | hitless | "
              "clean in the procedure's window |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]

    def mx(s: dict[str, Any], key: str, fmt: str = ".1f") -> str:
        st = s.get(f"{key}_stats") or {}
        return f"{_f(st.get('mean'), fmt)} / {_f(st.get('max'), fmt.replace('.1f', '.0f'))}"

    for name, s in v.items():
        if not s.get("runs"):
            continue
        lines.append(f"| {name} | {mx(s, 'zero_window_acks')} | {mx(s, 'holds')} | {mx(s, 'hold_total_ms', '.0f')} | "
                     f"{mx(s, 'hold_longest_ms', '.0f')} | {mx(s, 'drain_probes')} | "
                     f"{_f(s.get('retransmissions_after_event'))} / {_f(s.get('resent_after_event'))} | "
                     f"{_f(s.get('spurious_retransmissions'))} | {_f(s.get('rto_count'), '.2f')} | "
                     f"{_f(s.get('lost_packets'))} / {_f(s.get('lost_after_event'))} / {_f(s.get('lost_in_window'))} | "
                     f"{mx(s, 'queue_drops')} | {mx(s, 'lost_beyond_queue_drops')} | "
                     f"{_f(s.get('reordered_after_event'))} | {s['hitless_runs']}/{s['runs']} | "
                     f"{s.get('clean_in_window_runs', 0)}/{s['runs']} |")
    lines += ["", "### Throughput dip and retransmission ratio", "",
              "Dip: lowest 100 ms bin of receiver goodput (new bytes) within 2 s of the event vs the median of the "
              "3 s before; control: the same measure ending 2 s before the event, where nothing happens (its noise "
              "floor). Loss is the thesis's retransmission ratio of the whole run at "
              + (f"scale factor {scale:g} of the seed's link rate" if scale else "this link rate")
              + "; retx per second of outage: retransmissions from the event on / the receiver's new-data gap.", "",
              "| variant | goodput before Mbit/s | dip % (mean / median / max) | control dip % (mean / median / max) | "
              "sender-side dip % (mean) | loss % | retx per s of outage (mean / max) |", "|---|---|---|---|---|---|---|"]
    for name, s in v.items():
        if not s.get("runs"):
            continue
        lines.append(f"| {name} | {_f(s.get('goodput_mbps_before'))} | {_mm(s, 'rx_dip_pct')} | "
                     f"{_mm(s, 'rx_dip_control_pct')} | {_f(s.get('throughput_dip_pct'), '.0f')} | "
                     f"{_f(s.get('loss_pct'), '.3f')} | {mx(s, 'retx_per_outage_s')} |")
    loads = {n: s.get("loadavg_1m_stats") or {} for n, s in v.items() if s.get("runs")}
    if any(x.get("n") for x in loads.values()):
        lines += ["", "Machine load (1-minute load average at each run's start, 2 cores shared): "
                  + "; ".join(f"{n} mean {_f(x.get('mean'))}, max {_f(x.get('max'))}" for n, x in loads.items()
                              if x.get("n")) + "."]
    closed = {n: s.get("captures_closed") for n, s in v.items() if s.get("runs")}
    lines += ["", "Captures: runs whose sender and receiver captures both hold the connection's end (FIN or RST), "
              "and the most packets tcpdump counted but never wrote: "
              + "; ".join(f"{n} {c}/{v[n]['runs']}, unwritten max "
                          f"{_f(max(((v[n].get(k + '_stats') or {}).get('max') or 0) for k in ('sender_capture_unwritten', 'receiver_capture_unwritten')), '.0f')}"
                          for n, c in closed.items()) + "."]
    return lines


def seed004_markdown(v: dict[str, Any], classes: list[str]) -> list[str]:
    """Per class and mode: transport and subflows, per-flow MNU, goodput, and in the noisy network each
    client's throughput and goodput; then the paper's MNU ordering static < ECMP-MPTCP < spray."""
    ran = {n: s for n, s in v.items() if s.get("runs")}
    if not ran:
        return []
    versions = next((s["versions"] for s in ran.values() if s.get("versions")), None)
    lines = ["", "Per class (mean per flow): per-flow MNU (flows alone only), goodput Mbit/s; noisy network: per "
             "client, throughput (every L2 byte on its link) and goodput (payload) over the time to its last flow's "
             "end, and excess 1 - G/T (seed 004 Table 5.3).", "",
             "| mode | transport | " + " | ".join(f"{c}: MNU / goodput / client T / client G / excess %" for c in classes)
             + " |", "|---|---|" + "---|" * len(classes)]
    for name, s in ran.items():
        sub = s.get("mptcp_subflows") or 0
        transport = f"MPTCP {sub} subflows (seen {_f(s.get('subflows_seen'))})" if sub else "TCP"
        cells = []
        for c in classes:
            t = (s.get("client_throughput_mbps_by_class") or {}).get(c)
            g = (s.get("client_goodput_mbps_by_class") or {}).get(c)
            excess = 100 * (1 - g / t) if t and g is not None else None
            cells.append(f"{_f((s.get('flow_mnu_by_class') or {}).get(c), '.2f')} / "
                         f"{_f((s.get('goodput_mbps_by_class') or {}).get(c), '.2f')} / {_f(t, '.2f')} / "
                         f"{_f(g, '.2f')} / {_f(excess, '.1f')}")
        lines.append(f"| {name} | {transport} | " + " | ".join(cells) + " |")
    trio = [n for n in ("static", "ecmp-mptcp", "spray-mptcp") if n in ran]
    if len(trio) == 3:
        for c in classes:
            m = [(ran[n].get("flow_mnu_by_class") or {}).get(c) for n in trio]
            if None not in m:
                held = m[0] < m[1] < m[2]
                lines.append(f"\n{c}: seed 004's MNU ordering static < ECMP-MPTCP < spray-MPTCP "
                             f"{'holds' if held else 'does NOT hold'} ({' / '.join(f'{x:.2f}' for x in m)}).")
    if versions:
        lines.append("\nKernel and MPTCP: " + ", ".join(f"{k} {val}" for k, val in versions.items()) + ".")
    return lines


def markdown(spec: Spec, summary: dict[str, Any]) -> str:
    """The summary table(s) of one experiment as Markdown."""
    scale = summary["scale"]
    lines = [f"# {spec.name}", "", spec.description.strip(), "",
             f"Link rate {summary['link_rate_mbit']:g} Mbit/s"
             + (f" (scale factor {scale:g} of the seed's {summary['reference_rate_mbit']:g} Mbit/s)" if scale else "")
             + "; times (RTO, OCS dark time, hold) are not scaled.", "",
             "Largest gap: the longest silence of **data** at either end (the sender's and the receiver's capture, "
             "segments with payload only) that overlaps [event, procedure done + 2 s] (UDP: arrivals at the "
             "receiver); quiet-time gap: the same measure in a window before the event (the emulation's own "
             "silences). The thesis's measure (sender capture, every packet, ACKs included) is reported apart as "
             "'thesis gap': a sender held with zero-window ACKs keeps that figure small while no data moves. "
             "Loss: retransmitted / sent data packets (the thesis's ratio; it depends on the link rate, see the "
             "scale factor and retransmissions per second of outage); dropped: transmissions that never "
             "reached the receiver's capture (true loss); spurious: retransmissions from the event on whose "
             "original reached the receiver too (late, not lost). Hitless, judged from the event on at both "
             f"ends: largest data gap under {HITLESS_GAP_MS:g} ms at the sender and at the receiver, no true loss, "
             "no retransmission of any kind (tshark's flags, and repeated bytes by sequence), no RTO and no "
             "reordered segment. With a saturating (unlimited) TCP stream the bottleneck queue overflows "
             "whatever the procedure does, so there loss and retransmissions are reported and only spurious "
             "ones count.",
             ""]
    v = summary["variants"]
    if spec.kind in ("reconfiguration", "route-flip"):
        lines += ["| variant | runs | largest data gap ms, either end (mean / median / max) | quiet-time gap ms (max) | loss % (retx/sent) "
                  "| retx (before the event) | spurious | RTOs (before) | dropped pkts | reordered | dip % | Mbit/s before / after "
                  "| hitless runs |", "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for name, s in v.items():
            g = s["max_gap_ms_stats"]
            lines.append(f"| {name} | {s['runs']} | {_f(g.get('mean'), '.0f')} / {_f(g.get('median'), '.0f')} / "
                         f"{_f(g.get('max'), '.0f')} | {_f(s['baseline_gap_ms_stats'].get('max'), '.0f')} | "
                         f"{_f(s['loss_pct'], '.3f')} | {_f(s['retransmissions'])} "
                         f"({_f(s.get('retransmissions_before_event'))}) | {_f(s.get('spurious_retransmissions'))} | "
                         f"{_f(s['rto_count'], '.2f')} ({_f(s.get('rtos_before_event'), '.2f')}) | {_f(s['lost_packets'])} | {_f(s['reordered'])} | "
                         f"{_f(s['throughput_dip_pct'], '.0f')} | {_f(s['throughput_mbps'])} / "
                         f"{_f(s['throughput_after_mbps'])} | {s['hitless_runs']}/{s['runs']} |")
        lines += busy_lines(v)
        if spec.kind == "reconfiguration" and any(s.get("sender_data_gap_ms") is not None for s in v.values()):
            lines += both_ends_markdown(v, summary["scale"])
        if spec.kind == "reconfiguration" and len(spec.streams) == 1:
            lines += thesis_points_markdown(v)
        ref = THESIS["steering" if len(spec.streams) > 1 else "single"]
        if spec.kind == "reconfiguration" and set(ref) & set(v):
            lines += ["", "Thesis (seed 000) side by side (OST = bbm, MBB = mbb-timed), the thesis's own measure "
                      "(sender capture, every packet):", "",
                      "| procedure | thesis gap ms | ours thesis gap ms (mean) | thesis loss % | ours loss % |",
                      "|---|---|---|---|---|"]
            for proc, t in ref.items():
                if proc in v:
                    lines.append(f"| {proc} | {t['max_gap_ms']:g} | {_f(thesis_gap(v[proc]), '.0f')} | "
                                 f"{t['loss_pct']:g} | {_f(v[proc]['loss_pct'], '.3f')} |")
            if "bbm" in v and thesis_gap(v["bbm"]) is not None:
                dev = 100 * (thesis_gap(v["bbm"]) / ref["bbm"]["max_gap_ms"] - 1)
                lines.append(f"\nbbm unavailability vs the thesis: {dev:+.0f}% (target within ±15%).")
        if "mbb" in v:
            s = v["mbb"]
            retx = "spurious retransmission" if any(st.saturating for st in spec.streams) else "retransmission"
            verdict = "hitless in every run" if s["hitless_all"] else \
                f"NOT hitless: {s['runs'] - s['hitless_runs']} of {s['runs']} runs had a {retx}, an RTO " \
                f"or a gap >= {HITLESS_GAP_MS:g} ms"
            lines.append(f"\nmbb (target: 0 {retx}s, 0 RTOs, gap < {HITLESS_GAP_MS:g} ms in every run): {verdict}.")
            lines.append(f"\nmbb over the whole run at both ends (no loss, retransmission or RTO; each end's largest "
                         f"data gap within {GAP_OVER_BASELINE:g}x its quiet-time one; the goodput dip no deeper than "
                         f"the deepest before the event): {s.get('truly_hitless_runs', 0)} of {s['runs']} runs.")
    elif spec.kind == "load-balancing":
        classes = sorted({c for s in v.values() for c in s.get("fct_ms", {})})
        lines += ["| mode | runs | throughput Mbit/s | goodput Mbit/s | " + " | ".join(f"FCT {c} p50/p90 ms"
                  for c in classes) + " | utilisation (mean/max) | rate check |",
                  "|---|---|---|---|" + "---|" * len(classes) + "---|---|"]
        for name, s in v.items():
            if not s.get("runs"):
                lines.append(f"| {name} | 0 |")
                continue
            fct = " | ".join(f"{_f(s['fct_ms'][c]['p50'], '.0f')}/{_f(s['fct_ms'][c]['p90'], '.0f')}" for c in classes)
            lines.append(f"| {name} | {s['runs']} | {_f(s['throughput_mbps'], '.2f')} | {_f(s['goodput_mbps'], '.2f')} | "
                         f"{fct} | {_f(s['utilisation'], '.2f')} | {'ok' if s['rate_check_ok'] else 'FAILED'} |")
        lines += seed004_markdown(v, classes)
        order = [n for n in MODES if n in v and v[n].get("utilisation") is not None]
        if len(order) == 3:
            u = [v[n]["utilisation"] for n in order]
            held = u[0] < u[1] < u[2]
            lines.append(f"\nSeed 004 ordering static < ECMP < spray on utilisation: {'reproduced' if held else 'NOT reproduced'}"
                         f" ({' / '.join(f'{x:.2f}' for x in u)}).")
            used = {n: v[n].get("core_paths_used") for n in order}
            lines.append("Share of core switches that carried traffic: "
                         + ", ".join(f"{n} {_f(x, '.2f')}" for n, x in used.items())
                         + ". Below 1 with many flows means the multipath choices are correlated between layers "
                         "(hash polarization) or per destination, not per flow.")
            mnu = [v[n].get("flow_mnu") for n in order]
            if None not in mnu:
                lines.append("Per-flow utilisation (each flow alone, the paper's MNU; 0.25 = one core of four): "
                             + " / ".join(f"{n} {x:.2f}" for n, x in zip(order, mnu, strict=True))
                             + ". With plain TCP a flow is one 5-tuple, so ECMP pins it to one path like static; "
                             "the paper's ECMP above static (0.51-0.80 vs 0.25-0.36) came from MPTCP subflows.")
    else:
        lines += ["| variant | runs | day ms: configured / OCS log mean (p5-p95) / data plane mean (p5-p95) | "
                  "night ms: configured / OCS log mean (p5-p95) / data plane mean (p5-p95) |", "|---|---|---|---|"]
        for name, s in v.items():
            cells = []
            for key in ("day", "night"):
                o, d = s.get(f"ocs_{key}_ms", {}), s.get(f"{key}_ms", {})
                cells.append(f"{_f(s.get(f'{key}_configured'))} / {_f(o.get('mean'))} ({_f(o.get('p5'))}-"
                             f"{_f(o.get('p95'))}) / {_f(d.get('mean'))} ({_f(d.get('p5'))}-{_f(d.get('p95'))})")
            lines.append(f"| {name} | {s.get('runs', 0)} | {cells[0]} | {cells[1]} |")
    failed = {n: s["failed_runs"] for n, s in v.items() if s.get("failed_runs")}
    if failed:
        lines.append(f"\nFailed runs (see error.txt): {failed}")
    return "\n".join(lines) + "\n"
