"""A real third-party P4Runtime client, p4runtime-shell, drives the p4sim P4Runtime server."""

from __future__ import annotations

import pytest

from p4sim.switch.p4runtime.testing import program_files, running_switch
from p4sim.tests.programs import shell_session

sh = pytest.importorskip("p4runtime_sh.shell")


@pytest.fixture
def shell():
    with running_switch(device_id=1) as sw, shell_session(sh, sw, *program_files()):
        yield sw


def _route_lines() -> list[str]:
    out = []
    for te in sh.TableEntry("RtIngress.route").read():
        out.append(f"{te.match['ipv4_dst']}".strip().replace("\n", " "))
    return out


def test_shell_pushes_pipeline_inserts_reads_deletes(shell) -> None:
    assert shell.device.pipeline is not None
    assert sh.APIVersion().startswith("1.")
    te = sh.TableEntry("RtIngress.route")(action="RtIngress.set_nhop")
    te.match["ipv4_dst"] = "10.0.1.0/24"
    te.action["port"] = "3"
    te.action["dmac"] = "00:00:00:00:01:03"
    te.insert()
    te2 = sh.TableEntry("RtIngress.route")(action="RtIngress.set_path")
    te2.match["ipv4_dst"] = "10.2.0.0/16"
    te2.action["path_id"] = "7"
    te2.insert()
    acl = sh.TableEntry("RtIngress.acl")(action="RtIngress.drop")
    acl.match["ipv4_src"] = "10.0.0.1&&&255.255.255.0"
    acl.match["ingress_port"] = "2"
    acl.match["proto"] = "6..17"
    acl.priority = 20
    acl.insert()

    got = list(sh.TableEntry("RtIngress.route").read())
    assert len(got) == 2
    by_action = {e.action.action_name: e for e in got}
    nhop = by_action["RtIngress.set_nhop"]
    assert nhop.match["ipv4_dst"].lpm.prefix_len == 24
    assert nhop.action["port"].value == b"\x03"
    assert by_action["RtIngress.set_path"].action["path_id"].value == b"\x07"
    acls = list(sh.TableEntry("RtIngress.acl").read())
    assert len(acls) == 1 and acls[0].priority == 20
    assert acls[0].match["proto"].range.low == b"\x06"

    # device state as the data plane sees it
    table = shell.device.pipeline.tables["RtIngress.route"]
    assert sorted(str(e.key[0]) for e in table.entries()) == [
        "Lpm(value=167772416, prefix_len=24)", "Lpm(value=167903232, prefix_len=16)"]

    te.action["port"] = "4"
    te.modify()
    again = [e for e in sh.TableEntry("RtIngress.route").read() if e.action.action_name == "RtIngress.set_nhop"]
    assert again[0].action["port"].value == b"\x04"

    sh.TableEntry("RtIngress.route").read(function=lambda e: e.delete())
    acl.delete()
    assert list(sh.TableEntry("RtIngress.route").read()) == []
    assert len(table) == 0


def test_shell_write_error_is_reported_per_update(shell) -> None:
    te = sh.TableEntry("RtIngress.route")(action="RtIngress.drop")
    te.match["ipv4_dst"] = "10.9.0.0/16"
    te.insert()
    with pytest.raises(Exception) as ei:  # p4runtime-shell's P4RuntimeWriteException
        te.insert()
    assert "ALREADY_EXISTS" in str(ei.value)


def test_shell_groups_counters_multicast(shell) -> None:
    for mid, port in ((1, "1"), (2, "2")):
        m = sh.ActionProfileMember("RtIngress.ecmp_selector")(member_id=mid, action="RtIngress.set_nhop")
        m.action["port"] = port
        m.action["dmac"] = "00:00:00:00:00:0" + port
        m.insert()
    g = sh.ActionProfileGroup("RtIngress.ecmp_selector")(group_id=1)
    g.add(1).add(2, weight=3)
    g.insert()
    te = sh.TableEntry("RtIngress.ecmp")
    te.match["path_id"] = "5"
    te.group_id = 1
    te.insert()
    groups = list(sh.ActionProfileGroup("RtIngress.ecmp_selector").read())
    assert [(m.member_id, m.weight) for m in groups[0].members] == [(1, 1), (2, 3)]
    assert [e.group_id for e in sh.TableEntry("RtIngress.ecmp").read()] == [1]

    c = sh.CounterEntry("RtIngress.port_rx")
    c.index = 4
    counters = list(c.read())
    assert len(counters) == 1 and counters[0].packet_count == 0

    mc = sh.MulticastGroupEntry(7).add(1, 0).add(2, 0)
    mc.insert()
    assert shell.device.pre.groups[7] == ((1, 0), (2, 0))
    assert len(list(sh.MulticastGroupEntry(7).read())) == 1


def test_shell_packet_out_and_packet_in(shell) -> None:
    frame = bytes.fromhex("0000000000aa0000000000bb0800" "4500001400000000400600000a0000010a000002")
    sent: list[tuple[int, bytes]] = []
    cpu, emit = shell.device.cpu_port, shell.device.emit

    def capture(out: list[tuple[int, bytes]]) -> None:
        sent.extend(p for p in out if p[0] != cpu)
        emit([p for p in out if p[0] == cpu])

    shell.device.emit = capture
    sh.PacketOut(frame, egress_port="2").send()
    te = sh.TableEntry("RtIngress.acl")(action="RtIngress.to_cpu")
    te.match["ipv4_src"] = "10.0.0.1&&&255.255.255.255"
    te.priority = 1
    te.insert()
    sniffer = sh.PacketIn()
    shell.device.inject(5, frame)
    got = list(sniffer.sniff(timeout=1))
    assert sent == [(2, frame)]
    assert len(got) == 1 and got[0].packet.payload == frame
    assert got[0].packet.metadata[0].value == b"\x05"


def test_shell_digest_entry_and_digest_lists(shell) -> None:
    frame = bytes.fromhex("0000000000aa0000000000bb0800" "4500001400000000400600000a0000010a000002")
    d = sh.DigestEntry("learn_t")
    d.max_list_size = 1
    d.max_timeout_ns = 1
    d.ack_timeout_ns = 1_000_000_000
    d.insert()
    assert [e.max_list_size for e in sh.DigestEntry("learn_t").read()] == [1]
    te = sh.TableEntry("RtIngress.acl")(action="RtIngress.learn")
    te.match["ipv4_src"] = "10.0.0.1&&&255.255.255.255"
    te.priority = 1
    te.insert()
    lists = sh.DigestList()  # acknowledges every list it receives
    shell.device.inject(6, frame)
    got = list(lists.sniff(timeout=1))
    assert len(got) == 1
    members = got[0].digest.data[0].struct.members
    assert [m.bitstring for m in members] == [b"\xbb", b"\x06"]
