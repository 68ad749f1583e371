"""The p4sim switch on real veth pairs (root): forwarding, drops, link state, CPU port, the CLI."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from p4sim.switch.device import Device
from p4sim.switch.native.build import compiler
from p4sim.switch.ports import PORT_POLL_S, iface_up
from p4sim.switch.testdata import programs
from p4sim.switch.testdata.veth import RawPort, is_root, veth_pairs
from p4sim.switch.values import ActionCall, Lpm

pytestmark = [pytest.mark.root, pytest.mark.skipif(not is_root(), reason="needs root for veth pairs")]

MARK = b"p4sim-veth-test"


def _udp(dst: str, ttl: int = 64, sport: int = 1000) -> bytes:
    return bytes(Ether(src="00:00:00:00:00:01", dst="00:00:00:00:00:02") / IP(src="10.0.0.1", dst=dst, ttl=ttl)
                 / UDP(sport=sport, dport=9) / MARK)


def _ours(frame: bytes) -> bool:
    return MARK in frame


@pytest.fixture(params=["python", "native"])
def net(request: pytest.FixtureRequest) -> Iterator[tuple[Device, list[RawPort], list[tuple[str, str]]]]:
    """Both data planes: the Python path on sockets, and native code on rings (p4sim.switch.native)."""
    native = request.param == "native"
    if native and compiler() is None:
        pytest.skip("no C compiler: no native data plane")
    with veth_pairs(3, "sw2") as pairs:
        dev = Device(ports={i + 1: a for i, (a, _) in enumerate(pairs)}, cpu_port=255, native=native)
        dev.commit_pipeline(dev.load_pipeline(programs.basic_router()))
        route = dev.pipeline.table("ipv4_lpm")
        route.insert((Lpm(0x0A000200, 24),), ActionCall("MyIngress.ipv4_forward", (0x020000000002, 2)))
        route.insert((Lpm(0x0A000300, 24),), ActionCall("MyIngress.ipv4_forward", (0x020000000003, 3)))
        route.insert((Lpm(0x0A00FF00, 24),), ActionCall("MyIngress.ipv4_forward", (0x0200000000FF, 255)))
        hosts = [RawPort(b) for _, b in pairs]
        dev.start()
        try:
            yield dev, hosts, pairs
        finally:
            dev.stop()
            for h in hosts:
                h.close()


def test_forwarding_ttl_checksum_and_drop(net) -> None:  # noqa: ANN001
    dev, hosts, _ = net
    hosts[0].send(_udp("10.0.2.7"))
    got = hosts[1].recv(5.0, _ours)
    assert got is not None, "no frame forwarded to port 2"
    ip = Ether(got)[IP]
    assert ip.ttl == 63 and Ether(got).dst == "02:00:00:00:00:02"
    ref = IP(bytes(ip))
    del ref.chksum
    assert IP(bytes(ref)).chksum == ip.chksum
    hosts[0].send(_udp("10.0.3.7"))
    assert hosts[2].recv(5.0, _ours) is not None
    hosts[0].send(_udp("192.168.1.1"))  # no route: the default action drops
    assert hosts[1].recv(0.3, _ours) is None and hosts[2].recv(0.1, _ours) is None
    assert hosts[0].recv(0.1, _ours) is None  # the switch never reflects a frame to its sender


def test_cpu_port_packet_in_and_out(net) -> None:  # noqa: ANN001
    dev, hosts, _ = net
    cpu: list[bytes] = []
    dev.on_cpu_frame = cpu.append
    hosts[0].send(_udp("10.0.255.1"))
    deadline = time.monotonic() + 2
    while not cpu and time.monotonic() < deadline:
        time.sleep(0.01)
    assert cpu and MARK in cpu[0]
    dev.inject(255, _udp("10.0.3.9"))  # a packet-out enters the pipeline on the CPU port
    assert hosts[2].recv(5.0, _ours) is not None


def test_link_down_is_a_port_down(net) -> None:  # noqa: ANN001
    dev, hosts, pairs = net
    events: list[tuple[int, bool]] = []
    dev.on_port_status = lambda port, up: events.append((port, up))
    assert dev.port_up(2)
    subprocess.run(["ip", "link", "set", pairs[1][1], "down"], check=True)
    deadline = time.monotonic() + 3
    while dev.port_up(2) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not dev.port_up(2) and (2, False) in events
    subprocess.run(["ip", "link", "set", pairs[1][1], "up"], check=True)
    deadline = time.monotonic() + 3
    while not dev.port_up(2) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert dev.port_up(2) and (2, True) in events


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _switch(args: list[str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "p4sim", "switch", *args], stderr=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, text=True)


def test_cli_runs_forwards_and_stops_on_sigterm(tmp_path: Path) -> None:
    prog = tmp_path / "router.json"
    prog.write_bytes(programs.basic_router())
    port = _free_port()
    with veth_pairs(2, "sw2c") as pairs:
        proc = _switch(["-i", f"1@{pairs[0][0]}", "-i", f"2@{pairs[1][0]}", "--device-id", "3",
                        "--pcap", str(tmp_path), str(prog), "--", "--grpc-server-addr", f"127.0.0.1:{port}",
                        "--cpu-port", "255"])
        try:
            line = proc.stderr.readline()
            assert f"127.0.0.1:{port}" in line or "data plane only" in line, line
            h = RawPort(pairs[0][1])
            h.send(_udp("10.0.2.1"))  # no entries: dropped, but the switch reads it (pcap)
            time.sleep(0.3)
            h.close()
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(10) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        assert (tmp_path / f"{pairs[0][0]}_in.pcap").stat().st_size > 24


def test_cli_errors_exit_nonzero(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    cases = [
        (["-i", "1@sw2nosuchif0", "--no-p4", "--", "--grpc-server-addr", f"127.0.0.1:{_free_port()}"], "does not exist"),
        ([str(bad), "--grpc-server-addr", f"127.0.0.1:{_free_port()}"], "not valid JSON"),
        ([str(tmp_path / "missing.json")], "cannot read"),
        (["-i", "x@y", "--no-p4"], "PORT@IFACE"),
    ]
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        cases.append((["--no-p4", "--", "--grpc-server-addr", f"127.0.0.1:{busy.getsockname()[1]}"], "not available"))
        for args, msg in cases:
            proc = _switch(args)
            _, err = proc.communicate(timeout=30)
            assert proc.returncode == 1, (args, err)
            assert msg in err, (args, err)
    assert os.path.exists(bad)


def test_interface_deleted_under_the_switch(net) -> None:  # noqa: ANN001
    dev, hosts, pairs = net
    subprocess.run(["ip", "link", "del", pairs[2][0]], check=True)
    deadline = time.monotonic() + 3
    while dev.port_up(3) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not dev.port_up(3)
    hosts[0].send(_udp("10.0.2.7"))  # the other ports still forward
    assert hosts[1].recv(5.0, _ours) is not None
    assert dev._io._thread.is_alive()


def test_port_flap_keeps_forwarding(net) -> None:  # noqa: ANN001
    dev, hosts, pairs = net
    for _ in range(2):
        subprocess.run(["ip", "link", "set", pairs[1][0], "down"], check=True)
        hosts[0].send(_udp("10.0.2.7"))  # sent to a down port: dropped
        time.sleep(0.2)
        subprocess.run(["ip", "link", "set", pairs[1][0], "up"], check=True)
        deadline = time.monotonic() + 3
        while not dev.port_up(2) and time.monotonic() < deadline:
            time.sleep(0.02)
    hosts[1].drain(quiet=0.1)
    hosts[0].send(_udp("10.0.2.7"))
    assert hosts[1].recv(5.0, _ours) is not None
    hosts[1].send(_udp("10.0.3.7"))  # and the flapped port still receives
    assert hosts[2].recv(5.0, _ours) is not None


def test_link_state_is_polled_like_bmv2(net) -> None:  # noqa: ANN001
    """bmv2's PortMonitor reads operstate every 200 ms: a change shows 0-200 ms later, not at once."""
    dev, hosts, pairs = net
    seen = threading.Event()
    dev.on_port_status = lambda port, up: seen.set() if port == 2 else None
    delays = []
    for state in ("down", "up") * 4:
        seen.clear()
        t = time.monotonic()
        subprocess.run(["ip", "link", "set", pairs[1][1], state], check=True)
        assert seen.wait(3.0), f"no port status event for {state}"
        delays.append(time.monotonic() - t)
    assert max(delays) < PORT_POLL_S + 0.3, delays
    assert max(delays) > 0.03, f"changes seen at once, not polled: {delays}"


