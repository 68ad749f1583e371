"""Test support for every package's tests: a switch process of the run's target on a fixed port.

The run's target switch (p4sim/target.py: $SWITCH, else simple_switch_grpc when installed, else
p4sim-switch), `--no-p4`, on a free port that it keeps across restarts (emulation/switchproc.py
starts it and stops it by PID). For a switch inside the test process, see `p4rt.testing`.
"""

from __future__ import annotations

from emulation.switchproc import SwitchProcess as RunningSwitch
from emulation.switchproc import start_switch
from p4sim.target import Target, free_port


class SwitchProcess:
    """A switch with --no-p4 on a free gRPC port (or the given one); stop() ends it by PID, start()
    starts it again on the same port."""

    def __init__(self, device_id: int = 1, ports: dict[int, str] | None = None, grpc_port: int = 0,
                 target: Target | None = None) -> None:
        self.target = target or Target.from_env()
        self.device_id = device_id
        self.ports = ports or {}
        self.grpc_port = grpc_port or free_port()
        self.running: RunningSwitch | None = None

    @property
    def address(self) -> str:
        """`127.0.0.1:PORT` of its P4Runtime server."""
        return f"127.0.0.1:{self.grpc_port}"

    def start(self, timeout: float = 20.0) -> SwitchProcess:
        """Start the switch and wait until it listens."""
        self.running = start_switch(self.target, None, self.ports, device_id=self.device_id,
                                    grpc_port=self.grpc_port, timeout=timeout)
        return self

    def stop(self) -> None:
        """Stop it (safe to call twice)."""
        if self.running is not None:
            self.running.stop()
            self.running = None
