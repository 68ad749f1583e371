"""Benchmark: the OCS emulator's SCPI server under abuse, as a separate process (as in use).

    .venv/bin/python -m scripts.bench.ocs_server [--clients 500] [--idle 300] [--wait 20] [--ports 16]

Starts `python -m emulation ocs-emulator --listen 127.0.0.1:0 --ports N --instant` (it records the PID it
started and stops only that one), then prints three figures:
- line: the emulator's resident memory before, and its peak (VmHWM) after, one line
  `:OXC:SWIT:CONN:ADD (@1:30000000),(@17:30000016)`, with the error that line queued;
- flood: of --clients connecting at once, each sending `*IDN?`, how many had an answer within --wait s;
- idle: with --idle connections open and silent, the emulator's thread count (/proc/PID/status) and
  whether one more client is still answered.
Then, with a 1024-port emulator (every input connected, `--max-clients 50`), three more:
- lists: its peak memory after one 64 KB line of 6,500 full channel lists `(@1:2048)`;
- unread: its resident memory with 8 clients that each send 4 lines of 3,000 `STATe?` and never read;
- full: with 50 silent connections holding every slot, how long a new client waits for its answer.
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
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

BOMB = ":OXC:SWIT:CONN:ADD (@1:30000000),(@17:30000016)"
BIG = 1024
LISTS = ":OXC:SWIT:CONN:ADD " + ",".join(["(@1:2048)"] * 6500)
STATES = ";".join([":OXC:SWIT:CONN:STAT?"] * 3000)


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


@contextmanager
def emulator(*args: str) -> Iterator[tuple[int, int]]:
    """An ocs-emulator process on 127.0.0.1 (--instant): (its PID, its SCPI port); stopped by its PID."""
    proc = subprocess.Popen([sys.executable, "-m", "emulation", "ocs-emulator", "--listen", "127.0.0.1:0",
                             "--instant", *args], stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        if "listening on " not in line:
            raise RuntimeError(f"ocs-emulator did not start: {line!r}")
        port = int(line.split("listening on ", 1)[1].split()[0].rsplit(":", 1)[1])
        ask(port, "*IDN?", 5)
        yield proc.pid, port
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait()


def many_ports(wait: float) -> None:
    """The figures of a 1024-port emulator: lists, unread, full."""
    with emulator("--ports", str(BIG), "--max-clients", "50") as (pid, port):
        ask(port, f":OXC:SWIT:CONN:ONLY (@1:{BIG}),(@{BIG + 1}:{2 * BIG});*OPC?", wait)
        before = status(pid, "VmRSS")
        err = ask(port, LISTS + "\n:SYST:ERR?", wait)
        print(f"lists: {before / 1024:.0f} MiB before, peak {status(pid, 'VmHWM') / 1024:.0f} MiB after one line "
              f"of 6,500 channel lists: {err}")
        before = status(pid, "VmRSS")
        socks = [socket.create_connection(("127.0.0.1", port), timeout=wait) for _ in range(8)]
        try:
            for sk in socks:
                sk.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                sk.sendall((STATES + "\n").encode() * 4)
            time.sleep(3)
            print(f"unread: {before / 1024:.0f} MiB before, {status(pid, 'VmRSS') / 1024:.0f} MiB with 8 clients "
                  f"that sent 4 lines of 3,000 STATe? and read nothing (peak {status(pid, 'VmHWM') / 1024:.0f} MiB)")
        finally:
            for sk in socks:
                sk.close()
        socks = [socket.create_connection(("127.0.0.1", port), timeout=wait) for _ in range(50)]
        try:
            time.sleep(0.5)
            t0 = time.monotonic()
            try:
                answered = ask(port, "*IDN?", wait).startswith("HITLESS")
            except OSError:
                answered = False
            print(f"full: 50 of 50 slots held by silent connections; a new client "
                  f"{'answered' if answered else 'NOT answered'} in {time.monotonic() - t0:.1f} s (deadline {wait:.0f} s)")
        finally:
            for sk in socks:
                sk.close()


def main(argv: list[str] | None = None) -> int:
    """Entry point."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--clients", type=int, default=500, metavar="N", help="simultaneous clients (default 500)")
    p.add_argument("--idle", type=int, default=300, metavar="N", help="silent connections (default 300)")
    p.add_argument("--wait", type=float, default=20.0, metavar="S", help="answer deadline (default 20 s)")
    p.add_argument("--ports", type=int, default=16, metavar="N", help="emulator size (default 16)")
    args = p.parse_args(argv)
    with emulator("--ports", str(args.ports)) as (pid, port):
        before = status(pid, "VmRSS")
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
        print(f"line: {before / 1024:.0f} MiB before, peak {status(pid, 'VmHWM') / 1024:.0f} MiB after, answered "
              f"in {dt:.2f} s: {err}")
        t0 = time.monotonic()
        served = asyncio.run(flood(port, args.clients, args.wait))
        print(f"flood: {served} of {args.clients} simultaneous clients answered within {args.wait:.0f} s "
              f"(all done in {time.monotonic() - t0:.1f} s)")
        threads, answered = idle(port, args.idle, pid, args.wait)
        print(f"idle: {args.idle} silent connections, emulator threads {threads}; another client "
              f"{'answered' if answered else 'NOT answered'}")
        print(f"emulator rss {status(pid, 'VmRSS') / 1024:.0f} MiB, peak {status(pid, 'VmHWM') / 1024:.0f} MiB")
    many_ports(args.wait)
    return 0


if __name__ == "__main__":
    sys.exit(main())
