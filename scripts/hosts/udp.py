"""A sequence-numbered UDP stream (sender and receiver) for the route-flip and schedule experiments.

`python -m scripts.hosts.udp send --dst 10.0.3.2 --port 5001 --pps 2000 --seconds 10`
`python -m scripts.hosts.udp recv --port 5001 --out arrivals.csv --seconds 12`
The receiver writes one `seq,arrival_epoch_s` line per datagram; analysis is in scripts.udpmetrics.
"""

from __future__ import annotations

import argparse
import logging
import signal
import socket
import struct
import sys
import time

HEADER = struct.Struct("!4sQd")  # magic, sequence number, send time
MAGIC = b"HLSU"


def send(dst: str, port: int, pps: float, seconds: float, size: int = 64) -> int:
    """Send pps datagrams per second for seconds; returns how many were sent."""
    if pps <= 0 or seconds <= 0:
        raise ValueError(f"pps {pps}, seconds {seconds}: expected both > 0")
    pad = bytes(max(0, size - HEADER.size))
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    t0 = time.monotonic()
    n = 0
    interval = 1.0 / pps
    while True:
        now = time.monotonic()
        if now - t0 >= seconds:
            break
        try:
            s.sendto(HEADER.pack(MAGIC, n, time.time()) + pad, (dst, port))
        except OSError:
            pass  # no route or buffer full while the path is down: the datagram is lost, keep the pace
        n += 1
        wait = t0 + n * interval - time.monotonic()
        if wait > 0:
            time.sleep(wait)
    return n


def recv(port: int, out: str, seconds: float) -> int:
    """Record every datagram's sequence number and arrival time for seconds; returns the count."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    s.bind(("0.0.0.0", port))
    s.settimeout(0.2)
    deadline = time.monotonic() + seconds
    n = 0
    with open(out, "w", buffering=1 << 16) as f:
        while time.monotonic() < deadline:
            try:
                data = s.recv(2048)
            except TimeoutError:
                continue
            t = time.time()
            if len(data) >= HEADER.size:
                magic, seq, _ = HEADER.unpack_from(data)
                if magic == MAGIC:
                    f.write(f"{seq},{t:.6f}\n")
                    n += 1
    return n


def main(argv: list[str] | None = None) -> int:
    """Entry point."""
    p = argparse.ArgumentParser(prog="python -m scripts.hosts.udp", description="sequence-numbered UDP stream")
    sub = p.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("send")
    a.add_argument("--dst", required=True, metavar="<ip>")
    a.add_argument("--port", type=int, default=5001, metavar="<port>")
    a.add_argument("--pps", type=float, default=1000.0, metavar="<n>")
    a.add_argument("--seconds", type=float, default=10.0, metavar="<s>")
    a.add_argument("--size", type=int, default=64, metavar="<bytes>")
    b = sub.add_parser("recv")
    b.add_argument("--port", type=int, default=5001, metavar="<port>")
    b.add_argument("--out", required=True, metavar="<file.csv>")
    b.add_argument("--seconds", type=float, default=12.0, metavar="<s>")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    try:
        if args.cmd == "send":
            print(send(args.dst, args.port, args.pps, args.seconds, args.size))
        else:
            # stopped early by SIGTERM: leave through the with-block so every arrival is flushed
            signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
            print(recv(args.port, args.out, args.seconds))
    except ValueError as exc:
        print(f"udp: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
