"""Mininet's cluster edition with the project's edges (emulation/cluster.py): the run's ssh options,
VXLAN between servers, nothing left behind; and (as root) two hosts on two servers, the second a
network namespace with its own sshd (emulation/servers.py)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from emulation.cluster import VXLAN_OVERHEAD, with_options
from emulation.links import check_ssh_option, parse_servers
from emulation.netbuild import FABRIC_MTU
from emulation.servers import SSHD, UNDERLAY_MTU, LocalServer, ssh_options
from p4sim.target import Target, stacks


def test_the_runs_ssh_options_go_right_after_ssh() -> None:
    opts = ssh_options(Path("/k/id"), Path("/k/known"))
    assert opts[:2] == ["-i", "/k/id"] and "UserKnownHostsFile=/k/known" in opts and "BatchMode=yes" in opts
    assert with_options(["ssh", "-q", "-tt"], ["-i", "x"]) == ["ssh", "-i", "x", "-q", "-tt"]
    assert UNDERLAY_MTU >= FABRIC_MTU + VXLAN_OVERHEAD  # a fabric frame crosses a tunnel whole


@pytest.mark.parametrize("text", ["-oProxyCommand=touch /tmp/x", "a b", "a,,b", "", "a;b", "a,a", "h\u00e9"])
def test_a_bad_server_list_is_one_line_naming_it(text: str) -> None:
    with pytest.raises(ValueError, match="server"):
        parse_servers(text)


def test_ssh_options_are_only_those_that_run_nothing() -> None:
    assert check_ssh_option("IdentityFile=/root/.ssh/tb") == ["-o", "IdentityFile=/root/.ssh/tb"]
    for bad in ("ProxyCommand=sh -c x", "LocalCommand=x", "Port=22 -oProxyCommand=x", "IdentityFile=", "x"):
        with pytest.raises(ValueError, match="ssh option"):
            check_ssh_option(bad)


def test_an_emulation_over_servers_refuses_what_it_cannot_build_before_starting() -> None:
    pytest.importorskip("mininet.net", reason="Mininet is not installed")
    from emulation.network import Emulation
    from topo.generators import leafspine, ucd4

    two = ["localhost", "10.0.0.2"]
    placed = Emulation(ucd4(), servers=two).server_of  # by pod (the ToRs joined by electrical links)
    assert placed["ocs"] == "localhost" and {placed[n] for n in ("s1", "s2", "h1", "h2")} == {"localhost"}
    assert {placed[n] for n in ("s3", "s4", "h3", "h4")} == {"10.0.0.2"}
    assert Emulation(ucd4(), servers=two, placement={"s2": "10.0.0.2"}).server_of["s2"] == "10.0.0.2"
    with pytest.raises(ValueError, match="ocs on 10.0.0.2: an OCS runs on localhost"):
        Emulation(ucd4(), servers=two, placement={"ocs": "10.0.0.2"})
    with pytest.raises(ValueError, match="placement h9=10.0.0.2: expected a node"):
        Emulation(ucd4(), servers=two, placement={"h9": "10.0.0.2"})
    with pytest.raises(ValueError, match="placement h2=elsewhere: expected a node"):
        Emulation(ucd4(), servers=two, placement={"h2": "elsewhere"})
    with pytest.raises(ValueError, match="placement without servers"):
        Emulation(ucd4(), placement={"h2": "10.0.0.2"})
    with pytest.raises(ValueError, match="server"):
        Emulation(leafspine(2, 1, 1), servers=["localhost", "-oProxyCommand=x"])
    with pytest.raises(ValueError, match="commas"):
        Emulation(leafspine(2, 1, 1), servers=["localhost,b"])


def test_a_local_server_refuses_a_bad_prefix_or_name() -> None:
    with pytest.raises(ValueError, match="expected three octets"):
        LocalServer("hlsrv", "10.250.1.5")
    with pytest.raises(ValueError):
        LocalServer("a-name-far-too-long-for-linux", "10.250.1")


def _sleeps(marker: str) -> list[str]:
    """The `sleep MARKER` processes on this machine, its namespaces included (a namespace server's)."""
    out = subprocess.run(["pgrep", "-ax", "sleep"], capture_output=True, text=True, check=False).stdout
    return [line for line in out.splitlines() if line.split()[1:] == ["sleep", marker]]


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
            # a process of the remote host with its output in a local file: signalled there by its PID
            out = Path(f"/tmp/{name}-ping.txt")
            with open(out, "wb") as f:
                ping = h2.popen(["ping", "-i", "0.2", h1.IP()], stdout=f, stderr=subprocess.STDOUT)
            time.sleep(1)
            ping.send_signal(signal.SIGINT)
            assert ping.wait(10) == 0 and "packets transmitted" in out.read_text()  # ping's summary: SIGINT
            out.unlink()
            assert h2.popen(["echo", "hi"], stdout=subprocess.PIPE).communicate()[0] == b"hi\n"  # Mininet's popen
            # its session stopped here (SIGTERM, as clean-net does) hangs it up there
            sleeper = h2.popen(["sleep", "60"], stdout=subprocess.DEVNULL)
            os.kill(sleeper.local_pid, signal.SIGTERM)
            deadline = time.monotonic() + 10
            while Path(f"/proc/{sleeper.pid}").exists() and time.monotonic() < deadline:
                time.sleep(0.1)
            assert not Path(f"/proc/{sleeper.pid}").exists(), "the remote process ends with its session"
        finally:
            net.stop()
        assert _ours(srv.address) == [], "the remote hosts' ssh sessions stop with the network"
    links = subprocess.run(["ip", "-br", "link"], capture_output=True, text=True, check=True).stdout
    assert name not in links, f"nothing of the run left: {links}"
    assert name not in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True).stdout


