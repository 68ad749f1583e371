"""An emulation's network over several servers (issue 37): where each node runs (`place_by_pod`),
and `ClusterBuild`, emulation.netbuild's steps on Mininet's cluster edition with this project's
nodes and links (emulation/cluster.py). Every command that sets a node up runs through that node's
own shell (`run_in_shell`), on its server. `emulation.network.Emulation(servers=...)` uses it.
"""

from __future__ import annotations

import shlex
import subprocess
from typing import Any

import networkx as nx
from mininet.link import Intf, TCIntf

from emulation.cluster import (
    LOCAL,
    Cluster,
    ClusterHost,
    ClusterSwitch,
    PremadeVxlanLink,
    VxlanLink,
    tunnel_addresses,
)
from emulation.fibre import add_fibre, fibre_end_commands
from emulation.holdloop import hold_loop_commands
from emulation.linkbatch import run_batch, shaping
from emulation.links import (
    SWITCH_PORT_OFFLOADS_OFF,
    HostCommand,
    limit_queue_argv,
    run_checked,
    ssh_argv,
    steer_by_flow,
    steer_by_flow_command,
    vxlan_commands,
)
from emulation.netbuild import FABRIC_MTU, MininetBuild, Names, SwitchParams, run_or_raise
from emulation.priority import HOST_NICE, set_nice
from emulation.state import RunState
from emulation.switchhost import SwitchHost
from topo.model import Topology

TOP_TIER = ("core", "spine")  # switch roles that join pods; every other switch belongs to one


