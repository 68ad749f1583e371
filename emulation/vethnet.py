"""A whole emulated hybrid network on veth pairs, without Mininet: fabric switches and the `ocs`
switch as processes (each fabric switch with its hold loop, emulation/holdloop.py), the OCS emulator
in-process, hosts as raw veth ends (frames sent with AF_PACKET).
Every link is two veth pairs whose inner ends are patched together (emulation/fibre.py): a cut or
a dark OCS port sets those inner ends down, so both ends lose carrier and no switch's own interface
is ever set down (bmv2 stops receiving on every port then). Everything created here has a unique
name and is removed by close()."""

from __future__ import annotations

import socket
import struct
import subprocess
import threading
import time
import uuid
from dataclasses import dataclass, field

from control.ocs.driver import duplex_pairs
from control.switch import Pipeline, SwitchSession
from emulation.fibre import patch
from emulation.holdloop import add_hold_loop, hold_loop_names
from emulation.links import switch_port_offloads_off
from emulation.ocs.dataplane import IpLinkControl, P4RuntimeCircuits
from emulation.ocs.delay import DelayModel
from emulation.ocs.emulator import EmulatedOcs
from emulation.priority import RunPriorities
from emulation.state import STATE_DIR
from emulation.switchproc import SwitchProcess, start_switch
from p4sim.target import Target, free_port

SOL_PACKET, PACKET_STATISTICS = 263, 6  # linux/if_packet.h: struct tpacket_stats {packets, drops}


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True)


@dataclass
class NetTestbed:
    topo: object
    fabric: Pipeline
    ocs_pipeline: Pipeline
    delay: DelayModel
    tag: str = field(default_factory=lambda: uuid.uuid4().hex[:4])
    veths: list[str] = field(default_factory=list)
    host_if: dict[str, str] = field(default_factory=dict)
    port_if: dict[tuple[str, int], str] = field(default_factory=dict)  # (switch, port) -> its interface
    patch_if: dict[tuple[str, int], tuple[str, str]] = field(default_factory=dict)  # -> its link's patch ends
    target: Target = field(default_factory=Target.from_env)
    procs: list[SwitchProcess] = field(default_factory=list)
    ocs: EmulatedOcs | None = None
    ocs_session: SwitchSession | None = None
    idle_poll: bool = True  # the CPUs out of halting idle while it runs (emulation/priority.py IdlePoll)
    priorities: RunPriorities | None = None

    def _link(self, a: str, b: str, mtu: int) -> tuple[str, str]:
        """Ends a and b joined through a patch; returns the two patch ends (a's peer, b's peer)."""
        pa, pb = f"{a[:-1]}p{a[-1]}", f"{b[:-1]}p{b[-1]}"
        for end, peer in ((a, pa), (b, pb)):
            _ip("link", "add", end, "type", "veth", "peer", "name", peer)
            self.veths.append(end)
        patch(pa, pb)
        for x in (a, b, pa, pb):
            subprocess.run(["sysctl", "-qw", f"net.ipv6.conf.{x}.disable_ipv6=1"], capture_output=True)
            _ip("link", "set", x, "mtu", str(mtu), "up")
        for end in (a, b):  # bmv2's receive ring: 32 frames with offloads on, ~250 without (links.py)
            switch_port_offloads_off(end)
        return pa, pb

    def start(self) -> NetTestbed:
        t = self.tag
        self.priorities = RunPriorities(STATE_DIR, self.idle_poll)  # as an emulation's (emulation/priority.py)
        self.priorities.acquire()
        ports: dict[str, dict[int, str]] = {s.name: {} for s in self.topo.switches}
        hosts = self.topo.host_map()
        for i, lk in enumerate(self.topo.links):
            a, b = f"tb{t}L{i}a", f"tb{t}L{i}b"
            patch_ends = self._link(a, b, 1600)
            for node, port, ifname in ((lk.a, lk.a_port, a), (lk.b, lk.b_port, b)):
                if node in hosts:
                    self.host_if[node] = ifname
                else:
                    ports[node][port] = ifname
                    self.port_if[(node, port)], self.patch_if[(node, port)] = ifname, patch_ends
        ocs = self.topo.ocs[0]
        ocs_ports: dict[int, str] = {}
        ocs_patch: dict[int, list[str]] = {}
        for p in ocs.ports:
            a, b = f"tb{t}O{p.port}a", f"tb{t}O{p.port}b"
            patch_ends = self._link(a, b, 1600)
            ocs_ports[p.port], ocs_patch[p.port] = a, list(patch_ends)
            ports[p.switch][p.switch_port] = b
            self.port_if[(p.switch, p.switch_port)], self.patch_if[(p.switch, p.switch_port)] = b, patch_ends
        for sw in self.topo.switches:  # every fabric switch's hold loop (ports 253 -> 254, paced)
            loop = hold_loop_names(f"tb{t}H{sw.device_id}")
            self.veths.append(loop.out_intf)
            ports[sw.name] |= add_hold_loop(loop, 1600).ports
        for sw in self.topo.switches:
            sw.grpc_port = free_port()
            self.procs.append(start_switch(self.target, None, ports[sw.name], device_id=sw.device_id,
                                           grpc_port=sw.grpc_port))
        ocs_proc = start_switch(self.target, None, ocs_ports, device_id=ocs.device_id)
        self.procs.append(ocs_proc)
        self.ocs_session = SwitchSession(ocs.name, ocs_proc.grpc_addr, ocs.device_id, self.ocs_pipeline)
        self.ocs_session.connect()
        circuits = P4RuntimeCircuits(self.ocs_session)
        n = max(p.port for p in ocs.ports)
        links = IpLinkControl(ocs_patch)
        self.ocs = EmulatedOcs(n, self.delay, circuits, links)
        self.ocs.init_links()
        self.ocs.set_map(duplex_pairs(ocs.circuit_maps[ocs.default_map], n), delay=DelayModel.instant())
        self.ocs.wait_settled(5)
        return self

    def cut(self, switch: str, port: int, up: bool = False) -> None:
        """Take the link of a switch port down (or back up): both ends lose carrier, as with a cut fibre."""
        for end in self.patch_if[(switch, port)]:
            _ip("link", "set", end, "up" if up else "down")

    def close(self) -> None:
        if self.priorities is not None:
            self.priorities.release()
            self.priorities = None
        if self.ocs is not None:
            self.ocs.close()
        if self.ocs_session is not None:
            self.ocs_session.close()
        for p in self.procs:
            p.stop()
        for a in self.veths:
            subprocess.run(["ip", "link", "del", a], capture_output=True)


