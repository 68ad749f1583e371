"""A small bed for parity tests: one switch process (simple_switch_grpc or p4sim-switch) on veth pairs,
with parity.p4's p4c JSON pushed over P4Runtime, and the frames of p4sim/switch/testdata/parity.p4.

Local to test_switch_parity.py on purpose (the general start-a-target module lives elsewhere).
"""

from __future__ import annotations

import contextlib
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from emulation.switchproc import start_switch
from p4rt.client import P4RuntimeClient
from p4sim.switch.testdata.veth import RawPort, veth_pairs
from p4sim.target import Target, label, pairings

TESTDATA = Path(__file__).resolve().parents[1] / "switch" / "testdata"
PARITY_JSON = TESTDATA / "parity.json"
PARITY_P4INFO = TESTDATA / "parity.p4info.txtpb"
CPU_PORT = 255
ETHERTYPE_PARITY = 0x88B7
MARK = b"parity-bed"

# parity.p4 report_t, in order: (name, bits)
REPORT = [
    ("i_passes", 8), ("i_ingress_port", 16), ("i_instance_type", 32), ("i_packet_length", 32),
    ("i_timestamp", 48), ("i_kept", 8), ("i_parser_mark", 8), ("i_egress_spec", 16),
    ("e_passes", 8), ("e_ingress_port", 16), ("e_egress_port", 16), ("e_egress_spec", 16),
    ("e_instance_type", 32), ("e_packet_length", 32), ("e_ingress_timestamp", 48), ("e_timestamp", 48),
    ("e_enq_timestamp", 32), ("e_deq_timedelta", 32), ("e_enq_qdepth", 32), ("e_deq_qdepth", 32),
    ("e_egress_rid", 16), ("e_mcast_grp", 16), ("e_kept", 8), ("e_parser_mark", 8), ("e_ingress_mark", 8),
    ("e_member", 8), ("e_priority", 8)]
REPORT_BYTES = sum(b for _, b in REPORT) // 8
CMD_BYTES = 9
OP = {"forward": 0, "resubmit": 1, "clone_i2e": 2, "recirculate": 3, "clone_e2e": 4, "multicast": 5,
      "select": 6, "priority": 7, "drop": 8}


def switch_target(name: str) -> Target:
    """The switch of `name` ("bmv2" or "p4sim") as installed here; KeyError for bmv2 when it is not."""
    return {label(t.switch): t for t in pairings()}[name]


def frame(op: str, port: int = 0, arg: int = 0, key: int = 0, payload: bytes = MARK) -> bytes:
    """A parity.p4 test frame: Ethernet, cmd, a zeroed report, payload."""
    eth = bytes.fromhex("020000000002" "020000000001") + ETHERTYPE_PARITY.to_bytes(2, "big")
    cmd = (bytes([OP[op]]) + port.to_bytes(2, "big") + arg.to_bytes(2, "big") + key.to_bytes(4, "big"))
    return eth + cmd + bytes(REPORT_BYTES) + payload


def report(data: bytes, offset: int = 0) -> dict[str, int]:
    """The report fields of a frame whose Ethernet header starts at `offset` (2 behind a packet_in header)."""
    pos = offset + 14 + CMD_BYTES
    value = int.from_bytes(data[pos:pos + REPORT_BYTES], "big")
    out: dict[str, int] = {}
    shift = REPORT_BYTES * 8
    for name, bits in REPORT:
        shift -= bits
        out[name] = (value >> shift) & ((1 << bits) - 1)
    return out


def ours(data: bytes) -> bool:
    """True for a parity frame (not kernel chatter)."""
    return MARK in data


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Bed:
    """A running switch with its veths, host-side sockets and a primary P4Runtime client."""

    target: str
    proc: subprocess.Popen
    client: P4RuntimeClient
    pairs: list[tuple[str, str]]
    hosts: dict[int, RawPort] = field(default_factory=dict)
    t0: float = 0.0

    def send(self, port: int, data: bytes) -> None:
        """Send a frame into the switch's port `port`."""
        self.hosts[port].send(data)

    def recv(self, port: int, timeout: float = 3.0) -> bytes | None:
        """The next parity frame the switch sends on `port`, or None."""
        try:
            return self.hosts[port].recv(timeout, ours)
        except OSError:  # ENETDOWN left on the socket by a link that went down: read again
            return self.hosts[port].recv(timeout, ours)

    def drain(self) -> None:
        """Forget every frame waiting on the host sides."""
        for h in self.hosts.values():
            try:
                h.drain(quiet=0.05)
            except OSError:
                h.drain(quiet=0.05)

    def switch_iface(self, port: int) -> str:
        """The switch-side interface of `port`."""
        return self.pairs[port - 1][0]

    def peer_iface(self, port: int) -> str:
        """The host-side (peer) interface of `port`."""
        return self.pairs[port - 1][1]


@contextlib.contextmanager
def bed(target: str, nports: int = 3, target_args: tuple[str, ...] = (), log_path: Path | str | None = None,
        prefix: str = "pty", switch_args: tuple[str, ...] = ()) -> Iterator[Bed]:
    """Start `target` ("bmv2" or "p4sim") on nports veth pairs with parity.p4; stop it and delete the veths after."""
    with veth_pairs(nports, prefix) as pairs:
        t0 = time.monotonic()
        sw = start_switch(switch_target(target), None, {i + 1: a for i, (a, _) in enumerate(pairs)},
                          log_file=log_path, timeout=30, options=switch_args, target_options=target_args)
        proc = sw.proc
        client: P4RuntimeClient | None = None
        hosts: dict[int, RawPort] = {}
        try:
            client = P4RuntimeClient(sw.grpc_addr, device_id=1, election_id=(0, 1))
            client.connect()
            client.set_pipeline_files(PARITY_P4INFO, PARITY_JSON)
            hosts = {i + 1: RawPort(host) for i, (_, host) in enumerate(pairs)}
            yield Bed(target, proc, client, pairs, hosts, t0)
        finally:
            for h in hosts.values():
                h.close()
            if client is not None:
                client.close()
            sw.stop()
