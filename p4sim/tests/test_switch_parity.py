"""p4sim-switch against simple_switch_grpc on the same p4c JSON (p4sim/switch/testdata/parity.p4), root.

Each test runs on both targets where it can and asserts bmv2's behaviour, measured with bmv2 1.15.5
and PI on this project's toolchain (p4sim/switch/README.md, "Parity with bmv2"), so that p4sim is
held to it also where bmv2 is not installed. bmv2 cases skip when simple_switch_grpc is not on PATH.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from p4rt.entities import ActionProfileGroup, ActionProfileMember, TableEntry
from p4rt.proto import p4r
from p4rt.resources import CloneSession, CounterEntry, MulticastGroup, Packet, Replica
from p4sim.switch.testdata.veth import is_root
from p4sim.tests import targets
from p4sim.tests.parity_bed import (
    CPU_PORT,
    PARITY_JSON,
    PARITY_P4INFO,
    TESTDATA,
    Bed,
    bed,
    frame,
    report,
)

pytestmark = [pytest.mark.root, pytest.mark.skipif(not is_root(), reason="needs root for veth pairs")]

TARGETS = ["p4sim", "bmv2"]
LEN = len(frame("forward"))
# PI's WatchPortEnforcer ignores the first port-down of a port whose watched group was written within
# about 0.3 s of simple_switch_grpc's start (measured); the tests write watched groups after this.
WATCH_SETTLE_S = 1.5


def _skip_without(target: str) -> None:
    if target == "bmv2" and targets.bmv2() is None:
        pytest.skip("simple_switch_grpc is not on PATH (bmv2 not installed)")


@pytest.fixture(scope="module", params=TARGETS)
def sw(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bed]:
    """One switch per target for the module, with clone sessions 7 (port 3) and 8 (CPU port) and
    multicast group 9 (port 2 instance 5, port 3 instance 6)."""
    _skip_without(request.param)
    log = tmp_path_factory.mktemp("parity") / f"{request.param}.log"
    with bed(request.param, 3, log_path=log, prefix="ptya") as b:
        b.client.insert([CloneSession(7, [Replica(3)]), CloneSession(8, [Replica(CPU_PORT)]),
                         MulticastGroup(9, [Replica(2, 5), Replica(3, 6)])])
        yield b


@pytest.fixture
def s(sw: Bed) -> Bed:
    """The module's switch, with nothing left over on its ports."""
    sw.drain()
    return sw


def _one(b: Bed, op: str, port: int = 2, arg: int = 0, key: int = 0, src: int = 1) -> dict[str, int]:
    b.send(src, frame(op, port, arg, key))
    got = b.recv(port, 3.0)
    assert got is not None, f"{b.target}: nothing on port {port} for {op}"
    assert len(got) == LEN
    return report(got)


def _counters(b: Bed, name: str) -> dict[int, tuple[int, int]]:
    return {e.index: (e.packets, e.bytes) for e in b.client.read_entities([CounterEntry(name)])}


def _delta(before: dict[int, tuple[int, int]], after: dict[int, tuple[int, int]]) -> dict[int, tuple[int, int]]:
    return {i: (after[i][0] - before[i][0], after[i][1] - before[i][1]) for i in after
            if after[i] != before.get(i, (0, 0))}


def test_parity_json_is_p4c_output_of_parity_p4(tmp_path: Path) -> None:
    p4c = shutil.which("p4c-bm2-ss")
    if p4c is None:
        pytest.skip("p4c-bm2-ss is not on PATH")
    subprocess.run([p4c, "parity.p4", "-o", str(tmp_path / "parity.json"), "--p4runtime-files",
                    str(tmp_path / "parity.p4info.txtpb")], cwd=TESTDATA, check=True, capture_output=True)
    assert (tmp_path / "parity.json").read_text() == PARITY_JSON.read_text()
    assert (tmp_path / "parity.p4info.txtpb").read_text() == PARITY_P4INFO.read_text()


def test_unicast_metadata_and_timestamps(s: Bed) -> None:
    sent = time.monotonic()
    r = _one(s, "forward")
    elapsed_us = (time.monotonic() - s.t0) * 1e6
    assert (r["i_ingress_port"], r["i_instance_type"], r["i_packet_length"], r["i_parser_mark"]) == (1, 0, LEN, 7)
    assert (r["i_egress_spec"], r["e_egress_spec"]) == (0, 0)  # egress_spec starts at 0 in both pipelines
    assert (r["e_ingress_port"], r["e_egress_port"], r["e_instance_type"], r["e_packet_length"]) == (1, 2, 0, LEN)
    assert (r["e_parser_mark"], r["e_ingress_mark"], r["e_enq_qdepth"], r["e_deq_qdepth"]) == (7, 9, 0, 0)
    # timestamps: microseconds since the switch started, ingress <= enqueue <= egress
    assert (sent - s.t0) * 1e6 - 5e6 < r["i_timestamp"] <= elapsed_us
    assert r["e_ingress_timestamp"] == r["i_timestamp"]
    assert r["i_timestamp"] <= r["e_enq_timestamp"] <= r["e_timestamp"] <= elapsed_us
    # deq_timedelta: dequeue minus enqueue (bmv2 reads its clock again after egress_global_timestamp)
    assert 0 <= r["e_deq_timedelta"] - (r["e_timestamp"] - r["e_enq_timestamp"]) < 1000
    assert r["e_deq_timedelta"] < 100_000


