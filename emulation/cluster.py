"""An emulation over several servers with Mininet's cluster edition (`mininet.examples.cluster` in
Debian's mininet package: `MininetCluster`, `RemoteHost`, `RemoteLink`): each node runs on the server
its topology entry names, reached over SSH; a link between servers is a tunnel.

What the cluster edition does not do here, and what this module adds around its edges (issue 37):
- **Links between servers are VXLAN** (`VxlanLink`). Its GRE link needs the kernel's `gretap`, which
  this project's machine does not have (`ip link add ... type gretap`: "Unknown device type"), and
  it sets every link of a server to MTU 1450, below the fabric's 1600. Its SSH link runs a bare
  `ssh` (no options: a key or known-hosts file of the run's own is not used) through `sudo`, and
  hard-wires one `tap9` a server, which a failed tunnel leaves behind for the next to trip on.
  VXLAN crosses any IP network (UDP 4789); the underlay between servers needs an MTU of the fabric's
  frame plus VXLAN_OVERHEAD (jumbo frames on real servers).
- **SSH options per run** (`ssh_options`): the cluster edition's commands take the run's identity and
  known-hosts file, so nothing is written to the user's ~/.ssh.
- **Nothing left behind**: a remote node's shell is a local `ssh` process that outlives Mininet's
  SIGHUP; `ClusterHost.terminate` stops it.
- **P4 switches on any server** (`ClusterSwitch`): the cluster edition has only Open vSwitch. A remote
  P4 switch runs the same command line on its server (`RemoteProcess`: over `ssh -tt`, so a lost
  session hangs it up; its PID there is the first line it prints; stopped by that PID), its P4Runtime
  server listening on the server's address, where the controller reaches it. The servers share the
  project's path and toolchain (the switch binary resolved to a full path here, the same there).
- **A local node's processes stay its own** (`RemoteShellMixin._popen`). The cluster edition starts
  every command, a local node's too, as a process-group leader (a `setpgrp` preexec_fn); a local
  host's command is `mnexec -da PID ...`, and mnexec, finding itself a group leader, forks and exits 0
  so that `-d` can make a new session: Popen reports the capture ended at once while tcpdump runs on,
  out of reach (found as "tcpdump on h2-eth0: exited:" with nothing in its log, the capture still
  running). Upstream would need RemoteMixin._popen to set the process group for ssh only, as here.
"""

from __future__ import annotations

import contextlib
import os
import random
import shlex
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from mininet.examples.cluster import MininetCluster, RemoteHost, RemoteLink, RemoteMixin
from mininet.link import Link

from emulation.links import vxlan_commands
from emulation.netbuild import FABRIC_MTU
from emulation.p4switch import P4Switch, SwitchStartError, port_is_free
from emulation.switchproc import stop as stop_process

LOCAL = "localhost"  # the cluster edition's name of this machine as a server (its nodes are local ones)
VXLAN_OVERHEAD = 50  # bytes a VXLAN tunnel adds on IPv4: outer Ethernet 14, IP 20, UDP 8, VXLAN 8
SHELL_STOP_S = 5.0
REMOTE_START_S = 30.0  # a remote process's first line (its PID) arrives within this


def with_options(base: list[str], options: list[str]) -> list[str]:
    """An ssh command line of the cluster edition (`ssh`, its options) with `options` after `ssh`."""
    return base[:1] + list(options) + base[1:]


