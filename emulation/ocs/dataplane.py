"""Where the emulated OCS takes effect: the `ocs` program's `circuit` table and the attached links."""

from __future__ import annotations

import logging
import subprocess
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from emulation.links import check_ifname
from fabric.contract import CIRCUIT, CROSS_CONNECT
from p4rt.client import P4RuntimeClient, wildcard
from p4rt.entities import TableEntry
from p4rt.errors import P4RuntimeError
from p4rt.proto import p4r

log = logging.getLogger(__name__)


def circuit_entry(in_port: int, out_port: int) -> TableEntry:
    """The `circuit` entry sending frames of `in_port` to `out_port` (p4src/README.md)."""
    return TableEntry(CIRCUIT, {"ingress_port": in_port}, CROSS_CONNECT, {"port": out_port})


class P4RuntimeCircuits:
    """Writes circuits as `circuit` entries of an `ocs` switch over P4Runtime (dark = no entry)."""

    def __init__(self, client: P4RuntimeClient, config: bytes | None = None) -> None:
        if client.schema is None:
            raise ValueError("P4Runtime client has no schema: expected the ocs pipeline to be set or fetched")
        self.client = client
        self.config = config  # the ocs device config, to push again to a switch that restarted
        self._schema = client.schema
        self._installed: dict[int, int] = {}
        self._lock = threading.RLock()
        self._batch_start: dict[int, int] | None = None  # the table as written before the open batch
        self.resyncs = 0

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Collect the circuit changes made inside, then write them as one request (one update per input)."""
        with self._lock:
            self._batch_start = dict(self._installed)
            try:
                yield
            finally:
                before, self._batch_start = self._batch_start, None
                ups = []
                for port in sorted(set(before) | set(self._installed)):
                    old, new = before.get(port), self._installed.get(port)
                    if old == new:
                        continue
                    if new is None:
                        ups.append(p4r.Update(type=p4r.Update.DELETE, entity=circuit_entry(port, old).to_proto(
                            self._schema)))
                    else:
                        kind = p4r.Update.INSERT if old is None else p4r.Update.MODIFY
                        ups.append(p4r.Update(type=kind, entity=circuit_entry(port, new).to_proto(self._schema)))
                if ups:
                    self._write(lambda: self.client.write(ups))

    def resync(self, timeout: float = 2.0) -> bool:
        """After a lost connection: reconnect, re-push the pipeline if it is gone, rewrite every circuit."""
        if self.client.connected:
            return False
        self.client.connect(timeout)  # not under the lock: the timeline keeps recording meanwhile
        with self._lock:
            if self.client.get_pipeline() is None:
                if self.config is None:
                    raise ValueError("ocs switch lost its pipeline: expected --p4info/--config to push it again")
                self.client.set_pipeline(self._schema, self.config)
            held = self.client.read([wildcard(self.client.schema, "table_entry", CIRCUIT)])
            if held:
                self.client.write([p4r.Update(type=p4r.Update.DELETE, entity=e) for e in held])
            if self._installed:
                self.client.insert([circuit_entry(i, o) for i, o in sorted(self._installed.items())])
            self.resyncs += 1
            log.info("ocs switch resynced: %d circuits rewritten", len(self._installed))
            return True

    def watch(self, stop: threading.Event, period: float = 0.5) -> threading.Thread:
        """Resync in a background thread whenever the connection is lost, until `stop` is set."""

        def loop() -> None:
            while not stop.wait(period):
                if not self.client.connected:
                    try:
                        self.resync()
                    except Exception as exc:  # keep trying: the switch may still be restarting
                        log.debug("ocs switch resync failed: %s", exc)

        t = threading.Thread(target=loop, name="ocs-dataplane-watch", daemon=True)
        t.start()
        return t

    def clear_all(self) -> None:
        """Delete every `circuit` entry the switch holds (start dark)."""
        with self._lock:
            held = self.client.read([wildcard(self.client.schema, "table_entry", CIRCUIT)])
            if held:
                self.client.write([p4r.Update(type=p4r.Update.DELETE, entity=e) for e in held])
            self._installed.clear()

    def set_circuit(self, in_port: int, out_port: int) -> None:
        """INSERT, or MODIFY when the input already has a circuit (kept for resync if the switch is away)."""
        with self._lock:
            had = in_port in self._installed
            self._installed[in_port] = out_port
            if self._batch_start is not None:
                return
            entry = circuit_entry(in_port, out_port)
            self._write(lambda: self.client.modify([entry]) if had else self.client.insert([entry]))

    def clear_circuit(self, in_port: int) -> None:
        """DELETE the input's entry, if any, so its frames hit `dark()`."""
        with self._lock:
            out = self._installed.pop(in_port, None)
            if out is not None and self._batch_start is None:
                self._write(lambda: self.client.delete([circuit_entry(in_port, out)]))

    def _write(self, fn) -> None:
        if not self.client.connected:
            log.warning("ocs switch unreachable: the circuit is written when it is back")
            return
        try:
            fn()
        except P4RuntimeError:
            if self.client.connected:
                raise
            log.warning("ocs switch unreachable: the circuit is written when it is back")

    def installed(self) -> dict[int, int]:
        """What this writer believes the table holds."""
        with self._lock:
            return dict(self._installed)


class IpLinkControl:
    """Sets Linux interfaces down/up with `ip link`, so the attached switches see the port change.

    The names become lines of an `ip -batch` script, so each is checked here (emulation.links.check_ifname):
    a newline in one would add any `ip` command, `netns exec ... sh -c` included."""

    def __init__(self, interfaces: dict[int, list[str]],
                 runner: Callable[[list[str], str | None], None] | None = None) -> None:
        self.interfaces = {port: [check_ifname(n) for n in names] for port, names in interfaces.items()}
        self._run = runner or _run_ip

    def set_link(self, dp_port: int, up: bool) -> None:
        """`ip link set dev IF up|down` for each interface attached to `dp_port`."""
        self.set_links([(dp_port, up)])

    def set_links(self, changes: list[tuple[int, bool]]) -> None:
        """Apply many link changes in order with one `ip -batch` process (a schedule's night is short)."""
        lines = [f"link set dev {ifname} {'up' if up else 'down'}"
                 for port, up in changes for ifname in self.interfaces.get(port, [])]
        if lines:
            self._run(["ip", "-batch", "-"], "\n".join(lines) + "\n")


def _run_ip(argv: list[str], stdin: str | None = None) -> None:
    res = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=5, check=False)
    if res.returncode != 0:
        log.error("%s failed: %s", " ".join(argv), res.stderr.strip())


def parse_link_specs(specs: list[str]) -> dict[int, list[str]]:
    """Parse ["3=veth3", "3=tor1-eth2", ...] into {3: ["veth3", "tor1-eth2"]}; ValueError naming a bad one."""
    out: dict[int, list[str]] = {}
    for spec in specs:
        port, sep, ifname = spec.partition("=")
        if not sep or not port.isascii() or not port.isdigit():
            raise ValueError(f"link {spec!r}: expected <dp-port>=<interface>")
        try:
            out.setdefault(int(port), []).append(check_ifname(ifname))
        except ValueError as exc:
            raise ValueError(f"link {spec!r}: {exc}") from None
    return out
