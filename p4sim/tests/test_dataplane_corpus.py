"""The compiler's program corpus (p4sim/tests/corpus), compiled and executed: packets in, packets out."""

from __future__ import annotations

from pathlib import Path

import pytest

from p4sim.compiler import cli as compile_cli
from p4sim.switch import hashes
from p4sim.switch.device import Device, Digest
from p4sim.switch.pre import CloneSession
from p4sim.switch.values import ActionCall, Exact, Lpm, MemberRef

CORPUS = Path(__file__).parent / "corpus"


def _compile(name: str, tmp: Path) -> bytes:
    out = tmp / f"{name}.json"
    rc = compile_cli.main([str(CORPUS / f"{name}.p4"), "-o", str(out), "--p4runtime-files", str(tmp / f"{name}.txtpb")])
    assert rc == 0
    return out.read_bytes()


@pytest.fixture(scope="module")
def externs_json(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    return _compile("externs", tmp_path_factory.mktemp("externs"))


@pytest.fixture(scope="module")
def features_json(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    return _compile("features", tmp_path_factory.mktemp("features"))


ETH = bytes.fromhex("020000000002" "020000000001")


def _op(op: int, s: int = 5, data: bytes = bytes(range(9))) -> bytes:
    return ETH + b"\x88\xb5" + bytes([op, 0]) + b"\x00\x00" + bytes([s & 0xFF, 0]) + data + b"tail"


def _fields(frame: bytes, tags: int = 0) -> dict[str, int]:
    o = 14 + 2 * tags
    return {"op": frame[o], "mark": frame[o + 1], "h16": int.from_bytes(frame[o + 2:o + 4], "big"),
            "s": frame[o + 4], "color": frame[o + 5]}


@pytest.fixture
def ext(externs_json: bytes) -> Device:
    d = Device(ports={1: "a", 2: "b", 3: "c"})
    d.commit_pipeline(d.load_pipeline(externs_json))
    d.pre.insert_session(5, CloneSession(((3, 0),)))
    return d


def test_externs_clone_and_field_lists(ext: Device) -> None:
    out = dict(ext.process(1, _op(1)))
    assert sorted(out) == [2, 3]
    assert _fields(out[3])["mark"] == 0xC1 and _fields(out[3])["h16"] == 0  # metadata reset in the clone
    out = dict(ext.process(1, _op(2)))
    assert _fields(out[3])["h16"] == 0x77  # preserved by the field list
    assert _fields(out[2])["mark"] == 0x80  # switch default branch


def test_externs_recirculate_hash_signed_meter(ext: Device) -> None:
    out = ext.process(1, _op(3))
    assert [p for p, _ in out] == [2]
    f = _fields(out[0][1])
    assert f["mark"] == 0x44 and f["h16"] == 0x0304  # recirculated with meta.rec preserved
    f = _fields(ext.process(1, _op(4))[0][1])
    assert f["h16"] == hashes.crc16(bytes(range(9))) and f["mark"] == 0x12
    f = _fields(ext.process(1, _op(5, s=5))[0][1])
    assert f["s"] == 0xFB and f["mark"] == 0x12  # int<8>: 5 - 10 = -5
    f = _fields(ext.process(1, _op(6))[0][1])
    assert f["color"] == 0 and f["mark"] == 0x80


def test_externs_truncate_return_and_stack_push(ext: Device) -> None:
    out = ext.process(1, _op(8))
    assert len(out[0][1]) == 20
    assert _fields(ext.process(1, _op(9))[0][1])["mark"] == 9  # return leaves the control
    frame = ext.process(1, _op(12))[0][1]
    assert frame[14:16] == b"\xab\xcd"  # tags[0] pushed and emitted before op
    assert _fields(frame, tags=1)["h16"] == 0x0304
    assert ext.process(1, ETH + b"\x08\x00" + b"x" * 30)[0][0] == 2  # no op header: forwarded unchanged


def _feat(features_json: bytes) -> Device:
    d = Device(ports={1: "a", 2: "b", 3: "c"}, cpu_port=255)
    d.commit_pipeline(d.load_pipeline(features_json))
    return d


def _ipv4(proto: int = 17, length: int = 60, ttl: int = 64, dst: bytes = bytes([10, 0, 0, 9])) -> bytes:
    hdr = bytearray(b"\x45\x03" + length.to_bytes(2, "big") + b"\x00\x01\x00\x00" + bytes([ttl, proto])
                    + b"\x00\x00" + bytes([10, 0, 0, 1]) + dst)
    return bytes(hdr)


def test_features_forward_classify_and_checksum(features_json: bytes) -> None:
    d = _feat(features_json)
    pl = d.pipeline
    pl.table("fwd").insert((Exact(0x020000000002),), ActionCall("Ing.forward", (2,)))
    frame = ETH + b"\x08\x00" + _ipv4(proto=17, length=60, ttl=64) + b"x" * 40
    out = d.process(1, frame)
    assert [p for p, _ in out] == [2]
    ip = out[0][1][14:34]
    assert ip[1] == (46 << 2) | 3 and ip[8] == 63  # const entry rewrite_tos(46), ttl - 1
    words = sum(int.from_bytes(ip[i:i + 2], "big") for i in range(0, 20, 2))
    assert (words & 0xFFFF) + (words >> 16) == 0xFFFF  # checksum updated
    assert pl.table("fwd").entries()[0].packets == 1
    assert pl.register("seen").read(1) == 1


def test_features_vlan_stack_selector_and_digest(features_json: bytes) -> None:
    d = _feat(features_json)
    pl = d.pipeline
    pl.table("fwd").insert((Exact(0x020000000002),), ActionCall("Ing.forward", (2,)))
    pl.profile("ecmp_sel").insert_member(1, ActionCall("Ing.set_nh", (3, 0x0A0B0C0D0E0F)))
    pl.table("ecmp").insert((Lpm(0x0A000000, 8),), MemberRef(1))
    got: list[Digest] = []
    d.on_digest = got.append
    vlan = b"\x81\x00" + b"\x00\x05" + b"\x81\x00" + b"\x00\x06" + b"\x08\x00"
    frame = ETH[:12] + vlan + _ipv4(proto=99) + b"y" * 20
    out = d.process(1, frame)
    assert [p for p, _ in out] == [3]
    assert out[0][1][:6] == bytes.fromhex("0a0b0c0d0e0f") and out[0][1][12:22] == vlan
    assert got and got[0].values == (0x020000000001, 1)


def test_features_packet_out_in_and_resubmit(features_json: bytes) -> None:
    d = _feat(features_json)
    pout = (3 << 7).to_bytes(2, "big") + ETH + b"\x08\x06" + b"z" * 28
    assert d.process(255, pout) == [(3, ETH + b"\x08\x06" + b"z" * 28)]
    d.pipeline.table("fwd").insert((Exact(0x020000000002),), ActionCall("Ing.forward", (255,)))
    out = d.process(2, ETH + b"\x08\x06" + b"z" * 28)
    assert out[0][0] == 255 and int.from_bytes(out[0][1][:2], "big") >> 7 == 2  # packet_in.ingress_port
    # ether_type 0x9999 misses fwd (drop) and is resubmitted once; the copy is dropped again
    assert d.process(1, bytes.fromhex("030000000000") + ETH[6:] + b"\x99\x99" + b"q" * 30) == []
    # both passes ran the ingress, the resubmitted one with ingress_port 0 (metadata reset, as on bmv2)
    assert (d.pipeline.register("seen").read(1), d.pipeline.register("seen").read(0)) == (1, 1)


# ---- nested.p4: controls applied from controls, constructor arguments -------------------------

def test_nested_controls_run_with_inlined_names(tmp_path: Path) -> None:
    from scapy.layers.inet import IP, UDP
    from scapy.layers.l2 import Ether
    d = Device(ports={1: "n1", 2: "n2", 3: "n3"})
    d.commit_pipeline(d.load_pipeline(_compile("nested", tmp_path)))
    pl = d.pipeline
    pl.table("IngressImpl.fwd.routing.routing_v4").insert(
        (Lpm(0x0A000000, 8),), ActionCall("IngressImpl.fwd.routing.set_nexthop", (7,)))
    pl.table("IngressImpl.fwd.nexthop").insert((Exact(7),), ActionCall("IngressImpl.fwd.to_port", (3, 0xAABBCCDDEEFF)))
    pl.table("IngressImpl.cls_a.classify").insert((Exact(46),), ActionCall("IngressImpl.cls_a.set_class", (1,)))
    pl.table("IngressImpl.cls_b.classify").insert((Exact(46),), ActionCall("IngressImpl.cls_b.set_class", (2,)))

    def send(dst: str, dscp: int) -> list[tuple[int, bytes]]:
        return d.process(1, bytes(Ether(dst="00:00:00:00:00:02") / IP(dst=dst, tos=dscp, ttl=9) / UDP()))
    (port, frame), = send("10.1.2.3", 46)
    eth = Ether(frame)
    # the same Classifier type twice: constructor bases 10 and 100 -> class bytes 11 and 102
    assert (port, eth.dst, eth.src, eth[IP].ttl) == (3, "aa:bb:cc:dd:ee:ff", "00:00:00:00:0b:66", 8)
    (port, frame), = send("10.1.2.3", 0)
    assert Ether(frame).src == "00:00:00:00:00:00"        # cls_a missed: cls_b not applied
    # not routed: nexthop (and its default drop) is skipped, egress_spec stays 0, TTL untouched
    (port, frame), = send("11.0.0.1", 46)
    assert (port, Ether(frame)[IP].ttl) == (0, 9)


# ---- parsing.p4: sub-parser, varbit IPv4 options, header union, value set ---------------------

def test_parsing_features_run(tmp_path: Path) -> None:
    from scapy.layers.inet import IP, TCP, UDP, IPOption_NOP
    from scapy.layers.l2 import Ether
    d = Device(ports={1: "q1", 2: "q2"})
    d.commit_pipeline(d.load_pipeline(_compile("parsing", tmp_path)))

    def run(pkt) -> bytes:  # noqa: ANN001
        (port, frame), = d.process(1, bytes(pkt))
        assert port == 2
        return frame
    opts = [IPOption_NOP()] * 8  # 8 bytes of options: ihl 7, extracted as varbit and emitted again
    tcp = Ether() / IP(options=opts, proto=6) / TCP(sport=1, dport=2) / b"pay"
    out = Ether(run(tcp))
    assert out.src == "00:00:00:00:04:06" and out[IP].ihl == 7 and bytes(out[IP].payload) == bytes(tcp[IP].payload)
    # a UDP port in the value set parses the tunnel header (vni + 1); the set starts empty
    udp = Ether() / IP(proto=17) / UDP(sport=1, dport=4789, chksum=0) / bytes([0, 0, 0, 5]) / b"x"
    assert run(udp)[-5:] == bytes([0, 0, 0, 5]) + b"x"
    d.pipeline.value_set("tunnel_ports").set_members([4789])
    assert run(udp)[-5:] == bytes([0, 0, 0, 6]) + b"x"
    assert Ether(run(udp)).src == "00:00:00:00:04:11"
    # UDP from port 7 becomes TCP: only the valid union member is emitted (20 bytes replace 8)
    u7 = Ether() / IP(proto=17) / UDP(sport=7, dport=9) / (b"z" * 30)
    frame = run(u7)
    assert len(frame) == len(bytes(u7)) + 12 and frame[34:38] == bytes([0, 7, 0, 8])


def test_parsing_random_and_truncated_frames_do_not_crash(tmp_path: Path) -> None:
    import random

    from scapy.layers.inet import IP, UDP, IPOption_NOP
    from scapy.layers.l2 import Ether
    d = Device(ports={1: "q1", 2: "q2"})
    d.commit_pipeline(d.load_pipeline(_compile("parsing", tmp_path)))
    d.pipeline.value_set("tunnel_ports").set_members([4789])
    rng = random.Random(7)
    good = bytes(Ether() / IP(options=[IPOption_NOP()] * 4, proto=17) / UDP(dport=4789) / bytes(8))
    for i in range(3000):
        if i % 3 == 0:
            frame = good[:rng.randrange(len(good) + 1)]          # truncated anywhere, options included
        elif i % 3 == 1:
            frame = bytearray(good)
            frame[14] = 0x40 | rng.randrange(16)                  # any IHL, also < 5 and beyond the frame
            frame = bytes(frame)
        else:
            frame = bytes(rng.randrange(256) for _ in range(rng.randrange(80)))
        for port, out in d.process(1, frame):
            assert port == 2 and isinstance(out, bytes)
    assert d.process(1, good)[0][1][-8:] == bytes([0, 0, 0, 1]) + bytes(4)  # still forwarding: vni + 1
