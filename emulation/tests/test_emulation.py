"""Mininet emulation: fat-tree pingall in ECMP and spray, ucd4 with the OCS, bad input, clean-net.

Needs root, Mininet and the switch binary ($SWITCH, default p4sim-switch); compiles the programs
with $P4C (default p4sim-compile) into a temporary build directory. Node names carry a prefix
`t<2 chars of the PID>` so a test run does not collide with another or with a `make run-topo`.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from emulation.state import STATE_DIR, RunState, clean_net, interface_exists, proc_start_time
from p4sim.target import PORT_STATUS_SETTLE_S, Target
from topo import generators

pytestmark = [pytest.mark.root, pytest.mark.skipif(os.geteuid() != 0, reason="Mininet needs root")]
mininet = pytest.importorskip("mininet.net", reason="Mininet is not installed")

import emulation.state as state_mod  # noqa: E402
from control.ocs.driver import duplex_pairs  # noqa: E402
from emulation.links import cpu_mask, rps_path  # noqa: E402
from emulation.network import Emulation  # noqa: E402 - after the skip checks
from emulation.p4switch import free_grpc_base  # noqa: E402
from emulation.priority import (  # noqa: E402
    HOST_NICE,
    SOFTIRQ_NICE,
    SWITCH_REALTIME,
    SoftirqBoost,
    softirq_threads,
)

# per test process, so two test runs (or a test run and `make run-topo`) never share an interface name
PREFIX = "t" + "0123456789abcdefghijklmnopqrstuvwxyz"[os.getpid() % 36] + "0123456789abcdefghijklmnopqrstuvwxyz"[
    os.getpid() // 36 % 36]
REPO = Path(__file__).resolve().parents[2]
FAST_OCS = ["--mirror-ms", "20", "--lock-ms", "0", "--lock-jitter-ms", "0", "--poll-ms", "40",
            "--missed-poll-prob", "0"]


@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """fabric and ocs compiled into a fresh directory."""
    out = tmp_path_factory.mktemp("build")
    Target.from_env().ensure_build(out, REPO / "p4src")
    return out


def our_interfaces() -> list[str]:
    """Root-namespace interfaces carrying the test prefix."""
    return sorted(n for n in os.listdir("/sys/class/net") if n.startswith(PREFIX))


def assert_gone(pids: dict[str, int]) -> None:
    """Every listed process has exited, and no interface of ours is left."""
    deadline = time.monotonic() + 5
    alive = {}
    while time.monotonic() < deadline:
        alive = {w: p for w, p in pids.items() if Path(f"/proc/{p}").exists()
                 and "zombie" not in Path(f"/proc/{p}/status").read_text().lower()}
        if not alive and not our_interfaces():
            return
        time.sleep(0.1)
    assert not alive, f"processes left: {alive}"
    assert not our_interfaces(), f"interfaces left: {our_interfaces()}"


@pytest.fixture(autouse=True)
def _run_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run records and logs of each test in its own directories (subprocesses too), not /run/hitless and
    /var/log/hitless."""
    d = tmp_path / "runs"
    monkeypatch.setattr(state_mod, "STATE_DIR", d)
    monkeypatch.setenv("HITLESS_RUN_DIR", str(d))
    monkeypatch.setattr(state_mod, "LOG_ROOT", tmp_path / "logs")
    monkeypatch.setenv("HITLESS_LOG_DIR", str(tmp_path / "logs"))
    return d