class RemoteShellMixin(RemoteMixin):
    """A cluster edition node reached with the run's ssh options (`ssh_opts`), whose remote shell's
    local ssh process is stopped with it (Mininet's SIGHUP leaves it running)."""

    def __init__(self, name: str, ssh_opts: list[str] | tuple[str, ...] = (), **params: Any) -> None:
        self.sshbase = with_options(RemoteMixin.sshbase, list(ssh_opts))
        super().__init__(name, **params)

    # RemoteMixin runs every command with a Python preexec_fn (setpgrp): a fork that runs Python in the
    # child of a process whose gRPC threads are busy (the controller's, during an experiment) wrote
    # gRPC's "epoll_wait error: Bad file descriptor" into the child's output, where the remote PID was
    # expected, and can abort it before exec. Popen's own process_group=0 does the same without it, for
    # ssh only: a local node's command is `mnexec -da PID ...`, and mnexec, finding itself a process
    # group leader, forks and exits 0 at once (its Popen "ended" while tcpdump ran on, out of reach).
    _ignoreSignal = None  # noqa: N815 - RemoteMixin's name

    def _popen(self, cmd: Any, sudo: bool = True, tt: bool = True, **params: Any) -> Any:
        if self.isRemote:
            params.setdefault("process_group", 0)
        return super()._popen(cmd, sudo=sudo, tt=tt, **params)

    def terminate(self) -> None:
        """Mininet's SIGHUP to the shell, then the ssh process of a remote shell, until it exits."""
        super().terminate()
        if self.isRemote and self.shell is not None:
            stop_process(self.shell)


class ClusterHost(RemoteShellMixin, RemoteHost):
    """A Mininet host on the server its topology entry names (`server`, `serverIP`). On a remote server
    a process whose output goes to a file or nowhere (a capture, a traffic generator) runs as a
    `RemoteProcess` in the host's namespaces, so it hangs up with its run and a signal reaches it
    (Mininet's popen runs it over an ssh session without a terminal, which neither does); one with
    pipes (a command whose output is read) is Mininet's popen."""

    def popen(self, *args: Any, **kwargs: Any) -> Any:
        pipes = subprocess.PIPE in (kwargs.get("stdin"), kwargs.get("stdout"))
        if not self.isRemote or pipes:
            return super().popen(*args, **kwargs)
        argv = list(args[0]) if len(args) == 1 and isinstance(args[0], (list, tuple)) else list(args)
        stdout = kwargs.get("stdout")
        return RemoteProcess(self, ["mnexec", "-a", str(self.pid), *map(str, argv)],
                             stdout=None if stdout in (None, subprocess.DEVNULL) else stdout, cwd=kwargs.get("cwd"))


