"""The project's fabric and ocs programs, compiled by p4sim-compile, run in the p4sim data plane."""

from __future__ import annotations

from pathlib import Path

import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from p4sim.compiler import cli as compile_cli
from p4sim.switch.device import Device
from p4sim.switch.values import ActionCall, Exact, GroupRef, Lpm, Ternary

ROOT = Path(__file__).resolve().parents[2]
CPU = 255
HOST_MAC = "00:00:00:00:00:01"


def compile_program(name: str, out: Path) -> bytes:
    """Compile p4src/<name>.p4 with p4sim-compile; return the bmv2 JSON."""
    json_path = out / f"{name}.json"
    rc = compile_cli.main([str(ROOT / "p4src" / f"{name}.p4"), "-I", str(ROOT / "p4src"), "-o", str(json_path),
                           "--p4runtime-files", str(out / f"{name}.p4info.txtpb")])
    assert rc == 0, f"p4sim-compile failed on {name}.p4"
    return json_path.read_bytes()


@pytest.fixture(scope="module")
def fabric_json(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    return compile_program("fabric", tmp_path_factory.mktemp("fabric"))


@pytest.fixture
def fab(fabric_json: bytes) -> Device:
    """A ToR: hosts on port 1 (10.0.1.0/24, local), uplinks 2, 3, 4; path 5 static, path 6 ECMP."""
    d = Device(ports={1: "h", 2: "u2", 3: "u3", 4: "u4"}, cpu_port=CPU)
    d.commit_pipeline(d.load_pipeline(fabric_json))
    pl = d.pipeline
    route, path = pl.table("route"), pl.table("path")
    route.insert((Lpm(0x0A000100, 24),), ActionCall("FabricIngress.routing.to_host", (1, 0x000000000001)))
    route.insert((Lpm(0x0A000200, 24),), ActionCall("FabricIngress.routing.set_path", (5,)))
    route.insert((Lpm(0x0A000300, 24),), ActionCall("FabricIngress.routing.set_path", (6,)))
    path.insert((Exact(5), Exact(0)), ActionCall("FabricIngress.path_select.path_static", (2, 0x020000000002)))
    path.insert((Exact(5), Exact(1)), ActionCall("FabricIngress.path_select.path_static", (4, 0x020000000004)))
    path.insert((Exact(6), Exact(0)), ActionCall("FabricIngress.path_select.path_ecmp"))
    ecmp = pl.profile("ecmp_selector")
    ecmp.insert_member(1, ActionCall("FabricIngress.path_select.set_next_hop", (2, 0x020000000002)))
    ecmp.insert_member(2, ActionCall("FabricIngress.path_select.set_next_hop", (3, 0x020000000003)))
    ecmp.insert_group(1, [(1, 1, None), (2, 1, None)])
    pl.table("ecmp_group").insert((Exact(6), Exact(0)), GroupRef(1))
    live = pl.profile("liveness_selector")
    for port in (1, 2, 3, 4):
        live.insert_member(port, ActionCall("FabricIngress.failover.port_up"))
        live.insert_group(port, [(port, 1, port)])
        pl.table("port_liveness").insert((Exact(port),), GroupRef(port))
        pl.table("port_mac").insert((Exact(port),), ActionCall("FabricEgress.egress_rewrite.set_smac", (0x0A0000000000 + port,)))
    return d


def _udp(dst: str, ttl: int = 64, sport: int = 1000) -> bytes:
    return bytes(Ether(src=HOST_MAC, dst="0a:00:00:00:00:01") / IP(src="10.0.1.1", dst=dst, ttl=ttl)
                 / UDP(sport=sport, dport=80) / b"fabric")


def _tag(frame: bytes) -> tuple[int, int, int] | None:
    """(version, hops, inner ether_type) of the path tag, or None if untagged."""
    if frame[12:14] != b"\x88\xb5":
        return None
    return frame[14] >> 7, frame[15], int.from_bytes(frame[16:18], "big")


def _ip(frame: bytes) -> IP:
    off = 18 if _tag(frame) else 14
    ip = IP(frame[off:])
    ref = IP(frame[off:])
    del ref.chksum
    assert IP(bytes(ref)).chksum == ip.chksum, "IPv4 checksum not recomputed"
    return ip


def test_static_path_pushes_tag_decrements_ttl(fab: Device) -> None:
    out = fab.process(1, _udp("10.0.2.9"))
    assert [p for p, _ in out] == [2]
    f = out[0][1]
    assert _tag(f) == (0, 1, 0x0800)
    assert Ether(f).src == "0a:00:00:00:00:02" and Ether(f).dst == "02:00:00:00:00:02"
    assert _ip(f).ttl == 63
    assert fab.pipeline.counter("port_rx").read(1)[0] == 1
    assert fab.pipeline.counter("port_tx").read(2)[0] == 1
    assert [e.packets for e in fab.pipeline.table("path").entries() if e.key == (Exact(5), Exact(0))] == [1]


def test_mbb_flip_is_one_write(fab: Device) -> None:
    fab.pipeline.table("path_version").insert((Exact(5),), ActionCall("FabricIngress.routing.set_version", (1,)))
    out = fab.process(1, _udp("10.0.2.9"))
    assert [p for p, _ in out] == [4] and _tag(out[0][1])[0] == 1


def test_transit_follows_the_tag_and_egress_strips_it(fab: Device) -> None:
    tagged = _udp("10.0.2.9")
    tagged = tagged[:12] + b"\x88\xb5" + bytes([0x80, 3]) + b"\x08\x00" + tagged[14:]
    out = fab.process(3, tagged)
    assert [p for p, _ in out] == [4] and _tag(out[0][1]) == (1, 4, 0x0800)
    tagged_home = _udp("10.0.1.7")
    tagged_home = tagged_home[:12] + b"\x88\xb5" + bytes([0, 2]) + b"\x08\x00" + tagged_home[14:]
    out = fab.process(2, tagged_home)
    assert [p for p, _ in out] == [1] and _tag(out[0][1]) is None and Ether(out[0][1]).type == 0x0800


def test_fast_failover_takes_the_other_version(fab: Device) -> None:
    fab.set_port_status(2, False)
    out = fab.process(1, _udp("10.0.2.9"))
    assert [p for p, _ in out] == [4] and _tag(out[0][1])[0] == 1
    assert fab.pipeline.counter("port_rx").read(1)[0] == 1  # the resubmitted copy is not counted twice
    fab.set_port_status(4, False)
    assert fab.process(1, _udp("10.0.2.9")) == []  # both versions down


def test_ecmp_spreads_and_ttl_expiry_drops(fab: Device) -> None:
    ports = {fab.process(1, _udp("10.0.3.9", sport=s))[0][0] for s in range(1000, 1100)}
    assert ports == {2, 3}
    assert fab.process(1, _udp("10.0.3.9", ttl=1)) == []
    assert fab.process(1, _udp("192.168.0.1")) == []  # route default: route_drop


def test_probe_packet_in_and_packet_out(fab: Device) -> None:
    probe = bytes.fromhex("ffffffffffff000000000001") + b"\x88\xb6" + b"probe-data"
    out = fab.process(3, probe)
    assert [p for p, _ in out] == [CPU]
    pin = out[0][1]
    # packet_in: ingress_port, _pad, timestamp (48 bits: the switch's us at arrival)
    assert int.from_bytes(pin[:2], "big") >> 7 == 3 and pin[8:] == probe
    assert 0 <= int.from_bytes(pin[2:8], "big") <= fab.now_us()
    pout = ((2 << 7).to_bytes(2, "big")) + probe  # packet_out: egress_port 2
    out = fab.process(CPU, pout)
    assert out == [(2, probe)]


def test_ocs_cross_connect_and_dark_ports(tmp_path: Path) -> None:
    d = Device(ports={1: "a", 2: "b", 3: "c"})
    d.commit_pipeline(d.load_pipeline(compile_program("ocs", tmp_path)))
    circuit = d.pipeline.table("circuit")
    circuit.insert((Exact(1),), ActionCall("OcsIngress.circuit.cross_connect", (2,)))
    frame = b"\x01" * 60
    assert d.process(1, frame) == [(2, frame)]
    assert d.process(3, frame) == []
    assert d.pipeline.counter("dark_drops").read(3)[0] == 1


def test_fused_and_attribute_fast_paths_agree(fab: Device, monkeypatch: pytest.MonkeyPatch) -> None:
    from p4sim.switch import engine
    from p4sim.tests.test_switch_fuzz import _frames

    assert fab.pipeline.namespace["FUSED"] is not None  # the fabric gets the fused path
    fab.pipeline.table("acl").insert((None, None, None), ActionCall("FabricIngress.acl.acl_to_cpu"), priority=1)
    fab.pipeline.table("acl").insert((Ternary(0x0A000000, 0xFFFFFF00), None, None), ActionCall("NoAction"), priority=2)
    tagged = _udp("10.0.2.9")
    tagged = tagged[:12] + b"\x88\xb5" + bytes([0x80, 3]) + b"\x08\x00" + tagged[14:]
    frames = [_udp("10.0.2.9"), _udp("10.0.3.9", sport=7), _udp("10.0.1.5"), tagged, _udp("10.0.2.9", ttl=1)]
    frames += _frames(2000, seed=11)
    monkeypatch.setattr(fab, "now_us", lambda: 1_000_000)  # packet-ins carry the arrival time
    runs = []
    for fused in (True, False):
        monkeypatch.setattr(engine, "USE_FUSED", fused)
        runs.append([fab.process(port, f) for f in frames for port in (1, 3, CPU)])
    assert runs[0] == runs[1]
    assert sum(1 for o in runs[0] if o) > 100