def test_resubmit_resets_metadata_but_the_field_list(s: Bed) -> None:
    before = _counters(s, "ingress_by_instance")
    r = _one(s, "resubmit")
    # the resubmitted pass: the original frame, standard metadata reset (ingress_port and timestamp 0)
    assert (r["i_instance_type"], r["i_ingress_port"], r["i_timestamp"], r["i_packet_length"]) == (6, 0, 0, LEN)
    assert (r["i_kept"], r["i_parser_mark"], r["i_passes"]) == (1, 7, 1)
    # unicast egress sees instance_type 0 again
    assert (r["e_instance_type"], r["e_ingress_port"], r["e_ingress_timestamp"], r["e_kept"]) == (0, 0, 0, 1)
    assert _delta(before, _counters(s, "ingress_by_instance")) == {0: (1, LEN), 6: (1, LEN)}


def test_recirculate_resets_metadata_but_the_field_list(s: Bed) -> None:
    before = _counters(s, "ingress_by_instance"), _counters(s, "egress_by_instance")
    r = _one(s, "recirculate")
    # the recirculated pass parses the deparsed frame (the first passes' report bytes are in it)
    assert (r["i_passes"], r["e_passes"], r["i_instance_type"], r["i_ingress_port"]) == (2, 2, 4, 0)
    assert (r["i_timestamp"], r["i_packet_length"], r["i_kept"], r["i_parser_mark"]) == (0, LEN, 3, 7)
    assert (r["e_instance_type"], r["e_ingress_port"], r["e_kept"]) == (0, 0, 3)
    assert _delta(before[0], _counters(s, "ingress_by_instance")) == {0: (1, LEN), 4: (1, LEN)}
    assert _delta(before[1], _counters(s, "egress_by_instance")) == {0: (2, 2 * LEN)}


def test_ingress_clone_is_the_original_frame_with_metadata_reset(s: Bed) -> None:
    s.send(1, frame("clone_i2e", 2, 7))
    orig, clone = s.recv(2), s.recv(3)
    assert orig is not None and clone is not None
    o, c = report(orig), report(clone)
    assert (o["e_instance_type"], o["e_kept"], o["e_ingress_mark"], o["e_parser_mark"]) == (0, 5, 9, 7)
    # the clone: what ingress wrote into the headers is gone; metadata reset but the field list
    assert (c["i_passes"], c["i_ingress_port"], c["e_passes"]) == (0, 0, 1)
    assert (c["e_instance_type"], c["e_ingress_port"], c["e_ingress_timestamp"]) == (1, 0, 0)
    assert (c["e_kept"], c["e_parser_mark"], c["e_ingress_mark"], c["e_packet_length"]) == (5, 0, 0, LEN)
    assert (c["e_egress_port"], c["e_egress_rid"]) == (3, 0)


def test_egress_clone_keeps_egress_headers_with_metadata_reset(s: Bed) -> None:
    s.send(1, frame("clone_e2e", 2, 7))
    orig, clone = s.recv(2), s.recv(3)
    assert orig is not None and clone is not None
    o, c = report(orig), report(clone)
    assert (o["e_instance_type"], o["e_passes"], o["e_ingress_port"]) == (0, 1, 1)
    assert (c["e_instance_type"], c["e_passes"], c["i_passes"], c["e_ingress_port"]) == (2, 2, 1, 0)
    assert (c["e_kept"], c["e_parser_mark"], c["e_ingress_mark"], c["e_ingress_timestamp"]) == (4, 0, 0, 0)


def test_multicast_replicas_copy_everything(s: Bed) -> None:
    s.send(1, frame("multicast", 0, 9))
    got = {p: s.recv(p) for p in (2, 3)}
    assert all(got.values())
    r2, r3 = report(got[2]), report(got[3])  # type: ignore[arg-type]
    for r, port, rid in ((r2, 2, 5), (r3, 3, 6)):
        assert (r["e_instance_type"], r["e_egress_port"], r["e_egress_rid"], r["e_mcast_grp"]) == (5, port, rid, 9)
        assert (r["e_ingress_port"], r["e_ingress_mark"], r["e_parser_mark"]) == (1, 9, 7)