def place_by_pod(topo: Topology, servers: list[str]) -> dict[str, str]:
    """Each node's server, so that most links stay on one server: a pod (what stays connected once the
    top tier is taken away: a fat-tree's pod with its hosts, a leaf with its hosts) lies whole on one
    server, pods in topology order in shares as even as the servers allow; the top tier's switches
    round robin; an OCS on this machine (its emulator runs here), its fibres to other servers tunnels."""
    if not servers or len(set(servers)) != len(servers):
        raise ValueError(f"servers {servers!r}: expected one or more distinct names")
    top = [s.name for s in topo.switches if s.role in TOP_TIER]
    graph = nx.Graph()
    order = [s.name for s in topo.switches] + [h.name for h in topo.hosts]
    graph.add_nodes_from(n for n in order if n not in top)
    graph.add_edges_from((lk.a, lk.b) for lk in topo.links if lk.a not in top and lk.b not in top)
    rank = {n: i for i, n in enumerate(order)}
    pods = sorted((sorted(c, key=rank.__getitem__) for c in nx.connected_components(graph)), key=lambda c: rank[c[0]])
    out: dict[str, str] = {}
    for i, pod in enumerate(pods):
        server = servers[i * len(servers) // len(pods)]
        out.update(dict.fromkeys(pod, server))
    out.update({name: servers[i % len(servers)] for i, name in enumerate(top)})
    out.update({o.name: LOCAL if LOCAL in servers else servers[0] for o in topo.ocs})
    return out


def check_ocs_local(topo: Topology, server_of: dict[str, str]) -> None:
    """Every OCS on this machine (its emulator runs here, reaching its switch and the fibres' patch
    ends); ValueError naming one that is elsewhere."""
    for o in topo.ocs:
        if server_of[o.name] != LOCAL:
            raise ValueError(f"{o.name} on {server_of[o.name]}: an OCS runs on {LOCAL}, with its emulator; "
                             f"expected it there")


def run_in_shell(node: Any, cmd: HostCommand) -> tuple[int, str]:
    """A command through the node's own shell: a remote node's is open over ssh already, so no new
    connection a command (one each took about half a second). Every word is quoted (shlex); an
    `ip`/`tc -batch -` runs as one command a line of its input (a node's shell reads one line at a
    time, of bounded length)."""
    argv = list(cmd.argv)
    if argv[1:] == ["-batch", "-"] and cmd.stdin is not None:
        for line in cmd.stdin.splitlines():
            if line.strip():
                rc, out = run_in_shell(node, HostCommand([argv[0], *line.split()], may_fail=cmd.may_fail))
                if rc != 0:
                    return rc, out
        return 0, ""
    line = shlex.join(argv)
    if cmd.stdin is not None:
        line = f"printf %s {shlex.quote(cmd.stdin)} | {line}"
    body, _, rc = node.cmd(f"{line} 2>&1; echo __rc=$?").rpartition("__rc=")
    return int(rc.strip() or 1), body


def underlay_rtt_ms(node: Any, address: str, count: int = 5) -> float | None:
    """The mean round trip (ms) of `count` pings from `node`'s server (its root namespace) to
    `address`: what a tunnel between the two servers adds, twice. None when no reply came."""
    argv = ["ping", "-q", "-n", "-c", str(count), "-i", "0.2", "-W", "1", address]
    out = node.rcmd(argv, sudo=False) if node.isRemote else subprocess.run(
        argv, capture_output=True, text=True, check=False, timeout=30).stdout
    stats = out.split("min/avg/max", 1)[-1].split("=", 1)[-1].split("/") if "min/avg/max" in out else []
    try:
        return float(stats[1])
    except (IndexError, ValueError):
        return None


def cross_links(topo: Topology, server_of: dict[str, str]) -> list[tuple[str, str]]:
    """The topology's links and an OCS's fibres whose two ends are on two servers (tunnels), as (node,
    node): a fibre as (ToR, OCS), once a fibre."""
    ends = [(lk.a, lk.b) for lk in topo.links] + [(p.switch, o.name) for o in topo.ocs for p in o.ports]
    return [(a, b) for a, b in ends if server_of[a] != server_of[b]]


class ClusterBuild(MininetBuild):
    """An emulation's network (emulation.netbuild) over several servers: nodes placed by pod
    (`place_by_pod`), each made on its server; links as veth pairs on one server and VXLAN between two,
    shaped and tuned by commands run on each end's server; every fabric switch's hold loop on its own
    server. Hosts are configured as on one machine. An OCS's fibres to other servers: `add_fibres`."""

    runner = staticmethod(run_in_shell)  # type: ignore[assignment]

    def __init__(self, names: Names, servers: list[str], server_of: dict[str, str], ssh_opts: list[str],
                 rto_min: str | None = None) -> None:
        check_ocs_local(names.topo, server_of)
        self.servers, self.server_of, self.ssh_opts = list(servers), dict(server_of), list(ssh_opts)
        super().__init__(names, rto_min)

    def run(self, node: Any, who: str, cmd: HostCommand) -> None:
        """A command in a node through its shell (`run_in_shell`); RuntimeError naming `who` if it fails."""
        run_or_raise(node, who, cmd, self.runner)

    def make_net(self) -> Cluster:
        return Cluster(topo=None, build=False, servers=self.servers, ssh_opts=self.ssh_opts, controller=None,
                       autoSetMacs=False, autoStaticArp=False, waitConnected=False)

    def _where(self, name: str) -> dict[str, Any]:
        server = self.server_of[name]
        return {"server": server, "serverIP": self.net.serverIP[server], "ssh_opts": self.ssh_opts}

    def add_nodes(self, state: RunState, params: SwitchParams, hosts_of: dict[str, SwitchHost]) -> None:
        """Hosts and switches on their servers (one process a switch); the shells of this machine's
        nodes into the state file and the hosts' niceness (a remote node's shell is its server's)."""
        if hosts_of:
            raise ValueError("switches sharing a process: not on a cluster; expected one process a switch")
        for h in self.topo.hosts:
            node = self.net.addHost(self.names.node(h.name), cls=ClusterHost, ip=h.ip, mac=h.mac, **self._where(h.name))
            self.hosts[h.name] = node
            if not node.isRemote:
                state.add_process(node.pid, f"host {h.name}")
                set_nice(node.pid, HOST_NICE)
            else:
                self._record_remote(state, node, f"host {h.name}")
        for program, devs in (("fabric", self.topo.switches), ("ocs", self.topo.ocs)):
            for dev in devs:
                node = self.net.addSwitch(self.names.node(dev.name), cls=ClusterSwitch, **self._where(dev.name),
                                          **params(program, dev.device_id, dev.grpc_port))
                self.switches[dev.name] = node
                if not node.isRemote:
                    state.add_process(node.pid, f"switch shell {dev.name}")
                else:
                    self._record_remote(state, node, f"switch shell {dev.name}")

    def _record_remote(self, state: RunState, node: Any, what: str) -> None:
        """A remote node's server and the local ssh session of its shell (stopping it ends the shell)."""
        state.add_server(node.dest, self.ssh_opts)
        state.add_process(node.shell.pid, f"ssh to {node.server}: {what}")

    def add_links(self, hold_passes: int) -> None:
        """The topology's links (VxlanLink), shaped as on one machine (emulation.linkbatch.shaping: one
        `tc -batch` a node), fabric links at the fabric's MTU, the hold loops, then every switch port
        without IPv6 and offloads and steered by flow."""
        hmap = self.topo.host_map()
        queue = self.topo.params.get("switch_queue_pkts")
        node = {**self.hosts, **self.switches}
        intf = self.names.intf
        tc: dict[str, list[str]] = {}
        self.add_fibres()
        self._make_tunnels(node)
        for lk in self.topo.links:
            apart = self.server_of[lk.a] != self.server_of[lk.b]
            self.net.addLink(node[lk.a], node[lk.b], port1=lk.a_port, port2=lk.b_port,
                             cls=PremadeVxlanLink if apart else VxlanLink,
                             intfName1=intf(lk.a, lk.a_port), intfName2=intf(lk.b, lk.b_port))
            fabric = lk.a not in hmap and lk.b not in hmap
            for end, port in ((lk.a, lk.a_port), (lk.b, lk.b_port)):
                tc.setdefault(end, []).extend(shaping(intf(end, port), lk.rate_mbit, lk.delay if self.netem else None,
                                                      None if end in hmap else queue))
                if fabric:
                    self.run(node[end], end, HostCommand(["ip", "link", "set", "dev", intf(end, port), "mtu",
                                                              str(FABRIC_MTU), "up"]))
        for end, lines in tc.items():
            self.run(node[end], end, HostCommand(["tc", "-batch", "-"], stdin="\n".join(lines) + "\n"))
        looped: set[str] = set()  # hold-loop ends: tuned as they are made
        for s in self.topo.switches:
            sw, loop = self.switches[s.name], self.names.hold_loop(s.name)
            for cmd in hold_loop_commands(loop, FABRIC_MTU, hold_passes):
                self.run(sw, s.name, cmd)
            for port, name in loop.ports.items():
                Intf(name, node=sw, port=port, up=None)
            looped.update(loop.names)
        for name, sw in self.switches.items():
            for i in sw.intfList():
                if i.name == "lo":
                    continue
                if i.name not in looped:
                    self.run(sw, name, HostCommand(["sysctl", "-qw", f"net.ipv6.conf.{i.name}.disable_ipv6=1"]))
                    self.run(sw, name, HostCommand(["ethtool", "-K", i.name, *SWITCH_PORT_OFFLOADS_OFF]))
                self.run(sw, name, steer_by_flow_command(i.name))
        for o in self.topo.ocs:  # the fibres' patch ends
            for p in o.ports:
                tor_end, ocs_end = self.names.fibre(o.name, p).patch
                self.run(self.switches[p.switch], p.switch, steer_by_flow_command(tor_end))
                steer_by_flow(ocs_end)

    def _make_tunnels(self, node: dict[str, Any]) -> None:
        """The VXLAN ends of every link between two servers, each server's in one `ip -batch` (here
        directly, elsewhere over one ssh), a host's moved into its namespace: one command a server
        instead of an ssh a command (eight links of a k=4 fat-tree: 12.5 s that way)."""
        lines: dict[str, list[str]] = {}
        for lk in self.topo.links:
            if self.server_of[lk.a] == self.server_of[lk.b]:
                continue
            vni = VxlanLink.next_vni()
            ends = ((lk.a, lk.a_port, lk.b), (lk.b, lk.b_port, lk.a))
            for name, port, peer in ends:
                here = node[name]
                local, remote = tunnel_addresses(here, node[peer])
                ifname = self.names.intf(name, port)
                out = lines.setdefault(self.server_of[name], [])
                out += [shlex.join(argv[1:]) for argv in vxlan_commands(ifname, vni, local, remote,
                                                                          FABRIC_MTU)]
                if here.inNamespace:
                    out.append(f"link set dev {ifname} netns {int(here.pid)}")
        for server, batch in lines.items():
            if server == LOCAL:
                run_batch(["ip", "-batch", "-"], batch)
                continue
            dest = next(n.dest for name, n in node.items() if self.server_of[name] == server)
            try:
                run_batch(ssh_argv(dest, self.ssh_opts, ["ip", "-batch", "-"]), batch)
            except RuntimeError as exc:
                raise RuntimeError(f"server {server}: links between servers: {exc}") from None

    def add_fibres(self) -> None:
        """Every OCS's fibres (on this machine, check_ocs_local): one whose ToR is here as on one machine
        (emulation.netbuild), one whose ToR is on another server with a VXLAN tunnel in the middle of its
        patch (emulation.fibre.fibre_end_commands: the ToR's half made there through its node's shell),
        shaped at the OCS's rate, the ToR end's queue bounded to `switch_queue_pkts`."""
        queue = self.topo.params.get("switch_queue_pkts")
        for o in self.topo.ocs:
            ocs = self.switches[o.name]
            delay = o.delay if self.netem else None
            for p in o.ports:
                tor, fibre = self.switches[p.switch], self.names.fibre(o.name, p)
                if self.server_of[p.switch] == self.server_of[o.name]:
                    add_fibre(tor, p.switch_port, ocs, p.port, fibre, FABRIC_MTU, bw=o.rate_mbit, delay=delay)
                else:
                    vni = VxlanLink.next_vni()
                    for argv in fibre_end_commands(fibre.ocs_intf, fibre.patch[1], fibre.tunnel, vni,
                                                   *tunnel_addresses(ocs, tor), FABRIC_MTU):
                        run_checked(*argv)
                    for argv in fibre_end_commands(fibre.tor_intf, fibre.patch[0], fibre.tunnel, vni,
                                                   *tunnel_addresses(tor, ocs), FABRIC_MTU):
                        self.run(tor, p.switch, HostCommand(argv))
                    TCIntf(fibre.tor_intf, node=tor, port=p.switch_port, bw=o.rate_mbit, delay=delay)
                    TCIntf(fibre.ocs_intf, node=ocs, port=p.port, bw=o.rate_mbit, delay=delay)
                if queue:
                    self.run(tor, p.switch, HostCommand(limit_queue_argv(fibre.tor_intf, queue, delay)))
