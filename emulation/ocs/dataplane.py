"""Where the emulated OCS takes effect: the `ocs` program's `circuit` table and the attached links."""

from __future__ import annotations

import contextlib
import logging
import subprocess
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from control.switch import SwitchSession
from emulation.links import check_ifname, check_ssh_dest, ssh_argv
from fabric.contract import CIRCUIT, CROSS_CONNECT
from p4rt.entities import TableEntry
from p4rt.errors import P4RuntimeError

log = logging.getLogger(__name__)


def circuit_entry(in_port: int, out_port: int) -> TableEntry:
    """The `circuit` entry sending frames of `in_port` to `out_port` (p4src/README.md)."""
    return TableEntry(CIRCUIT, {"ingress_port": in_port}, CROSS_CONNECT, {"port": out_port})


class P4RuntimeCircuits:
    """The `ocs` switch's tables as this OCS sets them: its circuits (`circuit` entries; dark = no entry)
    and, in the data-plane schedule mode, its time-flow tables. Both are parts of the session's desired
    state (control/switch.py), which writes every change, so a switch that restarts gets them all back
    (`resync`, `watch`)."""

    def __init__(self, session: SwitchSession) -> None:
        self.session = session
        self._installed: dict[int, int] = {}
        self._lock = threading.RLock()
        self._batch_start: dict[int, int] | None = None  # the table as written before the open batch
        self.resyncs = 0

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Collect the circuit changes made inside, then write them as one change (one update per input)."""
        with self._lock:
            self._batch_start = dict(self._installed)
            try:
                yield
            finally:
                before, self._batch_start = self._batch_start, None
                self._write(before)

    def resync(self, timeout: float = 2.0) -> bool:
        """After a lost connection: reconnect, re-push the pipeline if it is gone, and write the desired
        state again (circuits and schedule): `SwitchSession.recover`. False while connected."""
        if self.session.client.connected:
            return False
        self.session.recover(timeout)  # under the session's lock: a circuit set meanwhile waits for it
        self.resyncs += 1
        log.info("ocs switch resynced: %d circuits rewritten", len(self.installed()))
        return True

    def watch(self, stop: threading.Event, period: float = 0.5) -> threading.Thread:
        """Resync in a background thread whenever the connection is lost, until `stop` is set."""

        def loop() -> None:
            while not stop.wait(period):
                try:
                    self.resync()
                except Exception as exc:  # keep trying: the switch may still be restarting
                    log.debug("ocs switch resync failed: %s", exc)

        t = threading.Thread(target=loop, name="ocs-dataplane-watch", daemon=True)
        t.start()
        return t

    def clear_all(self) -> None:
        """Start dark, with no schedule: the switch is reconciled to an empty state (what an earlier
        run left in any table is deleted)."""
        with self._lock:
            self._installed.clear()
            self.session.sync(self.session.empty_state())

    def set_tables(self, tables: tuple[str, ...], entries: list[TableEntry]) -> None:
        """Replace what the desired state has in these tables (the time-flow schedule) and sync it."""
        with self._lock:
            have = self.session.desired or self.session.empty_state()
            self.session.sync(have.with_tables(tables, entries), trust_cache=True)

    def set_circuit(self, in_port: int, out_port: int) -> None:
        """The input's circuit: INSERT, or MODIFY when it already has one (kept for resync if the switch is away)."""
        with self._lock:
            before = dict(self._installed)
            self._installed[in_port] = out_port
            if self._batch_start is None:
                self._write(before)

    def clear_circuit(self, in_port: int) -> None:
        """DELETE the input's entry, if any, so its frames hit `dark()`."""
        with self._lock:
            before = dict(self._installed)
            if self._installed.pop(in_port, None) is not None and self._batch_start is None:
                self._write(before)

    def _write(self, before: dict[int, int]) -> None:
        """The circuits changed since `before`, as one change of the desired state."""
        add, remove = [], []
        for port in sorted(set(before) | set(self._installed)):
            old, new = before.get(port), self._installed.get(port)
            if old != new:
                (remove if new is None else add).append(circuit_entry(port, old if new is None else new))
        if not add and not remove:
            return
        try:
            self.session.apply(add, remove)
        except P4RuntimeError:
            if self.session.client.connected:
                raise
            log.warning("ocs switch unreachable: the circuit is written when it is back")

    def installed(self) -> dict[int, int]:
        """What this writer believes the table holds."""
        with self._lock:
            return dict(self._installed)


