"""Processes inside emulated hosts (Mininet nodes): start, stop by PID, and the standard probes
(tcpdump, ss sampling, nstat snapshots). Every process started here is recorded and stopped by PID."""

from __future__ import annotations

import logging
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from emulation.priority import HOST_NICE, nice_argv
from scripts.hosts.capture import tcpdump_command
from scripts.hosts.kernel import NSTAT_COMMAND, parse_nstat, ss_sampler_script

log = logging.getLogger(__name__)

ROOT = Path(__file__).resolve().parents[2]  # host processes run `python -m scripts.x` from here


class HostProcs:
    """The processes one run started in the emulation's hosts; stop() ends them all by PID. With
    `record` (emulation.network.Emulation.record_process) each also goes into the run record, so
    `make clean-net` stops it after a killed run."""

    def __init__(self, record: Callable[[Any, str], None] | None = None) -> None:
        self.procs: list[tuple[str, subprocess.Popen]] = []
        self.captures: list[subprocess.Popen] = []
        self.record = record

    def start(self, node: Any, argv: list[str], what: str, out: str | Path | None = None) -> subprocess.Popen:
        """Start argv in a host's namespace (Mininet popen) at the hosts' priority (emulation/priority.py),
        output to a file or discarded."""
        stdout = open(out, "wb") if out else subprocess.DEVNULL  # noqa: SIM115 - closed after Popen
        try:
            proc = node.popen(nice_argv(HOST_NICE, argv), stdout=stdout, stderr=subprocess.STDOUT, cwd=str(ROOT))
        finally:
            if out:
                stdout.close()
        self.procs.append((what, proc))
        if self.record is not None:
            self.record(proc, what)
        log.debug("%s: pid %d: %s", what, proc.pid, " ".join(argv))
        return proc

    def tcpdump(self, node: Any, intf: str, pcap: Path, bpf: str = "tcp or udp") -> subprocess.Popen:
        """A header-only capture on a host interface; waits until tcpdump listens."""
        log_path = pcap.with_suffix(".tcpdump.log")
        proc = self.start(node, tcpdump_command(intf, pcap, bpf), f"tcpdump {intf}", log_path)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            if "listening on" in log_path.read_text(errors="replace"):
                self.captures.append(proc)
                return proc
            if proc.poll() is not None:
                raise RuntimeError(f"tcpdump on {intf}: exited: {log_path.read_text(errors='replace').strip()}")
            time.sleep(0.02)
        raise RuntimeError(f"tcpdump on {intf}: not listening after 5 s")

    def ss_sampler(self, node: Any, dst: str, out: Path, period_s: float = 0.1) -> subprocess.Popen:
        """Sample `ss -tin` for connections to dst every period_s into out."""
        return self.start(node, ["sh", "-c", ss_sampler_script(dst, period_s, str(out))], f"ss {dst}")

    def stop(self, proc: subprocess.Popen, sig: int = signal.SIGINT, timeout: float = 5.0) -> int | None:
        """Stop one process (SIGINT first: tcpdump flushes), then SIGKILL; returns its exit code."""
        if proc.poll() is None:
            try:
                proc.send_signal(sig)
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=timeout)
        return proc.returncode

    def stop_captures(self, timeout: float = 10.0) -> list[int | None]:
        """Stop the captures first and one by one (SIGINT, then wait for the exit: tcpdump writes what
        it holds and prints its statistics); a capture killed instead loses its tail."""
        codes = [self.stop(proc, signal.SIGINT, timeout) for proc in self.captures]
        self.captures.clear()
        return codes

    def stop_all(self) -> None:
        """Stop every process this object started, the captures first (they flush), then newest first."""
        self.stop_captures()
        for _what, proc in reversed(self.procs):
            self.stop(proc, signal.SIGTERM)
        self.procs.clear()


def nstat(node: Any) -> dict[str, int]:
    """Absolute TCP/IP counters of a host's namespace."""
    return parse_nstat(node.cmd(" ".join(NSTAT_COMMAND)))


def wait_listening(node: Any, port: int, proto: str = "t", timeout: float = 5.0) -> None:
    """Wait until something in the host listens on port (proto t: TCP, u: UDP)."""
    deadline = time.monotonic() + timeout
    flag = "-Htln" if proto == "t" else "-Huln"
    while f":{port} " not in node.cmd(f"ss {flag} sport = :{port}") + " ":
        if time.monotonic() > deadline:
            raise RuntimeError(f"{node.name}: nothing listens on {proto} port {port} after {timeout:.0f} s")
        time.sleep(0.05)


def host_intf(node: Any) -> str:
    """The host's (only) data interface."""
    return node.defaultIntf().name
