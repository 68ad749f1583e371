"""Abuse suite of what runs commands for the emulation: option and spec strings that once reached a
shell (`--rto-min`, experiment `rto_min`, `sysctl` and `ocs_args`, the OCS emulator's `--link` names in
its `ip -batch` script, the Makefile's TOPO_FILE, CMD, K and RUN_ARGS).
Each injection must be refused or stay a literal value; none may run. Host set-up is checked in a
network namespace of the test's own (root), removed at the end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from emulation.__main__ import main
from emulation.links import HostCommand, check_ifname, check_rto_min, host_commands, run_in
from emulation.ocs.dataplane import IpLinkControl, parse_link_specs
from scripts.experiments import spec as spec_mod
from scripts.experiments.runner import _tune_hosts
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


# -- interface names in `ip -batch` lines (the OCS emulator's --link) ----------------------------------

LINK_INJECTION = 'lo up\nnetns exec {ns} sh -c "touch {f}" #'  # line 1 sets lo up, line 2 runs a shell


@pytest.mark.parametrize("good", ["lo", "eth0", "xab-s1-eth2", "a" * 15, "veth.1", "tor_1-p", "x@y", "a+b"])
def test_interface_names_the_kernel_takes_are_accepted(good: str) -> None:
    assert check_ifname(good) == good
    assert parse_link_specs([f"3={good}"]) == {3: [good]}


@pytest.mark.parametrize("bad", ["", ".", "..", "a" * 16, "a/b", "a:1", "a b", "a\tb", "a\nb", "a\rb", "a#b",
                                 "a'b", 'a"b', "a\\", "a\x00b", "a\x01b", "a\xa0b", "é", 5, None])
def test_interface_names_the_kernel_or_ip_batch_refuses_are_refused(bad: object) -> None:
    with pytest.raises(ValueError, match=r"interface name .*: expected 1\.\.15 printable ASCII characters") as e:
        check_ifname(bad)
    assert "\n" not in str(e.value)
    with pytest.raises(ValueError, match="interface name|ssh destination"):  # "a:1": NAME:user@server
        IpLinkControl({1: [bad]}, runner=lambda argv, stdin: pytest.fail(f"ran {argv} {stdin!r}"))


def test_link_injection_is_refused_by_every_way_in(marker: Path, capsys: pytest.CaptureFixture) -> None:
    """A spec variant's ocs_args, `emulation run --ocs-arg`, the Emulation API and the emulator's --link."""
    payload = f"1={LINK_INJECTION.format(ns='nsx', f=marker)}"
    with pytest.raises(ValueError, match=r"link '1=lo up\\nnetns .*': interface name"):
        parse_link_specs([payload])
    for ocs_args in (["--link", payload], [f"--link={payload}"], ["--events", str(marker)], ["--lin", payload],
                     ["--seed", "--link", payload]):
        data = {"name": "x", "kind": "reconfiguration", "streams": [{"src": "h2", "dst": "h3"}],
                "variants": [{"name": "v", "procedure": "mbb", "ocs_args": ocs_args}]}
        with pytest.raises(ValueError, match=r"variants\[0\]: ocs_args: ") as e:
            spec_mod.parse(data)
        assert "\n" not in str(e.value)
    assert main(["run", "--topo", "ucd4", "--ocs-arg=--link", f"--ocs-arg={payload}"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("emulation run: ocs_args: unrecognized arguments: --link") and err.count("\n") == 1
    assert main(["ocs-emulator", "--listen", "127.0.0.1:0", "--ports", "2", "--instant", "--link", payload]) == 2
    err = capsys.readouterr().err
    assert err.startswith("emulation ocs-emulator: link '1=lo up\\nnetns") and err.count("\n") == 1
    assert not marker.exists()


def test_emulation_refuses_ocs_args_before_starting(marker: Path) -> None:
    pytest.importorskip("mininet.net", reason="Mininet is not installed")
    from emulation.network import Emulation

    with pytest.raises(ValueError, match="ocs_args: unrecognized arguments: --link"):
        Emulation(ucd4(), "ecmp", ocs_args=["--link", f"1={LINK_INJECTION.format(ns='nsx', f=marker)}"])
    assert not marker.exists()


@pytest.mark.root
@pytest.mark.skipif(os.geteuid() != 0, reason="ip -batch and network namespaces need root")
def test_ocs_emulator_link_injection_runs_nothing(marker: Path) -> None:
    """The emulator as a process, as root, with the payload that once ran a shell in a namespace through
    `ip -batch` at start: it must exit with one line, and the file the payload writes must not exist."""
    ns = f"hxinj{os.getpid() % 100000}"
    subprocess.run(["ip", "netns", "add", ns], check=True)
    proc = subprocess.Popen([sys.executable, "-m", "emulation", "ocs-emulator", "--listen", "127.0.0.1:0",
                             "--ports", "2", "--instant", "--link", f"1={LINK_INJECTION.format(ns=ns, f=marker)}"],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        try:
            out, err = proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:  # it started: give its timeline the time to run the batch
            time.sleep(1)
            proc.terminate()
            out, err = proc.communicate(timeout=10)
        assert not marker.exists(), "the --link payload ran a shell command"
        assert proc.returncode == 2, (out, err)
        assert err.startswith("emulation ocs-emulator: link '1=lo up\\nnetns exec") and err.count("\n") == 1, err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)
