"""A P4 switch process outside Mininet: a `Target`'s switch started with the simple_switch_grpc command
shape on given interfaces (or none), a P4Runtime server on a free loopback port, awaited until it
listens, and stopped by its own PID. The PTF runner, the tests and the benchmarks use it.

    with switch_process(Target.from_env(), "build/fabric.json", {1: "veth0"}, log_dir=tmp) as sw:
        P4RuntimeClient(sw.grpc_addr, device_id=sw.device_id) ...
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from emulation.priority import switch_argv
from p4sim.target import CPU_PORT, Target, free_port, label

log = logging.getLogger(__name__)

READY_TIMEOUT_S = 20.0


def wait_ready(proc: subprocess.Popen, port: int, timeout: float = READY_TIMEOUT_S) -> None:
    """Wait until the switch accepts TCP connections on 127.0.0.1:port; RuntimeError if it exits first
    or does not listen within `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"switch exited with code {proc.returncode} before listening on {port}")
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.settimeout(0.5)
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.02)
    raise RuntimeError(f"switch not listening on 127.0.0.1:{port} after {timeout:.0f} s")


# how long a SIGKILLed switch process may take to exit: a p4sim host of 20 devices closes hundreds of
# packet sockets, each waiting for the kernel's RCU grace period, over 5 s on a loaded machine
KILLED_EXIT_S = 120.0


def stop(proc: subprocess.Popen, timeout: float = 5.0, group: bool = False) -> None:
    """Stop a process by its PID: SIGTERM, then after `timeout` seconds SIGKILL (to its process group
    with `group`: it leads one), then wait for its exit (KILLED_EXIT_S)."""
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        if group:
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
        proc.wait(KILLED_EXIT_S)


@dataclass(slots=True)
class SwitchProcess:
    """A running switch: its process, P4Runtime address, device id and log file (None: discarded)."""

    label: str
    command: list[str]
    proc: subprocess.Popen
    grpc_addr: str
    device_id: int
    log_path: Path | None

    @property
    def pid(self) -> int:
        """The switch's process id."""
        return self.proc.pid

    def log_tail(self, lines: int = 5) -> str:
        """The last lines of the switch's output, for failure messages."""
        return " | ".join(meaningful_lines(self._log())[-lines:])

    def log_head(self, lines: int = 3) -> str:
        """The first lines of the switch's output (where bmv2 says why it refuses a JSON)."""
        return " | ".join(meaningful_lines(self._log())[:lines])

    def stop(self) -> None:
        """Stop the switch by its PID (safe to call twice)."""
        stop(self.proc)

    def _log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace") if self.log_path else ""
        except OSError:
            return ""


def meaningful_lines(text: str) -> list[str]:
    """The meaningful lines of a switch's output."""
    return [x.strip() for x in text.splitlines() if x.strip() and not x.startswith("Calling target program-options")]


def start_switch(target: Target, json_path: str | Path | None = None, ports: dict[int, str] | None = None, *,
                 log_dir: str | Path | None = None, log_file: str | Path | None = None, device_id: int = 1, cpu_port: int = CPU_PORT,
                 grpc_port: int = 0, timeout: float = READY_TIMEOUT_S, options: tuple[str, ...] = (),
                 target_options: tuple[str, ...] = ()) -> SwitchProcess:
    """Start target's switch (`--no-p4` without a JSON) at the switches' priority (emulation/priority.py)
    and wait until its P4Runtime server listens; RuntimeError with the start of its log if it exits or
    does not listen (the process is stopped). Its output goes to `log_file`, else to
    `<label>-<grpc port>.log` in `log_dir`, else nowhere."""
    port = grpc_port or free_port()
    addr = f"127.0.0.1:{port}"
    cmd = switch_argv(target.switch_command(ports or {}, device_id, addr,
                                            Path(json_path) if json_path is not None else None, cpu_port,
                                            options, target_options))
    name = label(target.switch)
    log_path = Path(log_file) if log_file is not None else (
        Path(log_dir) / f"{name}-{port}.log" if log_dir is not None else None)
    if log_path is not None:
        with open(log_path, "w") as out:
            proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    else:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    sw = SwitchProcess(name, cmd, proc, addr, device_id, log_path)
    try:
        wait_ready(proc, port, timeout)
    except RuntimeError as exc:
        stop(proc)
        raise RuntimeError(f"{name}: {exc}: {sw.log_head()}") from None
    log.info("%s: pid %d listening on %s", name, proc.pid, addr)
    return sw


@contextmanager
def switch_process(target: Target, json_path: str | Path | None = None, ports: dict[int, str] | None = None,
                   **kw: object) -> Iterator[SwitchProcess]:
    """`start_switch` as a context: the switch is always stopped by its PID on the way out."""
    sw = start_switch(target, json_path, ports, **kw)  # type: ignore[arg-type]
    try:
        yield sw
    finally:
        sw.stop()
