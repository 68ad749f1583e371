"""Links made in batches (emulation/linkbatch.py): the lines it writes refuse what is not one word or a
delay, and on real interfaces its shaping is the one Mininet's TCLink writes (its own commands, run
on a second veth pair, give the same qdiscs and classes)."""

from __future__ import annotations

import os
import subprocess
import uuid

import pytest
from mininet.link import TCIntf

from emulation.linkbatch import VethPair, make_pairs, run_batch, shaping


def test_lines_are_one_command_each() -> None:
    assert VethPair("h1-eth0", 42, "s1-eth1", 43, 1600).line() == \
        "link add name h1-eth0 mtu 1600 netns 42 type veth peer name s1-eth1 mtu 1600 netns 43"
    assert shaping("s1-eth1", 20, "0.1ms", 64) == [
        "qdisc add dev s1-eth1 root handle 5:0 htb default 1",
        "class add dev s1-eth1 parent 5:0 classid 5:1 htb rate 20.000000Mbit burst 15k",
        "class add dev s1-eth1 parent 5:0 classid 5:2 htb rate 20.000000Mbit burst 15k",
        "filter add dev s1-eth1 parent 5:0 protocol 0x88b9 prio 1 u32 match u32 0 0 flowid 5:2",
        "qdisc add dev s1-eth1 parent 5:1 handle 10: netem delay 0.1ms limit 64"]
    assert shaping("s1-eth1", None) == [] and shaping("s1-eth1", 2000) == []  # unshaped, as TCLink
    with pytest.raises(ValueError, match="interface name"):
        VethPair("h1\nnetns exec x sh", 1, "b", 2).line()
    with pytest.raises(ValueError, match="delay '1ms\\\\n"):
        shaping("s1-eth1", 20, "1ms\nqdisc del dev lo root")


@pytest.mark.root
@pytest.mark.skipif(os.geteuid() != 0, reason="needs root for veth pairs")
@pytest.mark.parametrize("queue", [None, 64])
def test_shaping_is_tclinks(queue: int | None) -> None:
    """Without a delay (this kernel has no netem): HTB at the rate, and a switch port's queue bound, as
    TCLink's; plus the reservation frames' class and its filter."""
    tag = uuid.uuid4().hex[:4]
    ours, theirs = (f"lb{tag}a", f"lb{tag}b"), (f"lb{tag}c", f"lb{tag}d")
    pid = os.getpid()  # this process's namespace: the root one
    try:
        make_pairs([VethPair(ours[0], pid, ours[1], pid), VethPair(theirs[0], pid, theirs[1], pid)])
        run_batch(["tc", "-batch", "-"], shaping(ours[0], 20, None, queue))
        cmds, parent = TCIntf.bwCmds(object.__new__(TCIntf), bw=20)  # Mininet's own, for the same link
        if queue:  # emulation.links.limit_queue on a switch port, after TCLink
            cmds.append("%s qdisc add dev %s" + parent + f"handle 10: pfifo limit {queue}")
        for c in cmds:
            subprocess.run((c % ("tc", theirs[0])).split(), check=True, capture_output=True)

        def show(name: str, what: str) -> str:
            out = subprocess.run(["tc", what, "show", "dev", name], check=True, capture_output=True, text=True).stdout
            return out.replace(name, "IF")

        assert show(ours[0], "qdisc") == show(theirs[0], "qdisc")
        # TCLink's class, and beside it the reservation frames' (seed 001's control wavelength)
        ours_classes = show(ours[0], "class").splitlines()
        assert [c for c in ours_classes if "htb 5:2 " not in c] == show(theirs[0], "class").splitlines()
        assert any("htb 5:2 " in c and "rate 20Mbit" in c for c in ours_classes), ours_classes
        assert "htb 5:1" in show(ours[0], "class") and "rate 20Mbit" in show(ours[0], "class")
        filters = show(ours[0], "filter")
        assert "protocol [35001]" in filters and "flowid 5:2" in filters, filters
    finally:
        for name in (ours[0], theirs[0]):
            subprocess.run(["ip", "link", "del", name], capture_output=True)