@pytest.fixture(autouse=True)
def _no_leftovers():
    assert not our_interfaces(), f"interfaces of an earlier run: {our_interfaces()}"
    yield
    assert not our_interfaces(), f"interfaces left: {our_interfaces()}"


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["ecmp", "spray"])
def test_fattree_k4_pingall(build: Path, mode: str) -> None:
    emu = Emulation(generators.fattree(4), mode, build_dir=build, grpc_base=free_grpc_base(40), prefix=PREFIX)
    with emu:
        pids = emu.pids()
        assert len([w for w in pids if w.startswith("switch ")]) == 20
        assert emu.pingall() == 0.0
        # fabric links carry the tag: MTU 1600; hosts stay at 1500 with offloads off
        assert Path(f"/sys/class/net/{emu.intf('e0_0', 3)}/mtu").read_text().strip() == "1600"
        assert Path(f"/sys/class/net/{emu.intf('e0_0', 1)}/mtu").read_text().strip() == "1500"
        rc, out = emu.run("h0_0_0", f"ethtool -k {emu.intf('h0_0_0', 0)}")
        assert rc == 0 and "tcp-segmentation-offload: off" in out
        assert "generic-receive-offload: off" in out
        assert "PERMANENT" in emu.cmd("h0_0_0", "ip neigh show 10.0.0.1")
        # every veth steers by flow hash (RPS over every CPU), the hosts' ends too
        mask = int(cpu_mask().replace(",", ""), 16)
        assert int(Path(rps_path(emu.intf("e0_0", 3))).read_text().replace(",", ""), 16) == mask
        host_rps = emu.cmd("h0_0_0", f"cat {rps_path(emu.intf('h0_0_0', 0))}")  # a host has its own sysfs
        assert int(host_rps.strip().replace(",", ""), 16) == mask
        state_file = Path(emu.state.path)
        assert state_file.exists()
        assert emu.rss_bytes() > 0
    assert not state_file.exists()
    assert_gone(pids)


@pytest.mark.slow
def test_switches_share_processes_and_stop_and_restart_alone(build: Path) -> None:
    """A switch binary that runs several switches a process (p4sim-switch) runs them so: pingall passes,
    a stopped switch leaves the others of its process running, and comes back reconciled."""
    switch = str(Path(sys.executable).parent / "p4sim-switch")
    topo = generators.leafspine(leaves=2, spines=2, hosts_per_leaf=1)
    emu = Emulation(topo, "ecmp", build_dir=build, switch_bin=switch, grpc_base=free_grpc_base(10),
                    prefix=PREFIX, switches_per_process=2)
    with emu:
        pids = emu.pids()
        assert len({p for w, p in pids.items() if w.startswith("switch ")}) == 2
        assert emu.pingall() == 0.0
        first, second = (s.name for s in topo.switches[:2])  # one process
        emu.switches[first].stop_process()
        deadline = time.monotonic() + 10
        while socket.socket().connect_ex(("127.0.0.1", emu.topo.switch_map()[first].grpc_port)) == 0:
            assert time.monotonic() < deadline, f"{first} still serves after its stop"
            time.sleep(0.05)
        assert emu.switches[second].pid_started == emu.switches[first].proc.pid  # the process runs on
        assert emu.counters(second, "port_rx") is not None  # and so does its other switch
        emu.switches[first].start([])
        emu.switches[first].wait_ready()
        deadline = time.monotonic() + 30
        while emu.pingall() != 0.0:
            assert time.monotonic() < deadline, f"{first} not reconciled after its restart"
    assert_gone(pids)


@pytest.mark.slow
def test_ucd4_cli_pingall_iperf3_and_mbb_over_circuit(build: Path, tmp_path: Path) -> None:
    script = tmp_path / "cmds"
    # h2 (s2) -> h1 (s1) crosses the circuit OCS 3 <-> 1 of the initial map; then the hitless
    # procedure to the `reconfigured` map, after which h2 reaches h3 over circuit 3 <-> 4
    script.write_text("pingall\niperf3 h2 h1 1\nh1 ping -c1 -W2 10.0.4.2\ncircuits\n"
                      "reconfigure mbb reconfigured\nh2 ping -c1 -W2 10.0.3.2\ncircuits\npingall\n")
    res = subprocess.run([sys.executable, "-m", "emulation", "run", "--topo", "ucd4", "--build", str(build),
                          "--prefix", PREFIX, "--grpc-base", str(free_grpc_base(40)), "--ocs-arg=--instant",
                          "--cmd", str(script)], capture_output=True, text=True, timeout=180, cwd=REPO)
    out = res.stdout + res.stderr
    assert res.returncode == 0, out
    for stage in ("topology", "compile", "links", "switches", "ocs", "tables", "ready", "stopped"):
        assert f"] {stage}: " in out
    assert out.count("*** Results: 0% dropped (12/12 received)") == 2
    mbps = float(out.split("iperf3 h2 -> h1: ")[1].split()[0])
    assert mbps > 1.0
    assert out.count(" 1 received") == 2
    assert "mbb: total " in out
    assert "ocs: circuits [(3, 4), (2, 5)]" in out and "port 1: s1:2 dark (no circuit)" in out


