"""Run an STF packet test (p4sim/tests/stf.py) on a switch, over P4Runtime: the JSON and P4Info pushed
with SetForwardingPipelineConfig, the entries written, the packets sent, what comes out compared with
the expectations as p4c's bmv2 STF runner compares them (per port, in order, as many as expected; a
port that is only mentioned may send anything; output on a port the test never names is not seen).

Two switches:
- `p4sim`: a p4sim Device in this process behind its real P4Runtime server (gRPC on loopback);
  packets go through `Device.process`. No root, no interfaces.
- `bmv2`: simple_switch_grpc started with `--no-p4` and `--use-files`, its ports pcap files as p4c's
  runner gives simple_switch (named pipes in, files out), so frames shorter than Ethernet's header
  reach it unpadded. No root either.
"""

from __future__ import annotations

import logging
import os
import shutil
import struct
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Protocol

from emulation.switchproc import stop, wait_ready
from p4rt.client import P4RuntimeClient
from p4rt.schema import P4Schema
from p4sim.switch.p4runtime.testing import running_switch
from p4sim.target import REAL_SWITCH, free_port, switch_command
from p4sim.tests.stf import Add, Expect, PacketIn, Pre, PreState, Script, SetDefault, table_entry

log = logging.getLogger(__name__)

SWITCHES = ("p4sim", "bmv2")
BMV2_SETTLE_S = 2.0  # p4c's runner waits 2 s after the last packet before it stops simple_switch
_PCAP_HEADER = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)
_PCAP_RECORD = struct.Struct("<IIII")


class Ports(Protocol):
    """Where a test's frames go in and come out."""

    def send(self, port: int, frame: bytes) -> None:
        """A frame into `port`."""

    def finish(self) -> list[tuple[int, bytes]]:
        """Every frame out since the test began, in order (called once, after the last packet)."""


@dataclass(slots=True)
class Result:
    """What an STF test found: nothing wrong, or the differences (and the frames seen)."""

    problems: list[str] = field(default_factory=list)
    frames: list[tuple[int, bytes]] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """True when every expectation held."""
        return not self.problems


def compare(script: Script, frames: list[tuple[int, bytes]]) -> list[str]:
    """What differs between the frames out and the script's expectations (bmv2stf.checkOutputs)."""
    expects: dict[int, list[Expect]] = {}
    for cmd in script.commands:
        if isinstance(cmd, Expect):
            expects.setdefault(cmd.port, []).append(cmd)
    problems = []
    for port in script.ports():
        got = [f for p, f in frames if p == port]
        want = expects.get(port, [])
        if any(e.pattern is None for e in want):
            continue
        if len(got) != len(want):
            problems.append(f"port {port}: {len(got)} frames out, expected {len(want)}"
                            + "".join(f"; got {f.hex()}" for f in got[len(want):][:2]))
        for exp, frame in zip(want, got, strict=False):
            if not exp.matches(frame):
                problems.append(f"port {port}, line {exp.line}: got {frame.hex()}, expected {exp.pattern.lower()}")
                break
    return problems


def run(script: Script, json_path: Path, p4info_path: Path, switch: str) -> Result:
    """Run `script` on `switch` ("p4sim" or "bmv2") with this program; the problems found."""
    ports = script.ports()
    opened = _p4sim(ports) if switch == "p4sim" else _bmv2(ports)
    with opened as (address, wire):
        client = P4RuntimeClient(address, device_id=1, election_id=(0, 1))
        client.connect(timeout=20)
        try:
            client.set_pipeline_files(p4info_path, json_path)
            _drive(script, client, P4Schema.load(p4info_path), wire)
        finally:
            client.close()
        frames = wire.finish()
    return Result(compare(script, frames), frames)


def _drive(script: Script, client: P4RuntimeClient, schema: P4Schema, wire: Ports) -> None:
    pre = PreState()
    for cmd in script.commands:
        if isinstance(cmd, SetDefault):
            client.modify([table_entry(schema, cmd)])
        elif isinstance(cmd, Add):
            client.insert([table_entry(schema, cmd)])
        elif isinstance(cmd, Pre):
            how, entity = pre.apply(cmd)
            if how:
                getattr(client, how)([entity])
        elif isinstance(cmd, PacketIn):
            wire.send(cmd.port, cmd.frame)


