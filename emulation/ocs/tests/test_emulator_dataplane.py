"""The emulator driving a real `ocs` switch: circuits over P4Runtime, frames through veths, links down
while dark. Needs root (veth pairs); runs on the run's target (p4sim/target.py).

Each switch port is a fibre as in the emulation: the switch's veth and a tap's veth whose peers are
patched together; the emulator sets those two peers down while the port is dark, so both ends lose
carrier and no switch's own interface is ever set down (bmv2 stops receiving on every port then)."""

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from control.ocs.driver import duplex_pairs
from control.ocs.polatis import PolatisDriver
from control.switch import Pipeline, SwitchSession, wait_until
from emulation.fibre import patch
from emulation.ocs.dataplane import P4RuntimeCircuits
from emulation.ocs.delay import DelayModel
from emulation.ocs.emulator import EmulatedOcs
from emulation.ocs.schedule import Schedule, ScheduleRunner, round_robin, write_dataplane_schedule
from emulation.testing import SwitchProcess
from fabric.contract import SCHEDULE_CONFIG
from p4rt.client import P4RuntimeClient, wildcard
from p4rt.entities import TableEntry
from p4sim.target import Target

ROOT = Path(__file__).resolve().parents[3]
pytestmark = [pytest.mark.root, pytest.mark.skipif(os.geteuid() != 0, reason="needs root for veth pairs")]


def compile_ocs(out: Path) -> tuple[Path, Path]:
    p4src = Path(os.environ.get("P4SRC_DIR", ROOT / "p4src"))
    Target.from_env().compile(p4src / "ocs.p4", out, p4src)
    return out / "ocs.json", out / "ocs.p4info.txtpb"


@pytest.fixture
def veths():
    """Per port i: (switch end, tap end, the two patched peers the emulator toggles)."""
    tag = uuid.uuid4().hex[:5]
    ports = [(f"ocA{i}{tag}", f"ocB{i}{tag}", (f"ocM{i}{tag}", f"ocN{i}{tag}")) for i in (1, 2, 3)]
    for a, b, (m, n) in ports:
        for end, peer in ((a, m), (b, n)):
            subprocess.run(["ip", "link", "add", end, "type", "veth", "peer", "name", peer], check=True)
        patch(m, n)
        for ifname in (a, b, m, n):
            subprocess.run(["sysctl", "-qw", f"net.ipv6.conf.{ifname}.disable_ipv6=1"], check=False)
            subprocess.run(["ip", "link", "set", ifname, "up"], check=True)
    yield ports
    for a, b, _ in ports:
        subprocess.run(["ip", "link", "del", a], check=False)
        subprocess.run(["ip", "link", "del", b], check=False)


def carrier(ifname: str) -> int:
    try:
        return int(Path(f"/sys/class/net/{ifname}/carrier").read_text())
    except OSError:  # reading carrier of a down interface fails with EINVAL
        return 0


class Tap:
    def __init__(self, ifname):
        self.s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
        self.s.bind((ifname, 0))
        self.s.settimeout(0.05)

    def send(self, frame):
        try:
            self.s.send(frame)
        except OSError:  # interface down: nothing can be sent, as on a dark fibre
            pass

    def received(self, marker: bytes, window: float) -> bool:
        deadline = time.monotonic() + window
        while time.monotonic() < deadline:
            try:
                if marker in self.s.recv(4096):
                    return True
            except (TimeoutError, OSError):
                continue
        return False

    def close(self):
        self.s.close()


def send_until_received(tx: "Tap", rx: "Tap", marker: bytes, tries: int = 20) -> bool:
    """Send a marked frame until the far end sees one (a loaded machine may take a while)."""
    for _ in range(tries):
        tx.send(frame(marker))
        if rx.received(marker, 0.2):
            return True
    return False


def frame(marker: bytes) -> bytes:
    return bytes.fromhex("020000000002" "020000000001" "88b5") + marker + bytes(46)