@pytest.mark.slow
def test_ucd4_dark_ports_lose_carrier_and_recover(build: Path) -> None:
    topo = generators.ucd4()
    topo.params["switch_queue_pkts"] = 3
    emu = Emulation(topo, "ecmp", build_dir=build, grpc_base=free_grpc_base(40), prefix=PREFIX,
                    ocs_args=FAST_OCS, rto_min="10ms")
    with emu:
        # every switch port (host-facing, bypass, fibre) queues at most 3 frames; the hosts keep theirs
        for port in (1, 2, 4):
            qdiscs = subprocess.run(["tc", "qdisc", "show", "dev", emu.intf("s1", port)], capture_output=True,
                                    text=True, check=True).stdout
            assert re.search(r"(pfifo|netem) 10: .*limit 3", qdiscs), qdiscs
        assert "limit 3" not in emu.cmd("h1", "tc qdisc show")
        assert "rto_min lock 10ms" in emu.cmd("h1", "ip route show default") or \
            "rto_min 10ms" in emu.cmd("h1", "ip route show default")
        assert emu.ocs is not None and emu.ocs.circuits == [(3, 1), (2, 5), (6, 4)]
        switch_pids = [pid for name, pid in emu.pids().items() if name.startswith("switch ")]
        # every thread of every switch real-time (emulation/priority.py)
        threads = [int(t) for p in switch_pids for t in os.listdir(f"/proc/{p}/task")]
        assert len(switch_pids) == 5 and {(os.sched_getscheduler(t), os.sched_getparam(t).sched_priority)
                                          for t in threads} == {(os.SCHED_FIFO, SWITCH_REALTIME)}
        # the data plane before the software that drives it (emulation/priority.py)
        assert {int(emu.cmd(h, "nice").strip()) for h in emu.hosts} == {HOST_NICE}
        assert {os.getpriority(os.PRIO_PROCESS, t) for t in softirq_threads()} == {SOFTIRQ_NICE}
        assert all(emu.ocs_link_up(p) for p in range(1, 7))
        # `reconfigured` keeps 2-5, joins 3-4 and leaves 1 and 6 dark
        emu.set_circuits([(3, 4), (2, 5)])
        assert not emu.ocs_link_up(1) and not emu.ocs_link_up(6)
        assert emu.ocs_link_up(3) and emu.ocs_link_up(4)
        with emu.ocs.driver() as drv:
            assert drv.query()[3] == 6 + 4
        # s1's route to h2 still points at the dark port 2 (the tables were not touched): the switch
        # sees no carrier there (within its port poll) and fails over to the shadow path, the bypass
        # link on port 4
        time.sleep(PORT_STATUS_SETTLE_S)
        before = emu.counters("s1")
        emu.cmd("h1", "ping -c3 -i0.2 -W1 10.0.2.2")
        after = emu.counters("s1")
        assert after.get(4, (0, 0))[0] - before.get(4, (0, 0))[0] >= 3
        assert after.get(2, (0, 0))[0] == before.get(2, (0, 0))[0]
        emu.set_circuits([(3, 1), (2, 5), (6, 4)])
        assert all(emu.ocs_link_up(p) for p in range(1, 7))
        # the switches kept their ports through the flap: the fabric still delivers everything
        assert emu.pingall() == 0.0
        # a procedure changes the OCS through a driver of its own, which the emulation is not told of;
        # a map that keeps one of those circuits must still come up (its ports send no port-up event)
        with emu.ocs.driver() as drv:
            drv.set_map(duplex_pairs([(3, 4), (2, 5)], emu.ocs.size))
            drv.wait_complete()
        emu.set_circuits([(3, 4), (1, 6)], timeout=5)
        assert emu.ocs_link_up(1) and emu.ocs_link_up(6) and not emu.ocs_link_up(2)
        pids = emu.pids()
    assert_gone(pids)
    assert_boost_released(os.getpid())


