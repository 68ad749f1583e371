"""Compile the runtime and generated programs with the machine's C compiler, cached on disk.

Libraries go to a cache directory of this user's alone ($P4SIM_CACHE, else $XDG_CACHE_HOME/p4sim,
else ~/.cache/p4sim; refused if another user could write it, since its code is loaded into the
switch), named by the SHA-256 of what they are built from: the runtime's sources, and for a program
the bmv2 JSON together with this package's sources (a new generator builds anew). Switch processes
that start together build each library once: the first takes a lock, the others wait and load it.
`compiler()` is None when there is no C compiler or P4SIM_NATIVE=0 (the Python path runs then).
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Callable
from functools import cache
from pathlib import Path

log = logging.getLogger(__name__)

HERE = Path(__file__).resolve().parent
RT = HERE / "rt"
RT_SOURCES = ("tables.c", "externs.c", "dev.c", "ports.c")
CFLAGS = ("-O2", "-std=gnu11", "-fPIC", "-shared", "-pthread", "-fno-strict-aliasing", "-w")
COMPILE_TIMEOUT_S = 300


class BuildError(RuntimeError):
    """The C compiler failed (its last lines say why)."""


def compiler() -> str | None:
    """The C compiler ($CC, else cc, else gcc), or None (absent, or P4SIM_NATIVE=0)."""
    if os.environ.get("P4SIM_NATIVE", "1") == "0":
        return None
    cc = os.environ.get("CC") or "cc"
    return shutil.which(cc) or shutil.which("gcc")


def cache_dir() -> Path:
    """This user's cache directory (made 0700); ValueError if another user could write it."""
    base = os.environ.get("P4SIM_CACHE")
    if base:
        d = Path(base)
    else:
        xdg = os.environ.get("XDG_CACHE_HOME")
        d = (Path(xdg) if xdg else Path.home() / ".cache") / "p4sim"
    d.mkdir(parents=True, exist_ok=True, mode=0o700)
    st = d.stat()
    if st.st_uid != os.geteuid() or st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise ValueError(f"p4sim cache {d}: owned by another user or writable by others; expected this user's alone")
    return d


@cache
def source_digest() -> str:
    """The SHA-256 of this package's sources (the runtime and the generator)."""
    h = hashlib.sha256()
    for f in sorted([*RT.iterdir(), *(HERE / "cgen").glob("*.py")]):
        if f.is_file():
            h.update(f.name.encode() + b"\0" + f.read_bytes())
    return h.hexdigest()


def _cached(name: str, build: Callable[[Path], None]) -> Path:
    """cache/<name>, built by build(tmp) under the cache's lock if it is not there yet."""
    d = cache_dir()
    out = d / name
    if out.exists():
        return out
    with open(d / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if out.exists():  # another process built it while this one waited
            return out
        fd, tmp = tempfile.mkstemp(dir=d, prefix=".build-", suffix=".so")
        os.close(fd)
        try:
            build(Path(tmp))
            os.replace(tmp, out)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    return out


def _cc(args: list[str]) -> None:
    cc = compiler()
    if cc is None:
        raise BuildError("no C compiler")
    res = subprocess.run([cc, *CFLAGS, f"-I{RT}", *args], capture_output=True, text=True,
                         timeout=COMPILE_TIMEOUT_S, check=False)
    if res.returncode != 0:
        lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
        raise BuildError(f"{Path(cc).name} exited {res.returncode}: {' | '.join(lines[-3:])}")


def runtime_library() -> Path:
    """The runtime's shared library (built on first use)."""
    name = f"p4sim-rt-{source_digest()[:24]}.so"
    return _cached(name, lambda tmp: _cc([*(str(RT / s) for s in RT_SOURCES), "-o", str(tmp)]))


def program_key(json_bytes: bytes) -> str:
    """What names a program's library: its JSON and the generator that translated it."""
    return hashlib.sha256(source_digest().encode() + b"\0" + json_bytes).hexdigest()[:32]


def program_library(key: str, source: Callable[[], str]) -> Path:
    """The library of the program named `key`; source() gives its C when it must be built."""
    rt = runtime_library()

    def build(tmp: Path) -> None:
        c_file = tmp.with_suffix(".c")
        c_file.write_text(source())
        try:
            _cc([str(c_file), str(rt), f"-Wl,-rpath,{rt.parent}", "-o", str(tmp)])
        finally:
            c_file.unlink(missing_ok=True)

    return _cached(f"p4sim-prog-{key}.so", build)
