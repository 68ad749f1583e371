"""veth pairs for switch tests and benchmarks (root): create, attach raw sockets, always clean up."""

from __future__ import annotations

import contextlib
import os
import select
import socket
import subprocess
import time
from collections.abc import Callable, Iterator

ETH_P_ALL = 0x0003
SOL_PACKET = 263
PACKET_IGNORE_OUTGOING = 23


def is_root() -> bool:
    """True when running as root (veth pairs need it)."""
    return os.geteuid() == 0


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True)


@contextlib.contextmanager
def veth_pairs(n: int, prefix: str = "sw2", mtu: int = 1600) -> Iterator[list[tuple[str, str]]]:
    """Yield n veth pairs (switch side, host side), up, MTU set, IPv6 off; deleted afterwards."""
    tag = f"{os.getpid() % 100000}"
    pairs = [(f"{prefix}a{tag}{i}", f"{prefix}b{tag}{i}") for i in range(n)]
    made: list[str] = []
    try:
        for a, b in pairs:
            _ip("link", "add", a, "type", "veth", "peer", "name", b)
            made.append(a)
            for x in (a, b):
                with contextlib.suppress(OSError):
                    with open(f"/proc/sys/net/ipv6/conf/{x}/disable_ipv6", "w") as f:
                        f.write("1")
                _ip("link", "set", x, "mtu", str(mtu), "up")
            # no segmentation/receive offloads on the switch side: with them libpcap gives bmv2 a
            # 32-frame receive ring (emulation/links.py, SWITCH_PORT_OFFLOADS_OFF)
            subprocess.run(["ethtool", "-K", a, "tso", "off", "gso", "off", "gro", "off"], capture_output=True)
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline and not all(_oper(a) == "up" for a, _ in pairs):
            time.sleep(0.02)
        yield pairs
    finally:
        for a in made:
            subprocess.run(["ip", "link", "del", a], capture_output=True)


def _oper(name: str) -> str:
    try:
        with open(f"/sys/class/net/{name}/operstate") as f:
            return f.read().strip()
    except OSError:
        return "absent"


class RawPort:
    """A raw AF_PACKET socket on one interface, to send frames and collect what arrives."""

    def __init__(self, ifname: str) -> None:
        self.ifname = ifname
        self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        self.sock.bind((ifname, 0))
        with contextlib.suppress(OSError):
            self.sock.setsockopt(SOL_PACKET, PACKET_IGNORE_OUTGOING, 1)
        with contextlib.suppress(OSError):
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
        self.sock.setblocking(False)

    def send(self, frame: bytes) -> None:
        """Transmit one frame (retrying briefly if the socket buffer is full)."""
        for _ in range(1000):
            try:
                self.sock.send(frame)
                return
            except BlockingIOError:
                time.sleep(0.0005)
        raise TimeoutError(f"{self.ifname}: send buffer stayed full")

    def recv(self, timeout: float = 1.0, match: Callable[[bytes], bool] | None = None) -> bytes | None:
        """The next frame (satisfying match) within timeout seconds, or None."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            r, _, _ = select.select([self.sock], [], [], left)
            if not r:
                return None
            try:
                frame, addr = self.sock.recvfrom(65536)
            except BlockingIOError:
                continue
            if addr[2] == socket.PACKET_OUTGOING:
                continue
            if match is None or match(frame):
                return frame

    def drain(self, match: Callable[[bytes], bool] | None = None, quiet: float = 0.2) -> int:
        """Count frames (satisfying match) until none arrives for `quiet` seconds."""
        n = 0
        while True:
            f = self.recv(quiet)
            if f is None:
                return n
            if match is None or match(f):
                n += 1

    def close(self) -> None:
        """Close the socket."""
        self.sock.close()
