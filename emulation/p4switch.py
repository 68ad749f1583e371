"""A Mininet switch node that runs a P4 switch binary (simple_switch_grpc or p4sim-switch).

The binary is whatever `SWITCH` names; both take the same command line, so nothing here knows which
one runs. The process is started in the root namespace with its output in a log file, and stopped by
the PID this node recorded. `start()` only launches the process; `batchStartup()` (Mininet's hook,
called once for all switches of this class) waits until every gRPC server listens, so switches boot
in parallel. A node given a `host` (emulation.switchhost: a binary that runs several switches in one
process) is a device of that host instead: the host starts with all its devices, and this node stops
and starts its own device there.
"""

from __future__ import annotations

import logging
import os
import random
import shlex
import socket
import subprocess
import time
from pathlib import Path

from mininet.node import Switch

from emulation.nodestart import TimedStart
from emulation.priority import switch_argv
from emulation.switchhost import SwitchHost
from emulation.switchproc import stop
from p4sim.target import switch_command
from topo.model import CPU_PORT

log = logging.getLogger(__name__)

START_TIMEOUT_S = 60.0
THRIFT_BASE = 9090  # bmv2's Thrift server: one port per device
# Switch processes run SCHED_FIFO (emulation/priority.py): on a small machine traffic generators,
# captures and the controller otherwise delay a software switch's forwarding by milliseconds (two
# switch hops under a 16 Mbit/s stream and five captures on 2 cores: median 1.4 ms, p99 6.6 ms at
# nice 0; 0.4 / 1.6 ms at -15; SCHED_FIFO lower still, priority.py).


class SwitchStartError(RuntimeError):
    """A switch process did not come up (exited, or never listened on its gRPC port)."""


def wait_for_port(host: str, port: int, proc: subprocess.Popen, timeout: float) -> None:
    """Wait until a TCP port accepts connections; raise if the process dies or time runs out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SwitchStartError(f"exited with code {proc.returncode} before listening on {host}:{port}")
        with socket.socket() as s:
            s.settimeout(0.2)
            if s.connect_ex((host, port)) == 0:
                return
        time.sleep(0.05)
    raise SwitchStartError(f"not listening on {host}:{port} after {timeout:.0f} s")


def port_is_free(port: int, host: str = "127.0.0.1", bind: bool = True) -> bool:
    """True when nothing listens on host:port and (with `bind`: an address of this machine) it can be bound."""
    with socket.socket() as s:
        s.settimeout(2.0)
        if s.connect_ex((host, port)) == 0:
            return False
    if not bind:
        return True
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def free_grpc_base(devices: int, tries: int = 50) -> int:
    """A base port such that base+1..base+devices are all free on 127.0.0.1. Bases lie below the
    kernel's ephemeral range (32768 and up), where no outgoing connection can take a port between
    this check and the switches' start."""
    rng = random.Random(os.getpid() ^ time.monotonic_ns())
    for _ in range(tries):
        base = rng.randrange(10000, 32000 - devices, 100)
        if all(port_is_free(p) for p in range(base + 1, base + devices + 1)):
            return base
    raise RuntimeError(f"no free block of {devices} gRPC ports found below 32000")


