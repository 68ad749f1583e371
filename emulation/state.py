"""The record of what one emulation run created, and `clean-net`, which removes exactly that.

A run writes `/run/hitless/<run-id>.json` as it goes: every process it started (PID plus the
process's start time, so a recycled PID is never killed) and every interface it created. A clean exit
deletes the file; after a killed run, `clean_net()` stops those processes, deletes those interfaces
and then the file. Nothing is ever killed or deleted by name pattern. The run's logs go to
`/var/log/hitless/<run-id>/` (systemd's RuntimeDirectory and LogsDirectory places;
HITLESS_RUN_DIR and HITLESS_LOG_DIR move them).

Because clean-net kills and deletes what these files say, they are trusted only as far as sshd trusts
its privilege-separation directory: the directory must be a real directory owned by this user that
no one else can write (every ancestor owned by root or this user, and sticky where others may write,
systemd-tmpfiles' "unsafe path transition" rule), and each file a regular file of this user that no
one else can write, with one link, opened without following a symlink. State files are written to a
new temporary file (O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600) renamed over the old one, so nothing is
ever written through a link another user planted.
"""

from __future__ import annotations

import json
import logging
import os
import re
import signal
import stat
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from emulation.links import check_ssh_dest, check_ssh_words, ssh_argv

log = logging.getLogger(__name__)

STATE_DIR = Path(os.environ.get("HITLESS_RUN_DIR", "/run/hitless"))
LOG_ROOT = Path(os.environ.get("HITLESS_LOG_DIR", "/var/log/hitless"))
MAX_STATE_BYTES = 16 << 20  # a run of 10^5 processes and interfaces writes a few MiB
_RUN_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}")
_IFNAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.:-]{0,14}")


def proc_start_time(pid: int) -> int | None:
    """The start time of a process (clock ticks since boot, /proc/PID/stat field 22), or None."""
    try:
        stat_line = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # the command name may hold spaces or parentheses: fields start after the last ')'
    return int(stat_line[stat_line.rindex(")") + 2:].split()[19])


