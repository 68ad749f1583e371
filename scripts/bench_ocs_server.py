"""Benchmark: the OCS emulator's SCPI server under abuse, as a separate process (as in use).

    .venv/bin/python scripts/bench_ocs_server.py [--clients 500] [--idle 300] [--wait 20] [--ports 16]

Starts `python -m emulation ocs-emulator --listen 127.0.0.1:0 --ports N --instant` (it records the PID it
started and stops only that one), then prints three figures:
- line: the emulator's resident memory before, and its peak (VmHWM) after, one line
  `:OXC:SWIT:CONN:ADD (@1:30000000),(@17:30000016)`, with the error that line queued;
- flood: of --clients connecting at once, each sending `*IDN?`, how many had an answer within --wait s;
- idle: with --idle connections open and silent, the emulator's thread count (/proc/PID/status) and
  whether one more client is still answered.
All traffic is on 127.0.0.1. To measure another checkout's emulator, put it first on PYTHONPATH.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

BOMB = ":OXC:SWIT:CONN:ADD (@1:30000000),(@17:30000016)"


def status(pid: int, key: str) -> int:
    """A number field of /proc/PID/status (kB for memory fields)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    raise KeyError(key)


def ask(port: int, line: str, timeout: float) -> str:
    """One line sent, one answer read (a fresh connection)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        f = s.makefile("rwb")
        f.write(line.encode() + b"\n")
        f.flush()
        return f.readline().decode(errors="replace").strip()


async def _idn(port: int) -> bool:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(b"*IDN?\n")
        await writer.drain()
        return (await reader.readline()).startswith(b"HITLESS")
    finally:
        writer.close()


async def _one(port: int, wait: float) -> bool:
    try:
        return await asyncio.wait_for(_idn(port), wait)
    except (asyncio.TimeoutError, OSError):
        return False


async def flood(port: int, clients: int, wait: float) -> int:
    """How many of `clients` simultaneous clients got their *IDN? answered within `wait` seconds."""
    return sum(await asyncio.gather(*(_one(port, wait) for _ in range(clients))))


def idle(port: int, n: int, pid: int, timeout: float) -> tuple[int, bool]:
    """(the emulator's threads with n silent connections open, whether another client is answered)."""
    socks = []
    try:
        for _ in range(n):
            socks.append(socket.create_connection(("127.0.0.1", port), timeout=timeout))
        time.sleep(0.5)  # let the server take them all
        threads = status(pid, "Threads")
        try:
            answered = ask(port, "*IDN?", timeout).startswith("HITLESS")
        except OSError:
            answered = False
        return threads, answered
    finally:
        for s in socks:
            s.close()


def main(argv: list[str] | None = None) -> int:
    """Entry point."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--clients", type=int, default=500, metavar="N", help="simultaneous clients (default 500)")
    p.add_argument("--idle", type=int, default=300, metavar="N", help="silent connections (default 300)")
    p.add_argument("--wait", type=float, default=20.0, metavar="S", help="answer deadline (default 20 s)")
    p.add_argument("--ports", type=int, default=16, metavar="N", help="emulator size (default 16)")
    args = p.parse_args(argv)
    proc = subprocess.Popen([sys.executable, "-m", "emulation", "ocs-emulator", "--listen", "127.0.0.1:0",
                             "--ports", str(args.ports), "--instant"], stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        if "listening on " not in line:
            print(f"ocs-emulator did not start: {line!r}", file=sys.stderr)
            return 1
        port = int(line.split("listening on ", 1)[1].split()[0].rsplit(":", 1)[1])
        ask(port, "*IDN?", 5)
        before = status(proc.pid, "VmRSS")
        t0 = time.monotonic()
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=args.wait) as s:
                f = s.makefile("rwb")
                f.write(BOMB.encode() + b"\n:SYST:ERR?\n")
                f.flush()
                err = f.readline().decode(errors="replace").strip()
        except OSError as exc:
            err = f"no answer: {exc}"
        dt = time.monotonic() - t0
        peak = status(proc.pid, "VmHWM") if proc.poll() is None else -1
        print(f"line: {before / 1024:.0f} MiB before, peak {peak / 1024:.0f} MiB after, answered in "
              f"{dt:.2f} s: {err}")
        t0 = time.monotonic()
        served = asyncio.run(flood(port, args.clients, args.wait))
        print(f"flood: {served} of {args.clients} simultaneous clients answered within {args.wait:.0f} s "
              f"(all done in {time.monotonic() - t0:.1f} s)")
        threads, answered = idle(port, args.idle, proc.pid, args.wait)
        print(f"idle: {args.idle} silent connections, emulator threads {threads}; another client "
              f"{'answered' if answered else 'NOT answered'}")
        print(f"emulator rss {status(proc.pid, 'VmRSS') / 1024:.0f} MiB, peak {status(proc.pid, 'VmHWM') / 1024:.0f} MiB")
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
