"""Abuse suite of what runs commands for the emulation: option and spec strings that once reached a
shell (`--rto-min`, experiment `rto_min` and `sysctl`, the Makefile's TOPO_FILE, CMD, K and RUN_ARGS).
Each injection must be refused or stay a literal value; none may run. Host set-up is checked in a
network namespace of the test's own (root), removed at the end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from emulation.__main__ import main
from emulation.links import HostCommand, check_rto_min, host_commands, run_in
from scripts import spec as spec_mod
from scripts.runner import _tune_hosts
from topo.generators import ucd4

REPO = Path(__file__).resolve().parents[2]
INJECTIONS = ["10ms; touch {f}; true", "10ms && touch {f}", "`touch {f}`", "$(touch {f})", "10ms\ntouch {f}",
              "10ms | touch {f}", "10ms' ; touch {f} '"]
SHELLS = {"sh", "bash", "dash", "zsh", "/bin/sh", "/bin/bash"}


@pytest.fixture
def marker(tmp_path: Path) -> Path:
    """A file each injection tries to create."""
    return tmp_path / "INJECTED"


@pytest.mark.parametrize("good", ["10ms", "200", "0.5s", "2000ms", "120s", "900us"])
def test_rto_min_durations_accepted(good: str) -> None:
    assert check_rto_min(good) == good


@pytest.mark.parametrize("bad", ["0ms", "121s", "10 ms", "10min", "-5ms", "1e3ms", "", "ms"])
def test_rto_min_non_durations_refused(bad: str) -> None:
    with pytest.raises(ValueError, match=r"rto_min .*: expected a duration above 0 and at most 120 s"):
        check_rto_min(bad)


@pytest.mark.parametrize("attack", INJECTIONS)
def test_rto_min_injection_is_refused_everywhere(attack: str, marker: Path, capsys: pytest.CaptureFixture) -> None:
    value = attack.format(f=marker)
    t = ucd4()
    h = t.hosts[0]
    with pytest.raises(ValueError, match="rto_min"):
        host_commands(h, "h1-eth0", "02:00:00:01:00:01", t.hosts[1:], value)

    assert main(["run", "--topo", "ucd4", "--rto-min", value]) == 2  # refused before anything starts
    err = capsys.readouterr().err
    assert err.startswith("emulation run: rto_min ") and err.count("\n") == 1
    data = {"name": "x", "kind": "reconfiguration", "streams": [{"src": "h2", "dst": "h3"}],
            "variants": [{"name": "v", "procedure": "mbb", "rto_min": value}]}
    with pytest.raises(ValueError, match=r"variants\[0\]: rto_min"):
        spec_mod.parse(data)
    assert not marker.exists()


def test_emulation_refuses_an_rto_min_before_starting(marker: Path) -> None:
    pytest.importorskip("mininet.net", reason="Mininet is not installed")
    # imported here, not at the top: Mininet is an optional heavy dependency
    from emulation.network import Emulation

    with pytest.raises(ValueError, match="rto_min"):
        Emulation(ucd4(), "ecmp", rto_min=f"10ms; touch {marker}")
    assert not marker.exists()


def test_host_commands_are_argument_lists_without_a_shell() -> None:
    t = ucd4()
    cmds = host_commands(t.hosts[0], "h1-eth0", "02:00:00:01:00:01", t.hosts[1:], "10ms")
    assert all(isinstance(c, HostCommand) and c.argv[0] not in SHELLS and "-c" not in c.argv for c in cmds)
    batch = next(c for c in cmds if c.argv == ["ip", "-batch", "-"]).stdin
    assert "route replace default via 10.0.1.1 dev h1-eth0 rto_min 10ms" in batch.splitlines()


@pytest.mark.parametrize(("sysctl", "msg"), [
    ({"net.ipv4.tcp_reordering": "100; touch {f}"}, "expected an integer"),
    ({"net.ipv4.tcp_reordering": "`touch {f}`"}, "expected an integer"),
    ({"net.ipv4.tcp_reordering; touch {f}": 1}, "expected a per-namespace net.* key"),
    ({"net.ipv4.tcp_rmem": "4096  131072"}, "expected an integer"),
    ({"kernel.panic": 1}, "expected a per-namespace net.* key"),
    ({"net.ipv4.tcp_recovery": True}, "expected an integer"),
])
def test_spec_sysctl_injection_is_refused(sysctl: dict, msg: str, marker: Path) -> None:
    sysctl = {k.format(f=marker): (v.format(f=marker) if isinstance(v, str) else v) for k, v in sysctl.items()}
    data = {"name": "x", "kind": "reconfiguration", "streams": [{"src": "h2", "dst": "h3"}],
            "variants": [{"name": "v", "procedure": "mbb", "sysctl": sysctl}]}
    with pytest.raises(ValueError, match=rf"variants\[0\]: sysctl .*{msg}"):
        spec_mod.parse(data)
    assert not marker.exists()


class _Recorder:
    """A stand-in Mininet host: records what would run, runs nothing."""

    def __init__(self) -> None:
        self.argv: list[list[str]] = []

    def popen(self, argv: list[str], **_kw):
        self.argv.append(argv)
        return subprocess.Popen(["true"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)


def test_runner_sets_sysctls_as_argument_lists() -> None:
    data = {"name": "x", "kind": "reconfiguration", "streams": [{"src": "h2", "dst": "h3"}],
            "variants": [{"name": "v", "procedure": "mbb",
                          "sysctl": {"net.ipv4.tcp_reordering": 100, "net.ipv4.tcp_rmem": "4096 131072 6291456"}}]}
    variant = spec_mod.parse(data).variants[0]
    hosts = {"h1": _Recorder(), "h2": _Recorder()}
    _tune_hosts(type("Emu", (), {"hosts": hosts})(), variant)
    assert hosts["h2"].argv == [["sysctl", "-qw", "net.ipv4.tcp_reordering=100"],
                                ["sysctl", "-qw", "net.ipv4.tcp_rmem=4096 131072 6291456"]]


@pytest.mark.parametrize(("var", "value"), [
    ("TOPO_FILE", "my`touch {f}`.json"), ("TOPO_FILE", "a$$(touch {f})b.json"), ("TOPO_FILE", 'x" ; touch {f} ; "'),
    ("CMD", 'pingall" ; touch {f} ; echo "'), ("CMD", "h1 ping `touch {f}`"), ("CMD", "$$(touch {f})"),
    ("K", "4; touch {f}"), ("RUN_ARGS", "--pcap ; touch {f}"), ("OCS", "1`touch {f}`"),
])
def test_makefile_passes_values_without_a_shell_reading_them(var: str, value: str, marker: Path,
                                                             tmp_path: Path) -> None:
    """`make run-topo` with a recorder for the hitless command: the value must arrive as literal argument text. ($$ is
    make's own escape of $: the shell then sees "$(touch ...)".)"""
    value = value.format(f=marker)
    literal = value.replace("$$", "$")
    record = tmp_path / "argv.json"
    fake = tmp_path / "fake-hitless"
    fake.write_text(f"#!{sys.executable}\nimport json, sys\njson.dump(sys.argv[1:], open({str(record)!r}, 'w'))\n")
    fake.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("TOPO_FILE", "CMD", "K", "RUN_ARGS", "OCS", "MAKEFLAGS")}
    res = subprocess.run(["make", "--no-print-directory", "-o", ".venv/.pip-stamp", "run-topo", f"HITLESS={fake}",
                          f"{var}={value}"], cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    assert not marker.exists(), f"{var}={value!r} ran a command"
    argv = json.loads(record.read_text())
    if var == "RUN_ARGS":
        assert argv[-len(literal.split()):] == literal.split()
    else:
        flag = {"TOPO_FILE": "--topo-file", "CMD": "--cmd", "K": "--k", "OCS": "--ocs"}[var]
        assert argv[argv.index(flag) + 1] == literal


@pytest.mark.root
@pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root")
def test_host_set_up_runs_in_a_namespace_without_a_shell(marker: Path) -> None:
    """Every host command, run as the emulation runs it (no shell), in a namespace of this test."""
    t = ucd4()
    h, gw_mac = t.hosts[0], "02:00:00:01:00:01"
    ns, eth, peer = f"hxrel{os.getpid() % 10000}", "h1-eth0", f"hxr{os.getpid() % 100000}p"

    class NsNode:
        def popen(self, argv: list[str], **kw):
            return subprocess.Popen(["ip", "netns", "exec", ns, *argv], **kw)

    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        subprocess.run(["ip", "link", "add", peer, "type", "veth", "peer", "name", eth, "netns", ns], check=True)
        subprocess.run(["ip", "-n", ns, "addr", "add", h.ip, "dev", eth], check=True)
        subprocess.run(["ip", "-n", ns, "link", "set", eth, "up"], check=True)
        for cmd in host_commands(h, eth, gw_mac, t.hosts[1:], "10ms"):
            rc, out = run_in(NsNode(), cmd)
            assert rc == 0 or cmd.may_fail, (cmd.argv, out)
        route = subprocess.run(["ip", "-n", ns, "route", "show", "default"], capture_output=True, text=True).stdout
        assert "via 10.0.1.1" in route and "rto_min lock 10ms" in route
        neigh = subprocess.run(["ip", "-n", ns, "neigh", "show", "10.0.1.1"], capture_output=True, text=True).stdout
        assert gw_mac in neigh and "PERMANENT" in neigh
    finally:
        subprocess.run(["ip", "link", "del", peer], capture_output=True)
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)
    assert not marker.exists()
    assert ns not in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
