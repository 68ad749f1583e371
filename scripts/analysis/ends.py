"""What a reconfiguration cost, seen at both ends of a TCP stream (issue 19).

The thesis's measures (scripts/analysis/metrics.py) look at the sender's capture only and count every packet,
ACKs included. That hides two things this module measures:
- silences of data: a sender held with zero-window ACKs (mbb's drain) sends no data while ACKs keep
  arriving every few ms, so the gap between any two packets stays small. Gaps here are between data
  segments, at the sender and at the receiver, and between arrivals of new data at the receiver
  (what the application can read);
- holds: the zero-window ACKs the sender saw, how long each hold lasted, and the drain probes the
  network sent the receiver in the sender's name (segments in the receiver's capture that the
  sender's capture does not have).
Also: goodput at the receiver (new data per bin) and its dip next to a control window without an
event (the measure's noise floor), the OCS's dark time for the same run, and whether each capture
saw the connection close. Pure functions over TcpPacket lists.
"""

from __future__ import annotations

import json
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from scripts.analysis.metrics import Flow, Gap, largest_gap, throughput_dip
from scripts.hosts.capture import TcpPacket


def reverse(flow: Flow) -> Flow:
    """The other direction of a flow."""
    return (flow[2], flow[3], flow[0], flow[1])


def _of(packets: Sequence[TcpPacket], flow: Flow) -> list[TcpPacket]:
    return sorted((p for p in packets if p.flow == flow), key=lambda p: p.t)


def data_gap(packets: Sequence[TcpPacket], flow: Flow, lo: float | None = None, hi: float | None = None) -> Gap:
    """The largest gap between consecutive data segments (payload > 0) of `flow` overlapping [lo, hi]."""
    return largest_gap([p.t for p in _of(packets, flow) if p.length > 0], lo, hi)


def new_data_times(packets: Sequence[TcpPacket], flow: Flow) -> list[float]:
    """Arrival times of segments that carried bytes above every byte seen before (new data)."""
    top, out = None, []
    for p in _of(packets, flow):
        if p.length > 0 and (top is None or p.seq + p.length > top):
            out.append(p.t)
            top = p.seq + p.length
    return out


def new_data_gap(receiver: Sequence[TcpPacket], flow: Flow, lo: float | None = None,
                 hi: float | None = None) -> Gap:
    """The largest gap between arrivals of new data of `flow` at the receiver overlapping [lo, hi]."""
    return largest_gap(new_data_times(receiver, flow), lo, hi)


def goodput_series(receiver: Sequence[TcpPacket], flow: Flow, t0: float, bin_s: float = 0.1,
                   t_end: float | None = None) -> list[tuple[float, float]]:
    """(time since t0, Mbit/s) of new bytes reaching the receiver per bin (repeats count once)."""
    if bin_s <= 0:
        raise ValueError(f"bin {bin_s}: expected > 0 s")
    segs = _of(receiver, flow)
    end = t_end if t_end is not None else max((p.t for p in segs), default=t0)
    bins = [0] * max(1, int((end - t0) / bin_s) + 1)
    top = None
    for p in segs:
        if p.length <= 0:
            continue
        lo = p.seq if top is None else max(p.seq, top)
        new = p.seq + p.length - lo
        if new > 0:
            top = p.seq + p.length
            i = int((p.t - t0) / bin_s + 1e-9)
            if 0 <= i < len(bins):
                bins[i] += new
    return [(i * bin_s, b * 8 / bin_s / 1e6) for i, b in enumerate(bins)]


@dataclass(slots=True)
class Holds:
    """Zero-window ACKs the sender saw and the holds they made (a hold: from the first zero-window
    ACK to the next ACK that opens the window, or the end of the capture)."""

    zero_window_acks: int
    holds: int
    total_ms: float
    longest_ms: float
    rtt_before_ms: float | None = None  # the median ACK RTT in the second before the first hold


