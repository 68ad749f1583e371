"""Synthetic TCP captures with a known outage, for the metrics tests.

Frames are packed directly (struct) and written as a classic pcap: building thousands of scapy
packets takes tens of seconds on a busy machine, this takes milliseconds.
"""

from __future__ import annotations

import socket
import struct
from dataclasses import dataclass, field
from pathlib import Path

FLAGS = {"S": 0x02, "SA": 0x12, "A": 0x10, "PA": 0x18, "FA": 0x11}


@dataclass(slots=True)
class Frame:
    """One captured frame: time and bytes."""

    time: float
    data: bytes

    def copy(self) -> Frame:
        """A copy (the receiver's capture of the same frame)."""
        return Frame(self.time, self.data)


def tcp_frame(src: str, dst: str, sport: int, dport: int, seq: int, ack: int, flags: str, n: int) -> bytes:
    """Ethernet/IPv4/TCP bytes with n payload bytes (checksums left 0: tshark does not check them)."""
    tcp = struct.pack("!HHIIBBHHH", sport, dport, seq, ack, 5 << 4, FLAGS[flags], 65535, 0, 0)
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp) + n, 0, 0x4000, 64, 6, 0,
                     socket.inet_aton(src), socket.inet_aton(dst))
    return b"\x02\0\0\0\0\x02" + b"\x02\0\0\0\0\x01" + b"\x08\x00" + ip + tcp + b"x" * n


def write_pcap(path: Path, frames: list[Frame]) -> None:
    """A classic little-endian pcap (microsecond stamps, Ethernet)."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for fr in frames:
            sec, usec = divmod(round(fr.time * 1e6), 1_000_000)
            f.write(struct.pack("<IIII", sec, usec, len(fr.data), len(fr.data)) + fr.data)

SND, RCV = "10.0.2.2", "10.0.3.2"
SPORT, DPORT = 40000, 5201


@dataclass
class Synth:
    """A stream sending one MSS every `interval` s from t0; the link is down in [down, up)."""

    t0: float = 1000.0
    duration: float = 4.0
    interval: float = 0.002
    mss: int = 1000
    down: float = 2.0
    up: float = 2.5
    rto: float = 0.2
    sender: list = field(default_factory=list)
    receiver: list = field(default_factory=list)
    sent: int = 0
    retrans: int = 0
    lost: set = field(default_factory=set)

    def _pkt(self, src, dst, sport, dport, seq, ack, flags, n, t):
        return Frame(t, tcp_frame(src, dst, sport, dport, seq, ack, flags, n))

    def _data(self, seq: int, t: float) -> None:
        p = self._pkt(SND, RCV, SPORT, DPORT, seq, 1, "PA", self.mss, t)
        self.sender.append(p)
        self.sent += 1
        if self.t0 + self.down <= t < self.t0 + self.up:
            self.lost.add(seq)
            return
        self.receiver.append(self._pkt(SND, RCV, SPORT, DPORT, seq, 1, "PA", self.mss, t + 0.0002))
        ack = self._pkt(RCV, SND, DPORT, SPORT, 1, seq + self.mss, "A", 0, t + 0.0004)
        self.sender.append(ack)
        self.receiver.append(ack.copy())
        self.receiver[-1].time = t + 0.0002

    def build(self) -> Synth:
        """Generate both captures: data until the outage, RTO retransmissions with backoff, then data."""
        t = self.t0
        self.sender.append(self._pkt(SND, RCV, SPORT, DPORT, 0, 0, "S", 0, t - 0.002))
        self.sender.append(self._pkt(RCV, SND, DPORT, SPORT, 0, 1, "SA", 0, t - 0.0015))
        self.sender.append(self._pkt(SND, RCV, SPORT, DPORT, 1, 1, "A", 0, t - 0.001))
        self.receiver.extend(p.copy() for p in self.sender)
        seq = 1
        while t < self.t0 + self.down:
            self._data(seq, t)
            seq += self.mss
            t += self.interval
        # the first segment sent into the dead link; it is retransmitted at each RTO
        first_lost = seq
        self._data(seq, t)
        seq += self.mss
        rto, tr = self.rto, t
        while True:
            tr += rto
            self._data(first_lost, tr)
            self.retrans += 1
            if tr >= self.t0 + self.up:
                break
            rto *= 2
        t = tr + self.interval
        while t < self.t0 + self.duration:
            self._data(seq, t)
            seq += self.mss
            t += self.interval
        return self

    def write(self, d: Path) -> tuple[Path, Path]:
        """Write sender.pcap and receiver.pcap into d."""
        s, r = d / "sender.pcap", d / "receiver.pcap"
        write_pcap(s, sorted(self.sender, key=lambda p: p.time))
        write_pcap(r, sorted(self.receiver, key=lambda p: p.time))
        return s, r