def cpu_seconds(pid: int) -> float | None:
    """CPU time (user + system, every thread) a process has used so far (/proc/PID/stat), or None."""
    try:
        stat_line = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat_line[stat_line.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def interface_exists(name: str) -> bool:
    """True when a network interface of that name exists in the root namespace."""
    return Path(f"/sys/class/net/{name}").exists()


# -- directories and files no other user can have touched ---------------------------------------------


def _unsafe(st: os.stat_result, uid: int, what: str) -> str | None:
    """Why a directory or file is not ours alone (None when it is)."""
    if st.st_uid != uid:
        return f"{what} owned by uid {st.st_uid}"
    if st.st_mode & 0o022:
        return f"{what} writable by others (mode {stat.S_IMODE(st.st_mode):04o})"
    return None


def _check_ancestors(path: Path, uid: int) -> None:
    """Every existing ancestor: owned by root or uid, and sticky wherever others may write (/tmp)."""
    for anc in [*reversed(path.parents)]:
        try:
            st = os.lstat(anc)
        except FileNotFoundError:
            return
        if st.st_uid not in (0, uid):
            raise ValueError(f"run directory {path}: its ancestor {anc} is owned by uid {st.st_uid}; expected "
                             f"root or uid {uid} along the whole path")
        if stat.S_ISLNK(st.st_mode):
            _check_ancestors(Path(os.path.realpath(anc)) / "x", uid)  # a root-owned link (/var/run): its target
        elif st.st_mode & 0o022 and not st.st_mode & stat.S_ISVTX:
            raise ValueError(f"run directory {path}: its ancestor {anc} is writable by others and not sticky "
                             f"(mode {stat.S_IMODE(st.st_mode):04o}); expected a path others cannot change")


def secure_dir(path: str | Path, mode: int = 0o700, ancestors: bool = True) -> Path:
    """Create `path` (mode `mode`, parents 0755) or check it: a real directory of this user that no one
    else can write (and, with `ancestors`, a path no one else can change). ValueError otherwise."""
    p = Path(os.path.abspath(path))
    uid = os.geteuid()
    if ancestors:
        _check_ancestors(p, uid)
    missing = [a for a in [p, *p.parents] if not os.path.lexists(a)]
    for d in reversed(missing):
        try:
            os.mkdir(d, mode if d == p else 0o755)
        except FileExistsError:
            pass  # made meanwhile: checked below like any existing directory
    st = os.lstat(p)
    if not stat.S_ISDIR(st.st_mode):
        raise ValueError(f"directory {p}: is a {'symlink' if stat.S_ISLNK(st.st_mode) else 'non-directory'}; "
                         f"expected a real directory of uid {uid}")
    why = _unsafe(st, uid, "it is")
    if why:
        raise ValueError(f"directory {p}: {why}; expected a directory of uid {uid} that no one else can write "
                         "(another user may have made it)")
    return p


def write_private(path: str | Path, text: str) -> None:
    """Replace `path` with `text` through a new file (O_EXCL|O_NOFOLLOW, 0600): never through a link."""
    tmp = f"{path}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(tmp, flags, 0o600)
    except FileExistsError:  # left by a crash of this run (the name carries the run id): ours to remove
        os.unlink(tmp)
        fd = os.open(tmp, flags, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def read_trusted(path: str | Path) -> str:
    """A file's text if it is a regular file of this user, one link, writable by no one else (ValueError)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        why = _unsafe(st, os.geteuid(), "file")
        if not stat.S_ISREG(st.st_mode):
            why = "not a regular file"
        elif st.st_nlink != 1:
            why = f"{st.st_nlink} hard links"
        elif st.st_size > MAX_STATE_BYTES:
            why = f"{st.st_size} bytes"
        if why:
            raise ValueError(f"{path}: {why}; expected a run record this user wrote")
        return f.read(MAX_STATE_BYTES).decode()


# -- the record ---------------------------------------------------------------------------------------


@dataclass(slots=True)
class RunProcess:
    """A process a run started."""

    pid: int
    start_time: int | None
    what: str

    @classmethod
    def from_dict(cls, d: Any, where: str) -> RunProcess:
        """Checked: a PID above 1 (never 0, -1 or init, which kill() treats as groups or everything)."""
        if not isinstance(d, dict) or set(d) != {"pid", "start_time", "what"}:
            raise ValueError(f"{where}: {str(d)[:60]!r}; expected {{pid, start_time, what}}")
        pid, start, what = d["pid"], d["start_time"], d["what"]
        if isinstance(pid, bool) or not isinstance(pid, int) or pid <= 1:
            raise ValueError(f"{where}: pid {pid!r}; expected an integer above 1")
        if start is not None and (isinstance(start, bool) or not isinstance(start, int)):
            raise ValueError(f"{where}: start_time {start!r}; expected clock ticks or null")
        if not isinstance(what, str):
            raise ValueError(f"{where}: what {what!r}; expected text")
        return cls(pid, start, what)


@dataclass(slots=True)
class RunState:
    """What one run created; saved on every change."""

    run_id: str
    path: str
    owner: RunProcess | None = None  # the process running the emulation; while alive the run is live
    processes: list[RunProcess] = field(default_factory=list)
    interfaces: list[str] = field(default_factory=list)
    started: float = field(default_factory=time.time)
    # a cluster run's other servers (emulation/cluster.py): {"dest": user@address, "ssh": ssh's options};
    # the recorded interfaces are deleted there too
    servers: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def create(cls, run_id: str | None = None, directory: Path | None = None) -> RunState:
        """A new, saved state file for this run, in a directory only this user can write."""
        d = secure_dir(directory or STATE_DIR)
        rid = run_id or f"{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
        if not _RUN_ID.fullmatch(rid):
            raise ValueError(f"run id {rid!r}: expected letters, digits, '_', '.' or '-'")
        path = d / f"{rid}.json"
        if os.path.lexists(path):
            raise ValueError(f"run record {path}: exists; expected a new run id")
        me = os.getpid()
        state = cls(rid, str(path), RunProcess(me, proc_start_time(me), "owner"))
        state.save()
        return state

    @classmethod
    def load(cls, path: str | Path) -> RunState:
        """Read a state file this user wrote (read_trusted) and check every field (ValueError)."""
        data = json.loads(read_trusted(path))
        p = Path(path)
        if not isinstance(data, dict) or data.get("run_id") != p.stem or not _RUN_ID.fullmatch(p.stem):
            raise ValueError(f"{p}: run_id {str(data.get('run_id') if isinstance(data, dict) else data)[:40]!r}; "
                             "expected the file's own name")
        owner = RunProcess.from_dict(data["owner"], f"{p} owner") if data.get("owner") is not None else None
        procs = data.get("processes", [])
        intfs = data.get("interfaces", [])
        if not isinstance(procs, list) or not isinstance(intfs, list):
            raise ValueError(f"{p}: processes/interfaces; expected lists")
        for name in intfs:
            if not isinstance(name, str) or not _IFNAME.fullmatch(name):
                raise ValueError(f"{p}: interface {str(name)[:40]!r}; expected a Linux interface name")
        started = data.get("started", 0.0)
        if isinstance(started, bool) or not isinstance(started, int | float):
            raise ValueError(f"{p}: started {started!r}; expected a time")
        servers = data.get("servers", [])
        if not isinstance(servers, list) or not all(isinstance(x, dict) and set(x) == {"dest", "ssh"} for x in servers):
            raise ValueError(f"{p}: servers; expected a list of {{dest, ssh}}")
        for x in servers:
            check_ssh_dest(x["dest"])
            check_ssh_words(x["ssh"])
        return cls(p.stem, str(p), owner, [RunProcess.from_dict(x, f"{p} process") for x in procs],
                   list(intfs), float(started), servers)

    def save(self) -> None:
        """Write the file atomically, never through a link (write_private). Saved on every change, so
        written field by field, on one line (json's C encoder: with asdict and an indent a k=16 fat-tree's
        1345 saves took 16 s)."""
        def proc(p: RunProcess | None) -> dict[str, Any] | None:
            return None if p is None else {"pid": p.pid, "start_time": p.start_time, "what": p.what}

        write_private(self.path, json.dumps({"run_id": self.run_id, "path": self.path, "owner": proc(self.owner),
                                             "processes": [proc(p) for p in self.processes],
                                             "interfaces": self.interfaces, "started": self.started,
                                             "servers": self.servers}))

    def add_process(self, pid: int, what: str) -> None:
        """Record a started process."""
        self.processes.append(RunProcess(pid, proc_start_time(pid), what))
        self.save()

    def add_interfaces(self, names: list[str]) -> None:
        """Record created interfaces (the root-namespace ends; deleting one deletes its veth peer)."""
        self.interfaces.extend(n for n in names if n not in self.interfaces)
        self.save()

    def add_server(self, dest: str, ssh: list[str]) -> None:
        """Record another server of a cluster run (how ssh reaches it)."""
        entry = {"dest": check_ssh_dest(dest), "ssh": check_ssh_words(list(ssh))}
        if entry not in self.servers:
            self.servers.append(entry)
            self.save()

    def remove(self) -> None:
        """Delete the state file (the run cleaned up after itself)."""
        Path(self.path).unlink(missing_ok=True)


def new_log_dir(run_id: str, root: Path | None = None) -> Path:
    """The logs of a run: <root>/<run id>/, new, in a root directory only this user can write."""
    base = secure_dir(root or LOG_ROOT, 0o755)
    d = base / run_id
    try:
        os.mkdir(d, 0o755)
    except FileExistsError:
        raise ValueError(f"log directory {d}: exists; expected a new one for run {run_id}") from None
    return d


# -- clean-net ----------------------------------------------------------------------------------------


def _alive(p: RunProcess) -> bool:
    if p.start_time is None or proc_start_time(p.pid) != p.start_time:
        return False
    try:  # a zombie has exited: only its parent's wait() is missing
        return Path(f"/proc/{p.pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


RUN_KINDS = ("veth", "vxlan")  # what a run creates: veth pairs, and VXLAN tunnels between a cluster's servers


def _is_runs_kind(name: str) -> bool:
    """True for a veth or a VXLAN tunnel (all a run creates): clean-net never deletes a physical or other
    interface."""
    res = subprocess.run(["ip", "-j", "-d", "link", "show", "dev", name], capture_output=True, text=True,
                         check=False, timeout=10)
    try:
        return res.returncode == 0 and json.loads(res.stdout)[0].get("linkinfo", {}).get("info_kind") in RUN_KINDS
    except (ValueError, IndexError, AttributeError):
        return False


def clean_state(state: RunState, grace: float = 3.0) -> tuple[int, int]:
    """Stop the state's live processes and delete its interfaces; returns (processes, interfaces)."""
    live = [p for p in state.processes if _alive(p)]
    for p in live:
        try:
            os.kill(p.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(_alive(p) for p in live):
        time.sleep(0.05)
    for p in live:
        if _alive(p):  # the start time still matches: the same process, never a recycled PID
            try:
                os.kill(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    removed = sum(clean_server(state, s) for s in state.servers)
    for name in state.interfaces:
        if interface_exists(name):
            if not _is_runs_kind(name):
                log.warning("run %s: interface %s is not a veth or VXLAN; left alone", state.run_id, name)
                continue
            subprocess.run(["ip", "link", "del", "dev", name], capture_output=True, check=False, timeout=10)
            removed += 1
    state.remove()
    return len(live), removed


def clean_server(state: RunState, server: dict[str, Any], timeout: float = 60.0) -> int:
    """Delete the run's interfaces that exist on another server of a cluster run (one `ip -force
    -batch` over ssh); returns how many it deleted. Its processes
    there ended when their ssh sessions here were stopped (a hung-up session ends them)."""
    dest = server["dest"]
    argv = ssh_argv(dest, server["ssh"], ["ip", "-force", "-batch", "-"])  # as the run's user when not root
    lines = "".join(f"link del dev {n}\n" for n in state.interfaces)
    try:
        res = subprocess.run(argv, input=lines, capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.warning("run %s: server %s not cleaned: %s", state.run_id, dest, exc)
        return 0
    missing = res.stderr.count("Cannot find device")
    if res.returncode not in (0, 1) or (res.returncode == 1 and not missing):
        log.warning("run %s: server %s: %s", state.run_id, dest, res.stderr.strip()[-200:])
    return len(state.interfaces) - missing


def clean_net(directory: Path | None = None, force: bool = False) -> list[str]:
    """Clean every run recorded in the state directory (live runs only with force); one line per run.

    Only a directory and files no other user can have written are acted on; anything else is
    reported and left alone."""
    d = Path(directory or STATE_DIR)
    if not os.path.lexists(d):
        return []
    try:
        secure_dir(d)
    except (ValueError, OSError) as exc:
        return [f"{exc}: nothing done"]
    lines = []
    for f in sorted(d.glob("*.json")):
        try:
            state = RunState.load(f)
        except json.JSONDecodeError as exc:  # ours (read_trusted passed) but cut short by a crash
            lines.append(f"{f}: unreadable ({exc.msg}); removed")
            f.unlink(missing_ok=True)
            continue
        except (OSError, ValueError, KeyError, UnicodeDecodeError) as exc:
            lines.append(f"{f}: not trusted ({exc}); left alone")
            continue
        if state.owner is not None and _alive(state.owner) and not force:
            lines.append(f"run {state.run_id}: still running (pid {state.owner.pid}); skipped")
            continue
        procs, intfs = clean_state(state)
        lines.append(f"run {state.run_id}: stopped {procs} processes, deleted {intfs} interfaces")
    return lines
