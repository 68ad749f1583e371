"""Sized TCP flows for the load-balancing experiment (seed 004): the server sends N bytes and closes,
the client times connect() to the server's FIN (the flow completion time).

`python -m scripts.hosts.flows serve --port 6000 --size 131072`   (one connection, then exit)
`python -m scripts.hosts.flows fetch --dst 10.2.0.2 --port 6000 [--at <epoch>]`  (prints JSON: fct_s, bytes, t_start)
"""

from __future__ import annotations

import argparse
import json
import socket
import sys
import time

CHUNK = 65536
IPPROTO_MPTCP = getattr(socket, "IPPROTO_MPTCP", 262)  # upstream Linux MPTCP (>= 5.6), include/uapi/linux/in.h


def stream_socket(mptcp: bool) -> socket.socket:
    """A TCP socket, or an MPTCP one (its subflows come from the namespace's `ip mptcp` endpoints)."""
    if not mptcp:
        return socket.socket()
    try:
        return socket.socket(socket.AF_INET, socket.SOCK_STREAM, IPPROTO_MPTCP)
    except OSError as exc:
        raise ValueError(f"mptcp: the kernel refuses IPPROTO_MPTCP sockets ({exc}); expected net.mptcp.enabled=1") \
            from None


def serve(port: int, size: int, timeout: float = 60.0, cc: str | None = None, mptcp: bool = False) -> int:
    """Accept one connection, send size bytes (with congestion control cc), close; returns the bytes sent."""
    if size <= 0:
        raise ValueError(f"size {size}: expected > 0 bytes")
    srv = stream_socket(mptcp)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if cc:
        srv.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())  # inherited by accept()
    srv.bind(("0.0.0.0", port))
    srv.listen(1)
    srv.settimeout(timeout)
    conn, _ = srv.accept()
    buf = bytes(CHUNK)
    sent = 0
    with conn:
        conn.recv(16)  # the request
        while sent < size:
            sent += conn.send(buf[: min(CHUNK, size - sent)])
        conn.shutdown(socket.SHUT_WR)
        conn.settimeout(timeout)
        try:
            conn.recv(1)  # the client's FIN
        except OSError:
            pass
    srv.close()
    return sent


def fetch(dst: str, port: int, timeout: float = 120.0, mptcp: bool = False, at: float | None = None) -> dict[str, float]:
    """Connect, request, read to EOF; returns t_start (epoch), fct_s and bytes. at: connect at this
    wall-clock time (epoch seconds; flows of many processes start together), or at once if past."""
    if at is not None:
        time.sleep(max(0.0, at - time.time()))
    t_wall = time.time()
    t0 = time.monotonic()
    s = stream_socket(mptcp)
    s.settimeout(timeout)
    s.connect((dst, port))
    got = 0
    with s:
        s.sendall(b"GET\n")
        while True:
            data = s.recv(CHUNK)
            if not data:
                break
            got += len(data)
    return {"t_start": t_wall, "fct_s": time.monotonic() - t0, "bytes": got}


def main(argv: list[str] | None = None) -> int:
    """Entry point."""
    p = argparse.ArgumentParser(prog="python -m scripts.hosts.flows", description="sized TCP flows with FCT")
    sub = p.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("serve")
    a.add_argument("--port", type=int, required=True, metavar="<port>")
    a.add_argument("--size", type=int, required=True, metavar="<bytes>")
    a.add_argument("--cc", metavar="<algorithm>", help="TCP congestion control (default: the system's)")
    b = sub.add_parser("fetch")
    b.add_argument("--dst", required=True, metavar="<ip>")
    b.add_argument("--port", type=int, required=True, metavar="<port>")
    b.add_argument("--at", type=float, metavar="<epoch>", help="connect at this wall-clock time (default: at once)")
    for q in (a, b):
        q.add_argument("--mptcp", action="store_true", help="an MPTCP socket (IPPROTO_MPTCP) instead of TCP")
    args = p.parse_args(argv)
    try:
        if args.cmd == "serve":
            print(serve(args.port, args.size, cc=args.cc, mptcp=args.mptcp))
        else:
            print(json.dumps(fetch(args.dst, args.port, mptcp=args.mptcp, at=args.at)))
    except (ValueError, OSError) as exc:
        print(f"flows: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
