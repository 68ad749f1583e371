"""A real third-party P4Runtime client, p4runtime-shell, drives the p4sim P4Runtime server. The shell runs
in its own environment, a child process (p4sim/tests/programs.py); the switch runs here."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from p4sim.switch.p4runtime.testing import RunningSwitch, program_files, running_switch
from p4sim.tests.programs import ShellError, ShellProcess, needs_shell, shell_process, shell_session

pytestmark = needs_shell
FRAME = bytes.fromhex("0000000000aa0000000000bb0800" "4500001400000000400600000a0000010a000002")


@pytest.fixture(scope="module")
def sh() -> Iterator[ShellProcess]:
    with shell_process() as proc:
        yield proc


@pytest.fixture
def sw(sh: ShellProcess) -> Iterator[RunningSwitch]:
    with running_switch(device_id=1) as switch, shell_session(sh, switch, *program_files()):
        yield switch


def test_shell_pushes_pipeline_inserts_reads_deletes(sw: RunningSwitch, sh: ShellProcess) -> None:
    assert sw.device.pipeline is not None
    assert sh.eval("sh.APIVersion()").startswith("1.")
    sh.exec("""
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
by_action = {e.action.action_name: e for e in got}
nhop = by_action["RtIngress.set_nhop"]
acls = list(sh.TableEntry("RtIngress.acl").read())
""")
    assert sh.eval("len(got)") == 2
    assert sh.eval('nhop.match["ipv4_dst"].lpm.prefix_len') == 24
    assert sh.eval('nhop.action["port"].value') == b"\x03"
    assert sh.eval('by_action["RtIngress.set_path"].action["path_id"].value') == b"\x07"
    assert sh.eval("len(acls), acls[0].priority") == (1, 20)
    assert sh.eval('acls[0].match["proto"].range.low') == b"\x06"

    # device state as the data plane sees it
    table = sw.device.pipeline.tables["RtIngress.route"]
    assert sorted(str(e.key[0]) for e in table.entries()) == [
        "Lpm(value=167772416, prefix_len=24)", "Lpm(value=167903232, prefix_len=16)"]

    sh.exec("""
te.action["port"] = "4"
te.modify()
again = [e for e in sh.TableEntry("RtIngress.route").read() if e.action.action_name == "RtIngress.set_nhop"]
""")
    assert sh.eval('again[0].action["port"].value') == b"\x04"

    sh.exec('sh.TableEntry("RtIngress.route").read(function=lambda e: e.delete())\nacl.delete()')
    assert sh.eval('len(list(sh.TableEntry("RtIngress.route").read()))') == 0
    assert len(table) == 0


def test_shell_write_error_is_reported_per_update(sw: RunningSwitch, sh: ShellProcess) -> None:
    sh.exec("""
te = sh.TableEntry("RtIngress.route")(action="RtIngress.drop")
te.match["ipv4_dst"] = "10.9.0.0/16"
te.insert()
""")
    with pytest.raises(ShellError) as ei:
        sh.exec("te.insert()")
    assert str(ei.value).startswith("P4RuntimeWriteException")
    assert "ALREADY_EXISTS" in str(ei.value)


def test_shell_groups_counters_multicast(sw: RunningSwitch, sh: ShellProcess) -> None:
    sh.exec("""
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
c = sh.CounterEntry("RtIngress.port_rx")
c.index = 4
counters = list(c.read())
""")
    assert sh.eval("[(m.member_id, m.weight) for m in groups[0].members]") == [(1, 1), (2, 3)]
    assert sh.eval('[e.group_id for e in sh.TableEntry("RtIngress.ecmp").read()]') == [1]
    assert sh.eval("len(counters), counters[0].packet_count") == (1, 0)

    sh.exec("mc = sh.MulticastGroupEntry(7).add(1, 0).add(2, 0)\nmc.insert()")
    assert sw.device.pre.groups[7] == ((1, 0), (2, 0))
    assert sh.eval("len(list(sh.MulticastGroupEntry(7).read()))") == 1


def test_shell_packet_out_and_packet_in(sw: RunningSwitch, sh: ShellProcess) -> None:
    sent: list[tuple[int, bytes]] = []
    cpu, emit = sw.device.cpu_port, sw.device.emit

    def capture(out: list[tuple[int, bytes]]) -> None:
        sent.extend(p for p in out if p[0] != cpu)
        emit([p for p in out if p[0] == cpu])

    sw.device.emit = capture
    sh.exec(f"""
sh.PacketOut({FRAME!r}, egress_port="2").send()
te = sh.TableEntry("RtIngress.acl")(action="RtIngress.to_cpu")
te.match["ipv4_src"] = "10.0.0.1&&&255.255.255.255"
te.priority = 1
te.insert()
sniffer = sh.PacketIn()
""")
    sw.device.inject(5, FRAME)
    got = sh.eval("[(p.packet.payload, p.packet.metadata[0].value) for p in sniffer.sniff(timeout=1)]")
    assert sent == [(2, FRAME)]
    assert got == [(FRAME, b"\x05")]


def test_shell_digest_entry_and_digest_lists(sw: RunningSwitch, sh: ShellProcess) -> None:
    sh.exec("""
d = sh.DigestEntry("learn_t")
d.max_list_size = 1
d.max_timeout_ns = 1
d.ack_timeout_ns = 1_000_000_000
d.insert()
""")
    assert sh.eval('[e.max_list_size for e in sh.DigestEntry("learn_t").read()]') == [1]
    sh.exec("""
te = sh.TableEntry("RtIngress.acl")(action="RtIngress.learn")
te.match["ipv4_src"] = "10.0.0.1&&&255.255.255.255"
te.priority = 1
te.insert()
lists = sh.DigestList()  # acknowledges every list it receives
""")
    sw.device.inject(6, FRAME)
    got = sh.eval("[[m.bitstring for m in x.digest.data[0].struct.members] for x in lists.sniff(timeout=1)]")
    assert got == [[b"\xbb", b"\x06"]]
