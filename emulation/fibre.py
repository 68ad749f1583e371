"""An emulated fibre between a ToR port and an OCS port, with a dark state that both ends see.

A fibre is two veth pairs patched together in the kernel: `<tor>-ethN` <-> T and `<ocs>-ethM` <-> O,
with a tc `mirred` redirect from T's ingress to O's egress and back. The OCS emulator's link-control
hook sets T and O down while the port is dark, so both switches' ports lose carrier, as with a real
fibre whose light goes. No switch process ever has its own interface set administratively down
(which makes a packet socket report ENETDOWN), so this works the same on bmv2 and p4sim.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from mininet.link import TCIntf

from emulation.links import run_checked

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

    @property
    def names(self) -> list[str]:
        """Every interface, switch ends first."""
        return [self.tor_intf, self.ocs_intf, *self.patch]


def patch(a: str, b: str) -> None:
    """Patch two interfaces together in the kernel: what arrives on one leaves on the other (tc mirred).

    With `x <-veth-> a ~patch~ b <-veth-> y`, setting `a` down takes x's carrier away while y, and
    whatever process reads y, stays up: a link that loses light on one side only.
    """
    for src, dst in ((a, b), (b, a)):
        run_checked("tc", "qdisc", "add", "dev", src, "handle", "ffff:", "ingress")
        run_checked("tc", "filter", "add", "dev", src, "parent", "ffff:", "protocol", "all", "u32", "match", "u32", "0", "0",
            "action", "mirred", "egress", "redirect", "dev", dst)


def fibre_names(tor_intf: str, ocs_intf: str) -> Fibre:
    """The interface names of the fibre between two switch interfaces (patch ends: `<ocs intf>t|o`)."""
    return Fibre(tor_intf, ocs_intf, (f"{ocs_intf}t", f"{ocs_intf}o"))


def add_fibre(tor_node, tor_port: int, ocs_node, ocs_port: int, fibre: Fibre, mtu: int,
              bw: float | None = None, delay: str | None = None) -> Fibre:
    """Create the fibre's interfaces, patch them, attach the switch ends to their Mininet nodes."""
    t, o = fibre.patch
    run_checked("ip", "link", "add", fibre.tor_intf, "mtu", str(mtu), "type", "veth", "peer", "name", t, "mtu", str(mtu))
    run_checked("ip", "link", "add", fibre.ocs_intf, "mtu", str(mtu), "type", "veth", "peer", "name", o, "mtu", str(mtu))
    patch(t, o)
    for name in fibre.names:
        disable_ipv6(name)
        run_checked("ip", "link", "set", "dev", name, "up")
    params = {"bw": bw, "delay": delay}
    TCIntf(fibre.tor_intf, node=tor_node, port=tor_port, **params)
    TCIntf(fibre.ocs_intf, node=ocs_node, port=ocs_port, **params)
    return fibre
