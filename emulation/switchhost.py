"""Several switches in one process, for switch binaries that can run them (`--devices FILE
--control-stdin`, p4sim.target.hosts_devices): p4sim-switch does; simple_switch_grpc runs one
switch a process, and the emulation starts it that way.

A host is started with the command lines of its devices (each the simple_switch_grpc shape that
`switch_command` builds, without the binary) in a JSON file, at the switches' priority. One device is
stopped or started again with a line on the host's standard input (`stop ID`, `start [ARGS]`), so a
switch of the emulation stops and restarts on its own; when the emulation goes away, its end of the
pipe closes and the host stops every device and exits. Stopped by its PID, as any switch.
"""

from __future__ import annotations

import json
import logging
import shlex
import subprocess
from pathlib import Path

from emulation.priority import switch_argv
from emulation.switchproc import KILLED_EXIT_S

log = logging.getLogger(__name__)

# Options of a hosted switch: a smaller receive ring a port (the ring's pages are resident memory; 128
# KiB hold about 75 frames of the fabric MTU, a millisecond at 1 Gbit/s)
DEVICE_OPTIONS = ("--ring-kib", "128")


class SwitchHost:
    """One host process and the device command lines it runs, by device id."""

    def __init__(self, name: str, switch_bin: str, log_dir: Path) -> None:
        self.name = name
        self.switch_bin = switch_bin
        self.log_path = Path(log_dir) / f"{name}.log"
        self.devices_path = Path(log_dir) / f"{name}.devices.json"
        self.devices: dict[int, list[str]] = {}
        self.proc: subprocess.Popen | None = None

    def add(self, device_id: int, argv: list[str]) -> None:
        """A device to run: its command line without the binary (started now if the host runs)."""
        argv = [*DEVICE_OPTIONS, *argv]
        self.devices[device_id] = argv
        if self.running:
            self._command("start " + json.dumps(argv))

    @property
    def running(self) -> bool:
        """True while the host process runs."""
        return self.proc is not None and self.proc.poll() is None

    def launch(self) -> None:
        """Start the host with every device added so far (a no-op while it runs)."""
        if self.running:
            return
        self.devices_path.write_text(json.dumps(list(self.devices.values())))
        cmd = switch_argv([*shlex.split(self.switch_bin), "--devices", str(self.devices_path), "--control-stdin"])
        log.info("%s: %s (%d devices)", self.name, " ".join(cmd), len(self.devices))
        with open(self.log_path, "ab") as out:
            self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=out, stderr=subprocess.STDOUT,
                                         start_new_session=True)

    def stop_device(self, device_id: int) -> None:
        """Stop one device; the others keep running."""
        self.devices.pop(device_id, None)
        if self.running:
            self._command(f"stop {device_id}")

    def _command(self, line: str) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        try:
            self.proc.stdin.write(line.encode() + b"\n")
            self.proc.stdin.flush()
        except OSError as e:  # the host exited meanwhile
            log.warning("%s: %s: %s", self.name, line.split()[0], e)

    def stop(self, timeout: float = 10.0) -> None:
        """Stop every device and the host: its input closed, then SIGTERM, then SIGKILL."""
        if self.proc is None:
            return
        if self.proc.stdin is not None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
        for step in (self.proc.terminate, self.proc.kill):
            try:
                self.proc.wait(timeout=timeout / 2)
                return
            except subprocess.TimeoutExpired:
                step()
        self.proc.wait(timeout=KILLED_EXIT_S)
