"""Run records and clean-net against another local user: a run directory, record or link that user
made is refused, never written through, never acted on. Needs root (files of another uid, a veth)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from emulation.state import (
    RunState,
    clean_net,
    interface_exists,
    new_log_dir,
    proc_start_time,
    secure_dir,
    write_private,
)

pytestmark = [pytest.mark.root, pytest.mark.skipif(os.geteuid() != 0, reason="files of another uid need root")]
OTHER = 65534  # nobody
TAG = f"hxs{os.getpid() % 100000}"


@pytest.fixture
def sleeper():
    """A process a forged record points at: it must survive clean-net."""
    p = subprocess.Popen(["sleep", "60"])
    yield p
    p.kill()
    p.wait()


@pytest.fixture
def veth():
    """A veth of this test (its root end's name), removed at the end."""
    a = f"{TAG}a"
    subprocess.run(["ip", "link", "add", a, "type", "veth", "peer", "name", f"{TAG}b"], check=True)
    yield a
    subprocess.run(["ip", "link", "del", a], capture_output=True)


def record(d: Path, run_id: str, pids: list[int], intfs: list[str]) -> Path:
    """A record as a killed run would have left it (its owner long gone)."""
    f = d / f"{run_id}.json"
    f.write_text(json.dumps({"run_id": run_id, "path": str(f), "owner": {"pid": 2**22 + 7, "start_time": 1,
                             "what": "owner"}, "started": 0.0, "interfaces": intfs,
                             "processes": [{"pid": p, "start_time": proc_start_time(p) if p > 1 else 1,
                                            "what": "switch x"} for p in pids]}))
    f.chmod(0o600)
    return f


def test_defaults_are_root_owned_places_not_tmp() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HITLESS_")}
    out = subprocess.run([sys.executable, "-c", "import emulation.state as s; print(s.STATE_DIR, s.LOG_ROOT)"],
                         env=env, capture_output=True, text=True, check=True).stdout.split()
    assert out == ["/run/hitless", "/var/log/hitless"]


def test_a_run_directory_another_user_made_is_refused(tmp_path: Path) -> None:
    d = tmp_path / "runs"
    d.mkdir(mode=0o777)
    os.chown(d, OTHER, OTHER)
    with pytest.raises(ValueError, match=rf"directory {d}: it is owned by uid {OTHER}; expected a directory of uid 0"):
        RunState.create("r1", d)
    assert not list(d.iterdir())


@pytest.mark.parametrize("mode", [0o777, 0o770, 0o1777])
def test_a_run_directory_others_can_write_is_refused(tmp_path: Path, mode: int) -> None:
    d = tmp_path / "runs"
    d.mkdir()
    d.chmod(mode)
    with pytest.raises(ValueError, match="writable by others"):
        RunState.create("r1", d)


def test_a_run_directory_that_is_a_symlink_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.mkdir(mode=0o700)
    (tmp_path / "runs").symlink_to(target)
    with pytest.raises(ValueError, match="is a symlink"):
        RunState.create("r1", tmp_path / "runs")
    assert not list(target.iterdir())


def test_a_path_through_a_directory_others_can_write_is_refused(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)  # not sticky: another user could swap what is inside
    with pytest.raises(ValueError, match=r"ancestor .*shared is writable by others and not sticky"):
        RunState.create("r1", shared / "runs")
    assert not (shared / "runs").exists()


def test_state_files_are_never_written_through_a_link(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("precious")
    d = secure_dir(tmp_path / "runs")
    (d / "r1.json.tmp").symlink_to(victim)  # where the next save writes first
    state = RunState.create("r1", d)
    state.add_interfaces(["x0"])
    (d / "r1.json").unlink()
    (d / "r1.json").symlink_to(victim)  # the record itself replaced by a link
    state.add_interfaces(["x1"])
    assert victim.read_text() == "precious"
    assert not (d / "r1.json").is_symlink() and json.loads((d / "r1.json").read_text())["interfaces"] == ["x0", "x1"]
    assert (d / "r1.json").stat().st_mode & 0o777 == 0o600


def test_a_new_log_directory_is_never_one_that_exists(tmp_path: Path) -> None:
    root = tmp_path / "logs"
    d = new_log_dir("r1", root)
    assert d == root / "r1" and d.is_dir()
    with pytest.raises(ValueError, match="exists; expected a new one"):
        new_log_dir("r1", root)
    other = tmp_path / "other-logs"
    other.mkdir()
    os.chown(other, OTHER, OTHER)
    with pytest.raises(ValueError, match=f"owned by uid {OTHER}"):
        new_log_dir("r2", other)


def test_write_private_refuses_nothing_of_ours_but_replaces_links(tmp_path: Path) -> None:
    f = tmp_path / "f.json"
    write_private(f, "one")
    write_private(f, "two")
    assert f.read_text() == "two" and not (tmp_path / "f.json.tmp").exists()


def test_clean_net_does_nothing_in_a_directory_another_user_made(tmp_path: Path, sleeper, veth) -> None:
    d = tmp_path / "runs"
    d.mkdir(mode=0o755)
    record(d, "forged", [sleeper.pid], [veth])
    os.chown(d, OTHER, OTHER)
    lines = clean_net(d)
    assert len(lines) == 1 and f"owned by uid {OTHER}" in lines[0] and lines[0].endswith("nothing done")
    assert sleeper.poll() is None and interface_exists(veth)


@pytest.mark.parametrize("forgery", ["other owner", "group writable", "hard link", "symlink"])
def test_clean_net_leaves_records_it_cannot_trust(tmp_path: Path, sleeper, veth, forgery: str) -> None:
    d = secure_dir(tmp_path / "runs")
    f = record(d, "forged", [sleeper.pid], [veth])
    if forgery == "other owner":
        os.chown(f, OTHER, OTHER)
    elif forgery == "group writable":
        f.chmod(0o660)
    elif forgery == "hard link":
        os.link(f, tmp_path / "second-name")
    else:
        real = tmp_path / "real.json"
        f.rename(real)
        f.symlink_to(real)
    lines = clean_net(d)
    assert len(lines) == 1 and "not trusted" in lines[0] and lines[0].endswith("left alone"), lines
    assert sleeper.poll() is None and interface_exists(veth)
    assert os.path.lexists(f)


@pytest.mark.parametrize("pid", [-1, 0, 1, True, "12"])
def test_clean_net_never_signals_a_group_everything_or_init(tmp_path: Path, pid) -> None:
    d = secure_dir(tmp_path / "runs")
    f = d / "bad.json"
    f.write_text(json.dumps({"run_id": "bad", "owner": None, "interfaces": [],
                             # a start time no process has: even a broken check could signal nothing
                             "processes": [{"pid": pid, "start_time": -5, "what": "x"}]}))
    f.chmod(0o600)
    lines = clean_net(d)
    assert len(lines) == 1 and "expected an integer above 1" in lines[0] and "left alone" in lines[0]


def test_clean_net_deletes_only_veths(tmp_path: Path, sleeper, veth) -> None:
    dummy = f"{TAG}d"
    subprocess.run(["ip", "link", "add", dummy, "type", "bridge"], check=True)  # a kind a run never makes
    try:
        d = secure_dir(tmp_path / "runs")
        record(d, "killed", [sleeper.pid], [veth, dummy, "lo"])
        assert clean_net(d) == ["run killed: stopped 1 processes, deleted 1 interfaces"]
        assert sleeper.wait(timeout=5) is not None
        assert not interface_exists(veth) and interface_exists(dummy) and interface_exists("lo")
        assert not list(d.glob("*.json"))
    finally:
        subprocess.run(["ip", "link", "del", dummy], capture_output=True)