def udp_frame(src_mac: str, dst_mac: str, src: str, dst: str, seq: int) -> bytes:
    """An Ethernet/IPv4/UDP frame carrying a sequence number."""
    payload = b"SEQ" + seq.to_bytes(4, "big") + bytes(25)
    udp = (40000).to_bytes(2, "big") + (5001).to_bytes(2, "big") + (8 + len(payload)).to_bytes(2, "big") + b"\0\0"
    total = 20 + len(udp) + len(payload)
    hdr = bytes([0x45, 0, total >> 8, total & 0xFF, 0, 0, 0x40, 0, 64, 17, 0, 0]) + socket.inet_aton(src) + \
        socket.inet_aton(dst)
    csum = sum(int.from_bytes(hdr[i:i + 2], "big") for i in range(0, 20, 2))
    csum = (csum & 0xFFFF) + (csum >> 16)
    csum = ~((csum & 0xFFFF) + (csum >> 16)) & 0xFFFF
    hdr = hdr[:10] + csum.to_bytes(2, "big") + hdr[12:]
    mac = lambda m: bytes.fromhex(m.replace(":", ""))  # noqa: E731
    return mac(dst_mac) + mac(src_mac) + b"\x08\x00" + hdr + udp + payload


class Stream:
    """A constant-rate UDP stream between two host interfaces, counting what arrives."""

    def __init__(self, tx_if: str, rx_if: str, frame_for, interval: float = 0.002) -> None:
        self.tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
        self.tx.bind((tx_if, 0))
        self.rx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0800))
        self.rx.bind((rx_if, 0))
        self.rx.settimeout(0.05)
        self.rx_drops = 0  # frames the receiving socket's buffer dropped (read at stop)
        self.frame_for = frame_for
        self.interval = interval
        self.sent = 0
        self.sent_at: list[float] = []  # time.monotonic() of each frame's send, by sequence number
        self.got: set[int] = set()
        self.arrivals: list[tuple[float, int]] = []
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._send, daemon=True),
                         threading.Thread(target=self._recv, daemon=True)]

    def start(self) -> Stream:
        for t in self._threads:
            t.start()
        return self

    def _send(self) -> None:
        t0 = time.monotonic()
        while not self._stop.is_set():
            self.sent_at.append(time.monotonic())
            self.tx.send(self.frame_for(self.sent))
            self.sent += 1
            wait = t0 + self.sent * self.interval - time.monotonic()
            if wait > 0:
                time.sleep(wait)

    def _recv(self) -> None:
        while True:
            try:
                data = self.rx.recv(2048)
            except (TimeoutError, OSError):
                if self._stop.is_set():
                    return
                continue
            i = data.find(b"SEQ")
            if i >= 0:
                seq = int.from_bytes(data[i + 3:i + 7], "big")
                self.got.add(seq)
                self.arrivals.append((time.monotonic(), seq))

    def stop(self, settle: float = 0.3) -> None:
        self._stop.set()
        self._threads[0].join()
        time.sleep(settle)
        self._threads[1].join()
        self.rx_drops = struct.unpack("II", self.rx.getsockopt(SOL_PACKET, PACKET_STATISTICS, 8))[1]
        self.tx.close()
        self.rx.close()

    @property
    def lost(self) -> list[int]:
        return sorted(set(range(self.sent)) - self.got)

    def longest_gap_ms(self) -> float:
        times = sorted(t for t, _ in self.arrivals)
        return max((b - a for a, b in zip(times, times[1:], strict=False)), default=0.0) * 1000