# -- p4sim in this process ---------------------------------------------------------------------------


class _DevicePorts:
    def __init__(self, device: object, ports: list[int]) -> None:
        self.device, self.ports, self.frames = device, set(ports), []

    def send(self, port: int, frame: bytes) -> None:
        self.frames += [(p, f) for p, f in self.device.process(port, frame) if p in self.ports]  # type: ignore[attr-defined]

    def finish(self) -> list[tuple[int, bytes]]:
        return self.frames


@contextmanager
def _p4sim(ports: list[int]) -> Iterator[tuple[str, Ports]]:
    with running_switch(ports={p: f"stf{p}" for p in ports}) as sw:
        yield sw.address, _DevicePorts(sw.device, ports)


# -- bmv2 on pcap files ------------------------------------------------------------------------------


class _PcapPorts:
    """simple_switch's `--use-files` ports: a named pipe X_in.pcap per port to write, X_out.pcap to read."""

    def __init__(self, names: dict[int, str], proc: subprocess.Popen) -> None:
        self.names, self.proc = names, proc
        self.pipes: dict[int, BinaryIO] = {}

    def open(self) -> None:
        # bmv2 opens its pipes one by one in port order, each open blocking until both ends are there
        for port in sorted(self.names):
            pipe = open(f"{self.names[port]}_in.pcap", "wb")  # noqa: SIM115 - closed in finish()
            pipe.write(_PCAP_HEADER)
            pipe.flush()
            self.pipes[port] = pipe

    def send(self, port: int, frame: bytes) -> None:
        now = time.time()
        pipe = self.pipes[port]
        pipe.write(_PCAP_RECORD.pack(int(now), int(now % 1 * 1e6), len(frame), len(frame)) + frame)
        pipe.flush()

    def finish(self) -> list[tuple[int, bytes]]:
        for pipe in self.pipes.values():
            pipe.close()
        time.sleep(BMV2_SETTLE_S)
        stop(self.proc)  # the output files are complete once the switch has ended
        frames: list[tuple[float, int, bytes]] = []
        for port, name in self.names.items():
            path = Path(f"{name}_out.pcap")
            data = path.read_bytes() if path.exists() else b""
            pos = len(_PCAP_HEADER)
            while pos + _PCAP_RECORD.size <= len(data):
                sec, usec, size, _ = _PCAP_RECORD.unpack_from(data, pos)
                pos += _PCAP_RECORD.size
                frames.append((sec + usec / 1e6, port, data[pos:pos + size]))
                pos += size
        return [(port, frame) for _, port, frame in sorted(frames, key=lambda t: t[0])]


@contextmanager
def _bmv2(ports: list[int]) -> Iterator[tuple[str, Ports]]:
    binary = shutil.which(REAL_SWITCH)
    if binary is None:
        raise RuntimeError(f"{REAL_SWITCH} is not on PATH")
    with tempfile.TemporaryDirectory(prefix="stf-bmv2-") as tmp:
        names = {port: str(Path(tmp) / f"p{port}") for port in ports}
        for name in names.values():
            os.mkfifo(f"{name}_in.pcap")
        grpc_port = free_port()
        cmd = switch_command(binary, names, 1, f"127.0.0.1:{grpc_port}", options=("--use-files", "0"))
        with open(Path(tmp) / "switch.log", "w") as out:
            proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=tmp)
        wire = _PcapPorts(names, proc)
        opener = threading.Thread(target=wire.open, daemon=True)
        opener.start()
        try:
            opener.join(20)
            if opener.is_alive():
                raise RuntimeError(f"{REAL_SWITCH} did not open its packet files: "
                                   + (Path(tmp) / "switch.log").read_text()[-300:])
            wait_ready(proc, grpc_port)
            yield f"127.0.0.1:{grpc_port}", wire
        finally:
            stop(proc)
            for name in names.values():  # a writer's open still waiting for the switch returns now
                os.close(os.open(f"{name}_in.pcap", os.O_RDONLY | os.O_NONBLOCK))
            opener.join(5)