def assert_boost_released(pid: int) -> None:
    """The run of `pid` holds the softirq boost no more; the threads are back unless another run holds it."""
    holders = SoftirqBoost(STATE_DIR).holders()
    assert pid not in holders
    if not holders:
        assert SOFTIRQ_NICE not in {os.getpriority(os.PRIO_PROCESS, t) for t in softirq_threads()}, \
            "the softirq threads kept the run's priority after it ended"


def test_missing_switch_binary(build: Path) -> None:
    with pytest.raises(ValueError, match="switch binary 'no-such-switch': not found"):
        Emulation(generators.ucd4(), build_dir=build, switch_bin="no-such-switch", prefix=PREFIX).start()


def test_switch_that_fails_to_start_is_cleaned_up(build: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad-switch"
    bad.write_text("#!/bin/sh\necho 'bad-switch: cannot open program' >&2\nexit 3\n")
    bad.chmod(0o755)
    emu = Emulation(generators.ucd4(), build_dir=build, switch_bin=str(bad), grpc_base=free_grpc_base(40),
                    prefix=PREFIX)
    with pytest.raises(RuntimeError, match=r"exited with code 3 .*cannot open program"):
        emu.start()
    assert emu.state is None and emu.net is None


def test_grpc_port_collision(build: Path) -> None:
    base = free_grpc_base(40)
    with socket.socket() as s:
        s.bind(("127.0.0.1", base + 3))
        s.listen()
        with pytest.raises(ValueError, match=f"gRPC port 127.0.0.1:{base + 3} of s3: already in use"):
            Emulation(generators.ucd4(), build_dir=build, grpc_base=base, prefix=PREFIX).start()


def test_bad_mode_and_missing_build(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="mode 'fast': expected one of static, ecmp, spray"):
        Emulation(generators.ucd4(), "fast")
    with pytest.raises(ValueError, match="fabric.json: missing"):
        Emulation(generators.ucd4(), build_dir=tmp_path, prefix=PREFIX).start()


def test_cli_bad_input_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "topo.json"
    bad.write_text('{"format": 1, "name": "x", "kind": "x", "switches": [{"name": "s1"}]}')
    res = subprocess.run([sys.executable, "-m", "emulation", "run", "--topo-file", str(bad), "--build", str(tmp_path)],
                         capture_output=True, text=True, timeout=60, cwd=REPO)
    assert res.returncode == 2
    assert len(res.stderr.strip().splitlines()) == 1 and res.stderr.startswith("emulation run: ")
    res = subprocess.run([sys.executable, "-m", "emulation", "run", "--topo", "ucd4", "--cmd", "frobnicate h1"],
                         capture_output=True, text=True, timeout=60, cwd=REPO)
    assert res.returncode == 2 and "command 'frobnicate': expected a Mininet CLI command" in res.stderr
    res = subprocess.run([sys.executable, "-m", "emulation", "run", "--topo", "torus"], capture_output=True, text=True,
                         timeout=60, cwd=REPO)
    assert res.returncode == 2 and "invalid choice: 'torus'" in res.stderr


def test_clean_net_removes_what_a_killed_run_left(tmp_path: Path) -> None:
    a, b = f"{PREFIX}cna", f"{PREFIX}cnb"
    subprocess.run(["ip", "link", "add", a, "type", "veth", "peer", "name", b], check=True)
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        state = RunState.create("killed", tmp_path)
        state.add_process(sleeper.pid, "switch x")
        state.add_interfaces([a])
        assert clean_net(tmp_path) == [f"run killed: still running (pid {os.getpid()}); skipped"]
        # the owner is gone: as after `kill -9` of the run
        state.owner.start_time = -1
        state.save()
        assert clean_net(tmp_path) == ["run killed: stopped 1 processes, deleted 1 interfaces"]
        assert sleeper.wait(timeout=5) is not None
        assert not interface_exists(a) and not interface_exists(b)
        assert not list(tmp_path.glob("*.json"))
    finally:
        if sleeper.poll() is None:
            sleeper.kill()
            sleeper.wait()
        if interface_exists(a):
            subprocess.run(["ip", "link", "del", a], check=False)


def test_clean_net_never_kills_a_recycled_pid(tmp_path: Path) -> None:
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        state = RunState.create("old", tmp_path)
        state.owner.start_time = -1
        state.add_process(sleeper.pid, "switch x")
        state.processes[0].start_time = (proc_start_time(sleeper.pid) or 0) + 1  # another process had this PID
        state.save()
        assert clean_net(tmp_path) == ["run old: stopped 0 processes, deleted 0 interfaces"]
        assert sleeper.poll() is None
    finally:
        sleeper.kill()
        sleeper.wait()


def _start_cli_run(build: Path, log: Path, *extra: str) -> subprocess.Popen:
    """`python -m emulation run` of ucd4 in its own session, output to a file; returns once it is ready."""
    cmd = [sys.executable, "-m", "emulation", "run", "--topo", "ucd4", "--build", str(build), "--prefix", PREFIX,
           "--grpc-base", str(free_grpc_base(40)), "--ocs-arg=--instant", *extra]
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=REPO, start_new_session=True)
    deadline = time.monotonic() + 90
    while "] ready: " not in log.read_text():
        assert proc.poll() is None, log.read_text()
        assert time.monotonic() < deadline, log.read_text()
        time.sleep(0.1)
    return proc


