"""Start a P4Runtime switch process (p4sim-switch, or $SWITCH with the simple_switch_grpc shape) for tests."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path


def free_port() -> int:
    """An ephemeral TCP port the OS says is free now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def switch_command() -> list[str]:
    """The switch binary: $SWITCH when set, else p4sim-switch from this venv."""
    env = os.environ.get("SWITCH")
    if env:
        return [env]
    exe = Path(sys.executable).parent / "p4sim-switch"
    if exe.exists():
        return [str(exe)]
    found = shutil.which("p4sim-switch")
    return [found] if found else [sys.executable, "-m", "p4sim.switch.cli"]


class SwitchProcess:
    """A switch process with --no-p4 on a free gRPC port; stop() ends it by PID."""

    def __init__(self, device_id: int = 1, ports: dict[int, str] | None = None, grpc_port: int = 0) -> None:
        self.device_id = device_id
        self.ports = ports or {}
        self.grpc_port = grpc_port or free_port()
        self.proc: subprocess.Popen | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.grpc_port}"

    def start(self, timeout: float = 20.0) -> SwitchProcess:
        args = switch_command() + ["--no-p4", "--device-id", str(self.device_id)]
        for port, ifname in self.ports.items():
            args += ["-i", f"{port}@{ifname}"]
        args += ["--", "--grpc-server-addr", self.address, "--cpu-port", "255"]
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"switch exited: {self.proc.stderr.read()}")
            try:
                with socket.create_connection(("127.0.0.1", self.grpc_port), timeout=0.2):
                    return self
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"switch did not listen on {self.address} within {timeout} s")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc is not None and self.proc.stderr is not None:
            self.proc.stderr.close()
        self.proc = None
