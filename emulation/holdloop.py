"""The hold loop of a fabric switch: a veth pair from its port HOLD_OUT_PORT to its port HOLD_IN_PORT,
paced by the kernel.

A ToR holds a packet whose optical circuit is not lit by sending it round a loop and deciding again on
each pass (p4src/include/v1model/slot_hold.p4): out of HOLD_OUT_PORT with a hold mark, back in on
HOLD_IN_PORT. Both ends are ordinary switch ports, so bmv2 and p4sim read them like any port (each
reads only what arrives on an interface, never what it sent: bmv2 captures with direction IN, p4sim
with PACKET_IGNORE_OUTGOING). A tbf on the out end sets the loop's pace: with `mpu` at
FRAME_COST_BYTES every frame costs as much as a full one, so a rate of passes x 12 kbit/s allows that
many passes a second whatever their size. A switch with anything held then spends `passes` pipeline
passes a second on it, however fast it could spin (recirculation took all the CPU it could get).
The tbf queue holds the held packets waiting for their pass; its limit is `frames` frames of
MAX_FRAME_BYTES, above the hold's own bound (depth x scheduled paths: 64 x 3 in the 4-ToR all-to-all).
A frame beyond it is dropped by the kernel, counted in the qdisc's drops (`loop_drops`), and leaves
its path's hold_depth one too high.
"""

from __future__ import annotations

import argparse
import logging
from dataclasses import dataclass

from emulation.fibre import disable_ipv6
from emulation.linkbatch import run_batch
from emulation.links import (
    SWITCH_PORT_OFFLOADS_OFF,
    HostCommand,
    check_ifname,
    root_qdisc_drops,
    switch_port_offloads_off,
)
from topo.model import HOLD_IN_PORT, HOLD_OUT_PORT

log = logging.getLogger(__name__)

HOLD_PASSES_PER_S = 4000  # per switch: a held packet is seen again within 1/4000 s x packets held
FRAME_COST_BYTES = 1500   # tbf mpu: every frame counts as this many bytes (12 kbit)
MAX_FRAME_BYTES = 1700    # the fabric MTU (1600) + Ethernet + hold mark, rounded up
HOLD_LOOP_FRAMES = 4096   # tbf limit, in frames of MAX_FRAME_BYTES
BURST_FRAMES = 2          # tbf bucket: at most this many passes back to back


@dataclass(slots=True, frozen=True)
class HoldLoop:
    """The two ends of a switch's hold loop: `out_intf` is its port HOLD_OUT_PORT, `in_intf` HOLD_IN_PORT."""

    out_intf: str
    in_intf: str

    @property
    def names(self) -> list[str]:
        """Both interfaces."""
        return [self.out_intf, self.in_intf]

    @property
    def ports(self) -> dict[int, str]:
        """The switch's port numbers of the two ends."""
        return {HOLD_OUT_PORT: self.out_intf, HOLD_IN_PORT: self.in_intf}


def hold_loop_names(node: str) -> HoldLoop:
    """A switch's hold loop interfaces: `<node>-ho` and `<node>-hi` (shorter than its `<node>-ethN` ports)."""
    return HoldLoop(f"{node}-ho", f"{node}-hi")


def tbf_args(passes_per_s: int = HOLD_PASSES_PER_S, frames: int = HOLD_LOOP_FRAMES) -> list[str]:
    """The tbf of the out end: `passes_per_s` frames a second of any size, `frames` queued at most."""
    if isinstance(passes_per_s, bool) or not isinstance(passes_per_s, int) or not 1 <= passes_per_s <= 1_000_000:
        raise ValueError(f"hold loop passes={passes_per_s!r}: expected a whole number of passes a second, 1..1000000")
    if isinstance(frames, bool) or not isinstance(frames, int) or not BURST_FRAMES <= frames <= 1_000_000:
        raise ValueError(f"hold loop frames={frames!r}: expected {BURST_FRAMES}..1000000")
    kbit = passes_per_s * FRAME_COST_BYTES * 8 // 1000
    return ["tbf", "rate", f"{kbit}kbit", "burst", str(BURST_FRAMES * MAX_FRAME_BYTES), "mpu", str(FRAME_COST_BYTES),
            "limit", str(frames * MAX_FRAME_BYTES)]


def hold_passes_arg(text: str) -> int:
    """argparse type of a --hold-passes option: the loop's passes a second, refused in one line."""
    try:
        passes = int(text)
        tbf_args(passes)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc) if "hold loop" in str(exc) else
                                         f"hold loop passes={text!r}: expected a whole number") from None
    return passes


def add_hold_loop(loop: HoldLoop, mtu: int, passes_per_s: int = HOLD_PASSES_PER_S,
                  frames: int = HOLD_LOOP_FRAMES) -> HoldLoop:
    """One switch's loop (add_hold_loops)."""
    add_hold_loops([loop], mtu, passes_per_s, frames)
    return loop


def add_hold_loops(loops: list[HoldLoop], mtu: int, passes_per_s: int = HOLD_PASSES_PER_S,
                   frames: int = HOLD_LOOP_FRAMES) -> None:
    """Create the veth pairs, IPv6 and offloads off (as every switch port), the tbf on each out end,
    up: one `ip -batch` to make them, one `tc -batch`, one `ip -batch` to bring them up."""
    tbf = " ".join(tbf_args(passes_per_s, frames))
    run_batch(["ip", "-batch", "-"], [f"link add name {check_ifname(lp.out_intf)} mtu {int(mtu)} type veth peer name "
                                      f"{check_ifname(lp.in_intf)} mtu {int(mtu)}" for lp in loops])
    for lp in loops:
        for name in lp.names:
            disable_ipv6(name)
            switch_port_offloads_off(name)
    run_batch(["tc", "-batch", "-"], [f"qdisc replace dev {lp.out_intf} root {tbf}" for lp in loops])
    run_batch(["ip", "-batch", "-"], [f"link set dev {name} up" for lp in loops for name in lp.names])


def hold_loop_commands(loop: HoldLoop, mtu: int, passes_per_s: int = HOLD_PASSES_PER_S,
                       frames: int = HOLD_LOOP_FRAMES) -> list[HostCommand]:
    """The same loop as commands for a switch's own server (a cluster's remote switch): the veth pair,
    IPv6 and offloads off, the tbf, up."""
    out, inn = check_ifname(loop.out_intf), check_ifname(loop.in_intf)
    cmds = [HostCommand(["ip", "link", "add", "name", out, "mtu", str(int(mtu)), "type", "veth", "peer", "name", inn,
                         "mtu", str(int(mtu))])]
    for name in loop.names:
        cmds += [HostCommand(["sysctl", "-qw", f"net.ipv6.conf.{name}.disable_ipv6=1"]),
                 HostCommand(["ethtool", "-K", name, *SWITCH_PORT_OFFLOADS_OFF])]
    cmds.append(HostCommand(["tc", "qdisc", "replace", "dev", out, "root", *tbf_args(passes_per_s, frames)]))
    return cmds + [HostCommand(["ip", "link", "set", "dev", name, "up"]) for name in loop.names]


def loop_drops(loop: HoldLoop) -> int:
    """Frames the out end's tbf dropped (its queue full): held packets lost in the loop."""
    return root_qdisc_drops(loop.out_intf)
