"""PTF base test: a P4Runtime session per test, the pipeline pushed once, and automatic cleanup.

Test params (``--test-params``, Python literals separated by ``;``):
    grpcaddr   '<ip>:<port>' of the switch's P4Runtime server
    p4info     path of the P4Info text file
    config     path of the device config (bmv2 JSON)
    device_id  P4Runtime device id (default 1)
    cpu_port   CPU port of the switch (default 255)
    target     a label for logs only ('bmv2', 'p4sim'); no test behaves differently on it
    ifaces     'PORT:IFACE,...': per switch port, the interface that takes its link down (port up/down tests)

Every entity a test writes through this class is removed in tearDown (newest first), default
entries are restored, and ports taken down are brought back up. A port goes down the way a real
link does: the switch port loses carrier (the runner's link interface goes down), while the
switch's own interface stays up (bmv2 stops receiving on every port while one of its interfaces is
administratively down). Tests never build protobufs:
they use the entity classes of ``control``.
"""

from __future__ import annotations

import itertools
import logging
import subprocess
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import ptf
from ptf import testutils
from ptf.base_tests import BaseTest

from p4rt.client import P4RuntimeClient, wildcard
from p4rt.entities import ActionProfileGroup, ActionProfileMember, TableEntry
from p4rt.resources import CounterEntry, DirectCounterEntry, Packet
from p4rt.schema import P4Schema
from p4sim.target import PORT_STATUS_SETTLE_S

log = logging.getLogger(__name__)

# One pipeline push per (server, config) for the whole PTF run; entities are cleaned per test.
_PUSHED: dict[str, str] = {}
# Every test session gets a higher election id, so a new client wins over a closing one.
_ELECTION = itertools.count(1)
# Packets kept per PTF port before the oldest are dropped (ptf's default, 100, is below a burst).
QUEUE_LEN = 10000

Entity = TableEntry | ActionProfileMember | ActionProfileGroup


def _parse_ifaces(text: str) -> dict[int, str]:
    """Parse 'PORT:IFACE,...' into {port: iface}."""
    out: dict[int, str] = {}
    for item in filter(None, (s.strip() for s in text.split(","))):
        port, sep, iface = item.partition(":")
        if not sep or not port.isdigit() or not iface:
            raise ValueError(f"ifaces item {item!r}: expected PORT:IFACE")
        out[int(port)] = iface
    return out


