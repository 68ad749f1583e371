"""Corpus programs compiled by p4sim-compile and run on the p4sim switch's in-process data plane."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.l2 import Dot1Q, Ether

from p4sim.compiler.compile import compile_file
from p4sim.switch.device import Device, Digest
from p4sim.switch.values import ActionCall, Exact, GroupRef, Lpm

CORPUS = Path(__file__).resolve().parent / "corpus"
H1, H2 = "00:00:00:00:00:01", "00:00:00:00:00:02"


def load(name: str, cpu: int | None = None, defines: list[str] | None = None) -> Device:
    res = compile_file(CORPUS / name, defines=defines)
    dev = Device(ports={p: f"c{p}" for p in (1, 2, 3, 4)}, cpu_port=cpu)
    dev.commit_pipeline(dev.load_pipeline(json.dumps(res.json)))
    return dev


def udp(dst: str = "10.0.1.5", ttl: int = 64, length: int = 50, src_mac: str = H1) -> bytes:
    return bytes(Ether(src=src_mac, dst=H2) / IP(src="10.0.0.1", dst=dst, ttl=ttl, len=length) / UDP()
                 / (b"x" * 22))


def csum_ok(frame: bytes) -> bool:
    ip = Ether(frame)[IP]
    ref = IP(bytes(ip))
    del ref.chksum
    return IP(bytes(ref)).chksum == ip.chksum


# ---- l3_basic.p4 ---------------------------------------------------------------------------

def test_l3_basic_routes_decrements_ttl_and_counts() -> None:
    d = load("l3_basic.p4")
    d.pipeline.table("ipv4_lpm").insert((Lpm(0x0A000100, 24),),
                                        ActionCall("MyIngress.ipv4_forward", (0xAABBCCDDEEFF, 3)))
    out = d.process(1, udp())
    assert [p for p, _ in out] == [3]
    eth = Ether(out[0][1])
    assert (eth.dst, eth.src, eth[IP].ttl) == ("aa:bb:cc:dd:ee:ff", H2, 63)
    assert csum_ok(out[0][1])
    assert d.process(1, udp(dst="11.0.0.1")) == []      # default action drop
    assert d.process(1, udp(ttl=1)) == []                # ttl > 1 check, else drop()
    assert d.pipeline.counter("port_rx").read(1)[0] == 3


def test_l3_basic_acl_denies_by_ternary_source() -> None:
    from p4sim.switch.values import Ternary
    d = load("l3_basic.p4")
    d.pipeline.table("ipv4_lpm").insert((Lpm(0, 0),), ActionCall("MyIngress.ipv4_forward", (1, 2)))
    d.pipeline.table("acl").insert((Ternary(0x0A000000, 0xFF000000), Exact(4)), ActionCall("MyIngress.acl_deny", ()),
                                   priority=10)
    assert [p for p, _ in d.process(1, udp())] == [2]
    assert d.process(4, udp()) == []                     # acl hit sets meta.acl_hit: no route


# ---- features.p4 ---------------------------------------------------------------------------

@pytest.fixture
def feat() -> Device:
    d = load("features.p4", cpu=255)
    d.pipeline.table("fwd").insert((Exact(0x000000000002),), ActionCall("Ing.forward", (2,)))
    return d


def test_features_const_entries_slices_and_predication(feat: Device) -> None:
    out = feat.process(1, udp(length=50))
    assert [p for p, _ in out] == [2]
    ip = Ether(out[0][1])[IP]
    # const entry (17, 0..100, false) -> rewrite_tos(46): tos = 46 ++ tos[1:0]; ttl 64 > 10 -> 63
    assert (ip.tos, ip.ttl) == (46 << 2, 63) and csum_ok(out[0][1])
    # routed && c == GREEN flips the low source MAC bit
    assert Ether(out[0][1]).src == "00:00:00:00:00:00"
    out = feat.process(1, udp(length=200, ttl=5))        # len outside the range: no entry matches
    assert (Ether(out[0][1])[IP].tos, Ether(out[0][1])[IP].ttl) == (0, 5)


def test_features_vlan_stack_and_valid_key(feat: Device) -> None:
    frame = bytes(Ether(src=H1, dst=H2) / Dot1Q(vlan=5) / Dot1Q(vlan=6) / IP(dst="10.0.1.5", proto=6) / TCP())
    out = feat.process(1, frame)
    eth = Ether(out[0][1])
    assert [p for p, _ in out] == [2] and eth[Dot1Q].vlan == 5 and eth[Dot1Q].payload.vlan == 6
    assert eth[IP].tos == 0                               # entry (6, _, false) needs no vlan


def test_features_register_default_action_and_digest(feat: Device) -> None:
    got: list[Digest] = []
    feat.on_digest = got.append
    feat.process(3, udp())
    feat.process(3, udp())
    assert feat.pipeline.register("seen").read(3) == 2
    assert len(got) == 2 and got[0].values == (0x000000000001, 3)
    frame = bytes(Ether(src=H1, dst="00:00:00:00:00:09") / IP(dst="10.0.1.5") / UDP())
    assert feat.process(1, frame) == []                   # @defaultonly drop
    assert feat.pipeline.table("fwd").entries()[0].packets == 2   # direct counter


def test_features_ecmp_selector_and_packet_io(feat: Device) -> None:
    prof = feat.pipeline.profile("ecmp_sel")
    prof.insert_member(1, ActionCall("Ing.set_nh", (3, 0x0A0000000003)))
    prof.insert_member(2, ActionCall("Ing.set_nh", (4, 0x0A0000000004)))
    prof.insert_group(7, [(1, 1, 3), (2, 1, 4)])
    feat.pipeline.table("ecmp").insert((Lpm(0x0A000100, 24),), GroupRef(7))
    # ICMP matches no classify entry, so the miss applies ecmp; sources spread over both members
    ports = {feat.process(1, bytes(Ether(src=H1, dst=H2) / IP(src=f"10.0.0.{i}", dst="10.0.1.5", proto=1)
                                   / (b"i" * 30)))[0][0] for i in range(1, 40)}
    assert ports == {3, 4}
    # packet-out from the CPU port: egress_port taken from the header, header removed
    po = bytes.fromhex("0200") + udp()                   # egress_port 4 in the top 9 bits
    out = feat.process(255, po)
    assert [p for p, _ in out] == [4] and out[0][1] == udp()


def test_features_resubmit_preserves_field_list(feat: Device) -> None:
    frame = bytes(Ether(src=H1, dst="00:00:00:00:00:09", type=0x9999) / (b"z" * 40))
    assert feat.process(1, frame) == []                   # dropped after exactly one resubmit
    # both passes ran the ingress; the resubmitted one with ingress_port 0 (bmv2 resets the metadata)
    assert (feat.pipeline.register("seen").read(1), feat.pipeline.register("seen").read(0)) == (1, 1)


def test_defines_reach_the_program() -> None:
    res = compile_file(CORPUS / "features.p4", defines=["TABLE_SIZE=16"])
    fwd = next(t for t in res.p4info.tables if t.preamble.name == "Ing.fwd")
    assert fwd.size == 16


# ---- the project's fabric.p4 ----------------------------------------------------------------

def test_fabric_delivers_to_host_with_egress_smac() -> None:
    root = CORPUS.parents[2]
    res = compile_file(root / "p4src" / "fabric.p4", [str(root / "p4src")])
    d = Device(ports={1: "f1", 2: "f2"}, cpu_port=255)
    d.commit_pipeline(d.load_pipeline(json.dumps(res.json)))
    d.pipeline.table("FabricIngress.routing.route").insert((Lpm(0x0A000100, 24),),
                                                   ActionCall("FabricIngress.routing.to_host", (2, 0xAA)))
    d.pipeline.table("FabricEgress.egress_rewrite.port_mac").insert((Exact(2),), ActionCall("FabricEgress.egress_rewrite.set_smac", (0x0200000000BB,)))
    out = d.process(1, udp())
    assert [p for p, _ in out] == [2]
    eth = Ether(out[0][1])
    assert (eth.src, eth.dst, eth[IP].ttl) == ("02:00:00:00:00:bb", "00:00:00:00:00:aa", 63) and csum_ok(out[0][1])


# ---- externs.p4 ----------------------------------------------------------------------------

OP_ETHERTYPE = 0x88B5


def op_frame(op: int, s: int = 0, data: bytes = b"\0" * 9, mark: int = 0) -> bytes:
    body = bytes([op, mark]) + b"\0\0" + bytes([s & 0xFF, 0]) + data
    return bytes(Ether(src=H1, dst=H2, type=OP_ETHERTYPE)) + body + b"payload-bytes-0123456789"


def op_fields(frame: bytes, offset: int = 14) -> dict[str, int]:
    b = frame[offset:]
    return {"op": b[0], "mark": b[1], "h16": int.from_bytes(b[2:4], "big"), "s": b[4], "color": b[5]}


@pytest.fixture
def ext() -> Device:
    from p4sim.switch.pre import CloneSession
    d = load("externs.p4")
    d.pre.insert_session(5, CloneSession(((3, 0),)))
    return d


def test_externs_clone_and_preserved_field_list(ext: Device) -> None:
    out = sorted(ext.process(1, op_frame(1)))
    assert [p for p, _ in out] == [2, 3]
    assert op_fields(out[0][1])["mark"] == 0x80 and op_fields(out[1][1])["mark"] == 0xC1
    out = sorted(ext.process(1, op_frame(2)))
    assert op_fields(out[1][1])["h16"] == 0x77          # meta.tag preserved into the clone


def test_externs_recirculate_keeps_field_list(ext: Device) -> None:
    out = ext.process(1, op_frame(3))
    assert [p for p, _ in out] == [2] and op_fields(out[0][1])["mark"] == 0x44


def test_externs_hash_signed_meter_truncate(ext: Device) -> None:
    out = ext.process(1, op_frame(4, data=b"123456789"))
    assert op_fields(out[0][1])["h16"] == 0xBB3D        # CRC-16/ARC check value, as bmv2's crc16
    assert op_fields(out[0][1])["mark"] == 0x12
    out = ext.process(1, op_frame(5, s=5))
    assert op_fields(out[0][1])["s"] == (5 - 10) & 0xFF and op_fields(out[0][1])["mark"] == 0x12
    out = ext.process(1, op_frame(6))
    assert op_fields(out[0][1])["color"] == 0          # unconfigured meter: green
    out = ext.process(1, op_frame(8))
    assert len(out[0][1]) == 20


def test_externs_return_switch_default_stack_and_struct_copy(ext: Device) -> None:
    assert op_fields(ext.process(1, op_frame(9))[0][1])["mark"] == 9        # return skips the rest
    assert op_fields(ext.process(1, op_frame(6))[0][1])["mark"] == 0x80     # do_meter: default case
    assert op_fields(ext.process(1, op_frame(7))[0][1])["h16"] == 0x0304    # miss runs nop: nop case
    f = ext.process(1, op_frame(10))[0][1]
    assert op_fields(f)["h16"] == 0x0304 and op_fields(f)["mark"] == 0      # struct copies, concat
    f = ext.process(1, op_frame(12))[0][1]
    assert f[14:16] == b"\xab\xcd" and op_fields(f, 16)["op"] == 12         # pushed tag emitted
    plain = bytes(Ether(src=H1, dst=H2) / IP() / UDP())
    assert ext.process(1, plain) == [(2, plain)]


# ---- parser_errors.p4 ----------------------------------------------------------------------

@pytest.mark.parametrize(("ether_type", "body", "code"), [
    (0x0800, b"\0" * 30, 0),              # accept: NoError
    (0x1234, b"\0" * 30, 0),              # transition reject: accept, as p4c's bmv2 back end
    (0x88B5, b"\xff\0\0\0" + b"\0" * 26, 2),  # verify(false, error.BadOp)
    (0x88B5, b"\x01\x02", 3),             # op header cut short: PacketTooShort
])
def test_parser_errors_reach_ingress(ether_type: int, body: bytes, code: int) -> None:
    d = load("parser_errors.p4")
    out = d.process(1, bytes(Ether(src=H1, dst=H2, type=ether_type)) + body)
    assert [p for p, _ in out] == [2]
    assert Ether(out[0][1]).src == f"00:00:00:00:00:{code:02x}"


# ---- special_ops.p4 ------------------------------------------------------------------------

def test_special_ops_macros_bound_actions_and_reapplied_controls() -> None:
    from p4sim.switch.pre import CloneSession
    d = load("special_ops.p4")
    d.pre.insert_session(5, CloneSession(((1, 0),)))
    t = d.pipeline.table("ipv4_da")
    t.insert((Lpm(0x0A000100, 24),), ActionCall("Ing.set_port", (2,)))
    t.insert((Lpm(0x0A000200, 24),), ActionCall("Ing.do_resubmit", (0x0A000299,)))
    t.insert((Lpm(0x0A000300, 24),), ActionCall("Ing.do_clone", (2,)))
    assert [p for p, _ in d.process(1, udp(dst="10.0.1.1"))] == [2]
    assert d.process(1, udp(dst="10.9.9.9")) == []                      # default my_drop(sm)
    out = d.process(1, udp(dst="10.0.2.1"))                             # resubmitted once: port 3
    assert [p for p, _ in out] == [3]
    # resubmit re-parses the packet as received: the new dst is dropped, the source is refilled
    assert (Ether(out[0][1])[IP].src, Ether(out[0][1])[IP].dst) == ("10.252.129.2", "10.0.2.1")
    assert sorted(p for p, _ in d.process(1, udp(dst="10.0.3.1"))) == [1, 2]   # clone3 to session 5
    frame = bytes(Ether(src=H1, dst=H2) / IP(src="10.0.0.1", dst="10.0.1.1", proto=0xFE) / (b"r" * 20))
    out = d.process(1, frame)                                           # recirculated: port 4
    assert [p for p, _ in out] == [4] and Ether(out[0][1])[IP].src == "10.199.86.99"
    assert Ether(out[0][1])[IP].proto == 0xFD
    assert d.process(1, bytes(Ether(type=0x9000) / (b"x" * 30))) == []   # direct call my_drop(sm)
