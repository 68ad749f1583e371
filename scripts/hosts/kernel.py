"""Kernel TCP counters: nstat snapshots (retransmissions, timeouts) and ss samples (cwnd, RTT).

Both run inside a host's network namespace (counters are per namespace), so the numbers belong to
that host's connections only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

NSTAT_COMMAND = ["nstat", "-asz"]  # absolute values, no history update, zeros included

# the counters the experiments report (name in nstat -> key in the results)
NSTAT_KEYS = {
    "TcpOutSegs": "out_segs",
    "TcpRetransSegs": "retrans_segs",
    "TcpExtTCPTimeouts": "timeouts",
    "TcpExtTCPLossProbes": "loss_probes",
    "TcpExtTCPFastRetrans": "fast_retrans",
    "TcpExtTCPSpuriousRTOs": "spurious_rtos",
    "TcpExtTCPOFOQueue": "ofo_queue",
    "TcpExtTCPSACKReorder": "sack_reorder",
    "IpExtInNoRoutes": "in_no_routes",
}


def parse_nstat(text: str) -> dict[str, int]:
    """Counters from `nstat -a` output (`#kernel` header, then `Name value rate` lines)."""
    out = {}
    for line in text.splitlines():
        f = line.split()
        if len(f) >= 2 and not line.startswith("#") and f[1].isdigit():
            out[f[0]] = int(f[1])
    return out


def nstat_delta(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    """after - before for the counters in NSTAT_KEYS, under their short keys."""
    return {key: after.get(name, 0) - before.get(name, 0) for name, key in NSTAT_KEYS.items()}


@dataclass(slots=True)
class SsSample:
    """One ss -tin sample of one connection."""

    t: float
    peer: str
    cwnd: int | None
    rtt_ms: float | None
    rto_ms: float | None
    retrans_total: int | None
    cc: str | None = None
    local: str = ""
    bytes_acked: int | None = None


SS_MARK = "@@"
_ADDR = re.compile(r"^\S+\s+\d+\s+\d+\s+(\S+)\s+(\S+)")


def ss_sampler_script(dst: str, period_s: float, out: str) -> str:
    """A shell loop that appends timestamped `ss -tin` samples for connections to dst to a file."""
    return (f"while :; do echo {SS_MARK} $(date +%s.%N) >> {out}; "
            f"ss -tinH dst {dst} >> {out} 2>/dev/null; sleep {period_s}; done")


def parse_ss(text: str) -> list[SsSample]:
    """Samples from the sampler's output: `@@ <epoch>` lines, then `ss -tinH` entries (2 lines each)."""
    out: list[SsSample] = []
    t = 0.0
    peer = local = ""
    for line in text.splitlines():
        if line.startswith(SS_MARK):
            try:
                t = float(line.split()[1])
            except (IndexError, ValueError):
                raise ValueError(f"ss sample mark {line!r}: expected '{SS_MARK} <epoch seconds>'") from None
            continue
        m = _ADDR.match(line)
        if m and not line.startswith((" ", "\t")):
            local, peer = m.group(1), m.group(2)
            continue
        if "cwnd:" in line or "rtt:" in line:
            first = line.split()[0] if line.split() else ""
            out.append(SsSample(t, peer, _int(line, r"\bcwnd:(\d+)"), _float(line, r"\brtt:([\d.]+)"),
                                _float(line, r"\brto:([\d.]+)"), _int(line, r"\bretrans:\d+/(\d+)"),
                                first if first.isalpha() else None, local, _int(line, r"\bbytes_acked:(\d+)")))
    return out


def _int(line: str, pat: str) -> int | None:
    m = re.search(pat, line)
    return int(m.group(1)) if m else None


def _float(line: str, pat: str) -> float | None:
    m = re.search(pat, line)
    return float(m.group(1)) if m else None
