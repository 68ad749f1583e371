"""Packet-in and packet-out through a switch process with a port on a veth pair (needs root)."""

import os
import socket
import subprocess
import time
import uuid

import pytest

from emulation.switchproc import start_switch
from p4rt.client import P4RuntimeClient
from p4rt.entities import TableEntry
from p4rt.resources import DigestConfig, Packet
from p4rt.testing import RT_BASIC_JSON, RT_BASIC_P4INFO
from p4sim.target import Target

pytestmark = [pytest.mark.root, pytest.mark.skipif(os.geteuid() != 0, reason="needs root for a veth pair")]


@pytest.fixture
def veth():
    tag = uuid.uuid4().hex[:6]
    a, b = f"ctA{tag}", f"ctB{tag}"
    subprocess.run(["ip", "link", "add", a, "type", "veth", "peer", "name", b], check=True)
    for ifname in (a, b):
        subprocess.run(["ip", "link", "set", ifname, "up"], check=True)
        subprocess.run(["sysctl", "-qw", f"net.ipv6.conf.{ifname}.disable_ipv6=1"], check=False)
    yield a, b
    subprocess.run(["ip", "link", "del", a], check=False)


def ipv4_frame(src: str, payload: bytes = b"hello") -> bytes:
    eth = bytes.fromhex("000000000001" "000000000002" "0800")
    total = 20 + len(payload)
    ip = bytes([0x45, 0, total >> 8, total & 0xFF, 0, 1, 0, 0, 64, 17, 0, 0]) + socket.inet_aton(src) + \
        socket.inet_aton("10.0.0.1")
    return eth + ip + payload


def test_packet_in_and_out(veth):
    a, b = veth
    sw = start_switch(Target.from_env(), None, {1: a}, device_id=1)
    raw = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
    raw.bind((b, 0))
    raw.settimeout(0.2)
    try:
        with P4RuntimeClient(sw.grpc_addr, device_id=1) as c:
            c.set_pipeline_files(RT_BASIC_P4INFO, RT_BASIC_JSON)
            c.insert([TableEntry.from_dict({"table": "acl", "match": {"ipv4_src": {"value": "10.1.1.1",
                                            "mask": "255.255.255.255"}}, "priority": 1, "action": "to_cpu"})])
            frame = ipv4_frame("10.1.1.1")
            pkt = None
            for _ in range(20):  # the port may take a moment to come up in the switch
                raw.send(frame)
                pkt = c.packet_in(timeout=0.25)
                if pkt is not None:
                    break
            assert pkt is not None, "no packet-in"
            assert pkt.metadata["ingress_port"] == 1 and pkt.payload[:14] == frame[:14]
            probe = bytes.fromhex("ffffffffffff" "0000000000aa" "88b6") + b"probe-1" + bytes(40)
            c.packet_out(Packet(probe, {"egress_port": 1}))
            deadline = time.monotonic() + 3
            got = None
            while time.monotonic() < deadline and got is None:
                try:
                    data = raw.recv(2048)
                except TimeoutError:
                    continue
                if data[:len(probe)] == probe:
                    got = data
            assert got is not None, "packet-out not seen on the wire"
    finally:
        raw.close()
        sw.stop()


def test_digests_are_delivered_and_acknowledged(veth):
    a, b = veth
    sw = start_switch(Target.from_env(), None, {1: a}, device_id=1)
    raw = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
    raw.bind((b, 0))
    try:
        with P4RuntimeClient(sw.grpc_addr, device_id=1) as c:
            c.set_pipeline_files(RT_BASIC_P4INFO, RT_BASIC_JSON)
            c.insert([DigestConfig("learn_t", max_timeout_ns=0, max_list_size=1)])
            assert [str(d) for d in c.read_entities([DigestConfig("learn_t")])] == [
                "digest learn_t max_list_size=1 max_timeout_ns=0 ack_timeout_ns=1000000000"]
            c.insert([TableEntry.from_dict({"table": "acl", "match": {"ipv4_src": {"value": "10.2.2.2",
                                            "mask": "255.255.255.255"}}, "priority": 1, "action": "learn"})])
            dl = None
            for _ in range(20):
                raw.send(ipv4_frame("10.2.2.2"))
                dl = c.digest(timeout=0.25)
                if dl is not None:
                    break
            assert dl is not None, "no digest"
            assert dl.digest == "learn_t" and dl.data[0] == (0x000000000002, 1)  # (srcAddr, ingress port)
    finally:
        raw.close()
        sw.stop()
