import re
import signal
import subprocess
import sys

import pytest

from control.__main__ import main


def run(*args):
    return subprocess.run([sys.executable, "-m", "control", *args], capture_output=True, text=True, timeout=30)


@pytest.fixture
def emulator_proc(tmp_path):
    events = tmp_path / "events.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "emulation", "ocs-emulator", "--listen", "127.0.0.1:0",
                             "--ports", "4", "--mirror-ms", "5", "--lock-ms", "0", "--poll-ms", "0",
                             "--circuits", "3-4",
                             "--events", str(events)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    m = re.search(r"listening on 127.0.0.1:(\d+)", line)
    assert m, line + proc.stderr.read()
    yield int(m.group(1)), proc, events
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=5)


def test_emulator_cli_and_ocs_cli(emulator_proc):
    port, proc, events = emulator_proc
    addr = f"127.0.0.1:{port}"
    r = run("ocs", "--ocs", addr, "--duplex", "--wait", "connect", "1:2")
    assert r.returncode == 0, r.stderr
    r = run("ocs", "--ocs", addr, "show")
    assert r.returncode == 0 and "1 -> 6" in r.stdout and "2 -> 5" in r.stdout, r.stdout
    assert "3 -> 8" in r.stdout and "4 -> 7" in r.stdout  # lit at start by --circuits
    r = run("ocs", "--ocs", addr, "connect", "3:6")
    assert r.returncode == 2 and r.stderr.startswith("error:") and "-221" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    r = run("ocs", "--ocs", addr, "status", "6")
    assert "peer 1" in r.stdout
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=5) == 0
    assert '"event": "command"' in events.read_text()


def test_cli_bad_input_one_line(capsys):
    assert main(["ocs", "--ocs", "nohost", "show"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: address 'nohost'") and err.count("\n") == 1
