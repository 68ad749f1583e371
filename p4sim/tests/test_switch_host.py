"""Several switches in one p4sim-switch process (`--devices`, `--control-stdin`): each forwards on its
own ports; stopping, restarting or re-provisioning one leaves the others forwarding; the end of the
control input stops the process. Root (veth pairs); the command-line errors need none."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from emulation.switchproc import wait_ready
from p4rt.client import P4RuntimeClient
from p4sim.switch.testdata.veth import RawPort, is_root, veth_pairs
from p4sim.target import free_port
from p4sim.tests.parity_bed import PARITY_JSON, PARITY_P4INFO, frame, ours

SWITCH = [sys.executable, "-m", "p4sim", "switch"]


def _device(device_id: int, ifaces: list[str], port: int) -> list[str]:
    return [*(w for i, name in enumerate(ifaces, 1) for w in ("-i", f"{i}@{name}")), "--device-id", str(device_id),
            str(PARITY_JSON), "--", "--grpc-server-addr", f"127.0.0.1:{port}", "--cpu-port", "255"]


def _forwards(hosts: list[RawPort]) -> bool:
    """A parity frame into the first port comes out of the second."""
    hosts[1].drain(quiet=0.05)
    hosts[0].send(frame("forward", port=2))
    return hosts[1].recv(3.0, ours) is not None


def _gone(port: int, timeout: float = 10.0) -> bool:
    import socket

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) != 0:
                return True
        time.sleep(0.05)
    return False


@pytest.mark.root
@pytest.mark.skipif(not is_root(), reason="needs root for veth pairs")
def test_devices_run_stop_restart_and_reprovision_on_their_own(tmp_path: Path) -> None:
    with veth_pairs(4, "hst") as pairs:
        grpc = [free_port(), free_port()]
        argv = [_device(1, [pairs[0][0], pairs[1][0]], grpc[0]), _device(2, [pairs[2][0], pairs[3][0]], grpc[1])]
        (tmp_path / "devices.json").write_text(json.dumps(argv))
        proc = subprocess.Popen([*SWITCH, "--devices", str(tmp_path / "devices.json"), "--control-stdin"],
                                stdin=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        hosts = [RawPort(b) for _, b in pairs]
        try:
            for port in grpc:
                wait_ready(proc, port, 60)
            one, two = hosts[:2], hosts[2:]
            assert _forwards(one) and _forwards(two)
            proc.stdin.write("stop 1\n")
            proc.stdin.flush()
            assert _gone(grpc[0])
            assert _forwards(two), "the other device stopped with it"
            assert not _forwards(one)
            proc.stdin.write("start " + json.dumps(argv[0]) + "\n")
            proc.stdin.flush()
            wait_ready(proc, grpc[0], 60)
            assert _forwards(one)
            with P4RuntimeClient(f"127.0.0.1:{grpc[1]}", device_id=2) as client:  # a push to one only
                client.set_pipeline_files(PARITY_P4INFO, PARITY_JSON)
            assert _forwards(one) and _forwards(two)
            proc.stdin.close()  # the end of the control input stops every device
            assert proc.wait(timeout=30) == 0
            err = proc.stderr.read()
            assert "device 1 stopped" in err and "device 2 stopped" in err, err
        finally:
            for h in hosts:
                h.close()
            if proc.poll() is None:
                proc.kill()
                proc.wait()


@pytest.mark.parametrize("content, msg", [
    ("not json", "cannot read"),
    ('[["-i", "1@x"], "no list"]', "expected a JSON list of command lines"),
    ('[["--device-id", "1", "--no-p4", "--", "--grpc-server-addr", "127.0.0.1:1"],'
     ' ["--device-id", "1", "--no-p4", "--", "--grpc-server-addr", "127.0.0.1:2"]]', "already running"),
])
def test_bad_devices_file_is_one_line(tmp_path: Path, content: str, msg: str) -> None:
    path = tmp_path / "devices.json"
    path.write_text(content)
    res = subprocess.run([*SWITCH, "--devices", str(path)], capture_output=True, text=True, timeout=60)
    assert res.returncode == 1, res.stderr
    lines = [ln for ln in res.stderr.splitlines() if ln.startswith("p4sim-switch:")]
    assert lines and msg in lines[-1], res.stderr