def test_packet_length_follows_header_removal_counters_count_ingress_length(s: Bed) -> None:
    before = _counters(s, "egress_by_instance")
    s.client.packet_out(Packet(frame("forward"), {"egress_port": 3}))
    got = s.recv(3)
    assert got is not None and len(got) == LEN
    r = report(got)
    # the 2-byte packet_out header was removed in ingress: packet_length says so, the counter does not
    assert (r["e_ingress_port"], r["e_packet_length"]) == (CPU_PORT, LEN)
    assert _delta(before, _counters(s, "egress_by_instance")) == {0: (1, LEN + 2)}


def test_priority_beyond_the_queues_drops(s: Bed) -> None:
    s.send(1, frame("priority", 2, 1))  # one queue per port (the default): priority 1 is dropped
    assert s.recv(2, 0.5) is None
    assert _one(s, "priority", arg=0)["e_priority"] == 0


@pytest.mark.parametrize("target", TARGETS)
def test_priority_queues_option(target: str, tmp_path: Path) -> None:
    _skip_without(target)
    with bed(target, 2, target_args=("--priority-queues", "2"), log_path=tmp_path / "sw.log", prefix="ptyq") as b:
        assert _one(b, "priority", arg=1)["e_priority"] == 1
        b.send(1, frame("priority", 2, 2))
        assert b.recv(2, 0.5) is None


def test_packet_in_and_out(s: Bed) -> None:
    s.send(1, frame("forward", CPU_PORT))
    pin = s.client.packet_in(3.0)
    assert pin is not None and pin.metadata == {"ingress_port": 1, "_pad": 0}
    assert len(pin.payload) == LEN and report(pin.payload)["e_egress_port"] == CPU_PORT
    # a clone to the CPU port is a packet-in too; its metadata was reset (ingress_port 0)
    s.send(1, frame("clone_i2e", 2, 8))
    assert s.recv(2) is not None
    pin = s.client.packet_in(3.0)
    assert pin is not None and pin.metadata["ingress_port"] == 0
    assert report(pin.payload)["e_instance_type"] == 1
    # packet-out metadata: a field given twice takes the last value; a missing one is 0 (port 0: nowhere)
    msg = p4r.PacketOut(payload=frame("forward"))
    msg.metadata.add(metadata_id=1, value=b"\x02")
    msg.metadata.add(metadata_id=1, value=b"\x03")
    s.client.packet_out(msg)
    assert s.recv(3) is not None
    s.client.packet_out(p4r.PacketOut(payload=frame("forward")))
    assert all(s.recv(p, 0.3) is None for p in (1, 2, 3))


def test_selector_member_order_and_watch_ports(s: Bed) -> None:
    def member(i: int) -> ActionProfileMember:
        return ActionProfileMember("pick_selector", i, "set_member", {"member": i})

    def group(gid: int, members: list[dict[str, int]]) -> ActionProfileGroup:
        return ActionProfileGroup.from_dict({"profile": "pick_selector", "group_id": gid, "members": members})

    def picks(gid: int, n: int) -> list[int]:
        return [_one(s, "select", 1, gid, k)["e_member"] for k in range(n)]

    time.sleep(max(0.0, WATCH_SETTLE_S - (time.monotonic() - s.t0)))
    c = s.client
    c.insert([member(i) for i in (1, 2, 3, 4)])
    c.insert([group(10, [{"member_id": 4}, {"member_id": 1, "watch_port": 2}, {"member_id": 2},
                         {"member_id": 3, "watch_port": 3}])])
    c.insert([TableEntry.from_dict({"table": "pick", "match": {"group": 10}, "group_id": 10})])
    assert picks(10, 8) == [1, 2, 3, 4] * 2  # hash % 4 over members in handle order, not group order
    # a watched member deactivated: hash % 3 over the others
    subprocess.run(["ip", "link", "set", s.peer_iface(2), "down"], check=True)
    try:
        deadline = time.monotonic() + 2.0
        while picks(10, 1) == [1] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert picks(10, 6) == [2, 3, 4] * 2
    finally:
        subprocess.run(["ip", "link", "set", s.peer_iface(2), "up"], check=True)
    deadline = time.monotonic() + 2.0
    while picks(10, 1) != [1] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert picks(10, 4) == [1, 2, 3, 4]
    # bmv2 gives a new member the lowest free handle: 7 takes 5's and sorts before 6
    c.insert([member(5), member(6)])
    c.delete([member(5)])
    c.insert([member(7), member(8), member(9)])
    c.insert([group(20, [{"member_id": 6}, {"member_id": 7}])])
    # weight 2: PI adds a copy of the member with a new handle (after 9's)
    c.insert([group(30, [{"member_id": 8, "weight": 2}, {"member_id": 9}])])
    c.insert([TableEntry.from_dict({"table": "pick", "match": {"group": g}, "group_id": g}) for g in (20, 30)])
    assert picks(20, 4) == [7, 6, 7, 6]
    assert picks(30, 6) == [8, 9, 8, 8, 9, 8]
