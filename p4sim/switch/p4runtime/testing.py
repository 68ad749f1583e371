"""Test support: a p4sim Device behind a P4Runtime server on a free loopback port, and test programs.

    with running_switch() as sw:          # sw.address "127.0.0.1:PORT", sw.device, sw.service
        ...
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from google.protobuf import text_format

from p4sim.switch.device import Device
from p4sim.switch.p4runtime.proto import p4i
from p4sim.switch.p4runtime.server import P4RuntimeService, ServerHandle, start_server

TESTDATA = Path(__file__).parent / "testdata"


@dataclass(slots=True)
class RunningSwitch:
    """A Device and its P4Runtime server."""

    device: Device
    handle: ServerHandle

    @property
    def address(self) -> str:
        """The server's `ip:port`."""
        return self.handle.address

    @property
    def service(self) -> P4RuntimeService:
        """The P4Runtime service object (its state: committed config, arbiter, digests)."""
        return self.handle.service


@contextmanager
def running_switch(device_id: int = 1, cpu_port: int | None = 255,
                   ports: dict[int, str] | None = None, freeze_heap: bool = False) -> Iterator[RunningSwitch]:
    """Yield a Device (no I/O started) served on 127.0.0.1 at a free port; stop it afterwards."""
    device = Device(ports=ports, cpu_port=cpu_port, device_id=device_id, freeze_heap=freeze_heap)
    handle = start_server(device, "127.0.0.1:0", device_id)
    try:
        yield RunningSwitch(device, handle)
    finally:
        handle.stop()


def program_files(name: str = "rt_basic") -> tuple[Path, Path]:
    """Return (bmv2 JSON, P4Info text) paths of a test program in testdata/."""
    return TESTDATA / f"{name}.json", TESTDATA / f"{name}.p4info.txtpb"


def load_p4info(path: Path) -> p4i.P4Info:
    """Parse a P4Info text file."""
    return text_format.Parse(path.read_text(), p4i.P4Info())
