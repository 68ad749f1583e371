"""The Mininet network of an emulation: its Linux names, then its nodes, links and hosts, built.

`Names` gives every interface a topology's nodes get under a prefix (what the run's state file
records before any exists, so a run killed half-way is still cleaned). `MininetBuild` makes the
network in three steps: the nodes (hosts and switch shells), the links (veth pairs in one batch,
shaped; the OCS's fibres; each fabric switch's hold loop; switch ports tuned), then the hosts'
addresses, ARP and routes. Its `hosts` and `switches` fill as it goes, so whoever stops a half-built
network (emulation.network.Emulation.stop) finds every node made so far. Starting the switches, the
OCS and the controller is emulation.network's.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mininet.link import Intf, TCLink
from mininet.net import Mininet
from mininet.node import Host

from emulation.fibre import Fibre, add_fibre, disable_ipv6, fibre_names
from emulation.holdloop import HoldLoop, add_hold_loops, hold_loop_names
from emulation.linkbatch import PremadeLink, VethPair, make_pairs, run_batch, shaping
from emulation.links import (
    HostCommand,
    filter_tc_noise,
    host_commands,
    limit_queue,
    netem_available,
    run_in,
    steer_by_flow,
    switch_port_offloads_off,
)
from emulation.nodestart import TimedHost
from emulation.p4switch import P4Switch
from emulation.priority import HOST_NICE, set_nice
from emulation.state import RunState
from emulation.switchhost import SwitchHost
from topo.model import OcsPort, Topology

log = logging.getLogger(__name__)

FABRIC_MTU = 1600  # path tag: fabric links need >= 1504 (p4src/README.md)
MAX_IFNAME = 15    # Linux's IFNAMSIZ less the NUL

SwitchParams = Callable[[str, int, int], dict]  # (program, device id, gRPC port) -> P4Switch's parameters
Runner = Callable[[Any, HostCommand], tuple[int, str]]  # runs a command in a node: (exit code, output)


def intf_name(node: str, port: int) -> str:
    """Mininet's interface name of a node port."""
    return f"{node}-eth{port}"


@dataclass(slots=True, frozen=True)
class Names:
    """The Linux names of a topology's nodes and interfaces when every node name starts with `prefix`."""

    topo: Topology
    prefix: str = ""

    def node(self, name: str) -> str:
        """The Mininet node of a topology node."""
        return self.prefix + name

    def intf(self, node: str, port: int) -> str:
        """The Linux interface of a topology node's port."""
        return intf_name(self.prefix + node, port)

    def fibre(self, ocs: str, port: OcsPort) -> Fibre:
        """The interfaces of the fibre from a ToR port to an OCS port."""
        return fibre_names(self.intf(port.switch, port.switch_port), self.intf(ocs, port.port))

    def hold_loop(self, switch: str) -> HoldLoop:
        """The interfaces of a fabric switch's hold loop (its ports HOLD_OUT_PORT and HOLD_IN_PORT)."""
        return hold_loop_names(self.prefix + switch)

    def interfaces(self) -> list[str]:
        """Every interface in the root namespace the network will have (switch ports, fibres, hold
        loops); raises ValueError when a name, the hosts' too, is too long for Linux."""
        hosts = self.topo.host_map()
        names = [self.intf(node, port) for lk in self.topo.links
                 for node, port in ((lk.a, lk.a_port), (lk.b, lk.b_port)) if node not in hosts]
        for o in self.topo.ocs:
            for p in o.ports:
                names += self.fibre(o.name, p).names
        for s in self.topo.switches:
            names += self.hold_loop(s.name).names
        in_hosts = [self.intf(h.name, 0) for h in self.topo.hosts]  # in the hosts' namespaces, never recorded
        too_long = [n for n in [*names, *in_hosts] if len(n) > MAX_IFNAME]
        if too_long:
            raise ValueError(f"interface name {too_long[0]!r}: longer than {MAX_IFNAME} characters; "
                             "expected shorter names")
        return names