def holds(sender: Sequence[TcpPacket], flow: Flow, lo: float | None = None) -> Holds:
    """The holds of `flow`'s sender from its capture (ACKs of the reverse direction), from `lo` on."""
    acks = [p for p in _of(sender, reverse(flow)) if not (p.syn or p.fin or p.rst) and p.window is not None
            and (lo is None or p.t >= lo)]
    zero = sum(1 for p in acks if p.window == 0)
    spans: list[float] = []
    start = None
    for p in acks:
        if p.window == 0 and start is None:
            start = p.t
        elif p.window and start is not None:
            spans.append(p.t - start)
            start = None
    if start is not None:
        spans.append(acks[-1].t - start)
    first = next((p.t for p in acks if p.window == 0), None)
    rtts = [p.ack_rtt for p in acks if first is not None and first - 1.0 <= p.t < first and p.ack_rtt is not None]
    return Holds(zero, len(spans), 1000 * sum(spans), 1000 * max(spans, default=0.0),
                 1000 * statistics.median(rtts) if rtts else None)


def _key(p: TcpPacket) -> tuple:
    return (p.seq, p.ack, p.length, p.ip_id, p.syn, p.fin, p.rst)


def made_up_segments(sender: Sequence[TcpPacket], receiver: Sequence[TcpPacket], flow: Flow,
                     lo: float | None = None) -> int:
    """Segments of `flow` in the receiver's capture that the sender never sent (matched by sequence,
    acknowledgement, length and IP id): the drain probes the ingress switch sends in its name."""
    sent = Counter(_key(p) for p in _of(sender, flow))
    made = 0
    for p in _of(receiver, flow):
        if lo is not None and p.t < lo:
            continue
        k = _key(p)
        if sent[k] > 0:
            sent[k] -= 1
        else:
            made += 1
    return made


def resent_segments(packets: Sequence[TcpPacket], flow: Flow, lo: float | None = None) -> int:
    """Data segments of `flow` that repeat bytes already sent, by sequence alone (every kind of
    retransmission: timeout, fast, RACK, tail-loss probe, spurious), from `lo` on."""
    top, n = None, 0
    for p in _of(packets, flow):
        if p.length <= 0:
            continue
        if top is not None and p.seq < top and (lo is None or p.t >= lo):
            n += 1
        top = p.seq + p.length if top is None else max(top, p.seq + p.length)
    return n


def saw_close(packets: Sequence[TcpPacket], flow: Flow) -> bool:
    """Whether a capture holds the end of `flow`'s connection, a FIN or RST in either direction (the
    capture kept its tail). iperf3's server ends the data connection with a RST."""
    return any(p.fin or p.rst for p in packets if p.flow in (flow, reverse(flow)))


def dip_with_control(series: Sequence[tuple[float, float]], t_event: float, window_s: float = 2.0,
                     baseline_s: float = 3.0) -> tuple[float | None, float | None]:
    """(dip % at the event, dip % of the same measure ending window_s before the event): the second
    is the noise floor of the first (None when the run is too short before the event)."""
    _, dip = throughput_dip(series, t_event, window_s, baseline_s)
    t_control = t_event - window_s
    if not series or t_control - baseline_s < series[0][0] + 0.5:
        return dip, None
    _, control = throughput_dip(series, t_control, window_s, baseline_s)
    return dip, control


def dip_floor(series: Sequence[tuple[float, float]], quiet: tuple[float, float], baseline_s: float = 3.0) -> \
        float | None:
    """The deepest dip of a bin in the quiet window below the median of the baseline_s before its end:
    the run's own noise floor for the dip at the event (None without bins there)."""
    lo, hi = quiet
    before = [v for t, v in series if hi - baseline_s <= t < hi]
    inside = [v for t, v in series if lo <= t < hi]
    if not before or not inside or statistics.median(before) <= 0:
        return None
    return max(0.0, 100.0 * (1 - min(inside) / statistics.median(before)))


UP_WITHIN_S = 5.0  # the delay model's longest port-down to port-up is 834 ms (thesis Table 4.3)


