"""A second server on this machine, for a cluster emulation (emulation/cluster.py) tried or tested on
one machine: a network namespace reached over a veth pair, running an sshd of its own with keys made
for it. It shares this machine's files and programs, as servers of a real cluster share a project
checkout and a toolchain at the same paths.

    with LocalServer("hlsrv1", "10.250.1") as srv:   # srv.address: 10.250.1.2; srv.ssh_opts
        ...

Needs root and Debian's openssh-server (`/usr/sbin/sshd`). Everything it makes (namespace, veth,
sshd, key folder) goes when it stops, also after a failed start.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from emulation.links import check_ifname, run_checked

SSHD = "/usr/sbin/sshd"
SSH_PORT = 22
START_TIMEOUT_S = 10.0
UNDERLAY_MTU = 9000  # jumbo frames between the servers, as real ones need: above FABRIC_MTU + VXLAN_OVERHEAD


def ssh_options(identity: Path, known_hosts: Path) -> list[str]:
    """The ssh options of a run: its own key and known-hosts file, never a prompt."""
    return ["-i", str(identity), "-o", f"UserKnownHostsFile={known_hosts}", "-o", "StrictHostKeyChecking=accept-new",
            "-o", "BatchMode=yes"]


class LocalServer:
    """A network namespace `name` with `<prefix>.2/24`, reached from this machine's `<prefix>.1` over
    the veth pair `<name>a`/`<name>b`, with sshd on `<prefix>.2:22` taking the key it made."""

    def __init__(self, name: str, prefix: str) -> None:
        check_ifname(f"{name}a")
        try:
            net = ipaddress.ip_network(f"{prefix}.0/24")
        except ValueError:
            raise ValueError(f"server prefix {prefix!r}: expected three octets of an IPv4 /24, e.g. 10.250.1") from None
        self.name = name
        self.local, self.address = str(net[1]), str(net[2])
        self.dir: Path | None = None
        self.sshd: subprocess.Popen | None = None

    @property
    def ssh_opts(self) -> list[str]:
        """The ssh options that reach it (its key, its known-hosts file)."""
        if self.dir is None:
            raise RuntimeError(f"server {self.name}: not started")
        return ssh_options(self.dir / "id", self.dir / "known_hosts")

    def __enter__(self) -> LocalServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        """The namespace, its link to this machine, its sshd; stopped again if any step fails."""
        if shutil.which(SSHD) is None:
            raise RuntimeError(f"server {self.name}: needs {SSHD} (Debian's openssh-server; make setup)")
        try:
            self._start()
        except BaseException:
            self.stop()
            raise

    def _start(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix=f"{self.name}-"))
        a, b = f"{self.name}a", f"{self.name}b"
        for argv in (["ip", "netns", "add", self.name],
                     ["ip", "link", "add", a, "mtu", str(UNDERLAY_MTU), "type", "veth", "peer", "name", b,
                      "mtu", str(UNDERLAY_MTU), "netns", self.name],
                     ["ip", "addr", "add", f"{self.local}/24", "dev", a],
                     ["ip", "link", "set", a, "up"],
                     ["ip", "-n", self.name, "addr", "add", f"{self.address}/24", "dev", b],
                     ["ip", "-n", self.name, "link", "set", b, "up"],
                     ["ip", "-n", self.name, "link", "set", "lo", "up"],
                     ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(self.dir / "host")],
                     ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(self.dir / "id")]):
            run_checked(*argv)
        shutil.copy(self.dir / "id.pub", self.dir / "authorized_keys")
        (self.dir / "sshd_config").write_text(
            f"ListenAddress {self.address}:{SSH_PORT}\nHostKey {self.dir / 'host'}\n"
            f"AuthorizedKeysFile {self.dir / 'authorized_keys'}\nPermitRootLogin prohibit-password\n"
            f"PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n"
            f"PidFile none\nPermitTunnel yes\nMaxSessions 1000\nMaxStartups 1000\n")
        Path("/run/sshd").mkdir(parents=True, exist_ok=True)  # sshd's privilege separation folder
        with open(self.dir / "sshd.log", "wb") as log:  # the child keeps its own copy of the descriptor
            self.sshd = subprocess.Popen(["ip", "netns", "exec", self.name, SSHD, "-D", "-e", "-f",
                                          str(self.dir / "sshd_config")], stdout=subprocess.DEVNULL, stderr=log)
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.sshd.poll() is not None:
                raise RuntimeError(f"server {self.name}: sshd exited: {self.log_tail()}")
            try:
                socket.create_connection((self.address, SSH_PORT), timeout=0.5).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"server {self.name}: sshd not listening on {self.address}:{SSH_PORT} "
                           f"after {START_TIMEOUT_S:g} s: {self.log_tail()}")

    def log_tail(self) -> str:
        """The last lines sshd wrote."""
        try:
            return " | ".join((self.dir / "sshd.log").read_text(errors="replace").splitlines()[-3:])
        except (OSError, TypeError):
            return ""

    def stop(self) -> None:
        """sshd (by its process), whatever still runs in the namespace (a server switched off takes its
        processes with it: a failed test's sessions would otherwise run on in a namespace without a
        name), the namespace (and with it the veth pair), the key folder."""
        if self.sshd is not None:
            self.sshd.terminate()
            try:
                self.sshd.wait(5)
            except subprocess.TimeoutExpired:
                self.sshd.kill()
                self.sshd.wait()
            self.sshd = None
        pids = subprocess.run(["ip", "netns", "pids", self.name], capture_output=True, text=True,
                              check=False).stdout.split()
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(int(pid), signal.SIGKILL)
        subprocess.run(["ip", "netns", "del", self.name], capture_output=True, check=False)
        subprocess.run(["ip", "link", "del", f"{self.name}a"], capture_output=True, check=False)
        if self.dir is not None:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None

