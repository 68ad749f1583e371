"""p4src/fabric.p4, compiled by p4sim-compile, pushed with p4runtime-shell; entries of every table kind.
The shell runs in its own environment, a child process (p4sim/tests/programs.py); the switch runs here."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from p4sim.switch.p4runtime.testing import RunningSwitch, running_switch
from p4sim.tests.programs import (
    REPO,
    ShellProcess,
    compile_program,
    needs_shell,
    shell_process,
    shell_session,
)

pytestmark = needs_shell
IP_PKT = bytes.fromhex("00000000aa01" "00000000bb01" "0800"
                       "45000014000000004006" "0000" "0a000001" "0a000102")  # 10.0.0.1 -> 10.0.1.2, ttl 64
TABLES = ("route", "path_version", "path", "ecmp_group", "spray_group", "port_liveness", "port_mac", "acl")
# defined in the shell's process: a member, and an entry of any table kind
HELPERS = '''
def member(profile, mid, action, **params):
    m = sh.ActionProfileMember(profile)(member_id=mid, action=action)
    for k, v in params.items():
        m.action[k] = v
    m.insert()


def entry(table, action=None, priority=0, group=None, params=None, **match):
    te = sh.TableEntry(table)(action=action) if action else sh.TableEntry(table)
    for k, v in match.items():
        te.match[k] = v
    for k, v in (params or {}).items():
        te.action[k] = v
    if group is not None:
        te.group_id = group
    if priority:
        te.priority = priority
    te.insert()
'''


@pytest.fixture(scope="module")
def fabric(tmp_path_factory) -> tuple[Path, Path]:
    return compile_program(REPO / "p4src/fabric.p4", tmp_path_factory.mktemp("fabric"))


@pytest.fixture(scope="module")
def sh() -> Iterator[ShellProcess]:
    with shell_process() as proc:
        yield proc


@pytest.fixture
def sw(fabric: tuple[Path, Path], sh: ShellProcess) -> Iterator[RunningSwitch]:
    with running_switch(device_id=1, ports={1: "unused1", 2: "unused2", 3: "unused3"}) as switch, \
            shell_session(sh, switch, *fabric):
        sh.exec(HELPERS)
        yield switch


def test_fabric_every_table_kind(sw: RunningSwitch, sh: ShellProcess) -> None:
    # selectors: ECMP (two next hops), spray, one liveness group per port watching that port
    sh.call("member", "ecmp_selector", 1, "set_next_hop", port="2", dmac="00:00:00:00:00:02")
    sh.call("member", "ecmp_selector", 2, "set_next_hop", port="3", dmac="00:00:00:00:00:03")
    sh.exec('g = sh.ActionProfileGroup("ecmp_selector")(group_id=1)\ng.add(1).add(2)\ng.insert()')
    sh.call("member", "spray_selector", 1, "set_next_hop", port="2", dmac="00:00:00:00:00:02")
    sh.exec('sg = sh.ActionProfileGroup("spray_selector")(group_id=1)\nsg.add(1)\nsg.insert()')
    for port in (1, 2, 3):
        sh.call("member", "liveness_selector", port, "port_up")
        sh.exec(f'lg = sh.ActionProfileGroup("liveness_selector")(group_id={port})\n'
                f'lg.add({port}, watch_port={port.to_bytes(2, "big")!r})\nlg.insert()')
        sh.call("entry", "port_liveness", port=str(port), group=port)
        sh.call("entry", "port_mac", "set_smac", egress_port=str(port), params={"smac": f"00:00:00:00:ee:0{port}"})

    sh.call("entry", "route", "to_host", ipv4_dst="10.0.1.2/32", params={"port": "2", "dmac": "00:00:00:00:00:22"})
    sh.call("entry", "route", "set_path", ipv4_dst="10.1.0.0/16", params={"path_id": "7"})
    sh.call("entry", "path_version", "set_version", path_id="7", params={"version": "0"})
    sh.call("entry", "path", "path_ecmp", path_id="7", version="0")
    sh.call("entry", "path", "path_static", path_id="7", version="1", params={"port": "3", "dmac": "00:00:00:00:00:03"})
    sh.call("entry", "ecmp_group", path_id="7", version="0", group=1)
    sh.call("entry", "spray_group", path_id="8", version="0", group=1)
    sh.call("entry", "acl", "acl_drop", priority=10, ipv4_src="10.9.0.0&&&255.255.0.0", ingress_port="1")
    sh.exec('dflt = sh.TableEntry("path_version")(action="set_version", is_default=True)\n'
            'dflt.action["version"] = "1"\ndflt.modify()')

    counts = sh.eval(f"{{t: len(list(sh.TableEntry(t).read())) for t in {TABLES!r}}}")
    assert counts == {"route": 2, "path_version": 1, "path": 2, "ecmp_group": 1, "spray_group": 1,
                      "port_liveness": 3, "port_mac": 3, "acl": 1}
    assert sh.eval('len(list(sh.ActionProfileMember("liveness_selector").read()))') == 3

    # the installed state forwards: a packet for the local host leaves on port 2 with its MAC
    out = sw.device.process(1, IP_PKT)
    assert [p for p, _ in out] == [2]
    frame = out[0][1]
    assert frame[:6] == bytes.fromhex("000000000022") and frame[6:12] == bytes.fromhex("00000000ee02")

    # counters, direct counters and registers are readable
    sh.exec('rx = sh.CounterEntry("port_rx")\nrx.index = 1')
    assert sh.eval("next(iter(rx.read())).packet_count") == 1
    reg = sw.service.committed.binding.schema.registers
    assert sorted(r.name for r in reg.values()) == [
        "FabricIngress.flowlet.flow_acked", "FabricIngress.flowlet.flow_departure",
        "FabricIngress.flowlet.flow_pending_since", "FabricIngress.flowlet.flow_pending_wanted",
        "FabricIngress.flowlet.flow_sent_end", "FabricIngress.flowlet.flow_version",
        "FabricIngress.hold_depth", "FabricIngress.path_select.spray_rr",
        "FabricIngress.reservation.resv_mean_len", "FabricIngress.reservation.resv_next",
        "FabricIngress.reservation.resv_request",
        "FabricIngress.reservation.resv_window", "FabricIngress.reservation.uplink_horizon",
        "FabricIngress.slot_route.uplink_clock.uplink_free"]

    # everything goes away again
    sh.exec(f"""
for t in {TABLES!r}:
    sh.TableEntry(t).read(function=lambda e: e.delete())
for prof in ("ecmp_selector", "spray_selector", "liveness_selector"):
    sh.ActionProfileGroup(prof).read(function=lambda e: e.delete())
    sh.ActionProfileMember(prof).read(function=lambda e: e.delete())
""")
    assert all(len(t) == 0 for t in sw.device.pipeline.tables.values() if not t.info.is_const)
