"""The topology's links made in batches: every veth pair in one `ip -batch`, and their shaping (what
Mininet's TCLink writes: HTB at the link's rate, netem under it where the kernel has it, the switch
ports' queue bound) in one `tc -batch` for the root namespace and one per host, instead of Mininet's
shell commands, several an interface (measured: 9 of the 17 s a k=8 fat-tree's links took).

    pairs = [VethPair("h1-eth0", host.pid, "s1-eth1", sw.pid, mtu=None), ...]
    make_pairs(pairs)                                  # one `ip -batch`
    link = net.addLink(h, s, cls=PremadeLink, ...)     # Mininet's objects for pairs that exist
    run_batch(["tc", "-batch", "-"], shaping(...))     # root namespace; a host's: HostCommand

Every name and value that reaches a batch line is checked first (emulation.links.check_ifname, the
topology's validated rate and delay), so a line holds one command and nothing else.
"""

from __future__ import annotations

import logging
import subprocess
from dataclasses import dataclass

from mininet.link import Link

from emulation.links import check_ifname
from fabric.contract import ETHERTYPE_RESERVATION
from topo.validate import DELAY

log = logging.getLogger(__name__)

MAX_SHAPED_MBIT = 1000  # Mininet's TCIntf.bwParamMax: above it TCLink leaves a link unshaped


@dataclass(frozen=True, slots=True)
class VethPair:
    """Two interface names, each in the network namespace of a process (a Mininet node's shell)."""

    a: str
    pid_a: int
    b: str
    pid_b: int
    mtu: int | None = None  # both ends; None: the kernel's (1500)

    def line(self) -> str:
        """The `ip -batch` line that makes it."""
        mtu = f" mtu {int(self.mtu)}" if self.mtu else ""
        return (f"link add name {check_ifname(self.a)}{mtu} netns {int(self.pid_a)} type veth "
                f"peer name {check_ifname(self.b)}{mtu} netns {int(self.pid_b)}")


class PremadeLink(Link):
    """A Mininet Link over a veth pair made beforehand (make_pairs): Mininet's interface objects and
    bookkeeping, without its own `ip link add` or configuration commands (give `up=None`)."""

    @classmethod
    def makeIntfPair(cls, *args: object, **kwargs: object) -> None:  # noqa: N802 - Mininet's name
        """Nothing: the pair exists."""


def make_pairs(pairs: list[VethPair]) -> None:
    """Create veth pairs, each end in its namespace, in one `ip -batch` (from the root namespace)."""
    run_batch(["ip", "-batch", "-"], [p.line() for p in pairs])


def shaping(ifname: str, rate_mbit: float | None, delay: str | None = None, queue_pkts: int | None = None) -> list[str]:
    """The `tc -batch` lines that shape one interface's egress as Mininet's TCLink does (HTB class 5:1
    at the rate, burst 15k; with a delay a netem child 10:), and with `queue_pkts` bound its queue
    (emulation.links.limit_queue: the netem's limit, or a pfifo leaf); reservation frames take class 5:2,
    of the same rate (p4src/README.md, "Reservation loop": the control wavelength). A rate above MAX_SHAPED_MBIT
    is left unshaped (TCLink's limit, logged); no rate: nothing."""
    name = check_ifname(ifname)
    if rate_mbit is None:
        return []
    if not 0 < rate_mbit <= MAX_SHAPED_MBIT:
        log.warning("%s: rate %s Mbit/s outside 0..%d: not shaped (as Mininet's TCLink)", name, rate_mbit,
                    MAX_SHAPED_MBIT)
        return []
    if delay is not None and not DELAY.fullmatch(delay):
        raise ValueError(f"{name}: delay {delay!r}: expected a number with us, ms or s (e.g. '0.1ms')")
    lines = [f"qdisc add dev {name} root handle 5:0 htb default 1",
             f"class add dev {name} parent 5:0 classid 5:1 htb rate {float(rate_mbit):f}Mbit burst 15k",
             # reservation frames (seed 001's loop, ether type 0x88B9) on a wavelength of their own: a
             # class of the same rate beside the data's, so a request or grant never waits behind a burst
             f"class add dev {name} parent 5:0 classid 5:2 htb rate {float(rate_mbit):f}Mbit burst 15k",
             f"filter add dev {name} parent 5:0 protocol {ETHERTYPE_RESERVATION:#x} prio 1 u32 match u32 0 0 flowid 5:2"]
    limit = f" limit {int(queue_pkts)}" if queue_pkts else ""
    if delay:
        lines.append(f"qdisc add dev {name} parent 5:1 handle 10: netem delay {delay}{limit}")
    elif queue_pkts:
        lines.append(f"qdisc add dev {name} parent 5:1 handle 10: pfifo{limit}")
    return lines


def run_batch(argv: list[str], lines: list[str], timeout: float = 120.0) -> None:
    """Run `ip -batch -` or `tc -batch -` on these lines; RuntimeError with its error on failure."""
    if not lines:
        return
    res = subprocess.run(argv, input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=timeout,
                         check=False)
    if res.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[:2])} of {len(lines)} lines failed: "
                           f"{(res.stderr or res.stdout).strip().splitlines()[-3:]}")
