"""A P4Runtime switch process for the controller's tests: the run's target switch (emulation/
target.py: $SWITCH, else simple_switch_grpc when installed, else p4sim-switch), `--no-p4`, on a free
port (emulation/switchproc.py starts it and stops it by PID)."""

from __future__ import annotations

from emulation.switchproc import SwitchProcess as RunningSwitch
from emulation.switchproc import start_switch
from emulation.target import Target, free_port, pairings

__all__ = ["SwitchProcess", "free_port", "p4sim_target"]


def p4sim_target() -> Target:
    """p4sim's own switch (and compiler): for the tests of what only p4sim's server offers, such as
    register reads, which PI (bmv2's P4Runtime server) does not support."""
    return pairings()[0]



class SwitchProcess:
    """A switch with --no-p4 on a free gRPC port (or the given one); stop() ends it by PID."""

    def __init__(self, device_id: int = 1, ports: dict[int, str] | None = None, grpc_port: int = 0,
                 target: Target | None = None) -> None:
        self.target = target or Target.from_env()
        self.device_id = device_id
        self.ports = ports or {}
        self.grpc_port = grpc_port or free_port()
        self.running: RunningSwitch | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.grpc_port}"

    def start(self, timeout: float = 20.0) -> SwitchProcess:
        self.running = start_switch(self.target, None, self.ports, device_id=self.device_id,
                                    grpc_port=self.grpc_port, timeout=timeout)
        return self

    def stop(self) -> None:
        if self.running is not None:
            self.running.stop()
            self.running = None
