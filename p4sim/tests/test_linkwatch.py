"""p4sim's link notifications: netlink link messages parsed, and a veth's changes heard (root)."""

import os
import shutil
import struct
import subprocess
import threading

import pytest

from p4sim.switch.linkwatch import (
    IF_OPER_DOWN,
    IFINFO,
    IFLA_IFNAME,
    IFLA_OPERSTATE,
    NLMSG_HDR,
    RTM_DELLINK,
    RTM_NEWLINK,
    LinkWatch,
    link_changes,
)
from p4sim.switch.ports import iface_up


def attr(atype: int, value: bytes) -> bytes:
    raw = struct.pack("=HH", 4 + len(value), atype) + value
    return raw + bytes(-len(raw) % 4)


def message(mtype: int, name: str | None, oper: int | None) -> bytes:
    body = IFINFO.pack(0, 1, 7, 0, 0)
    if name is not None:
        body += attr(IFLA_IFNAME, name.encode() + b"\0")
    if oper is not None:
        body += attr(IFLA_OPERSTATE, bytes([oper]))
    return NLMSG_HDR.pack(NLMSG_HDR.size + len(body), mtype, 0, 0, 0) + body


def test_link_messages_give_bmv2s_rule():
    data = (message(RTM_NEWLINK, "s1-eth1", 6) + message(RTM_NEWLINK, "s1-eth2", 0)
            + message(RTM_NEWLINK, "s1-eth3", IF_OPER_DOWN) + message(RTM_DELLINK, "s1-eth4", None)
            + message(RTM_NEWLINK, "s1-eth5", None) + message(20, "not-a-link", 6))
    assert link_changes(data) == [("s1-eth1", True), ("s1-eth2", True), ("s1-eth3", False), ("s1-eth4", False)]


def test_truncated_or_garbage_datagrams_give_what_is_whole():
    whole = message(RTM_NEWLINK, "a", 6)
    assert link_changes(whole + whole[:20]) == [("a", True)]
    assert link_changes(b"\xff" * 40) == []
    assert link_changes(b"") == []


@pytest.mark.root
@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("ip") is None, reason="needs root and ip (a veth pair)")
def test_a_veths_changes_are_heard():
    a, b = f"lw{os.getpid() % 10000}a", f"lw{os.getpid() % 10000}b"
    heard: list[bool] = []
    changed = threading.Event()

    def cb(up: bool) -> None:
        heard.append(up)
        changed.set()

    watch = LinkWatch.shared(iface_up)
    watch.watch(a, cb)
    try:
        subprocess.run(["ip", "link", "add", a, "type", "veth", "peer", "name", b], check=True)
        subprocess.run(["ip", "link", "set", a, "up"], check=True)
        changed.clear()
        subprocess.run(["ip", "link", "set", b, "up"], check=True)
        assert changed.wait(2) and heard[-1] is True, heard
        changed.clear()
        subprocess.run(["ip", "link", "set", b, "down"], check=True)  # a loses carrier
        assert changed.wait(2) and heard[-1] is False, heard
        changed.clear()
        subprocess.run(["ip", "link", "del", a], check=True)
        assert changed.wait(2) and heard[-1] is False, heard
    finally:
        watch.unwatch(a, cb)
        subprocess.run(["ip", "link", "del", a], capture_output=True, check=False)
