"""Packet captures: tcpdump at the hosts, read back with tshark into per-packet records.

The fields are the thesis's (seed 000 R13): payload length, retransmission flag, ACK RTT and the
timestamp of every packet of the stream as seen by the capture (Table 4.6).
"""

from __future__ import annotations

import logging
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

TSHARK_FIELDS = (
    "frame.time_epoch", "ip.src", "tcp.srcport", "ip.dst", "tcp.dstport", "tcp.stream", "tcp.seq",
    "tcp.len", "tcp.flags.syn", "tcp.flags.fin", "tcp.analysis.retransmission",
    "tcp.analysis.fast_retransmission", "tcp.analysis.out_of_order", "tcp.analysis.ack_rtt",
    "tcp.ack", "tcp.window_size_value", "ip.id", "tcp.flags.reset", "tcp.analysis.spurious_retransmission",
)


@dataclass(slots=True)
class TcpPacket:
    """One TCP packet of a capture (times in seconds since the epoch, relative sequence numbers)."""

    t: float
    src: str
    sport: int
    dst: str
    dport: int
    stream: int
    seq: int
    length: int
    syn: bool = False
    fin: bool = False
    retrans: bool = False
    fast_retrans: bool = False
    out_of_order: bool = False
    ack_rtt: float | None = None
    ack: int = 0
    window: int | None = None  # the raw window field (0 is a zero window whatever the scale)
    ip_id: int = 0
    rst: bool = False
    spurious: bool = False

    @property
    def flow(self) -> tuple[str, int, str, int]:
        """(src, sport, dst, dport)."""
        return (self.src, self.sport, self.dst, self.dport)


def _flag(v: str) -> bool:
    return v not in ("", "0", "False")


def parse_tshark_fields(text: str) -> list[TcpPacket]:
    """Packets from `tshark -T fields` output with TSHARK_FIELDS, tab separated."""
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        f = line.split("\t")
        if len(f) < len(TSHARK_FIELDS):
            f += [""] * (len(TSHARK_FIELDS) - len(f))
        if not f[2] or not f[1]:
            continue  # not TCP over IPv4
        try:
            out.append(TcpPacket(
                t=float(f[0]), src=f[1], sport=int(f[2]), dst=f[3], dport=int(f[4]), stream=int(f[5]),
                seq=int(f[6] or 0), length=int(f[7] or 0), syn=_flag(f[8]), fin=_flag(f[9]),
                retrans=_flag(f[10]), fast_retrans=_flag(f[11]), out_of_order=_flag(f[12]),
                ack_rtt=float(f[13]) if f[13] else None, ack=int(f[14] or 0),
                window=int(f[15]) if f[15] else None, ip_id=int(f[16], 0) if f[16] else 0, rst=_flag(f[17]),
                spurious=_flag(f[18])))
        except ValueError as exc:
            raise ValueError(f"tshark line {n}: {line!r}: {exc}; expected {len(TSHARK_FIELDS)} fields") from None
    return out


def tshark_bin() -> str:
    """The tshark executable; raise if it is not installed."""
    path = shutil.which("tshark")
    if not path:
        raise RuntimeError("tshark: not found on PATH; install it (make setup)")
    return path


def read_tcp(pcap: str | Path, display_filter: str = "tcp") -> list[TcpPacket]:
    """Every TCP packet of a pcap, with tshark's TCP analysis."""
    if not Path(pcap).is_file():
        raise ValueError(f"pcap {str(pcap)!r}: not a file; expected a capture")
    cmd = [tshark_bin(), "-n", "-r", str(pcap), "-Y", display_filter, "-T", "fields", "-E", "separator=/t",
           "-o", "tcp.relative_sequence_numbers:TRUE"]
    for field in TSHARK_FIELDS:
        cmd += ["-e", field]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if res.returncode != 0:
        err = [ln for ln in res.stderr.splitlines() if "dangerous" not in ln]
        raise RuntimeError(f"tshark {pcap}: exit {res.returncode}: {' '.join(err)[:300]}")
    return parse_tshark_fields(res.stdout)


def tcpdump_command(intf: str, pcap: str | Path, bpf: str = "tcp or udp", snaplen: int = 128) -> list[str]:
    """The tcpdump command line for a header-only capture on one interface (run in the host).

    --immediate-mode: libpcap's TPACKET_V3 ring hands a block to tcpdump only when it is full or its
    timeout (1 s) expires, and a stopped tcpdump never reads the blocks still in the ring: the last
    second of every run (FIN included) was counted "received by filter" and never written."""
    return ["tcpdump", "-Z", "root", "-i", intf, "-s", str(snaplen), "-n", "-U", "--immediate-mode",
            "-w", str(pcap), bpf]


@dataclass(slots=True)
class CaptureStats:
    """tcpdump's own count at exit: packets written vs packets the kernel filter passed to it."""

    captured: int
    received: int
    dropped: int

    @property
    def unwritten(self) -> int:
        """Packets the filter accepted that never reached the file."""
        return max(0, self.received - self.captured)


def parse_tcpdump_stats(text: str) -> CaptureStats | None:
    """The exit statistics of a tcpdump log (None when tcpdump did not print them: it was killed)."""
    found: dict[str, int] = {}
    for key, pattern in (("captured", r"(\d+) packets? captured"), ("received", r"(\d+) packets? received by filter"),
                         ("dropped", r"(\d+) packets? dropped by kernel")):
        m = re.search(pattern, text)
        if m:
            found[key] = int(m.group(1))
    if len(found) < 3:
        return None
    return CaptureStats(**found)