class P4Switch(TimedStart, Switch):
    """A P4 switch (bmv2 JSON + P4Runtime server) as a Mininet node; its P4Runtime server listens on
    `grpc_host`:`grpc_port` (a cluster's remote switch, emulation/cluster.py, on its server's address)."""

    grpc_host = "127.0.0.1"

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
        start_timeout: float = START_TIMEOUT_S,
        host: SwitchHost | None = None,
        **params,
    ) -> None:
        super().__init__(name, dpid=f"{device_id:x}", **params)
        self.switch_bin = switch_bin
        self.json_path = json_path
        self.device_id = device_id
        self.grpc_port = grpc_port
        self.cpu_port = cpu_port
        self.start_timeout = start_timeout
        self.host = host
        self.log_path = host.log_path if host is not None else Path(log_dir) / f"{name}.log"
        self.pcap_dir = pcap_dir
        self._proc: subprocess.Popen | None = None

    def command_line(self) -> list[str]:
        """The switch command: ports, device id, program, then the target options after `--`."""
        ports = {port: intf.name for port, intf in self.intfs.items() if intf.name != "lo"}
        # bmv2 also opens a Thrift server; give each switch its own port so several can run.
        options = ("--thrift-port", str(THRIFT_BASE + self.device_id))
        if self.pcap_dir:
            options += ("--pcap", self.pcap_dir)
        return switch_command(self.switch_bin, ports, self.device_id, f"{self.grpc_host}:{self.grpc_port}",
                              Path(self.json_path), self.cpu_port, options)

    @property
    def proc(self) -> subprocess.Popen | None:
        """The process that runs this switch (its host's for a hosted one)."""
        return self.host.proc if self.host is not None else self._proc

    def start(self, controllers) -> None:  # noqa: ARG002 - Mininet's signature
        """Launch the switch process, or add the device to its host (batchStartup waits for it)."""
        if not self.grpc_port_free():
            raise SwitchStartError(f"{self.name}: gRPC port {self.grpc_host}:{self.grpc_port} is already in use")
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        if self.pcap_dir:
            Path(self.pcap_dir).mkdir(parents=True, exist_ok=True)
        if self.host is not None:
            self.host.add(self.device_id, self.command_line()[len(shlex.split(self.switch_bin)):])
            return
        cmd = switch_argv(self.command_line())  # the switches' priority (emulation/priority.py)
        log.info("%s: %s", self.name, " ".join(cmd))
        self._proc = self.launch(cmd)

    def grpc_port_free(self) -> bool:
        """True when nothing listens on this switch's gRPC address and this machine can bind it."""
        return port_is_free(self.grpc_port, self.grpc_host)

    def launch(self, cmd: list[str]) -> subprocess.Popen:
        """Run the switch command on this machine, its output into the log file."""
        with open(self.log_path, "wb") as out:
            try:
                return subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
            except OSError as exc:
                raise SwitchStartError(f"{self.name}: cannot run {self.switch_bin!r}: {exc.strerror}") from None

    def wait_ready(self, timeout: float | None = None) -> None:
        """Wait until the P4Runtime server listens; stop the process and raise if it does not."""
        if self.proc is None:
            raise SwitchStartError(f"{self.name}: not started")
        try:
            wait_for_port(self.grpc_host, self.grpc_port, self.proc, timeout or self.start_timeout)
        except SwitchStartError as e:
            self.stop_process()
            tail = self.log_tail()
            raise SwitchStartError(f"{self.name}: {self.switch_bin} {e}{': ' + tail if tail else ''}") from None

    @classmethod
    def batchStartup(cls, switches: tuple[P4Switch, ...]) -> tuple[P4Switch, ...]:  # noqa: N802 - Mininet's hook
        """Launch the hosts of hosted switches, then wait for every switch of a batch (Mininet calls
        this after start())."""
        for sw in switches:
            if sw.host is not None:
                sw.host.launch()
        for sw in switches:
            sw.wait_ready()
        return switches

    @property
    def local_pid(self) -> int | None:
        """The process on this machine that runs the switch (what the run record lists), if started."""
        return self.proc.pid if self.proc is not None else None

    @property
    def pid_started(self) -> int | None:
        """PID of the switch process, if running."""
        return self.proc.pid if self.proc is not None and self.proc.poll() is None else None

    def log_tail(self, lines: int = 1) -> str:
        """The last lines of the switch log, for error messages."""
        try:
            text = self.log_path.read_text(errors="replace").strip().splitlines()
        except OSError:
            return ""
        return " | ".join(text[-lines:])

    def stop_process(self) -> None:
        """Stop the switch process we started (by PID), escalating to SIGKILL; a hosted switch's device."""
        if self.host is not None:
            self.host.stop_device(self.device_id)
            return
        if self.proc is not None:
            stop(self.proc, group=True)

    def stop(self, deleteIntfs: bool = True) -> None:  # noqa: N803 - Mininet's signature
        """Stop the process, then let Mininet remove the interfaces."""
        self.stop_process()
        super().stop(deleteIntfs)