class MininetBuild:
    """One emulation's Mininet network, built step by step (see the module docstring)."""

    runner: Runner = staticmethod(run_in)  # how a command runs in a node

    def __init__(self, names: Names, rto_min: str | None = None) -> None:
        filter_tc_noise()
        self.names, self.topo, self.rto_min = names, names.topo, rto_min
        self.net = self.make_net()
        self.hosts: dict[str, Host] = {}
        self.switches: dict[str, P4Switch] = {}
        self.netem = netem_available()
        if not self.netem:
            log.info("link delays not emulated: this kernel has no netem qdisc (rates still apply)")

    def make_net(self) -> Mininet:
        """The Mininet object the nodes and links join (nothing started)."""
        return Mininet(topo=None, build=False, controller=None, link=TCLink, autoSetMacs=False,
                       autoStaticArp=False, waitConnected=False)

    def add_nodes(self, state: RunState, params: SwitchParams, hosts_of: dict[str, SwitchHost]) -> None:
        """Hosts (niced: what their shells run inherits it), fabric switches (in the process
        `hosts_of` names, else one each) and OCSes; every shell's PID into the state file."""
        for h in self.topo.hosts:
            node = self.net.addHost(self.names.node(h.name), cls=TimedHost, ip=h.ip, mac=h.mac)
            self.hosts[h.name] = node
            state.add_process(node.pid, f"host {h.name}")
            set_nice(node.pid, HOST_NICE)
        devices = [("fabric", s, hosts_of.get(s.name)) for s in self.topo.switches]
        devices += [("ocs", o, None) for o in self.topo.ocs]
        for program, dev, host in devices:
            node = self.net.addSwitch(self.names.node(dev.name), cls=P4Switch, host=host,
                                      **params(program, dev.device_id, dev.grpc_port))
            self.switches[dev.name] = node
            state.add_process(node.pid, f"switch shell {dev.name}")

    def add_links(self, hold_passes: int) -> None:
        """The topology's links, the OCS's fibres and the hold loops; then every switch port without
        IPv6 and offloads, and steered by flow."""
        self._add_topology_links()
        self.add_fibres()
        # every fabric switch's hold loop: two ports of its own, a paced veth pair
        add_hold_loops([self.names.hold_loop(s.name) for s in self.topo.switches], FABRIC_MTU, hold_passes)
        for s in self.topo.switches:
            for port, name in self.names.hold_loop(s.name).ports.items():
                Intf(name, node=self.switches[s.name], port=port, up=None)  # up already
        for sw in self.switches.values():
            for intf in sw.intfList():
                if intf.name != "lo":
                    disable_ipv6(intf.name)
                    switch_port_offloads_off(intf.name)
        for name in self.names.interfaces():  # switch ports and the fibres' patch ends
            steer_by_flow(name)

    def add_fibres(self) -> None:
        """Every OCS's fibres (emulation/fibre.py: veth pairs patched on this machine), shaped at the
        OCS's rate, a ToR end's queue bounded to `switch_queue_pkts`."""
        queue = self.topo.params.get("switch_queue_pkts")
        for o in self.topo.ocs:
            for p in o.ports:
                delay = o.delay if self.netem else None
                fibre = add_fibre(self.switches[p.switch], p.switch_port, self.switches[o.name], p.port,
                                  self.names.fibre(o.name, p), FABRIC_MTU, bw=o.rate_mbit, delay=delay)
                if queue:
                    limit_queue(fibre.tor_intf, queue, delay)

    def _add_topology_links(self) -> None:
        """The topology's links (emulation/linkbatch.py): every veth pair in one batch (switch to switch
        at the fabric's MTU), Mininet's objects over them, then each end shaped at the link's rate (with
        its delay where the kernel has netem) and a switch port's queue bounded to `switch_queue_pkts`:
        one `tc -batch` for the switch ports, one a host."""
        hmap = self.topo.host_map()
        queue = self.topo.params.get("switch_queue_pkts")  # frames per switch port; None: the kernel's 1000
        node = {**{n: self.hosts[n] for n in hmap}, **self.switches}
        intf = self.names.intf
        pairs, root_tc, host_tc = [], [], {}
        for lk in self.topo.links:
            fabric = lk.a not in hmap and lk.b not in hmap
            pairs.append(VethPair(intf(lk.a, lk.a_port), node[lk.a].pid, intf(lk.b, lk.b_port),
                                  node[lk.b].pid, FABRIC_MTU if fabric else None))
            delay = lk.delay if self.netem else None
            for end, port in ((lk.a, lk.a_port), (lk.b, lk.b_port)):
                if end in hmap:
                    host_tc.setdefault(end, []).extend(shaping(intf(end, port), lk.rate_mbit, delay))
                else:
                    root_tc += shaping(intf(end, port), lk.rate_mbit, delay, queue)
        make_pairs(pairs)
        for lk in self.topo.links:
            self.net.addLink(self.names.node(lk.a), self.names.node(lk.b), port1=lk.a_port, port2=lk.b_port,
                             cls=PremadeLink, intfName1=intf(lk.a, lk.a_port), intfName2=intf(lk.b, lk.b_port),
                             up=None)
        run_batch(["ip", "-batch", "-"], [f"link set dev {intf(end, port)} up" for lk in self.topo.links
                                          for end, port in ((lk.a, lk.a_port), (lk.b, lk.b_port)) if end not in hmap])
        run_batch(["tc", "-batch", "-"], root_tc)
        for h, lines in host_tc.items():
            run_or_raise(self.hosts[h], f"host {h}", HostCommand(["tc", "-batch", "-"], stdin="\n".join(lines) + "\n"))

    def config_hosts(self) -> None:
        """IP, MAC, offloads off, static ARP for the gateway and the subnet, default route, rto_min."""
        config_hosts(self.names, self.hosts, self.rto_min, self.runner)

    def summary(self, seconds: float) -> str:
        """The progress line of a finished build."""
        fibres = sum(len(o.ports) for o in self.topo.ocs)
        return (f"{len(self.hosts)} hosts, {len(self.net.links)} links"
                f"{f', {fibres} OCS fibres' if fibres else ''} (fabric MTU {FABRIC_MTU}"
                f"{'' if self.netem else ', no delay: kernel lacks netem'}) in {seconds:.1f} s")


