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


def test_pods_stay_whole_on_a_server_and_the_top_tier_spreads() -> None:
    from emulation.cluster import place_by_pod
    from topo.generators import fattree, leafspine

    placed = place_by_pod(fattree(4), ["a", "b"])
    for pod in range(4):  # a pod's edge and aggregation switches and its hosts share a server
        assert len({s for n, s in placed.items() if n.startswith((f"e{pod}_", f"a{pod}_", f"h{pod}_"))}) == 1
    assert [placed[f"e{p}_0"] for p in range(4)] == ["a", "a", "b", "b"]
    assert sorted(placed[f"c{i}_{j}"] for i in range(2) for j in range(2)) == ["a", "a", "b", "b"]
    ls = place_by_pod(leafspine(leaves=3, spines=1, hosts_per_leaf=2), ["x"])
    assert set(ls.values()) == {"x"}
    with pytest.raises(ValueError, match="distinct"):
        place_by_pod(fattree(4), ["a", "a"])


@pytest.mark.root
@pytest.mark.skipif(os.geteuid() != 0, reason="needs root (namespaces, Mininet)")
@pytest.mark.skipif(shutil.which(SSHD) is None, reason="needs openssh-server for its second server's sshd "
                    "(apt-get install openssh-server; CI installs it)")
@pytest.mark.skipif(shutil.which("sudo") is None or shutil.which("mn") is None, reason="needs sudo and mininet (make setup)")
def test_p4_switches_on_two_servers_forward_under_one_controller(tmp_path: Path) -> None:
    """A leaf-spine placed by pod: leaf1, spine1 and h1_1 here, leaf2 and h2_1 on the second server
    (its switch process there, P4Runtime on the server's address); tables from one controller."""
    from control.network import Network
    from control.switch import Pipeline
    from emulation.cluster import Cluster, config_nodes, mininet_topo, place_by_pod
    from emulation.netbuild import Names
    from emulation.network import renumber_grpc
    from emulation.p4switch import free_grpc_base
    from p4sim.target import Target, choose_switch
    from tablegen.entries import generate_states
    from topo.generators import leafspine

    build = tmp_path / "build"
    build.mkdir()
    Target.from_env().ensure_build(build, Path(__file__).resolve().parents[2] / "p4src")
    name = f"hlc{os.getpid() % 10000}"
    topo = renumber_grpc(leafspine(leaves=2, spines=1, hosts_per_leaf=1, rate_mbit=20), free_grpc_base(10))
    prefix = f"q{os.getpid() % 100:02d}"
    names = Names(topo, prefix)
    names.interfaces()  # short enough for Linux
    switch_bin = choose_switch(None)

    def params(program: str, device_id: int, grpc_port: int) -> dict:
        return {"switch_bin": switch_bin, "json_path": str(build / f"{program}.json"), "device_id": device_id,
                "grpc_port": grpc_port, "log_dir": str(tmp_path / "logs")}

    with LocalServer(name, "10.250.8") as srv:
        server_of = place_by_pod(topo, ["localhost", srv.address])
        assert server_of["leaf2"] == server_of["h2_1"] == srv.address and server_of["spine1"] == "localhost"
        net = Cluster(topo=mininet_topo(names, server_of, params, srv.ssh_opts), servers=["localhost", srv.address],
                      ssh_opts=srv.ssh_opts, user="root", controller=None)
        controller = None
        pids: dict[str, int] = {}
        try:
            net.start()
            config_nodes(net, names)
            leaf2 = net[names.node("leaf2")]
            assert leaf2.isRemote and leaf2.grpc_host == srv.address
            pids = {sw.name: sw.proc.pid for sw in net.switches}
            in_server = subprocess.run(["ip", "netns", "pids", name], capture_output=True, text=True).stdout.split()
            assert str(pids[leaf2.name]) in in_server, "leaf2's switch process runs on the second server"
            controller = Network(topo, Pipeline.from_build("fabric", build),
                                 addresses={s.name: net[names.node(s.name)].grpc_host for s in topo.switches})
            controller.install(generate_states(topo, "ecmp", None, "random"))
            h1, h2 = net[names.node("h1_1")], net[names.node("h2_1")]
            out = h1.cmd("ping", "-c", "5", "-i", "0.2", "-W", "2", h2.IP())
            assert " 0% packet loss" in out, out
            assert "vxlan" in leaf2.cmd("ip", "-d", "link", "show", names.intf("leaf2", 2))
        finally:
            if controller is not None:
                controller.close()
            net.stop()
        assert _ours(srv.address) == [], "the remote nodes' ssh sessions stop with the network"
        for sw, pid in pids.items():
            assert not Path(f"/proc/{pid}").exists(), f"switch {sw}'s process (pid {pid}) outlived the network"
    links = subprocess.run(["ip", "-br", "link"], capture_output=True, text=True, check=True).stdout
    assert name not in links and prefix not in links, f"nothing of the run left: {links}"