def test_pods_stay_whole_on_a_server_and_the_top_tier_spreads() -> None:
    from emulation.clusterbuild import cross_links, place_by_pod
    from topo.generators import fattree, leafspine, ucd4

    placed = place_by_pod(fattree(4), ["a", "b"])
    for pod in range(4):  # a pod's edge and aggregation switches and its hosts share a server
        assert len({s for n, s in placed.items() if n.startswith((f"e{pod}_", f"a{pod}_", f"h{pod}_"))}) == 1
    assert [placed[f"e{p}_0"] for p in range(4)] == ["a", "a", "b", "b"]
    assert sorted(placed[f"c{i}_{j}"] for i in range(2) for j in range(2)) == ["a", "a", "b", "b"]
    ls = place_by_pod(leafspine(leaves=3, spines=1, hosts_per_leaf=2), ["x"])
    assert set(ls.values()) == {"x"}
    assert cross_links(ucd4(), place_by_pod(ucd4(), ["localhost", "b"])) == [("s3", "ocs"), ("s4", "ocs"),
                                                                              ("s4", "ocs")]  # a fibre each
    with pytest.raises(ValueError, match="distinct"):
        place_by_pod(fattree(4), ["a", "a"])


@pytest.mark.root
@pytest.mark.skipif(os.geteuid() != 0, reason="needs root (namespaces, Mininet)")
@pytest.mark.skipif(shutil.which(SSHD) is None, reason="needs openssh-server for its second server's sshd "
                    "(apt-get install openssh-server; CI installs it)")
