"""Thesis metrics from sender/receiver captures (seed 000 section 4.0, R13).

- loss: retransmitted / sent data packets (a retransmission ratio, not true drops);
- link unavailability: the largest gap between consecutive packets of the stream in the sender's
  capture that overlaps a window around the reconfiguration;
- throughput over time (payload per bin), RTT over time (tshark's ack_rtt);
- receiver-side drops (data segments sent but never seen at the receiver), reordering (first
  transmissions that reach the receiver below the highest sequence already seen), RTO estimate;
- spurious retransmissions: copies the receiver got twice (the first copy was late, not lost).
Pure functions over TcpPacket lists, so they are tested on synthetic captures.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from scripts.hosts.capture import TcpPacket

Flow = tuple[str, int, str, int]


@dataclass(slots=True)
class Gap:
    """The largest silence of a stream: its length and where it starts and ends (epoch s)."""

    ms: float
    start: float
    end: float


@dataclass(slots=True)
class StreamMetrics:
    """Metrics of one TCP stream around one reconfiguration instant."""

    sent: int
    retransmissions: int
    retransmissions_before_event: int  # the emulation's, not the procedure's: it had not started
    loss_pct: float
    max_gap_ms: float
    gap_start: float
    gap_end: float
    rto_estimate: int
    rtos_before_event: int
    lost_packets: int | None
    reordered: int | None
    spurious_retransmissions: int | None  # from the event on
    throughput_mbps: float
    throughput_dip_pct: float
    rtt_ms_median: float | None
    rtt_ms_max: float | None


def percentile(sorted_vals: list[float], p: float) -> float:
    """The p-th percentile (nearest rank) of sorted values."""
    if not sorted_vals:
        return float("nan")
    k = max(0, min(len(sorted_vals) - 1, math.ceil(p / 100 * len(sorted_vals)) - 1))
    return sorted_vals[k]


def data_flow(packets: Sequence[TcpPacket]) -> Flow:
    """The direction that carries the most payload (the stream's data direction)."""
    volume: dict[Flow, int] = {}
    for p in packets:
        volume[p.flow] = volume.get(p.flow, 0) + p.length
    if not volume or max(volume.values()) == 0:
        raise ValueError("capture: no TCP payload; expected a stream with data")
    return max(volume, key=volume.__getitem__)


def of_connection(packets: Sequence[TcpPacket], flow: Flow) -> list[TcpPacket]:
    """The packets of one connection, both directions, in time order."""
    rev = (flow[2], flow[3], flow[0], flow[1])
    return sorted((p for p in packets if p.flow in (flow, rev)), key=lambda p: p.t)


def data_packets(packets: Sequence[TcpPacket], flow: Flow) -> list[TcpPacket]:
    """The packets of `flow` that carry payload, in time order."""
    return sorted((p for p in packets if p.flow == flow and p.length > 0), key=lambda p: p.t)


def loss_ratio(data: Sequence[TcpPacket]) -> tuple[int, int, float]:
    """(sent, retransmitted, percent): the thesis's packet loss."""
    sent = len(data)
    retx = sum(1 for p in data if p.retrans)
    return sent, retx, (100.0 * retx / sent if sent else 0.0)


def largest_gap(times: Sequence[float], lo: float | None = None, hi: float | None = None) -> Gap:
    """The largest gap between consecutive times whose interval overlaps [lo, hi] (all when None)."""
    ts = sorted(times)
    best = Gap(0.0, ts[0] if ts else 0.0, ts[0] if ts else 0.0)
    for a, b in zip(ts, ts[1:], strict=False):
        if lo is not None and b < lo:
            continue
        if hi is not None and a > hi:
            break
        if (b - a) * 1000 > best.ms:
            best = Gap((b - a) * 1000, a, b)
    return best


def throughput_series(data: Sequence[TcpPacket], t0: float, bin_s: float = 0.1,
                      t_end: float | None = None, goodput: bool = False) -> list[tuple[float, float]]:
    """(time since t0, Mbit/s) per bin of payload sent; goodput leaves retransmissions out."""
    if bin_s <= 0:
        raise ValueError(f"bin {bin_s}: expected > 0 s")
    end = t_end if t_end is not None else (max((p.t for p in data), default=t0))
    n = max(1, int((end - t0) / bin_s) + 1)
    bins = [0] * n
    for p in data:
        if goodput and p.retrans:
            continue
        i = int((p.t - t0) / bin_s + 1e-9)
        if 0 <= i < n:
            bins[i] += p.length
    return [(i * bin_s, b * 8 / bin_s / 1e6) for i, b in enumerate(bins)]


def throughput_dip(series: Sequence[tuple[float, float]], t_event: float, window_s: float = 2.0,
                   baseline_s: float = 3.0) -> tuple[float, float]:
    """(baseline Mbit/s, dip %): median of the bins before t_event vs the lowest bin after it."""
    before = [v for t, v in series if t_event - baseline_s <= t < t_event]
    after = [v for t, v in series if t_event <= t < t_event + window_s]
    if not before or not after:
        return 0.0, 0.0
    base = statistics.median(before)
    if base <= 0:
        return 0.0, 0.0
    return base, max(0.0, 100.0 * (1 - min(after) / base))


def rtt_series(packets: Sequence[TcpPacket], flow: Flow, t0: float) -> list[tuple[float, float]]:
    """(time since t0, RTT ms) from the ACKs of `flow` (the reverse direction) that carry ack_rtt."""
    rev = (flow[2], flow[3], flow[0], flow[1])
    return [(p.t - t0, p.ack_rtt * 1000) for p in packets if p.flow == rev and p.ack_rtt is not None]


def rto_estimate(data: Sequence[TcpPacket], rto_min_s: float = 0.2) -> int:
    """Retransmissions that follow a silence of at least ~RTO_min: timeouts, not fast retransmits."""
    count = 0
    for a, b in zip(data, data[1:], strict=False):
        if b.retrans and not b.fast_retrans and b.t - a.t >= 0.8 * rto_min_s:
            count += 1
    return count


def receiver_drops(sender: Sequence[TcpPacket], receiver: Sequence[TcpPacket], flow: Flow) -> int:
    """Data transmissions of `flow` in the sender capture that never reached the receiver (true drops).

    Only segments below the highest sequence the receiver saw count: the tail still queued when the
    captures stopped is in flight, not lost."""
    got: dict[tuple[int, int], int] = {}
    top = -1
    for p in receiver:
        if p.flow == flow and p.length > 0:
            got[(p.seq, p.length)] = got.get((p.seq, p.length), 0) + 1
            top = max(top, p.seq + p.length)
    lost = 0
    for p in sender:
        if p.flow == flow and p.length > 0 and p.seq + p.length <= top:
            key = (p.seq, p.length)
            if got.get(key, 0) > 0:
                got[key] -= 1
            else:
                lost += 1
    return lost


def reordering(sender: Sequence[TcpPacket], receiver: Sequence[TcpPacket], flow: Flow,
               since: float | None = None) -> int:
    """Segments whose first arrival came after a higher sequence, though none of their copies was lost
    (so the lateness is reordering, not a retransmission after a drop); from `since` on when given."""
    sent: dict[tuple[int, int], int] = {}
    for p in sender:
        if p.flow == flow and p.length > 0:
            sent[(p.seq, p.length)] = sent.get((p.seq, p.length), 0) + 1
    arrivals = sorted((p for p in receiver if p.flow == flow and p.length > 0), key=lambda p: p.t)
    got: dict[tuple[int, int], int] = {}
    for p in arrivals:
        got[(p.seq, p.length)] = got.get((p.seq, p.length), 0) + 1
    top = -1
    late: set[tuple[int, int]] = set()
    seen: set[tuple[int, int]] = set()
    for p in arrivals:
        key = (p.seq, p.length)
        if key not in seen and p.seq + p.length <= top and (since is None or p.t >= since):
            late.add(key)
        seen.add(key)
        top = max(top, p.seq + p.length)
    return sum(1 for k in late if got.get(k, 0) >= sent.get(k, 0))


def spurious_retransmissions(receiver: Sequence[TcpPacket], flow: Flow, since: float) -> int:
    """Data segments of `flow` that reached the receiver again from `since` on: each repeat is a
    retransmission whose original was not lost but late (reordering or a premature timer)."""
    seen: set[tuple[int, int]] = set()
    repeats = 0
    for p in sorted((p for p in receiver if p.flow == flow and p.length > 0), key=lambda p: p.t):
        key = (p.seq, p.length)
        if key in seen and p.t >= since:
            repeats += 1
        seen.add(key)
    return repeats


def stream_metrics(sender: Sequence[TcpPacket], t_event: float, receiver: Sequence[TcpPacket] | None = None,
                   window: tuple[float, float] = (1.0, 3.0), rto_min_s: float = 0.2,
                   bin_s: float = 0.1, until: float | None = None) -> StreamMetrics:
    """All metrics of the stream in a sender capture around t_event (epoch s); drops and reordering
    count only segments sent before `until` (the tail may still be in flight when captures stop)."""
    flow = data_flow(sender)
    conn = of_connection(sender, flow)
    data = data_packets(sender, flow)
    sent, retx, loss = loss_ratio(data)
    gap = largest_gap([p.t for p in conn], t_event - window[0], t_event + window[1])
    t0 = conn[0].t
    series = throughput_series(data, t0, bin_s)
    base, dip = throughput_dip(series, t_event - t0)
    rtts = [v for _, v in rtt_series(sender, flow, t0)]
    early = [p for p in sender if until is None or p.t <= until]
    return StreamMetrics(
        sent=sent, retransmissions=retx, loss_pct=loss, max_gap_ms=gap.ms, gap_start=gap.start,
        retransmissions_before_event=sum(1 for p in data if p.retrans and p.t < t_event),
        gap_end=gap.end, rto_estimate=rto_estimate(data, rto_min_s),
        rtos_before_event=rto_estimate([p for p in data if p.t < t_event], rto_min_s),
        lost_packets=receiver_drops(early, receiver, flow) if receiver is not None else None,
        reordered=reordering(early, receiver, flow) if receiver is not None else None,
        spurious_retransmissions=spurious_retransmissions(receiver, flow, t_event) if receiver is not None else None,
        throughput_mbps=base, throughput_dip_pct=dip,
        rtt_ms_median=statistics.median(rtts) if rtts else None, rtt_ms_max=max(rtts) if rtts else None)


@dataclass(slots=True)
class UdpMetrics:
    """A sequence-numbered UDP stream at the receiver."""

    sent: int
    received: int
    lost: int
    reordered: int
    max_gap_ms: float
    gap_start: float
    gap_end: float


def parse_arrivals(text: str) -> list[tuple[int, float]]:
    """(seq, arrival epoch s) pairs from the receiver's `seq,time` lines."""
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                seq, t = line.split(",")
                out.append((int(seq), float(t)))
            except ValueError:
                raise ValueError(f"arrivals line {n}: {line!r}; expected 'seq,epoch_seconds'") from None
    return out


def udp_metrics(arrivals: Sequence[tuple[int, float]], sent: int, lo: float | None = None,
                hi: float | None = None) -> UdpMetrics:
    """Loss, reordering and the largest arrival gap overlapping [lo, hi] of a UDP stream."""
    seen = set()
    top, reordered = -1, 0
    for seq, _ in arrivals:
        if seq < top:
            reordered += 1
        top = max(top, seq)
        seen.add(seq)
    gap = largest_gap([t for _, t in arrivals], lo, hi) if arrivals else Gap(0.0, 0.0, 0.0)
    return UdpMetrics(sent, len(arrivals), sent - len(seen), reordered, gap.ms, gap.start, gap.end)
