"""What the compiler parity test sends through every program, and what must come out.

One `Scenario` per program: the P4Runtime state to write (the `control` entity classes, names
resolved by suffix) and probes (a frame into a port, the frames expected out of which ports). The
expectations are explicit edits of the sent frame, as the program's source says; bytes a program
leaves unspecified (fields of a header made valid and never written) are masked.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scapy.layers.inet import ICMP, IP, TCP, UDP, IPOption_NOP
from scapy.layers.l2 import ARP, Dot1Q, Ether
from scapy.packet import Packet

from p4rt.entities import ActionProfileGroup, ActionProfileMember, GroupMember, TableEntry
from p4rt.resources import CloneSession, Replica

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "p4sim" / "tests" / "corpus"
H1, H2 = "00:00:00:00:00:01", "00:00:00:00:00:02"
PAYLOAD = b"parity-probe-0123456789"


@dataclass(slots=True, frozen=True)
class Expect:
    """A frame expected out of `port`; byte ranges [start, end) in `ignore` may hold anything."""

    port: int
    frame: bytes
    ignore: tuple[tuple[int, int], ...] = ()

    def matches(self, port: int, frame: bytes) -> bool:
        """True if (port, frame) is this frame, outside the ignored ranges."""
        if port != self.port or len(frame) != len(self.frame):
            return False
        got, want = bytearray(frame), bytearray(self.frame)
        for start, end in self.ignore:
            got[start:end] = want[start:end]
        return got == want


@dataclass(slots=True, frozen=True)
class Probe:
    """One frame sent into `port` and everything that must come out (nothing: a drop). `known`: switch
    label or pairing (`p4c+bmv2`) -> a known bug of that switch or compiler that makes this probe fail
    there (checked: it must still fail)."""

    name: str
    port: int
    frame: bytes
    expect: tuple[Expect, ...] = ()
    known: tuple[tuple[str, str], ...] = ()


@dataclass(slots=True)
class Scenario:
    """A program, the state the controller writes, and its probes."""

    name: str
    source: Path
    include: Path | None = None  # -I
    entities: list[Any] = field(default_factory=list)  # inserted in order
    probes: list[Probe] = field(default_factory=list)
    # p4c refuses it with an error matching this (the p4sim JSON still runs on both switches)
    p4c_refuses: str | None = None


# ---- frames and edits --------------------------------------------------------------------------

def udp(dst: str = "10.0.1.5", src: str = "10.0.0.1", ttl: int = 64, smac: str = H1, dmac: str = H2,
        **ip: Any) -> bytes:
    """An Ethernet/IPv4/UDP frame with a correct IPv4 checksum."""
    return bytes(Ether(src=smac, dst=dmac) / IP(src=src, dst=dst, ttl=ttl, **ip) / UDP(sport=1000, dport=9)
                 / PAYLOAD)


def edit(frame: bytes, change: Callable[[Packet], None], checksum: bool = False) -> bytes:
    """frame with the fields `change` sets on its scapy dissection; the IPv4 checksum recomputed if asked."""
    pkt = Ether(frame)
    change(pkt)
    if checksum:
        del pkt[IP].chksum
    return bytes(pkt)


def routed(frame: bytes, dmac: str, smac: str | None = None, checksum: bool = True) -> bytes:
    """An IPv4 frame after a router: new MACs, TTL - 1, checksum updated."""
    def change(p: Packet) -> None:
        p.dst = dmac
        if smac is not None:
            p.src = smac
        p[IP].ttl -= 1
    return edit(frame, change, checksum)


def macs(frame: bytes, src: str | None = None, dst: str | None = None, checksum: bool = False) -> bytes:
    """frame with new Ethernet addresses (and, if asked, the IPv4 checksum recomputed)."""
    def change(p: Packet) -> None:
        if src is not None:
            p.src = src
        if dst is not None:
            p.dst = dst
    return edit(frame, change, checksum)


def ip_set(frame: bytes, **fields: Any) -> bytes:
    """frame with IPv4 fields set, the checksum left as it was (programs without update_checksum)."""
    def change(p: Packet) -> None:
        for k, v in fields.items():
            setattr(p[IP], k, v)
    return edit(frame, change)


def arp() -> bytes:
    """A broadcast ARP request (not IPv4)."""
    return bytes(Ether(src=H1, dst="ff:ff:ff:ff:ff:ff") / ARP(psrc="10.0.0.1", pdst="10.0.0.2"))


# ---- the project's programs --------------------------------------------------------------------

def fabric() -> Scenario:
    """Delivery to a host, a static path (tag pushed), fast failover to the other version (resubmit
    with a field list), ACL drop, route miss, non-IPv4."""
    smac2, smac3 = "02:00:00:00:00:b2", "02:00:00:00:00:b3"
    ents: list[Any] = [
        # liveness: member 1 port_down (the sentinel, first), member 2 port_up; group 3 = port 3 up
        # (the selector picks member 1 % 2 = the second), group 4 = port 4 down
        ActionProfileMember("liveness_selector", 1, "port_down"),
        ActionProfileMember("liveness_selector", 2, "port_up"),
        ActionProfileGroup("liveness_selector", 3, [GroupMember(1), GroupMember(2)]),
        ActionProfileGroup("liveness_selector", 4, [GroupMember(1)]),
        TableEntry("port_liveness", {"port": 3}, group_id=3),
        TableEntry("port_liveness", {"port": 4}, group_id=4),
        TableEntry("route", {"ipv4_dst": "10.0.1.0/24"}, "to_host", {"port": 2, "dmac": "00:00:00:00:00:aa"}),
        TableEntry("route", {"ipv4_dst": "10.0.3.0/24"}, "set_path", {"path_id": 7}),
        TableEntry("route", {"ipv4_dst": "10.0.4.0/24"}, "set_path", {"path_id": 8}),
        TableEntry("path", {"path_id": 7, "version": 0}, "path_static", {"port": 3, "dmac": "00:00:00:00:00:c7"}),
        TableEntry("path", {"path_id": 8, "version": 0}, "path_static", {"port": 4, "dmac": "00:00:00:00:00:d8"}),
        TableEntry("path", {"path_id": 8, "version": 1}, "path_static", {"port": 3, "dmac": "00:00:00:00:00:c8"}),
        TableEntry("acl", {"ipv4_src": {"value": "10.9.0.0", "mask": "255.255.0.0"}}, "acl_drop", priority=10),
        TableEntry("port_mac", {"egress_port": 2}, "set_smac", {"smac": smac2}),
        TableEntry("port_mac", {"egress_port": 3}, "set_smac", {"smac": smac3}),
    ]

    def tagged(frame: bytes, dmac: str, version: int) -> bytes:
        p = Ether(routed(frame, dmac, smac3))
        tag = bytes([version << 7, 1]) + (0x0800).to_bytes(2, "big")  # version, reserved, hops 1, ether type
        return bytes(Ether(dst=p.dst, src=p.src, type=0x88B5)) + tag + bytes(p[IP])

    to_host, static, failover = udp("10.0.1.5"), udp("10.0.3.5"), udp("10.0.4.5")
    return Scenario("fabric", ROOT / "p4src" / "fabric.p4", ROOT / "p4src", ents, [
        Probe("to_host", 1, to_host, (Expect(2, routed(to_host, "00:00:00:00:00:aa", smac2)),)),
        Probe("static_path_tag", 1, static, (Expect(3, tagged(static, "00:00:00:00:00:c7", 0)),)),
        Probe("failover_resubmit", 1, failover, (Expect(3, tagged(failover, "00:00:00:00:00:c8", 1)),)),
        Probe("acl_drop", 1, udp("10.0.1.5", src="10.9.0.7")),
        Probe("route_miss", 1, udp("192.168.0.1")),
        Probe("ttl_expired", 1, udp("10.0.1.5", ttl=1)),
        Probe("not_ipv4", 2, arp()),
    ])


def ocs() -> Scenario:
    """A circuit 1 <-> 2 carries any frame unchanged; port 3 is dark."""
    ents = [TableEntry("circuit", {"ingress_port": 1}, "cross_connect", {"port": 2}),
            TableEntry("circuit", {"ingress_port": 2}, "cross_connect", {"port": 1})]
    frame, back = udp(), arp()
    return Scenario("ocs", ROOT / "p4src" / "ocs.p4", ROOT / "p4src", ents, [
        Probe("lit_1_to_2", 1, frame, (Expect(2, frame),)),
        Probe("lit_2_to_1", 2, back, (Expect(1, back),)),
        Probe("dark", 3, frame),
    ])


# ---- the compiler corpus -----------------------------------------------------------------------

def l3_basic() -> Scenario:
    """LPM forwarding with TTL and checksum, default drop, TTL check, ternary+exact ACL."""
    ents = [TableEntry("ipv4_lpm", {"hdr.ipv4.dstAddr": "10.0.1.0/24"}, "ipv4_forward",
                       {"dstAddr": "aa:bb:cc:dd:ee:ff", "port": 3}),
            TableEntry("acl", {"ipv4_src": {"value": "10.0.0.0", "mask": "255.0.0.0"},
                               "standard_metadata.ingress_port": 4}, "acl_deny", priority=10)]
    f = udp()
    return Scenario("l3_basic", CORPUS / "l3_basic.p4", None, ents, [
        Probe("forward", 1, f, (Expect(3, routed(f, "aa:bb:cc:dd:ee:ff", H2)),)),
        Probe("no_route", 1, udp("11.0.0.1")),
        Probe("ttl_one", 1, udp(ttl=1)),
        Probe("acl_deny", 4, f),
        Probe("not_ipv4", 2, arp()),
    ])


def _op(op: int, s: int = 0, data: bytes = b"\0" * 9, mark: int = 0) -> bytes:
    return bytes(Ether(src=H1, dst=H2, type=0x88B5)) + bytes([op, mark]) + b"\0\0" + bytes([s & 0xFF, 0]) + data \
        + PAYLOAD


def _op_set(frame: bytes, mark: int | None = None, h16: int | None = None, s: int | None = None) -> bytes:
    b = bytearray(frame)
    if mark is not None:
        b[15] = mark
    if h16 is not None:
        b[16:18] = h16.to_bytes(2, "big")
    if s is not None:
        b[18] = s & 0xFF
    return bytes(b)


def externs() -> Scenario:
    """Clone (with and without a preserved field list), recirculate, hash, signed arithmetic,
    meter, truncate, return, switch cases, header stack push."""
    ents = [CloneSession(5, [Replica(3)])]
    o1, o2, o3 = _op(1), _op(2), _op(3)
    o4, o5, o6, o8, o9, o12 = _op(4, data=b"123456789"), _op(5, s=5), _op(6), _op(8), _op(9), _op(12)
    plain = udp()
    return Scenario("externs", CORPUS / "externs.p4", None, [*ents], [
        Probe("clone", 1, o1, (Expect(2, _op_set(o1, mark=0x80)), Expect(3, _op_set(o1, mark=0xC1, h16=0)))),
        Probe("clone_field_list", 1, o2, (Expect(2, _op_set(o2, mark=0x80)), Expect(3, _op_set(o2, mark=0xC1, h16=0x77)))),
        Probe("recirculate", 1, o3, (Expect(2, _op_set(o3, mark=0x44, h16=0x0304)),)),
        Probe("hash_crc16", 1, o4, (Expect(2, _op_set(o4, mark=0x12, h16=0xBB3D)),)),  # CRC-16/ARC of "123456789"
        Probe("signed", 1, o5, (Expect(2, _op_set(o5, mark=0x12, s=-5)),)),
        Probe("meter_green", 1, o6, (Expect(2, _op_set(o6, mark=0x80)),)),
        Probe("truncate", 1, o8, (Expect(2, _op_set(o8, mark=0x80)[:20]),)),
        Probe("return", 1, o9, (Expect(2, _op_set(o9, mark=9)),)),
        Probe("push_front", 1, o12, (Expect(2, o12[:14] + b"\xab\xcd" + _op_set(o12, h16=0x0304)[14:]),)),
        Probe("no_op_header", 1, plain, (Expect(2, plain),)),
    ])


def features() -> Scenario:
    """Const entries with ranges and predication, a selector group, a header stack, a lookahead
    reject, @defaultonly drop, resubmit with a field list."""
    ents = [TableEntry("fwd", {"dmac": H2}, "forward", {"port": 2}),
            ActionProfileMember("ecmp_sel", 1, "set_nh", {"port": 3, "dmac": "0a:00:00:00:00:03"}),
            ActionProfileGroup("ecmp_sel", 7, [GroupMember(1)]),
            TableEntry("ecmp", {"hdr.ipv4.dst": "10.0.1.0/24"}, group_id=7)]
    flip = "00:00:00:00:00:00"  # routed && c == GREEN flips the low bit of the source MAC

    def tos46(p: Packet) -> None:
        p.src = flip
        p[IP].tos = 46 << 2
        p[IP].ttl -= 1

    short = udp()  # total length 51: in the const entry's range 0 .. 100
    icmp = bytes(Ether(src=H1, dst=H2) / IP(src="10.0.0.1", dst="10.0.1.5", proto=1) / ICMP() / PAYLOAD)
    vlan = bytes(Ether(src=H1, dst=H2) / Dot1Q(vlan=5) / Dot1Q(vlan=6) / IP(dst="10.0.1.5") / TCP() / PAYLOAD)
    v6 = bytes(Ether(src=H1, dst=H2, type=0x0800)) + b"\x60" + bytes(39)
    return Scenario("features", CORPUS / "features.p4", None, ents, [
        Probe("const_entry_range", 1, short, (Expect(2, edit(short, tos46, checksum=True)),)),
        Probe("selector_member", 1, icmp, (Expect(3, macs(icmp, flip, "0a:00:00:00:00:03", checksum=True)),)),
        Probe("vlan_stack", 1, vlan, (Expect(3, macs(vlan, flip, "0a:00:00:00:00:03", checksum=True)),)),
        Probe("lookahead_not_v4", 1, v6, (Expect(2, macs(v6, flip)),)),
        Probe("defaultonly_drop", 1, udp(dmac="00:00:00:00:00:09")),
        Probe("resubmit_once", 1, bytes(Ether(src=H1, dst="00:00:00:00:00:09", type=0x9999)) + PAYLOAD),
    ])


def nested() -> Scenario:
    """Controls applied from controls, one type instantiated twice with constructor arguments."""
    ents = [TableEntry("fwd.routing.routing_v4", {"ipv4_dst": "10.0.0.0/8"}, "fwd.routing.set_nexthop", {"nh": 7}),
            TableEntry("fwd.nexthop", {"nexthop_id": 7}, "fwd.to_port", {"port": 3, "dmac": "aa:bb:cc:dd:ee:ff"}),
            TableEntry("cls_a.classify", {"dscp": 46}, "cls_a.set_class", {"c": 1}),
            TableEntry("cls_b.classify", {"dscp": 46}, "cls_b.set_class", {"c": 2})]
    marked, plain = udp("10.1.2.3", ttl=9, tos=46), udp("10.1.2.3", ttl=9)
    return Scenario("nested", CORPUS / "nested.p4", None, ents, [
        # classes 10 + 1 and 100 + 2 in the source MAC; no checksum update in this program
        Probe("both_classes", 1, marked,
              (Expect(3, routed(marked, "aa:bb:cc:dd:ee:ff", "00:00:00:00:0b:66", checksum=False)),)),
        Probe("no_class", 1, plain,
              (Expect(3, routed(plain, "aa:bb:cc:dd:ee:ff", "00:00:00:00:00:00", checksum=False)),)),
        Probe("not_routed_port_0", 1, udp("11.0.0.1", tos=46)),
    ])


def parsing() -> Scenario:
    """A sub-parser, IPv4 options as varbit, a header union rewritten, an empty value set."""
    tcp = bytes(Ether(src=H1, dst=H2) / IP(options=[IPOption_NOP()] * 8, proto=6) / TCP(sport=1, dport=2) / PAYLOAD)
    tunnel = bytes(Ether(src=H1, dst=H2) / IP(proto=17) / UDP(sport=1, dport=4789, chksum=0) / bytes([0, 0, 0, 5]))
    u7 = bytes(Ether(src=H1, dst=H2) / IP(proto=17) / UDP(sport=7, dport=9) / (b"z" * 30))
    # UDP from port 7 leaves as a TCP header (20 bytes for 8): sport 7, dport 8, the rest unwritten
    as_tcp = u7[:6] + bytes.fromhex("000000000411") + u7[12:34] + bytes([0, 7, 0, 8]) + bytes(16) + u7[42:]
    return Scenario("parsing", CORPUS / "parsing.p4", None, [], [
        Probe("tcp_options", 1, tcp, (Expect(2, macs(tcp, "00:00:00:00:04:06")),)),
        Probe("value_set_empty", 1, tunnel, (Expect(2, macs(tunnel, "00:00:00:00:04:11")),)),
        Probe("union_udp_to_tcp", 1, u7, (Expect(2, as_tcp, ignore=((38, 54),)),)),
    ])


def parser_errors() -> Scenario:
    """Parser errors as ingress sees them: none, transition reject, verify, a short header."""
    def frame(ether_type: int, body: bytes) -> bytes:
        return bytes(Ether(src=H1, dst=H2, type=ether_type)) + body

    def code(f: bytes, c: int) -> tuple[Expect]:
        return (Expect(2, f[:6] + bytes(5) + bytes([c]) + f[12:]),)
    ok, rej = frame(0x0800, bytes(30)), frame(0x1234, bytes(30))
    bad, short = frame(0x88B5, b"\xff\0\0\0" + bytes(26)), frame(0x88B5, b"\x01\x02")
    return Scenario("parser_errors", CORPUS / "parser_errors.p4", None, [], [
        Probe("no_error", 1, ok, code(ok, 0)),
        Probe("transition_reject", 1, rej, code(rej, 0)),  # p4c's bmv2 back end: reject is accept
        Probe("verify_bad_op", 1, bad, code(bad, 2)),
        Probe("packet_too_short", 1, short, code(short, 3)),
    ])


def special_ops() -> Scenario:
    """Deprecated resubmit(data)/clone3/recirculate(data), a bound directional action parameter,
    a control applied twice with constant arguments."""
    ents = [CloneSession(5, [Replica(1)]),
            TableEntry("ipv4_da", {"hdr.ipv4.dst": "10.0.1.0/24"}, "set_port", {"port": 2}),
            TableEntry("ipv4_da", {"hdr.ipv4.dst": "10.0.2.0/24"}, "do_resubmit", {"new_dst": "10.0.2.153"}),
            TableEntry("ipv4_da", {"hdr.ipv4.dst": "10.0.3.0/24"}, "do_clone", {"port": 2})]
    one, two, three = udp("10.0.1.1"), udp("10.0.2.1"), udp("10.0.3.1")
    recirc = udp("10.0.1.1", proto=0xFE)
    return Scenario("special_ops", CORPUS / "special_ops.p4", None, ents, [
        Probe("set_port", 1, one, (Expect(2, one),)),
        Probe("default_bound_drop", 1, udp("10.9.9.9")),
        # the resubmitted copy is the packet as received, its source written by fill (no checksum update)
        Probe("resubmit", 1, two, (Expect(3, ip_set(two, src="10.252.129.2")),)),
        Probe("clone3", 1, three, (Expect(1, three), Expect(2, three))),
        Probe("recirculate", 1, recirc, (Expect(4, ip_set(recirc, src="10.199.86.99", proto=0xFD)),)),
        Probe("not_ipv4", 1, arp()),
    ], p4c_refuses="(resubmit|clone3|recirculate): unknown extern function")  # p4c 1.2.5 dropped resubmit(data), clone3, recirculate(data)


def rt_basic() -> Scenario:
    """The P4Runtime test program: LPM to a next hop or a path, a one-member ECMP group, an ACL
    with ternary, optional and range fields."""
    ents = [TableEntry("route", {"ipv4_dst": "10.0.1.0/24"}, "set_nhop", {"port": 2, "dmac": "00:00:00:00:0a:02"}),
            TableEntry("route", {"ipv4_dst": "10.0.2.0/24"}, "set_path", {"path_id": 5}),
            ActionProfileMember("ecmp_selector", 1, "set_nhop", {"port": 3, "dmac": "00:00:00:00:0a:03"}),
            ActionProfileGroup("ecmp_selector", 9, [GroupMember(1)]),
            TableEntry("ecmp", {"path_id": 5}, group_id=9),
            TableEntry("acl", {"ipv4_src": {"value": "10.0.0.99", "mask": "255.255.255.255"}, "ingress_port": 1,
                               "proto": {"low": 17, "high": 17}}, "drop", priority=5)]
    one, two, denied = udp("10.0.1.1"), udp("10.0.2.1"), udp("10.0.1.1", src="10.0.0.99")
    return Scenario("rt_basic", ROOT / "p4sim" / "switch" / "p4runtime" / "testdata" / "rt_basic.p4", None, ents, [
        Probe("next_hop", 1, one, (Expect(2, macs(one, dst="00:00:00:00:0a:02")),)),
        Probe("ecmp_path", 1, two, (Expect(3, macs(two, dst="00:00:00:00:0a:03")),)),
        Probe("acl_drop", 1, denied),
        Probe("acl_other_port", 4, denied, (Expect(2, macs(denied, dst="00:00:00:00:0a:02")),)),
        Probe("default_drop", 1, udp("10.9.9.9")),
    ])


def _jf(op: int, n: int = 0, body: bytes = b"", r: int = 0, s: int = 0, csum: int = 0) -> bytes:
    """A json_forms.p4 frame: Ethernet, the operation header, body, payload."""
    return (bytes(Ether(src=H1, dst=H2, type=0x88B5)) + bytes([op, n, r, s]) + csum.to_bytes(2, "big") + body
            + PAYLOAD)


def json_forms() -> Scenario:
    """p4c JSON forms: assign_header_stack in a parser, extract_VL (and too long), assign_VL, a checksum
    over a varbit field, a header union stack (extract, pop_front, setValid of a member), a `for` loop
    (backward _jump), an error-typed table key."""
    tags = bytes.fromhex("111122223333")
    csum = 0xFFFF - ((0x02AA + 0xBBCC) & 0xFFFF)  # csum16 of op 0x02 and the data aa bb cc
    plain = udp()
    return Scenario("json_forms", CORPUS / "json_forms.p4", None, [], [
        # tags[0] invalidated; copy = tags (with their next index), then copy[2] extracted
        Probe("stack_copy_in_parser", 1, _jf(1, body=tags), (Expect(2, _jf(1, r=1, body=bytes.fromhex("2222" "1111" "2222" "3333"))),)),
        Probe("varbit_copy_checksum", 1, _jf(2, 3, bytes.fromhex("11aabbcc")),
              (Expect(2, _jf(2, 3, bytes.fromhex("11aabbcc" "22aabbcc"), r=1, csum=csum)),)),
        Probe("varbit_empty", 1, _jf(2, 0, b"\x11"),
              (Expect(2, _jf(2, 0, b"\x11\x22", r=1, csum=0xFDFF)),)),
        Probe("varbit_too_long", 1, _jf(2, 9, bytes(12)), (Expect(2, _jf(2, 9, bytes(12), r=0xE4)),)),
        # us[0].a = a0, us[1].b = b0b1; pop_front(1): us[0].b = b0b1; us[1].a made valid = a1
        Probe("union_stack", 1, _jf(3, body=bytes.fromhex("a0b0b1")),
              (Expect(2, _jf(3, r=1, s=0xB1, body=bytes.fromhex("b0b1a1"))),)),
        Probe("for_loop", 1, _jf(4, 5), (Expect(2, _jf(4, 5, r=10)),)),
        # vs[0] takes n = 2 bytes, vs[1] one byte; both emitted with their lengths
        Probe("varbit_stack", 1, _jf(5, 2, bytes.fromhex("aabbcc")), (Expect(2, _jf(5, 2, bytes.fromhex("aabbcc"), r=1)),)),
        Probe("varbit_stack_too_long", 1, _jf(5, 5, bytes(8)), (Expect(2, _jf(5, 5, bytes(8), r=0xE4)),)),
        Probe("not_op", 1, plain, (Expect(2, plain),)),
    ])


# p4c 1.2.5.16's JSON runs a for loop of an apply block once (one action with the loop variable, no
# loop), where the spec and p4sim-compile run it three times; a loop inside an action is right
P4C_APPLY_LOOP = "p4c 1.2.5 runs the body of a for loop in an apply block once"


def _lo(op: int, a: int = 0, b: int = 0, c: int = 0, w: int = 0, r: int = 0, s: int = 0, extra: bytes = b"") -> bytes:
    """A lang.p4 frame: Ethernet, the operation header (op, a, b, c, w, r, s), extra, payload."""
    return (bytes(Ether(src=H1, dst=H2, type=0x88B5)) + bytes([op, a, b, c]) + w.to_bytes(2, "big")
            + bytes([r, s]) + extra + PAYLOAD)


def lang() -> Scenario:
    """P4_16 constructs lowered by the front/mid end: functions with returns, copy-in/copy-out, table
    tests in conditions, for loops, saturating arithmetic, odd widths and slices, enums, initializers,
    returns in actions and default-action arguments, exit in nested actions."""
    return Scenario("lang", CORPUS / "lang.p4", None, [], [
        Probe("function_returns", 1, _lo(1, 150, 30), (Expect(2, _lo(1, 150, 30, r=100, s=60)),)),
        Probe("function_returns_2", 1, _lo(1, 7, 80), (Expect(2, _lo(1, 7, 80, r=7, s=100)),)),
        # swap(a, b); bump(c, c): copies out x = c + 1, then y = c + 10
        Probe("copy_in_copy_out", 1, _lo(2, 1, 2, 5), (Expect(2, _lo(2, 2, 1, 15)),)),
        Probe("apply_in_condition_hit", 1, _lo(3, 1, 0), (Expect(2, _lo(3, 1, 0, r=0x11, s=0x55)),)),
        Probe("apply_short_circuit", 1, _lo(3, 1, 7), (Expect(2, _lo(3, 1, 7, s=0x55)),)),
        Probe("apply_in_condition_miss", 1, _lo(3, 2, 0), (Expect(2, _lo(3, 2, 0, s=0x66)),)),
        Probe("for_loop_in_action", 1, _lo(4, 5, 3), (Expect(2, _lo(4, 5, 3, r=10)),)),
        Probe("saturating", 1, _lo(5, 200, 100, 50, w=0x123D), (Expect(2, _lo(5, 200, 100, 0x7F, 0x1235, 255, 100)),)),
        Probe("saturating_low", 1, _lo(5, 10, 20, 0x90), (Expect(2, _lo(5, 10, 20, 0xF4, 0, 30, 0)),)),
        Probe("odd_widths", 1, _lo(6, 0x3F, 0xB4, 0x2A), (Expect(2, _lo(6, 0x3F, 0xB4, 1, 1108, 0xC0, 0xEA)),)),
        Probe("enum_b", 1, _lo(7, 7, 1), (Expect(2, _lo(7, 7, 1, 0x99, r=0xB7, s=2)),)),
        Probe("enum_a", 1, _lo(7, 1, 5), (Expect(2, _lo(7, 1, 5, 0xBB, s=1)),)),
        Probe("enum_other", 1, _lo(7, 3, 0), (Expect(2, _lo(7, 3, 0, s=3)),)),
        Probe("initializers", 1, _lo(8, 0x12, 0x34, 0x56),
              (Expect(2, _lo(8, 0x12, 0x34, 0x56, r=0x34, s=0x12, extra=bytes([0xE1, 0x56]))),)),
        Probe("early_return", 1, _lo(9, 0), (Expect(2, _lo(9, 0, r=0x42)),)),
        Probe("default_args", 1, _lo(9, 1), (Expect(2, _lo(9, 1, r=0x42, s=0x42)),)),
        Probe("exit_nested", 1, _lo(10), (Expect(2, _lo(10, c=0xEC, r=9)),)),
        Probe("break_continue", 1, _lo(11, 7), (Expect(2, _lo(11, 7, r=12)),)),  # 0 + 2 + 4 + 6, stop at 7
        Probe("continue_only", 1, _lo(11, 20), (Expect(2, _lo(11, 20, r=20)),)),  # 0 + 2 + 4 + 6 + 8
        Probe("generic_ternary_order_hit", 1, _lo(12, 1, 7, w=0x100), (Expect(2, _lo(12, 1, 7, 0x0F, 0x300, 7, 5)),)),
        Probe("generic_ternary_order_miss", 1, _lo(12, 30, 7, w=0x400), (Expect(2, _lo(12, 30, 7, 0xF0, 0x400, 30, 7)),)),
        Probe("tuple_variable", 1, _lo(13, 5, w=0x100), (Expect(2, _lo(13, 5, w=0x101, r=6)),)),
        # sum_in(a - b, c + 1): r = (9 - 4) + (2 + 1), s = 5; a zeroed by the body
        Probe("apply_in_expressions", 1, _lo(14, 9, 4, 2), (Expect(2, _lo(14, 0, 4, 2, r=8, s=5)),)),
        # sum_in(a, b) with a zeroed in the body first: x is still 9 (copied in)
        Probe("apply_in_copied", 1, _lo(15, 9, 4), (Expect(2, _lo(15, 0, 4, r=13, s=9)),)),
        # keep(a) writes the register Ing gave both controls, fetch reads it into r
        Probe("extern_constructor_argument", 1, _lo(16, 0x5A), (Expect(2, _lo(16, 0x5A, r=0x5A)),)),
    ])


def apply_loop() -> Scenario:
    """for loops in an apply block: a constant bound (w += b + i, 3 times), a run-time one (b += 1, n times)."""
    def frame(n: int, b: int, w: int) -> bytes:
        return bytes(Ether(src=H1, dst=H2, type=0x88B5)) + bytes([n, b]) + w.to_bytes(2, "big") + PAYLOAD
    p4c_bug = tuple((f"p4c+{sw}", P4C_APPLY_LOOP) for sw in ("p4sim", "bmv2"))
    return Scenario("apply_loop", CORPUS / "apply_loop.p4", None, [], [
        Probe("loops", 1, frame(4, 3, 0x100), (Expect(2, frame(4, 7, 0x10C)),), known=p4c_bug),
    ])


def stacks() -> Scenario:
    """A stack assigned in a parser (with its next index) and in a control, run-time indices, named
    struct and header initializers."""
    def frame(op: int, i: int = 0, j: int = 0, r: int = 0, s: int = 0, body: bytes = b"") -> bytes:
        return bytes(Ether(src=H1, dst=H2, type=0x88B5)) + bytes([op, i, j, r, s]) + body + PAYLOAD
    tags = bytes.fromhex("111122223333")
    after = bytes.fromhex("1111abcd3333")
    return Scenario("stacks", CORPUS / "stacks.p4", None, [], [
        Probe("copy_in_parser", 1, frame(1, body=tags), (Expect(2, frame(1, body=bytes.fromhex("2222111122223333"))),)),
        Probe("runtime_index", 1, frame(2, 2, 1, body=tags),
              (Expect(2, frame(2, 2, 1, 0x33, 1, after + after + bytes([2, 0x33]))),)),
        Probe("conditional_header_copy", 1, frame(3, 1, body=tags), (Expect(2, frame(3, 1, body=tags + tags[:2])),)),
        Probe("conditional_else", 1, frame(3, 0, body=tags), (Expect(2, frame(3, 0, r=0x77, body=tags)),)),
    ])


def keys() -> Scenario:
    """An expression key, an expression select key, entries with priorities, an enum action parameter,
    a header union assignment."""
    def frame(op: int, a: int, b: int, r: int = 0, s: int = 0, e: int = 0, body: bytes = b"") -> bytes:
        return bytes(Ether(src=H1, dst=H2, type=0x88B5)) + bytes([op, a, b, r, s, e]) + body + PAYLOAD
    return Scenario("keys", CORPUS / "keys.p4", None, [], [
        # a + b = 10 hits by_sum; a = 0x11 matches both ranked entries: priority 20 wins
        Probe("expression_key_and_priority", 1, frame(0, 0x11, 0xF9),
              (Expect(2, frame(0, 0x11, 0xF9, r=0xAA, s=1, e=7)),)),
        Probe("no_key_hit", 1, frame(0, 0x22, 0), (Expect(2, frame(0, 0x22, 0, e=7)),)),
        Probe("enum_header_field", 1, frame(0, 0x22, 0, e=1), (Expect(2, frame(0, 0x22, 0, s=6, e=7)),)),
        # select (a & 0x0f, op + 1) == (4, 4): u.t extracted (0x41); w = u, then w.t.v + 1
        Probe("select_expression_union", 1, frame(3, 0x04, 0, body=b"\x41"),
              (Expect(2, frame(3, 0x04, 0, e=7, body=b"\x41\x42")),)),
        Probe("union_variable", 1, frame(4, 0, 0), (Expect(2, frame(4, 0, 0, e=7, body=b"\x12\x34")),)),
    ])


def scenarios() -> list[Scenario]:
    """Every program of the parity test."""
    return [fabric(), ocs(), l3_basic(), externs(), features(), nested(), parsing(), parser_errors(),
            special_ops(), rt_basic(), json_forms(), lang(), apply_loop(), stacks(), keys()]