def config_hosts(names: Names, hosts: dict[str, Host], rto_min: str | None = None, runner: Runner = run_in) -> None:
    """Every host of the topology (`hosts`: its Mininet node by topology name): IP and MAC from its
    node's parameters, offloads off, static ARP for the gateway and the subnet, default route, rto_min."""
    topo = names.topo
    att = topo.attachments()
    by_net: dict[str, list] = {}
    for h in topo.hosts:
        by_net.setdefault(str(h.network), []).append(h)
    for h in topo.hosts:
        node = hosts[h.name]
        node.configDefault()  # IP, MAC and lo from the addHost params (Mininet's build() does this)
        peers = [p for p in by_net[str(h.network)] if p.name != h.name]
        for cmd in host_commands(h, names.intf(h.name, 0), att[h.name][2], peers, rto_min):
            run_or_raise(node, f"host {h.name}", cmd, runner)


def run_or_raise(node: Any, who: str, cmd: HostCommand, runner: Runner = run_in) -> None:
    """Run a HostCommand in a node (with `runner`, emulation.links.run_in by default); RuntimeError
    naming `who` when it fails and may not."""
    rc, out = runner(node, cmd)
    if rc != 0 and not cmd.may_fail:
        raise RuntimeError(f"{who}: {' '.join(cmd.argv[:3])} failed ({rc}): {out.strip().splitlines()[-2:]}")