class RemoteProcess:
    """A command run on a node's server (in its root namespace; `mnexec -a PID` in argv for a host's:
    not `-d`, whose fork would leave the session at once),
    over `ssh -tt`: a session that breaks hangs it up, so it never outlives its run (`local_pid` is the
    cluster edition's `sudo -u USER ssh`: a SIGTERM to it reaches ssh, a SIGKILL does not, so stop it
    with SIGTERM first, as clean-net does). Its PID there is
    the first line it prints; what it prints after goes to `log` there, or to the local file `stdout`
    (a thread copies it, the terminal's CR LF as LF), or nowhere. Signalled by that PID. Duck-types
    what the project uses of `subprocess.Popen` (`poll`, `wait`, `send_signal`, `terminate`, `kill`,
    `returncode`; `pid` is the remote one)."""

    def __init__(self, node: RemoteMixin, argv: list[str], log: Path | None = None, stdout: Any = None,
                 cwd: str | None = None, timeout: float = REMOTE_START_S) -> None:
        steps = ["echo $$"]
        if log is not None:
            steps.insert(0, f"mkdir -p {shlex.quote(str(log.parent))}")
        if cwd is not None:
            steps.append(f"cd {shlex.quote(cwd)}")
        out = f"> {shlex.quote(str(log))} 2>&1" if log is not None else "2>&1"
        steps.append(f"exec {shlex.join(argv)} {out} < /dev/null")
        self.node = node
        # ssh joins its words with spaces for the remote shell: the script goes as one quoted word
        self.ssh = node.rpopen(["sh", "-c", shlex.quote(" && ".join(steps))], sudo=False)
        self.pid = self._first_line(timeout)
        # a copy of the caller's descriptor: the caller may close its file once this returns, as after Popen
        sink = open(os.dup(stdout.fileno()), "wb", buffering=0) if hasattr(stdout, "fileno") else None  # noqa: SIM115
        self._pump = threading.Thread(target=self._copy, args=(sink,), daemon=True)
        self._pump.start()

    def _first_line(self, timeout: float) -> int:
        assert self.ssh.stdout is not None
        deadline = time.monotonic() + timeout
        line = b""
        while not line.endswith(b"\n"):
            ch = self.ssh.stdout.read(1)
            if not ch or time.monotonic() > deadline:
                stop_process(self.ssh)
                raise SwitchStartError(f"on {self.node.server}: no PID from the remote shell: {line!r}")
            line += ch
        try:
            return int(line.strip())
        except ValueError:
            stop_process(self.ssh)
            raise SwitchStartError(f"on {self.node.server}: {line.decode(errors='replace').strip()}") from None

    def _copy(self, sink: Any) -> None:
        """The session's output after the PID into `sink` (a local file, closed at the end), or drained."""
        assert self.ssh.stdout is not None
        with sink if sink is not None else contextlib.nullcontext():
            for chunk in iter(lambda: self.ssh.stdout.read1(65536), b""):  # type: ignore[union-attr]
                if sink is not None:
                    sink.write(chunk.replace(b"\r\n", b"\n"))

    @property
    def local_pid(self) -> int:
        """The local ssh session's PID (stopping it ends the command: its terminal hangs up)."""
        return self.ssh.pid

    @property
    def returncode(self) -> int | None:
        return self.ssh.returncode

    def poll(self) -> int | None:
        """None while the remote command runs (its ssh session is open)."""
        return self.ssh.poll()

    def wait(self, timeout: float | None = None) -> int:
        """Its exit status (ssh passes the remote command's on); subprocess.TimeoutExpired as Popen's."""
        code = self.ssh.wait(timeout)
        self._pump.join(SHELL_STOP_S)
        return code

    def send_signal(self, sig: int) -> None:
        """`sig` to the remote PID, not waiting."""
        if self.ssh.poll() is None:
            self.node.rcmd(["kill", f"-{signal.Signals(sig).name.removeprefix('SIG')}", str(self.pid)], sudo=False)

    def terminate(self) -> None:
        """SIGTERM to the remote PID, not waiting."""
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        """SIGKILL to the remote PID, not waiting."""
        self.send_signal(signal.SIGKILL)

    def stop(self, timeout: float = SHELL_STOP_S) -> None:
        """SIGTERM to the remote PID, SIGKILL after `timeout`, then the session closes with it."""
        if self.ssh.poll() is None:
            self.terminate()
            try:
                self.wait(timeout)
            except subprocess.TimeoutExpired:
                self.kill()
        stop_process(self.ssh)
        self._pump.join(SHELL_STOP_S)


class ClusterSwitch(RemoteShellMixin, P4Switch):
    """A P4 switch (emulation/p4switch.py) on the server its entry names: on a remote one its process
    runs there (`RemoteProcess`) and its P4Runtime server listens on the server's address."""

    def __init__(self, name: str, **params: Any) -> None:
        super().__init__(name, **params)
        if self.isRemote:
            if self.host is not None:
                raise ValueError(f"switch {name}: a shared switch process runs on this machine only, "
                                 f"not on server {self.server}")
            self.grpc_host = self.serverIP
            bin_path = shutil.which(shlex.split(self.switch_bin)[0])
            if bin_path is None:
                raise ValueError(f"switch {name}: {self.switch_bin!r} not found here, so not at its path on "
                                 f"{self.server} either (servers share the toolchain's paths)")
            self.switch_bin = shlex.join([bin_path, *shlex.split(self.switch_bin)[1:]])

    def grpc_port_free(self) -> bool:
        return port_is_free(self.grpc_port, self.grpc_host, bind=not self.isRemote)

    def launch(self, cmd: list[str]) -> Any:
        if not self.isRemote:
            return super().launch(cmd)
        return RemoteProcess(self, cmd, log=self.log_path)

    @property
    def local_pid(self) -> int | None:
        """A remote switch's: the local ssh session that runs it (RemoteProcess.local_pid)."""
        return self.proc.local_pid if isinstance(self.proc, RemoteProcess) else super().local_pid

    def stop_process(self) -> None:
        if isinstance(self.proc, RemoteProcess):
            self.proc.stop()
        else:
            super().stop_process()

    def log_tail(self, lines: int = 1) -> str:
        if not self.isRemote:
            return super().log_tail(lines)
        out = self.rcmd(["tail", "-n", str(lines), str(self.log_path)], sudo=False)
        return " | ".join(x.strip() for x in out.splitlines() if x.strip())


