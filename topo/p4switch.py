"""A Mininet switch node that runs a P4 switch binary (simple_switch_grpc or p4sim-switch).

The binary is whatever `SWITCH` names; both take the same command line, so nothing here knows which
one runs. The process is started in the root namespace, its output goes to a log file, and it is
stopped by the PID this node recorded.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

from mininet.node import Switch

log = logging.getLogger(__name__)

CPU_PORT = 255
START_TIMEOUT_S = 20.0


def wait_for_port(host: str, port: int, proc: subprocess.Popen, timeout: float) -> None:
    """Wait until a TCP port accepts connections; raise if the process dies or time runs out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"exited with code {proc.returncode} before listening on {host}:{port}")
        with socket.socket() as s:
            s.settimeout(0.2)
            if s.connect_ex((host, port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"not listening on {host}:{port} after {timeout:.0f} s")


def port_is_free(port: int, host: str = "127.0.0.1") -> bool:
    """True when nothing listens on host:port."""
    with socket.socket() as s:
        return s.connect_ex((host, port)) != 0


class P4Switch(Switch):
    """A P4 switch (bmv2 JSON + P4Runtime server) as a Mininet node."""

    def __init__(
        self,
        name: str,
        *,
        switch_bin: str,
        json_path: str,
        device_id: int,
        grpc_port: int,
        log_dir: str,
        pcap_dir: str | None = None,
        cpu_port: int = CPU_PORT,
        **params,
    ) -> None:
        super().__init__(name, dpid=f"{device_id:x}", **params)
        self.switch_bin = switch_bin
        self.json_path = json_path
        self.device_id = device_id
        self.grpc_port = grpc_port
        self.cpu_port = cpu_port
        self.log_path = Path(log_dir) / f"{name}.log"
        self.pcap_dir = pcap_dir
        self.proc: subprocess.Popen | None = None

    def command_line(self) -> list[str]:
        """The switch command: ports, device id, program, then the target options after `--`."""
        args = [self.switch_bin]
        for port, intf in sorted(self.intfs.items()):
            if intf.name != "lo":
                args += ["-i", f"{port}@{intf.name}"]
        args += ["--device-id", str(self.device_id)]
        # bmv2 also opens a Thrift server; give each switch its own port so several can run.
        args += ["--thrift-port", str(9090 + self.device_id)]
        if self.pcap_dir:
            args += ["--pcap", self.pcap_dir]
        args += [self.json_path, "--", "--grpc-server-addr", f"127.0.0.1:{self.grpc_port}",
                 "--cpu-port", str(self.cpu_port)]
        return args

    def start(self, controllers) -> None:  # noqa: ARG002 - Mininet's signature
        """Start the switch process and wait until its P4Runtime server listens."""
        if not port_is_free(self.grpc_port):
            raise RuntimeError(f"{self.name}: gRPC port {self.grpc_port} is already in use")
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        cmd = self.command_line()
        log.info("%s: %s", self.name, " ".join(cmd))
        with open(self.log_path, "wb") as out:
            self.proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            wait_for_port("127.0.0.1", self.grpc_port, self.proc, START_TIMEOUT_S)
        except RuntimeError as e:
            self.stop_process()
            tail = self.log_tail()
            raise RuntimeError(f"{self.name}: {self.switch_bin} {e}{': ' + tail if tail else ''}") from None

    def log_tail(self, lines: int = 1) -> str:
        """The last lines of the switch log, for error messages."""
        try:
            text = self.log_path.read_text(errors="replace").strip().splitlines()
        except OSError:
            return ""
        return " | ".join(text[-lines:])

    def stop_process(self) -> None:
        """Stop the switch process we started (by PID), escalating to SIGKILL."""
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=5)

    def stop(self, deleteIntfs: bool = True) -> None:  # noqa: N803 - Mininet's signature
        """Stop the process, then let Mininet remove the interfaces."""
        self.stop_process()
        super().stop(deleteIntfs)