@dataclass(slots=True)
class Dark:
    """The OCS's dark time around a reconfiguration from its event log: first port down after the
    event to the last port up (None when the OCS changed nothing)."""

    ms: float | None
    ports: int


def ocs_dark(events_file: Path, lo: float, hi: float) -> Dark:
    """Port down to last port up in an OCS event log (ocs-events.jsonl), for downs in [lo, hi]."""
    if not events_file.is_file():
        raise ValueError(f"OCS log {str(events_file)!r}: not a file; expected the emulator's ocs-events.jsonl")
    recs = []
    for n, line in enumerate(events_file.read_text().splitlines(), 1):
        if line.strip():
            try:
                recs.append(json.loads(line))
            except ValueError:
                raise ValueError(f"OCS log {events_file} line {n}: not JSON") from None
    downs = [r["t_wall"] for r in recs if r.get("event") == "port-down" and lo <= r["t_wall"] <= hi]
    if not downs:
        return Dark(None, 0)
    first = min(downs)
    # ports the new map leaves without a circuit stay down; the circuit is up with its last port
    ups = [r["t_wall"] for r in recs if r.get("event") == "port-up" and first <= r["t_wall"] <= first + UP_WITHIN_S]
    return Dark(1000 * (max(ups) - first) if ups else None, len(downs))


def median_or_none(values: Sequence[float]) -> float | None:
    """The median, None for no values."""
    return statistics.median(values) if values else None


def end_metrics(sender: Sequence[TcpPacket], receiver: Sequence[TcpPacket], flow: Flow, t_event: float,
                hi: float, quiet: tuple[float, float], t0: float, t_end: float, bin_s: float = 0.1) -> dict:
    """Every measure of this module for one run: gaps overlap [t_event, hi], `quiet` is the window
    before the event for the same measures (the emulation's own silences)."""
    s_gap = data_gap(sender, flow, t_event, hi)
    r_gap = data_gap(receiver, flow, t_event, hi)
    new_gap = new_data_gap(receiver, flow, t_event, hi)
    h = holds(sender, flow)
    goodput = goodput_series(receiver, flow, t0, bin_s, t_end)
    dip, control = dip_with_control(goodput, t_event - t0)
    # the quiet window's bins whole: from its first full bin to the event
    floor = dip_floor(goodput, (quiet[0] - t0 + bin_s, t_event - t0))
    before = [v for t, v in goodput if t_event - t0 - 3.0 <= t < t_event - t0]
    return {
        "sender_data_gap_ms": s_gap.ms, "sender_data_gap_at_ms": 1000 * (s_gap.start - t_event),
        "receiver_data_gap_ms": r_gap.ms, "receiver_data_gap_at_ms": 1000 * (r_gap.start - t_event),
        "receiver_new_data_gap_ms": new_gap.ms, "receiver_new_data_gap_at_ms": 1000 * (new_gap.start - t_event),
        "baseline_sender_data_gap_ms": data_gap(sender, flow, *quiet).ms,
        "baseline_receiver_data_gap_ms": data_gap(receiver, flow, *quiet).ms,
        "baseline_receiver_new_data_gap_ms": new_data_gap(receiver, flow, *quiet).ms,
        "zero_window_acks": h.zero_window_acks, "holds": h.holds, "hold_total_ms": h.total_ms,
        "hold_longest_ms": h.longest_ms, "rtt_before_hold_ms": h.rtt_before_ms,
        "drain_probes": made_up_segments(sender, receiver, flow),
        "resent_segments": resent_segments(sender, flow),
        "resent_after_event": resent_segments(sender, flow, t_event),
        "goodput_mbps_before": median_or_none(before),
        "rx_dip_pct": dip, "rx_dip_control_pct": control, "rx_dip_floor_pct": floor,
        "sender_closed": saw_close(sender, flow), "receiver_closed": saw_close(receiver, flow),
        "goodput_series": goodput,
    }
