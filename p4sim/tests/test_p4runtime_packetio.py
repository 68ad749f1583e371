"""Packet-out, packet-in and digests through the P4Runtime stream, in-process and over a veth pair."""

from __future__ import annotations

import os
import socket
import subprocess
import time
import uuid

import pytest
from google.rpc import code_pb2

from p4sim.switch.p4runtime.proto import p4r
from p4sim.switch.p4runtime.testing import running_switch
from p4sim.tests.test_p4runtime_server import DEL, INS, LEARN, LEARN_T, TO_CPU, Client, acl, b

ETH = bytes.fromhex("0000000000aa" "0000000000bb" "0800")
IP = bytes.fromhex("4500001400000000400600000a0000010a000002")  # 10.0.0.1 -> 10.0.0.2, TCP
FRAME = ETH + IP


def packet_out(port: int, payload: bytes) -> p4r.StreamMessageRequest:
    req = p4r.StreamMessageRequest()
    req.packet.payload = payload
    req.packet.metadata.add(metadata_id=1, value=b(port, 2))
    return req


@pytest.fixture
def setup():
    with running_switch() as sw:
        c = Client(sw.address)
        assert c.arbitrate().arbitration.status.code == code_pb2.OK
        c.set_pipeline()
        sent: list[tuple[int, bytes]] = []  # frames for front-panel ports (no I/O thread here)
        cpu, emit = sw.device.cpu_port, sw.device.emit

        def capture(out: list[tuple[int, bytes]]) -> None:
            sent.extend(p for p in out if p[0] != cpu)
            emit([p for p in out if p[0] == cpu])

        sw.device.emit = capture
        yield sw, c, sent
        c.close()


def test_packet_out_is_emitted_on_its_port(setup) -> None:
    sw, c, sent = setup
    c.out.put(packet_out(2, FRAME))
    deadline = time.time() + 3
    while not sent and time.time() < deadline:
        time.sleep(0.01)
    assert sent == [(2, FRAME)]


def test_packet_out_from_backup_is_refused(setup) -> None:
    sw, c, sent = setup
    backup = Client(sw.address)
    backup.arbitrate(0)
    backup.out.put(packet_out(2, FRAME))
    err = backup.next("error").error
    assert err.canonical_code == code_pb2.PERMISSION_DENIED and err.packet_out.packet_out.payload == FRAME
    assert sent == []
    backup.close()


def test_packet_in_carries_ingress_port(setup) -> None:
    sw, c, _ = setup
    c.write((INS, acl(0x0A000001, 0xFFFFFFFF, 1, TO_CPU)))
    sw.device.inject(3, FRAME)
    pin = c.next("packet").packet
    assert pin.payload == FRAME
    assert [(m.metadata_id, m.value) for m in pin.metadata] == [(1, b"\x03"), (2, b"\x00")]


def test_digests_batched_acked_and_deduplicated(setup) -> None:
    sw, c, _ = setup
    c.write((INS, acl(0x0A000001, 0xFFFFFFFF, 1, LEARN)))
    d = p4r.Entity()
    d.digest_entry.digest_id = LEARN_T
    d.digest_entry.config.max_list_size = 2
    d.digest_entry.config.max_timeout_ns = 50_000_000
    d.digest_entry.config.ack_timeout_ns = 10_000_000_000
    c.write((INS, d))
    sw.device.inject(1, FRAME)
    sw.device.inject(1, FRAME)  # same data: not repeated
    sw.device.inject(2, FRAME)  # list full: sent at once
    dl = c.next("digest").digest
    assert dl.digest_id == LEARN_T and len(dl.data) == 2
    assert [[m.bitstring for m in x.struct.members] for x in dl.data] == [[b"\xbb", b"\x01"], [b"\xbb", b"\x02"]]
    sw.device.inject(1, FRAME)  # not acked yet: suppressed
    sw.device.inject(4, FRAME)  # alone: sent after max_timeout
    dl2 = c.next("digest").digest
    assert [x.struct.members[1].bitstring for x in dl2.data] == [b"\x04"]
    ack = p4r.StreamMessageRequest()
    ack.digest_ack.digest_id, ack.digest_ack.list_id = LEARN_T, dl.list_id
    c.out.put(ack)
    time.sleep(0.1)
    sw.device.inject(1, FRAME)  # acked: may be sent again
    dl3 = c.next("digest").digest
    assert [x.struct.members[1].bitstring for x in dl3.data] == [b"\x01"]
    c.write((DEL, d))


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True)


@pytest.mark.root
@pytest.mark.skipif(os.geteuid() != 0, reason="needs root for a veth pair")
def test_packet_in_and_out_over_veth() -> None:
    tag = uuid.uuid4().hex[:5]
    sw_if, host_if = f"p4rt{tag}a", f"p4rt{tag}b"
    _ip("link", "add", sw_if, "type", "veth", "peer", "name", host_if)
    try:
        for i in (sw_if, host_if):
            _ip("link", "set", i, "up")
        host = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
        host.bind((host_if, 0))
        host.settimeout(3)
        with running_switch(ports={1: sw_if}) as sw:
            sw.device.start()
            try:
                c = Client(sw.address)
                c.arbitrate()
                c.set_pipeline()
                c.write((INS, acl(0x0A000001, 0xFFFFFFFF, 1, TO_CPU)))
                time.sleep(0.2)  # let the I/O thread open its socket
                host.send(FRAME + bytes(46))
                pin = c.next("packet", timeout=5).packet
                assert pin.payload.startswith(FRAME) and pin.metadata[0].value == b"\x01"
                c.out.put(packet_out(1, b"\xff" * 6 + FRAME[6:] + bytes(46)))
                while True:
                    got = host.recv(2048)
                    if got.startswith(b"\xff" * 6):
                        break
                assert got[6:].startswith(FRAME[6:])
                c.close()
            finally:
                sw.device.stop()
        host.close()
    finally:
        subprocess.run(["ip", "link", "del", sw_if], capture_output=True)
