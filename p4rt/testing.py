"""Test support for every package's tests: a p4sim switch serving P4Runtime inside the test process.

p4sim's own device and P4Runtime server (p4sim.switch.p4runtime), on a free (or the given) loopback
port: no process, no interfaces, no root. Frames the program sends to front-panel ports can be
captured; frames to the CPU port reach the controller as packet-in.

    with P4simSwitch() as sw:
        with P4RuntimeClient(sw.address, device_id=1) as c:
            c.set_pipeline_files(RT_BASIC_P4INFO, RT_BASIC_JSON)
"""

from __future__ import annotations

from pathlib import Path
from types import TracebackType

from p4sim.switch.device import Device
from p4sim.switch.p4runtime.server import ServerHandle, start_server
from p4sim.switch.p4runtime.testing import program_files
from p4sim.target import CPU_PORT

# p4sim's P4Runtime test program: route/ecmp/acl tables, an action selector, packet-in/out, a digest,
# counters, a meter and a register (p4sim/switch/p4runtime/testdata/rt_basic.p4)
RT_BASIC_JSON, RT_BASIC_P4INFO = program_files("rt_basic")
# A small P4Info (protobuf text) shaped like the fabric program, for tests without a switch
SAMPLE_P4INFO = (Path(__file__).parent / "testdata" / "sample.p4info.txtpb").read_text()


class P4simSwitch:
    """A p4sim device behind its P4Runtime server in this process; restartable on the same port."""

    def __init__(self, device_id: int = 1, port: int = 0, cpu_port: int = CPU_PORT) -> None:
        self.device_id = device_id
        self.port = port
        self.cpu_port = cpu_port
        self.device: Device | None = None
        self._handle: ServerHandle | None = None
        self.front_panel: list[tuple[int, bytes]] = []  # frames sent to ports other than the CPU port

    @property
    def address(self) -> str:
        """`127.0.0.1:PORT` of the server (the port stays the same across restarts)."""
        return f"127.0.0.1:{self.port}"

    def start(self) -> P4simSwitch:
        """Start a fresh device (no pipeline) and serve it; the first start picks a free port."""
        self.device = Device(cpu_port=self.cpu_port, device_id=self.device_id)
        self._handle = start_server(self.device, self.address, self.device_id)
        self.port = int(self._handle.address.rpartition(":")[2])
        emit = self.device.emit

        def capture(out: list[tuple[int, bytes]]) -> None:
            self.front_panel.extend(p for p in out if p[0] != self.cpu_port)
            emit([p for p in out if p[0] == self.cpu_port])

        self.device.emit = capture  # no I/O thread: keep what would leave on a port
        return self

    def stop(self) -> None:
        """Stop serving (streams end); the device and what it held are gone."""
        if self._handle is not None:
            self._handle.stop(grace=0)
            self._handle = None

    def __enter__(self) -> P4simSwitch:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()
