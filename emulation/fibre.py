"""An emulated fibre between a ToR port and an OCS port, with a dark state that both ends see.

A fibre is two veth pairs patched together in the kernel: `<tor>-ethN` <-> T and `<ocs>-ethM` <-> O,
with a tc `mirred` redirect from T's ingress to O's egress and back. The OCS emulator's link-control
hook sets T and O down while the port is dark, so both switches' ports lose carrier, as with a real
fibre whose light goes. No switch process ever has its own interface set administratively down
(which makes a packet socket report ENETDOWN), so this works the same on bmv2 and p4sim.

A fibre between two servers (a ToR on one, the OCS on another: emulation/clusterbuild.py) is the same
with a VXLAN tunnel in the middle of the patch: T ~ `tunnel` on the ToR's server, `tunnel` ~ O on the
OCS's; the emulator sets T down there over ssh (emulation/ocs/dataplane.py `IpLinkControl`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from mininet.link import TCIntf

from emulation.links import check_ifname, run_checked, vxlan_commands

log = logging.getLogger(__name__)


def disable_ipv6(ifname: str) -> None:
    """No IPv6 chatter (RS, MLD) from a root-namespace interface into the switch ports."""
    try:
        Path(f"/proc/sys/net/ipv6/conf/{ifname}/disable_ipv6").write_text("1")
    except OSError:
        pass


@dataclass(slots=True)
class Fibre:
    """The four interfaces of one fibre; `patch` are the two the OCS emulator toggles."""

    tor_intf: str
    ocs_intf: str
    patch: tuple[str, str]
    tunnel: str  # the VXLAN ends' name (one on each server) when the fibre crosses servers

    @property
    def names(self) -> list[str]:
        """Every interface, switch ends first (the tunnel's exists only on a fibre between servers)."""
        return [self.tor_intf, self.ocs_intf, *self.patch, self.tunnel]


def patch(a: str, b: str) -> None:
    """Patch two interfaces together in the kernel: what arrives on one leaves on the other (tc mirred).

    With `x <-veth-> a ~patch~ b <-veth-> y`, setting `a` down takes x's carrier away while y, and
    whatever process reads y, stays up: a link that loses light on one side only.
    """
    for argv in patch_commands(a, b):
        run_checked(*argv)


def patch_commands(a: str, b: str) -> list[list[str]]:
    """The `tc` commands of `patch` (for a server reached through a node's shell)."""
    out = []
    for src, dst in ((a, b), (b, a)):
        out += [["tc", "qdisc", "add", "dev", src, "handle", "ffff:", "ingress"],
                ["tc", "filter", "add", "dev", src, "parent", "ffff:", "protocol", "all", "u32", "match", "u32", "0",
                 "0", "action", "mirred", "egress", "redirect", "dev", dst]]
    return out


def fibre_names(tor_intf: str, ocs_intf: str) -> Fibre:
    """The interface names of the fibre between two switch interfaces (patch ends: `<ocs intf>t|o`,
    tunnel ends `<ocs intf>v`)."""
    return Fibre(tor_intf, ocs_intf, (f"{ocs_intf}t", f"{ocs_intf}o"), f"{ocs_intf}v")


def add_fibre(tor_node, tor_port: int, ocs_node, ocs_port: int, fibre: Fibre, mtu: int,
              bw: float | None = None, delay: str | None = None) -> Fibre:
    """Create the fibre's interfaces, patch them, attach the switch ends to their Mininet nodes."""
    t, o = fibre.patch
    run_checked(*veth_argv(fibre.tor_intf, t, mtu))
    run_checked(*veth_argv(fibre.ocs_intf, o, mtu))
    patch(t, o)
    for name in (fibre.tor_intf, fibre.ocs_intf, t, o):
        disable_ipv6(name)
        run_checked("ip", "link", "set", "dev", name, "up")
    params = {"bw": bw, "delay": delay}
    TCIntf(fibre.tor_intf, node=tor_node, port=tor_port, **params)
    TCIntf(fibre.ocs_intf, node=ocs_node, port=ocs_port, **params)
    return fibre


def veth_argv(a: str, b: str, mtu: int) -> list[str]:
    """`ip link add` of a veth pair a <-> b, both at `mtu`."""
    return ["ip", "link", "add", check_ifname(a), "mtu", str(mtu), "type", "veth", "peer", "name", check_ifname(b),
            "mtu", str(mtu)]


def fibre_end_commands(switch_intf: str, patch_end: str, tunnel: str, vni: int, local: str, remote: str,
                       mtu: int) -> list[list[str]]:
    """One server's half of a fibre between two servers: the switch's veth pair, a VXLAN end towards the
    other server, the pair's inner end patched to it, all up and without IPv6 (run on that server)."""
    names = (switch_intf, patch_end, tunnel)
    return [veth_argv(switch_intf, patch_end, mtu), *vxlan_commands(tunnel, vni, local, remote, mtu),
            *patch_commands(patch_end, tunnel),
            *(["sysctl", "-qw", f"net.ipv6.conf.{n}.disable_ipv6=1"] for n in names),
            *(["ip", "link", "set", "dev", n, "up"] for n in names)]