def _run_pids(log: Path) -> dict[str, int]:
    run_dir = Path(log.read_text().split("logs in ")[1].split()[0])  # <log root>/<run id>
    state = RunState.load(state_mod.STATE_DIR / f"{run_dir.name}.json")
    return {p.what: p.pid for p in state.processes}


@pytest.mark.slow
def test_sigterm_cleans_up(build: Path, tmp_path: Path) -> None:
    log = tmp_path / "run.log"
    proc = _start_cli_run(build, log, "--cmd", "h1 sleep 60")
    pids = _run_pids(log)
    proc.terminate()
    assert proc.wait(timeout=60) == 143
    assert "] stopped: " in log.read_text()
    assert_gone(pids)


@pytest.mark.slow
def test_killed_run_is_removed_by_clean_net(build: Path, tmp_path: Path) -> None:
    log = tmp_path / "run.log"
    proc = _start_cli_run(build, log, "--cmd", "h1 sleep 60")
    pids = _run_pids(log)
    assert our_interfaces()
    proc.kill()
    proc.wait(timeout=10)
    res = subprocess.run([sys.executable, "-m", "emulation", "clean-net"], capture_output=True, text=True, timeout=60,
                         cwd=REPO)
    assert res.returncode == 0 and "stopped " in res.stdout, res.stdout + res.stderr
    assert_boost_released(proc.pid)
    assert_gone(pids)


@pytest.mark.slow
def test_interactive_cli_reads_commands_and_cleans_up_on_exit(build: Path) -> None:
    res = subprocess.run([sys.executable, "-m", "emulation", "run", "--topo", "ucd4", "--build", str(build), "--prefix",
                          PREFIX, "--grpc-base", str(free_grpc_base(40)), "--ocs-arg=--instant"],
                         input="circuits\nh1 ping -c1 -W2 10.0.2.2\ntables s4\nexit\n", capture_output=True,
                         text=True, timeout=180, cwd=REPO)
    out = res.stdout + res.stderr
    assert res.returncode == 0, out
    assert "mininet> " in out and "ocs: circuits [(3, 1), (2, 5), (6, 4)]" in out
    assert " 1 received" in out and "route ipv4_dst=10.0.4.2/32 -> to_host(port=1" in out
    assert "] stopped: " in out
