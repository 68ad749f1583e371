"""The controller's command lines against p4sim switch processes and an emulator process."""

import re
import signal
import subprocess
import sys

import pytest

from control.tests.netbed import SwitchFarm, compile_program


def run(*args, timeout=60):
    return subprocess.run([sys.executable, "-m", "control", *args], capture_output=True, text=True,
                          timeout=timeout)


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    from topo.generators import ucd4
    from topo.model import save

    tmp = tmp_path_factory.mktemp("cli")
    compile_program("fabric", tmp / "build")
    farm = SwitchFarm(ucd4()).start()
    topo_file = tmp / "ucd4.json"
    save(farm.topo, topo_file)
    emu = subprocess.Popen([sys.executable, "-m", "emulation", "ocs-emulator", "--listen", "127.0.0.1:0",
                            "--ports", "6", "--instant"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    m = re.search(r"listening on (127.0.0.1:\d+)", emu.stdout.readline())
    assert m, emu.stderr.read()
    yield str(topo_file), str(tmp / "build"), m.group(1), tmp
    emu.send_signal(signal.SIGTERM)
    emu.wait(timeout=10)
    farm.stop()


def test_install_status_set_mode_reconfigure(setup):
    topo, build, ocs, tmp = setup
    r = run("install", "--topo", topo, "--build", build)
    assert r.returncode == 0, r.stderr
    assert "installed 4 switches" in r.stdout and "s1: " in r.stdout
    r = run("install", "--topo", topo, "--build", build)
    assert "0 insert, 0 modify, 0 delete" in r.stdout and ", 0 writes" in r.stdout
    r = run("status", "--topo", topo, "--build", build)
    assert r.returncode == 0 and r.stdout.count("ours") == 4, r.stdout
    r = run("set-mode", "static", "--topo", topo, "--build", build)
    assert r.returncode == 0 and r.stdout.startswith("mode static"), r.stderr
    r = run("ocs", "--ocs", ocs, "--duplex", "set", "3:1", "2:5", "6:4")
    assert r.returncode == 0, r.stderr
    events = tmp / "ev.jsonl"
    r = run("reconfigure", "--topo", topo, "--build", build, "--procedure", "mbb-timed", "--circuits",
            "reconfigured", "--ocs", ocs, "--hold", "0.1", "--events", str(events))
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("mbb-timed: total") and "hold" in r.stdout
    assert '"procedure-done"' in events.read_text()
    r = run("ocs", "--ocs", ocs, "show")
    assert "3 -> 10" in r.stdout and "4 -> 9" in r.stdout, r.stdout
    r = run("counters", "--topo", topo, "--build", build)
    assert r.returncode == 0, r.stderr


def test_failover_option(setup):
    topo, build, ocs, tmp = setup
    assert run("install", "--topo", topo, "--build", build).returncode == 0
    r = run("install", "--topo", topo, "--build", build, "--failover", "off")
    assert r.returncode == 0, r.stderr
    # only the liveness groups change (one per port), nothing is inserted or deleted
    rows = [line for line in r.stdout.splitlines() if line.startswith("s")]
    assert len(rows) == 4 and all(re.fullmatch(r"s\d: 0 insert, [1-9]\d* modify, 0 delete", x) for x in rows), rows
    entries = tmp / "entries-on"
    from tablegen.__main__ import main as tablegen

    assert tablegen([topo, "-o", str(entries)]) == 0
    r = run("install", "--topo", topo, "--build", build, "--entries", str(entries), "--failover", "off")
    assert r.returncode == 0 and ", 0 writes" in r.stdout, r.stdout + r.stderr
    r = run("set-mode", "ecmp", "--topo", topo, "--build", build, "--failover", "on")
    assert r.returncode == 0 and r.stdout.startswith("mode ecmp, failover on"), r.stderr
    assert "0 insert, 0 modify" not in r.stdout
    # a fresh reconfigure process turns failover off before the run, then runs bbm
    r = run("reconfigure", "--topo", topo, "--build", build, "--procedure", "bbm", "--circuits", "initial",
            "--ocs", ocs, "--failover", "off", "--events", str(tmp / "bbm.jsonl"))
    assert r.returncode == 0, r.stderr
    assert '"failover-off"' in (tmp / "bbm.jsonl").read_text()
    r = run("install", "--topo", topo, "--build", build, "--failover", "off")
    assert ", 0 writes" in r.stdout, r.stdout


def test_errors_are_one_line(setup):
    topo, build, ocs, tmp = setup
    r = run("install", "--topo", topo, "--build", str(tmp / "nothing"))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "make p4-build" in r.stderr
    r = run("reconfigure", "--topo", topo, "--build", build, "--procedure", "mbb", "--circuits", "x-y",
            "--ocs", ocs)
    assert r.returncode == 2 and "a map name (initial, reconfigured)" in r.stderr