class IpLinkControl:
    """Sets Linux interfaces down/up with `ip link`, so the attached switches see the port change.

    An interface is `NAME` on this machine or `NAME:user@server` on another server of a cluster run (a
    fibre between servers, emulation/fibre.py), set there by a long-lived `ip -batch` over ssh
    (`RemoteIpBatch`), which takes its lines before this machine's run. The names become lines of an
    `ip -batch` script, so each is checked here (emulation.links.check_ifname, check_ssh_dest): a
    newline in one would add any `ip` command, `netns exec ... sh -c` included."""

    def __init__(self, interfaces: dict[int, list[str]],
                 runner: Callable[[list[str], str | None], None] | None = None,
                 ssh_words: list[str] | tuple[str, ...] = ()) -> None:
        self.interfaces = {port: [split_link(n) for n in names] for port, names in interfaces.items()}
        self._run = runner or _run_ip
        self._remote = {dest: RemoteIpBatch(dest, list(ssh_words))
                        for names in self.interfaces.values() for _, dest in names if dest}

    def set_link(self, dp_port: int, up: bool) -> None:
        """`ip link set dev IF up|down` for each interface attached to `dp_port`."""
        self.set_links([(dp_port, up)])

    def set_links(self, changes: list[tuple[int, bool]]) -> None:
        """Apply many link changes in order with one `ip -batch` a server (a schedule's night is short)."""
        lines: dict[str | None, list[str]] = {}
        for port, up in changes:
            for ifname, dest in self.interfaces.get(port, []):
                lines.setdefault(dest, []).append(f"link set dev {ifname} {'up' if up else 'down'}\n")
        for dest, batch in lines.items():
            if dest:
                self._remote[dest].send("".join(batch))
        if None in lines:
            self._run(["ip", "-batch", "-"], "".join(lines[None]))

    def close(self) -> None:
        """End the remote batches (their `ip` reads the end of its input)."""
        for remote in self._remote.values():
            remote.close()


class RemoteIpBatch:
    """`ip -force -batch -` on another server over ssh, kept open: a line written here runs there within
    the underlay's round trip (a new ssh a change took about half a second, as long as a dark period).
    Started at the first line; restarted once if it has ended; its errors go to this log."""

    def __init__(self, dest: str, ssh_words: list[str]) -> None:
        self.argv = ssh_argv(dest, ssh_words, ["ip", "-force", "-batch", "-"])
        self.dest = dest
        self._proc: subprocess.Popen | None = None
        self._lock = threading.Lock()

    def send(self, text: str) -> None:
        """Lines of `ip -batch` to run there, in order (not waited for)."""
        with self._lock:
            for attempt in (1, 2):
                if self._proc is None or self._proc.poll() is not None:
                    self._start()
                try:
                    assert self._proc is not None and self._proc.stdin is not None
                    self._proc.stdin.write(text)
                    self._proc.stdin.flush()
                    return
                except OSError as exc:
                    log.error("ip -batch on %s (attempt %d): %s", self.dest, attempt, exc)
                    self._proc = None

    def _start(self) -> None:
        self._proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.PIPE, text=True, bufsize=1)
        threading.Thread(target=self._log_errors, args=(self._proc,), daemon=True).start()

    def _log_errors(self, proc: subprocess.Popen) -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            log.error("ip -batch on %s: %s", self.dest, line.rstrip())

    def close(self) -> None:
        """End the batch (its `ip` reads the end of its input) and wait for it."""
        with self._lock:
            if self._proc is not None:
                with contextlib.suppress(OSError):
                    self._proc.stdin.close()  # type: ignore[union-attr]
                try:
                    self._proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    self._proc.kill()
                    self._proc.wait()
                self._proc = None


def split_link(name: object) -> tuple[str, str | None]:
    """`NAME` -> (NAME, None); `NAME:user@server` -> (NAME, user@server) (':' is never in an interface
    name, '@' may be); ValueError naming a bad one."""
    ifname, sep, dest = name.partition(":") if isinstance(name, str) else (name, "", "")
    return check_ifname(ifname), (check_ssh_dest(dest) if sep else None)


def _run_ip(argv: list[str], stdin: str | None = None) -> None:
    res = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=5, check=False)
    if res.returncode != 0:
        log.error("%s failed: %s", " ".join(argv), res.stderr.strip())


def parse_link_specs(specs: list[str]) -> dict[int, list[str]]:
    """Parse ["3=veth3", "3=tor1-eth2", "4=s3-eth2t:root@10.0.0.2", ...] into {3: ["veth3", "tor1-eth2"],
    4: [...]}; ValueError naming a bad one."""
    out: dict[int, list[str]] = {}
    for spec in specs:
        port, sep, ifname = spec.partition("=")
        if not sep or not port.isascii() or not port.isdigit():
            raise ValueError(f"link {spec!r}: expected <dp-port>=<interface>[:user@server]")
        try:
            split_link(ifname)
            out.setdefault(int(port), []).append(ifname)
        except ValueError as exc:
            raise ValueError(f"link {spec!r}: {exc}") from None
    return out