class P4RuntimeTest(BaseTest):
    """Base of every packet test: connection, pipeline, writes with undo, counters, packet I/O."""

    def setUp(self) -> None:
        super().setUp()
        self.dataplane = ptf.dataplane_instance
        self.dataplane.set_qlen(QUEUE_LEN)
        self.dataplane.flush()
        params: dict[str, Any] = testutils.test_params_get() or {}
        missing = [k for k in ("grpcaddr", "p4info", "config") if k not in params]
        if missing:
            raise ValueError(f"test params {sorted(params)}: missing {missing}; expected grpcaddr, p4info, config")
        self.grpc_addr = str(params["grpcaddr"])
        self.device_id = int(params.get("device_id", 1))
        self.cpu_port = int(params.get("cpu_port", 255))
        self.target = str(params.get("target", "unknown"))
        self.link_ifaces = _parse_ifaces(str(params.get("ifaces", "")))
        self.ports = sorted(port for (device, port) in ptf.config["port_map"] if device == 0)
        self._undo: list[tuple[str, Callable[[], None]]] = []
        self.client = P4RuntimeClient(self.grpc_addr, device_id=self.device_id,
                                      election_id=(0, next(_ELECTION)))
        self.client.connect()
        config = str(params["config"])
        if _PUSHED.get(self.grpc_addr) != config:
            self.client.set_pipeline_files(str(params["p4info"]), config)
            _PUSHED[self.grpc_addr] = config
        else:
            self.client.schema = P4Schema.load(str(params["p4info"]))
        self.schema: P4Schema = self.client.schema
        self.drain_packet_ins()

    def tearDown(self) -> None:
        errors = []
        while self._undo:
            what, undo = self._undo.pop()
            try:
                undo()
            except Exception as exc:  # keep cleaning; report every failure at the end
                log.error("cleanup %s failed: %s", what, exc)
                errors.append(f"{what}: {exc}")
        self.client.close()
        super().tearDown()
        if errors:
            raise AssertionError(f"cleanup failed for {len(errors)} item(s): {errors[0]}")

    # -- writes with automatic cleanup ----------------------------------------------------------

    def insert(self, *entities: Entity) -> None:
        """INSERT entities in one write; each is DELETEd again in tearDown (newest first)."""
        self.client.insert(list(entities))
        for e in entities:
            self._undo.append((str(e), lambda e=e: self.client.delete([e])))

    def delete(self, *entities: Entity) -> None:
        """DELETE entities this test inserted, before tearDown (they are not deleted twice)."""
        self.client.delete(list(entities))
        labels = {str(e) for e in entities}
        self._undo = [(what, undo) for what, undo in self._undo if what not in labels]

    def modify(self, *entities: Entity) -> None:
        """MODIFY entities in one write (for entities this test inserted: their delete cleans up)."""
        self.client.modify(list(entities))

    def set_default(self, table: str, action: str, params: dict[str, Any] | None = None) -> None:
        """Set a table's default action; the previous default is restored in tearDown."""
        old = self.read_default(table)
        self.client.modify([TableEntry(table, action=action, params=dict(params or {}), default=True)])
        self._undo.append((f"default of {table}", lambda: self.client.modify([old])))

    def read_default(self, table: str) -> TableEntry:
        """The current default entry of a table."""
        got = self.client.read_entities([TableEntry(table, default=True, action=None)])
        entries = [e for e in got if isinstance(e, TableEntry) and e.default]
        if len(entries) != 1:
            raise AssertionError(f"default entry of {table}: read {len(entries)} entries; expected 1")
        return entries[0]

    def read_table(self, table: str) -> list[TableEntry]:
        """Every (non-default) entry of a table, as canonical TableEntry values."""
        got = self.client.read_entities([wildcard(self.schema, "table_entry", table)])
        return [e for e in got if isinstance(e, TableEntry) and not e.default]

    # -- counters -------------------------------------------------------------------------------

    def read_counter(self, name: str, index: int) -> tuple[int, int]:
        """(packets, bytes) of one cell of an indirect counter."""
        got = [c for c in self.client.read_entities([CounterEntry(name, index)]) if isinstance(c, CounterEntry)]
        if len(got) != 1:
            raise AssertionError(f"counter {name}[{index}]: read {len(got)} cells; expected 1")
        return got[0].packets, got[0].bytes

    def read_direct_counter(self, entry: TableEntry) -> tuple[int, int]:
        """(packets, bytes) of the direct counter of one table entry."""
        got = [c for c in self.client.read_entities([DirectCounterEntry(entry)])
               if isinstance(c, DirectCounterEntry)]
        if len(got) != 1:
            raise AssertionError(f"direct counter of [{entry}]: read {len(got)} cells; expected 1")
        return got[0].packets, got[0].bytes

    def wait_counter(self, name: str, index: int, packets: int, timeout: float = 3.0) -> tuple[int, int]:
        """Poll a counter cell until it reaches `packets` packets (counters may lag the wire)."""
        deadline = time.monotonic() + timeout
        while True:
            value = self.read_counter(name, index)
            if value[0] >= packets or time.monotonic() > deadline:
                return value
            time.sleep(0.05)

    # -- controller packet I/O ------------------------------------------------------------------

    def packet_out(self, payload: bytes, **metadata: int) -> None:
        """Send a packet-out with the given packet_out header fields (e.g. egress_port=2).

        Fields not given (padding) are sent as 0: a P4Runtime server may require every field.
        """
        fields = {md.name: 0 for md in self.schema.packet_metadata["packet_out"].metadata}
        fields.update(metadata)
        self.client.packet_out(Packet(bytes(payload), fields))

    def packet_in(self, timeout: float = 2.0) -> Packet | None:
        """The next packet-in, or None after `timeout` seconds."""
        return self.client.packet_in(timeout=timeout)

    def drain_packet_ins(self) -> int:
        """Discard queued packet-ins; return how many there were."""
        n = 0
        while self.client.packet_in(timeout=0) is not None:
            n += 1
        return n

    # -- ports ----------------------------------------------------------------------------------

    def set_port_up(self, port: int, up: bool) -> None:
        """Take a switch port's link down or up: carrier loss, restored in tearDown."""
        iface = self.link_ifaces.get(port)
        if iface is None:
            self.skipTest(f"port {port} has no link interface in the 'ifaces' test param")
        _link(iface, up)
        if not up:
            self._undo.append((f"port {port} up", lambda: _restore_link(iface)))

    # -- data plane -----------------------------------------------------------------------------

    def send(self, port: int, pkt: Any, count: int = 1) -> None:
        """Send a packet on a PTF port."""
        testutils.send_packet(self, port, pkt, count)

    def send_expect(self, port: int, pkt: Any, expected: Any = None, out_port: int | None = None) -> None:
        """Send a packet on a PTF port; `expected` must come out of `out_port` and nothing else anywhere
        (no `expected`: nothing comes out)."""
        self.send(port, pkt)
        if expected is not None:
            testutils.verify_packet(self, expected, out_port)
        testutils.verify_no_other_packets(self)

    def collect(self, timeout: float = 1.0, limit: int | None = None) -> list[tuple[int, bytes]]:
        """Every packet received on any port until `timeout` s pass without one (or `limit` are in)."""
        out: list[tuple[int, bytes]] = []
        while limit is None or len(out) < limit:
            res = testutils.dp_poll(self, device_number=0, timeout=timeout)
            if not isinstance(res, self.dataplane.PollSuccess):
                break
            out.append((res.port, bytes(res.packet)))
        return out

    def wait_until(self, what: str, predicate: Callable[[], bool], timeout: float = 5.0,
                   interval: float = 0.1) -> float:
        """Call `predicate` until it is true; return the seconds it took, fail after `timeout`."""
        start = time.monotonic()
        while not predicate():
            if time.monotonic() - start > timeout:
                self.fail(f"{what}: not true after {timeout:.1f} s")
            time.sleep(interval)
        return time.monotonic() - start


def _restore_link(iface: str) -> None:
    """Bring a link back and wait until the switch has noticed (its port poll), so the next test
    does not start while the switch still counts the port as down."""
    _link(iface, True)
    time.sleep(PORT_STATUS_SETTLE_S)


def _link(iface: str, up: bool, timeout: float = 5.0) -> None:
    """Set a link up or down and wait until the kernel reports that operational state."""
    subprocess.run(["ip", "link", "set", "dev", iface, "up" if up else "down"], check=True)
    want = "up" if up else "down"
    state = Path(f"/sys/class/net/{iface}/operstate")
    deadline = time.monotonic() + timeout
    while state.read_text().strip() != want:
        if time.monotonic() > deadline:
            raise AssertionError(f"{iface}: operstate {state.read_text().strip()!r} after {timeout} s; expected {want}")
        time.sleep(0.02)


def counts_by_port(packets: Iterable[tuple[int, bytes]]) -> dict[int, int]:
    """How many of the (port, bytes) packets arrived on each port."""
    out: dict[int, int] = {}
    for port, _ in packets:
        out[port] = out.get(port, 0) + 1
    return out