def test_emulator_drives_the_ocs_switch(tmp_path, veths):
    js, info = compile_ocs(tmp_path)
    (a1, b1, p1), (a2, b2, p2), (a3, b3, p3) = veths
    sw = SwitchProcess(device_id=1, ports={1: a1, 2: a2, 3: a3}).start()
    events = tmp_path / "ev.jsonl"
    emu = subprocess.Popen(
        [sys.executable, "-m", "emulation", "ocs-emulator", "--listen", "127.0.0.1:0", "--ports", "3",
         "--dataplane", sw.address, "--device-id", "1", "--p4info", str(info), "--config", str(js),
         "--mirror-ms", "20", "--lock-ms", "30", "--lock-jitter-ms", "0", "--poll-ms", "50",
         "--missed-poll-prob", "0", "--events", str(events),
         *[arg for i, p in ((1, p1), (2, p2), (3, p3)) for end in p for arg in ("--link", f"{i}={end}")]],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    taps = {name: Tap(name) for name in (b1, b2, b3)}
    try:
        line = emu.stdout.readline()
        m = re.search(r"listening on 127.0.0.1:(\d+)", line)
        assert m, line + emu.stderr.read()
        time.sleep(0.3)
        assert carrier(b1) == 0 and carrier(b2) == 0  # no circuit: the ToR ends see no light
        with PolatisDriver("127.0.0.1", int(m.group(1)), timeout=5) as drv:
            t0 = time.monotonic()
            drv.connect(duplex_pairs([(1, 2)], 3))
            drv.wait_complete()
            deadline = time.monotonic() + 5
            while not (carrier(b1) and carrier(b2)) and time.monotonic() < deadline:
                time.sleep(0.005)
            up_after = time.monotonic() - t0
            assert carrier(b1) and carrier(b2) and up_after >= 0.095  # 20 + 30 + 50 ms
            assert send_until_received(taps[b1], taps[b2], b"M1")
            with P4RuntimeClient(sw.address, device_id=1, election_id=(0, 0)) as reader:
                reader.get_pipeline()
                got = sorted(str(e) for e in reader.read_entities([wildcard(reader.schema, "table_entry")]))
            assert got == ["circuit ingress_port=1 -> cross_connect(port=2)",
                           "circuit ingress_port=2 -> cross_connect(port=1)"]
            # re-point slot 1 to slot 3: 1 and 2 go dark at once, 1 <-> 3 lights later
            drv.set_map(duplex_pairs([(1, 3)], 3))
            assert wait_until(lambda: carrier(b2) == 0 and carrier(b1) == 0, 2.0)
            deadline = time.monotonic() + 5
            while not (carrier(b1) and carrier(b3)) and time.monotonic() < deadline:
                time.sleep(0.005)
            assert send_until_received(taps[b3], taps[b1], b"M3")
            assert drv.port_status(4).light and drv.port_status(5).light is False
    finally:
        for t in taps.values():
            t.close()
        emu.send_signal(signal.SIGTERM)
        try:
            emu.wait(timeout=10)
        finally:
            if emu.poll() is None:
                emu.kill()
                emu.wait()
        sw.stop()
    kinds = [json.loads(x)["event"] for x in events.read_text().splitlines()]
    assert kinds.count("command") == 2 and "port-down" in kinds and kinds.count("port-up") >= 4


def test_circuits_and_schedule_come_back_after_the_ocs_switch_restarts(tmp_path):
    """The switch restarts in the middle of a schedule run: the watch reconciles it to what the OCS
    set (its time-flow schedule and its circuits, those set while it was away included), not away from it."""
    js, info = compile_ocs(tmp_path)
    pipe = Pipeline.load("ocs", info, js)
    sw = SwitchProcess(device_id=1).start()
    session = SwitchSession("ocs", sw.address, 1, pipe, timeout=3)
    stop = __import__("threading").Event()
    try:
        session.connect()
        client = session.client
        circuits = P4RuntimeCircuits(session)
        circuits.clear_all()
        write_dataplane_schedule(circuits, Schedule(round_robin(4), day_ms=10, night_ms=1), 4)
        schedule = _held_lines(client)
        assert sum(line.startswith("slot_circuit") for line in schedule) == 3 * 4  # 3 maps of 4 inputs, by day
        circuits.watch(stop, period=0.1)
        ocs = EmulatedOcs(4, DelayModel.instant(), circuits)
        try:
            ocs.connect(duplex_pairs([(1, 2)], 4))
            assert ocs.wait_settled(2)
            sw.stop()
            ocs.connect(duplex_pairs([(3, 4)], 4))  # while the switch is down
            assert ocs.wait_settled(2)
            sw.start()
            deadline = time.monotonic() + 15
            while circuits.resyncs == 0 and time.monotonic() < deadline:
                time.sleep(0.05)
            got = _held_lines(client)
            assert [line for line in got if line.startswith("circuit ")] == [
                f"circuit ingress_port={a} -> cross_connect(port={b})" for a, b in ((1, 2), (2, 1), (3, 4), (4, 3))]
            assert [line for line in got if not line.startswith("circuit ")] == schedule
            assert [str(e) for e in client.read_entities([TableEntry(SCHEDULE_CONFIG, default=True)])] == \
                [e.canonical(client.schema) for e in session.desired.defaults]
        finally:
            ocs.close()
    finally:
        stop.set()
        session.close()
        sw.stop()


def _held_lines(client: P4RuntimeClient) -> list[str]:
    return sorted(str(e) for e in client.read_entities([wildcard(client.schema, "table_entry")]))


def test_schedule_mode_on_the_ocs_switch(tmp_path, veths):
    """Round robin over 3 slots on the real `ocs` switch: slot 1's frames reach slot 2, then slot 3."""
    import threading


    js, info = compile_ocs(tmp_path)
    pipe = Pipeline.load("ocs", info, js)
    (a1, b1, p1), (a2, b2, p2), (a3, b3, p3) = veths
    sw = SwitchProcess(device_id=1, ports={1: a1, 2: a2, 3: a3}).start()
    session = SwitchSession("ocs", sw.address, 1, pipe)
    taps = {name: Tap(name) for name in (b1, b2, b3)}
    got: dict[str, int] = {b2: 0, b3: 0}
    stop = threading.Event()

    def receive(name):
        while not stop.is_set():
            if taps[name].received(b"SCHED", 0.05):
                got[name] += 1

    threads = [threading.Thread(target=receive, args=(n,), daemon=True) for n in (b2, b3)]
    try:
        session.connect()
        ocs = EmulatedOcs(3, DelayModel.instant(), P4RuntimeCircuits(session))
        runner = ScheduleRunner(ocs, Schedule(round_robin(3), day_ms=150, night_ms=20))
        try:
            for t in threads:
                t.start()
            runner.start()
            deadline = time.monotonic() + 1.2
            while time.monotonic() < deadline:
                taps[b1].send(frame(b"SCHED"))
                time.sleep(0.005)
            assert runner.slots_run >= 6
        finally:
            runner.stop()
            ocs.close()
        time.sleep(0.1)
    finally:
        stop.set()
        for t in threads:
            t.join()
        for t in taps.values():
            t.close()
        session.close()
        sw.stop()
    # each slot gets about half the days' frames (1.2 s, 170 ms slots, 5 ms spacing)
    assert got[b2] > 20 and got[b3] > 20, got