def test_up_is_operstate_starting_with_u() -> None:
    """bmv2's rule: "up" and "unknown" (loopback, tun) are up; "down", "lowerlayerdown" are not."""
    with open("/sys/class/net/lo/operstate") as f:
        assert f.read().strip() == "unknown"
    assert iface_up("lo")
    assert not iface_up("p4simnosuchif0")
    with veth_pairs(1, "sw2u") as pairs:
        (a, b), = pairs
        assert iface_up(a)
        subprocess.run(["ip", "link", "set", b, "down"], check=True)  # the peer: carrier lost
        with open(f"/sys/class/net/{a}/operstate") as f:
            assert f.read().strip() == "lowerlayerdown"
        assert not iface_up(a)
        subprocess.run(["ip", "link", "set", a, "down"], check=True)  # administratively down
        with open(f"/sys/class/net/{a}/operstate") as f:
            assert f.read().strip() == "down"
        assert not iface_up(a)


def test_admin_down_port_leaves_the_other_ports_working(net) -> None:  # noqa: ANN001
    """Unlike bmv2 (which stops reading every port while one of its interfaces is admin-down, README)."""
    dev, hosts, pairs = net
    subprocess.run(["ip", "link", "set", pairs[1][0], "down"], check=True)  # the switch side of port 2
    try:
        hosts[0].send(_udp("10.0.3.7"))
        assert hosts[2].recv(5.0, _ours) is not None
        hosts[2].send(_udp("10.0.2.7"))  # to the down port: dropped, nothing else happens
        time.sleep(0.1)
        hosts[0].send(_udp("10.0.3.8"))
        assert hosts[2].recv(5.0, _ours) is not None
    finally:
        subprocess.run(["ip", "link", "set", pairs[1][0], "up"], check=True)
    deadline = time.monotonic() + 3
    while not dev.port_up(2) and time.monotonic() < deadline:
        time.sleep(0.02)
    hosts[0].send(_udp("10.0.2.7"))
    assert hosts[1].recv(5.0, _ours) is not None
