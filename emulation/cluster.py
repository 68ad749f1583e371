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
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from mininet.examples.cluster import MininetCluster, RemoteHost, RemoteLink, RemoteMixin
from mininet.link import Link

from emulation.links import check_ifname
from emulation.netbuild import FABRIC_MTU

VXLAN_PORT = 4789
VXLAN_OVERHEAD = 50  # bytes a VXLAN tunnel adds on IPv4: outer Ethernet 14, IP 20, UDP 8, VXLAN 8
SHELL_STOP_S = 5.0


def ssh_options(identity: Path, known_hosts: Path) -> list[str]:
    """The ssh options of a run: its own key and known-hosts file, never a prompt."""
    return ["-i", str(identity), "-o", f"UserKnownHostsFile={known_hosts}", "-o", "StrictHostKeyChecking=accept-new",
            "-o", "BatchMode=yes"]


def with_options(base: list[str], options: list[str]) -> list[str]:
    """An ssh command line of the cluster edition (`ssh`, its options) with `options` after `ssh`."""
    return base[:1] + list(options) + base[1:]


class ClusterHost(RemoteHost):
    """A Mininet host on the server its topology entry names (`server`, `serverIP`), reached with the
    run's ssh options; its local ssh process is stopped with it."""

    def __init__(self, name: str, ssh_opts: list[str] | tuple[str, ...] = (), **params: Any) -> None:
        self.sshbase = with_options(RemoteMixin.sshbase, list(ssh_opts))
        super().__init__(name, **params)

    def terminate(self) -> None:
        """Mininet's SIGHUP to the shell, then the ssh process of a remote shell, until it exits."""
        super().terminate()
        shell = self.shell
        if self.isRemote and shell is not None and shell.poll() is None:
            shell.terminate()
            try:
                shell.wait(SHELL_STOP_S)
            except subprocess.TimeoutExpired:
                shell.kill()
                shell.wait()


class VxlanLink(RemoteLink):
    """A link: a veth pair on one server, a VXLAN tunnel (one VNI a link) between two."""

    vni = 0  # the last VNI handed out, for the whole process

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
        if node2.server == "localhost":  # the local end first: its address is found by route
            return self.makeTunnel(node2, node1, intfname2, intfname1, addr2, addr1)
        local1 = node1.serverIP if node1.server != "localhost" else route_source(node2.serverIP)
        VxlanLink.vni += 1
        for node, name, addr, local, remote in ((node1, intfname1, addr1, local1, node2.serverIP),
                                                (node2, intfname2, addr2, node2.serverIP, local1)):
            check_ifname(name)
            steps = [["ip", "link", "add", "name", name, "type", "vxlan", "id", str(VxlanLink.vni), "local", local,
                      "remote", remote, "dstport", str(VXLAN_PORT)],
                     ["ip", "link", "set", "dev", name, "mtu", str(FABRIC_MTU), "up"]]
            if addr:
                steps.append(["ip", "link", "set", "dev", name, "address", addr])
            for argv in steps:
                out = node.rcmd(argv)
                if out.strip():
                    raise RuntimeError(f"{node.name}: {' '.join(argv)}: {out.strip()}")
            self.moveIntf(name, node)
        return 1


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
        params.setdefault("link", VxlanLink)
        super().__init__(*args, **params)
