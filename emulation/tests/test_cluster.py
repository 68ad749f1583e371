"""Mininet's cluster edition with the project's edges (emulation/cluster.py): the run's ssh options,
VXLAN between servers, nothing left behind; and (as root) two hosts on two servers, the second a
network namespace with its own sshd (emulation/servers.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from emulation.cluster import VXLAN_OVERHEAD, ssh_options, with_options
from emulation.netbuild import FABRIC_MTU
from emulation.servers import SSHD, UNDERLAY_MTU, LocalServer


def test_the_runs_ssh_options_go_right_after_ssh() -> None:
    opts = ssh_options(Path("/k/id"), Path("/k/known"))
    assert opts[:2] == ["-i", "/k/id"] and "UserKnownHostsFile=/k/known" in opts and "BatchMode=yes" in opts
    assert with_options(["ssh", "-q", "-tt"], ["-i", "x"]) == ["ssh", "-i", "x", "-q", "-tt"]
    assert UNDERLAY_MTU >= FABRIC_MTU + VXLAN_OVERHEAD  # a fabric frame crosses a tunnel whole


def test_a_local_server_refuses_a_bad_prefix_or_name() -> None:
    with pytest.raises(ValueError, match="expected three octets"):
        LocalServer("hlsrv", "10.250.1.5")
    with pytest.raises(ValueError):
        LocalServer("a-name-far-too-long-for-linux", "10.250.1")


def _ours(address: str) -> list[str]:
    """Processes whose command line names the server's address (the cluster's ssh sessions)."""
    out = subprocess.run(["pgrep", "-af", f"root@{address}"], capture_output=True, text=True, check=False).stdout
    return [line for line in out.splitlines() if "pgrep" not in line]


@pytest.mark.root
@pytest.mark.skipif(os.geteuid() != 0, reason="needs root (namespaces, Mininet)")
@pytest.mark.skipif(shutil.which(SSHD) is None, reason="needs openssh-server for its second server's sshd "
                    "(apt-get install openssh-server; CI installs it)")
@pytest.mark.skipif(shutil.which("sudo") is None or shutil.which("mn") is None, reason="needs sudo and mininet (make setup)")
def test_two_hosts_on_two_servers_reach_each_other_over_vxlan() -> None:
    from mininet.examples.cluster import RoundRobinPlacer
    from mininet.topo import Topo

    from emulation.cluster import Cluster

    name = f"hlc{os.getpid() % 10000}"
    with LocalServer(name, "10.250.7") as srv:
        class TwoServers(Topo):
            def build(self) -> None:
                a = self.addHost(f"{name}h1", server="localhost", ssh_opts=srv.ssh_opts)
                b = self.addHost(f"{name}h2", server=srv.address, ssh_opts=srv.ssh_opts)
                self.addLink(a, b)

        net = Cluster(topo=TwoServers(), servers=["localhost", srv.address], ssh_opts=srv.ssh_opts,
                      user="root", placement=RoundRobinPlacer, controller=None, switch=None)
        try:
            net.start()
            h1, h2 = net.hosts
            assert " 0% packet loss" in h1.cmd("ping", "-c", "3", "-W", "2", h2.IP())
            # a packet of the fabric's MTU crosses whole (don't fragment; IP and ICMP headers: 28 bytes)
            big = FABRIC_MTU - 28
            assert " 0% packet loss" in h1.cmd("ping", "-c", "2", "-W", "2", "-M", "do", "-s", str(big), h2.IP())
            assert "vxlan" in h2.cmd("ip", "-d", "link", "show", h2.intfList()[0].name)
        finally:
            net.stop()
        assert _ours(srv.address) == [], "the remote hosts' ssh sessions stop with the network"
    links = subprocess.run(["ip", "-br", "link"], capture_output=True, text=True, check=True).stdout
    assert name not in links, f"nothing of the run left: {links}"
    assert name not in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True).stdout