class VxlanLink(RemoteLink):
    """A link: a veth pair on one server, a VXLAN tunnel (one VNI a link) between two."""

    # the last VNI handed out, for the whole process; it starts anywhere in the lower half of VXLAN's
    # 24 bits, as two runs side by side on the same servers may not share one (the kernel refuses a
    # second tunnel with a VNI in use: "A VXLAN device with the specified VNI already exists")
    vni = random.randrange(1 << 23)

    @classmethod
    def next_vni(cls) -> int:
        """A VNI of its own for the next tunnel (a link's or a fibre's) of this process."""
        cls.vni += 1
        return cls.vni

    def stop(self) -> None:
        """Delete both ends (a tunnel's ends are two interfaces of their own)."""
        if self.tunnel:
            self.intf1.delete()
            self.intf2.delete()
        else:
            Link.stop(self)
        self.tunnel = None

    def makeTunnel(self, node1: Any, node2: Any, intfname1: str, intfname2: str,  # noqa: N802 - Mininet's
                   addr1: str | None = None, addr2: str | None = None) -> int:
        """A VXLAN interface on each server, `local` its own address and `remote` the other's, moved
        into its node, both at the fabric's MTU."""
        if node2.server == LOCAL:  # the local end first: its address is found by route
            return self.makeTunnel(node2, node1, intfname2, intfname1, addr2, addr1)
        vni = VxlanLink.next_vni()
        for node, name, addr, (local, remote) in ((node1, intfname1, addr1, tunnel_addresses(node1, node2)),
                                                  (node2, intfname2, addr2, tunnel_addresses(node2, node1))):
            steps = vxlan_commands(name, vni, local, remote, FABRIC_MTU)
            if addr:
                steps.append(["ip", "link", "set", "dev", name, "address", addr])
            for argv in steps:
                out = node.rcmd(argv)
                if out.strip():
                    raise RuntimeError(f"{node.name}: {' '.join(argv)}: {out.strip()}")
            self.moveIntf(name, node)
        return 1


class PremadeVxlanLink(VxlanLink):
    """A link between servers whose VXLAN ends exist already, each in its node (ClusterBuild makes
    every server's ends in one `ip -batch`): Mininet's objects over them, no command of its own."""

    def makeTunnel(self, node1: Any, node2: Any, intfname1: str, intfname2: str,  # noqa: N802 - Mininet's
                   addr1: str | None = None, addr2: str | None = None) -> int:
        """Nothing to make."""
        return 1


def tunnel_addresses(node: Any, peer: Any) -> tuple[str, str]:
    """A tunnel end's underlay addresses, (local, remote): its node's server's address towards the
    peer's server and that server's address towards it (this machine's found by route)."""
    local = node.serverIP if node.isRemote else route_source(peer.serverIP)
    remote = peer.serverIP if peer.isRemote else route_source(node.serverIP)
    return local, remote


def route_source(address: str) -> str:
    """This machine's source address towards `address` (`ip route get`)."""
    out = subprocess.run(["ip", "route", "get", address], capture_output=True, text=True, check=False).stdout
    if " src " not in out:
        raise RuntimeError(f"no route from this machine to server {address!r}")
    return out.split(" src ", 1)[1].split()[0]


class Cluster(MininetCluster):
    """MininetCluster with the run's ssh options in its server check and every node's commands."""

    def __init__(self, *args: Any, ssh_opts: list[str] | tuple[str, ...] = (), **params: Any) -> None:
        self.sshcmd = with_options(MininetCluster.sshcmd, list(ssh_opts))
        params.setdefault("host", ClusterHost)
        params.setdefault("switch", ClusterSwitch)
        params.setdefault("link", VxlanLink)
        super().__init__(*args, **params)