@pytest.mark.skipif(shutil.which("sudo") is None or shutil.which("mn") is None, reason="needs sudo and mininet (make setup)")
@pytest.mark.slow
@pytest.mark.parametrize("target", [pytest.param(t, id=t.name) for t in stacks()])
def test_a_fattree_over_two_servers_forwards_and_leaves_nothing(target: Target, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A k=4 fat-tree placed by pod over this machine and a second server (a namespace with its own
    sshd): every switch process on its node's server, P4Runtime on the server's address, links
    between servers VXLAN; tables from one controller; pingall 0%; nothing of the run left on either."""
    import emulation.state as state_mod
    from emulation.network import Emulation
    from emulation.p4switch import free_grpc_base
    from topo.generators import fattree

    monkeypatch.setattr(state_mod, "STATE_DIR", tmp_path / "runs")
    monkeypatch.setattr(state_mod, "LOG_ROOT", tmp_path / "logs")
    build = tmp_path / "build"
    build.mkdir()
    target.ensure_build(build, Path(__file__).resolve().parents[2] / "p4src")
    name = f"hlc{os.getpid() % 10000}"
    prefix = f"q{os.getpid() % 100:02d}"
    topo = fattree(4)
    with LocalServer(name, "10.250.8") as srv:
        emu = Emulation(topo, "ecmp", build_dir=build, switch_bin=target.switch, grpc_base=free_grpc_base(40),
                        prefix=prefix, servers=["localhost", srv.address], ssh_options=srv.ssh_opts)
        pids: dict[str, int] = {}
        try:
            emu.start()
            remote = [n for n, sw in emu.switches.items() if sw.isRemote]
            assert remote and len(remote) < len(emu.switches), "switches on both servers"
            in_server = subprocess.run(["ip", "netns", "pids", name], capture_output=True, text=True).stdout.split()
            for n in remote:
                sw = emu.switches[n]
                assert sw.grpc_host == srv.address and str(sw.proc.pid) in in_server, f"{n} runs on the server"
            pids = {n: sw.proc.pid for n, sw in emu.switches.items()}
            assert emu.pingall() == 0.0
            assert list(emu.tunnel_delay_ms) == [("localhost", srv.address)], "the tunnels' delay measured"
            assert 0 < emu.tunnel_delay_ms[("localhost", srv.address)] < 5
            crossing = [(a, b) for a, b in emu.cross_links() if a in remote or b in remote]
            assert crossing, "links between the servers"
            a, b = crossing[0]
            end, port = (a, lk_port(topo, a, b)) if a in remote else (b, lk_port(topo, b, a))
            assert "vxlan" in emu.switches[end].cmd("ip", "-d", "link", "show", emu.intf(end, port))
        finally:
            emu.stop()
        assert _ours(srv.address) == [], "the remote nodes' ssh sessions stop with the network"
        for sw, pid in pids.items():
            assert not Path(f"/proc/{pid}").exists(), f"switch {sw}'s process (pid {pid}) outlived the network"
        left = subprocess.run(["ip", "netns", "exec", name, "ip", "-br", "link"], capture_output=True, text=True).stdout
        assert prefix not in left, f"nothing of the run left on the server: {left}"
    links = subprocess.run(["ip", "-br", "link"], capture_output=True, text=True, check=True).stdout
    assert name not in links and prefix not in links, f"nothing of the run left: {links}"


@pytest.mark.root
@pytest.mark.skipif(os.geteuid() != 0, reason="needs root (namespaces, Mininet)")
@pytest.mark.skipif(shutil.which(SSHD) is None, reason="needs openssh-server for its second server's sshd "
                    "(apt-get install openssh-server; CI installs it)")
@pytest.mark.skipif(shutil.which("sudo") is None or shutil.which("mn") is None, reason="needs sudo and mininet (make setup)")
@pytest.mark.parametrize("target", [pytest.param(t, id=t.name) for t in stacks()])
def test_fibres_between_servers_go_dark_on_the_tors_server(target: Target, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """ucd4 placed by pod: the OCS here, s3 and s4 on a second server, their fibres tunnels. A new
    circuit map darkens and lights the ToR ends there (set_circuits waits for each ToR port's carrier
    to match the map, read on its server), traffic takes the circuit; a results folder the server
    does not share is found; nothing is left on either."""
    import emulation.state as state_mod
    from emulation.network import Emulation
    from emulation.p4switch import free_grpc_base
    from topo.generators import ucd4

    monkeypatch.setattr(state_mod, "STATE_DIR", tmp_path / "runs")
    monkeypatch.setattr(state_mod, "LOG_ROOT", tmp_path / "logs")
    build = tmp_path / "build"
    build.mkdir()
    target.ensure_build(build, Path(__file__).resolve().parents[2] / "p4src")
    name, prefix = f"hlf{os.getpid() % 10000}", f"f{os.getpid() % 100:02d}"
    with LocalServer(name, "10.250.9") as srv:
        emu = Emulation(ucd4(), "ecmp", build_dir=build, switch_bin=target.switch, grpc_base=free_grpc_base(10),
                        prefix=prefix, servers=["localhost", srv.address], ssh_options=srv.ssh_opts)
        try:
            emu.start()
            assert emu.server_of["s3"] == srv.address and emu.server_of["ocs"] == "localhost"
            assert emu.pingall() == 0.0
            ports = {p.switch: p.port for p in emu.topo.ocs[0].ports}  # s1 and s4 have two: the last
            emu.set_circuits([])
            assert not any(emu.ocs_link_up(p) for p in ports.values()), "dark, on the ToR's server too"
            emu.set_circuits([(ports["s2"], ports["s3"])])
            assert [s for s, p in ports.items() if emu.ocs_link_up(p)] == ["s2", "s3"]
            # a reply after two switches (ttl 64 - 2) took the circuit s2 - s3: the electrical path has
            # four; the first echo may go while a switch has not yet seen its port come up
            out = emu.hosts["h2"].cmd("ping", "-c", "3", "-W", "2", emu.hosts["h3"].IP())
            assert "ttl=62" in out, f"h2 -> h3 over the circuit: {out}"
            # a results folder the server shares (a namespace: this machine's files) and one it does not
            # (a tmpfs over it in its hosts' mount namespaces: a server without NFS)
            shared, apart = tmp_path / "results", tmp_path / "apart"
            assert emu.servers_not_seeing(shared) == []
            apart.mkdir()
            for h in ("h3", "h4"):
                subprocess.run(["nsenter", "-t", str(emu.hosts[h].pid), "-m", "mount", "-t", "tmpfs", "tmpfs",
                                str(apart)], check=True)
            assert emu.servers_not_seeing(apart) == [srv.address]
        finally:
            emu.stop()
        left = subprocess.run(["ip", "netns", "exec", name, "ip", "-br", "link"], capture_output=True, text=True).stdout
        assert prefix not in left, f"nothing of the run left on the server: {left}"
    links = subprocess.run(["ip", "-br", "link"], capture_output=True, text=True, check=True).stdout
    assert name not in links and prefix not in links, f"nothing of the run left: {links}"


def lk_port(topo, node: str, peer: str) -> int:
    """The port of `node` on its link to `peer`."""
    return next(lk.a_port if lk.a == node else lk.b_port for lk in topo.links if {lk.a, lk.b} == {node, peer})


KILLED_RUN = """
import sys, time
from emulation.network import Emulation
from scripts.hosts.hostproc import HostProcs
from topo.generators import leafspine
emu = Emulation(leafspine(leaves=2, spines=1, hosts_per_leaf=1, rate_mbit=20), "ecmp", build_dir=sys.argv[1],
                grpc_base=int(sys.argv[2]), prefix=sys.argv[3], servers=["localhost", sys.argv[4]],
                ssh_options=sys.argv[6:])
emu.start()
procs = HostProcs(emu.record_process)  # as an experiment starts its captures and traffic
for host in emu.hosts.values():
    procs.start(host, ["sleep", sys.argv[5]], "sleep")
print("ready", flush=True)
time.sleep(600)
"""


@pytest.mark.root
@pytest.mark.skipif(os.geteuid() != 0, reason="needs root (namespaces, Mininet)")
@pytest.mark.skipif(shutil.which(SSHD) is None, reason="needs openssh-server for its second server's sshd "
                    "(apt-get install openssh-server; CI installs it)")
@pytest.mark.skipif(shutil.which("sudo") is None or shutil.which("mn") is None, reason="needs sudo and mininet (make setup)")
def test_clean_net_removes_a_killed_cluster_runs_leftovers_on_every_server(tmp_path: Path) -> None:
    """A run over two servers killed with SIGKILL; clean-net stops its ssh sessions here (which ends
    its shells, switches and host processes there), its host processes here, and deletes its
    interfaces on both servers."""
    import signal
    import sys

    from emulation.p4switch import free_grpc_base
    from emulation.state import clean_net

    build = tmp_path / "build"
    build.mkdir()
    Target.from_env().ensure_build(build, Path(__file__).resolve().parents[2] / "p4src")
    name = f"hlk{os.getpid() % 10000}"
    prefix = f"k{os.getpid() % 100:02d}"
    env = {**os.environ, "HITLESS_RUN_DIR": str(tmp_path / "runs"), "HITLESS_LOG_DIR": str(tmp_path / "logs")}
    with LocalServer(name, "10.250.9") as srv:
        marker = str(7000 + os.getpid() % 1000)  # how long the hosts' sleeps run: their mark
        run = subprocess.Popen([sys.executable, "-c", KILLED_RUN, str(build), str(free_grpc_base(10)), prefix,
                                srv.address, marker, *srv.ssh_opts], stdout=subprocess.PIPE, text=True, env=env,
                               cwd=Path(__file__).resolve().parents[2])
        try:
            assert run.stdout is not None and run.stdout.readline().strip() == "ready"
            deadline = time.monotonic() + 10  # a remote one execs after its session printed its PID
            while len(_sleeps(marker)) < 2 and time.monotonic() < deadline:
                time.sleep(0.1)
            assert len(_sleeps(marker)) == 2, "a host process on each server"
            on_server = subprocess.run(["ip", "netns", "exec", name, "ip", "-br", "link"], capture_output=True,
                                       text=True).stdout
            assert prefix in on_server, "the run made interfaces on the server"
        finally:
            run.send_signal(signal.SIGKILL)
            run.wait()
            lines = clean_net(tmp_path / "runs")
        assert len(lines) == 1 and "stopped" in lines[0], lines
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and (_ours(srv.address) or subprocess.run(
                ["ip", "netns", "pids", name], capture_output=True, text=True).stdout.split() != [str(srv.sshd.pid)]):
            time.sleep(0.2)
        assert _ours(srv.address) == [], "no ssh session to the server left"
        assert _sleeps(marker) == [], "no host process left on either server"
        left = subprocess.run(["ip", "netns", "pids", name], capture_output=True, text=True).stdout.split()
        assert left == [str(srv.sshd.pid)], f"only the server's sshd runs there: {left}"
        on_server = subprocess.run(["ip", "netns", "exec", name, "ip", "-br", "link"], capture_output=True, text=True).stdout
        assert prefix not in on_server, f"nothing of the run left on the server: {on_server}"
    links = subprocess.run(["ip", "-br", "link"], capture_output=True, text=True, check=True).stdout
    assert prefix not in links, f"nothing of the run left here: {links}"
