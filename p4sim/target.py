"""The P4 target a run uses: a compiler (p4c-bm2-ss or p4sim-compile) and a switch (simple_switch_grpc
or p4sim-switch), chosen once from P4C/SWITCH, with the command lines both kinds share. Here, beside
p4sim, since p4sim stands in for the real tools: every package's tests and runs reach it from below.

Choice (`Target.from_env`): the given or $P4C/$SWITCH values, else the real tools on PATH, else p4sim
from this Python's environment. `pairings()` lists every compiler x switch pair installed here, for
the suites that run on all of them. A build directory records which compiler (path and version)
produced it (`.compiler`), so switching P4C recompiles instead of reusing the other compiler's JSON.
"""

from __future__ import annotations

import os
import shlex
import shutil
import socket
import subprocess
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

CPU_PORT = 255  # the switches' CPU port: bmv2's usual one, the fabric's (topo.model.CPU_PORT)
PROGRAMS = ("fabric", "ocs")
# The P4 sources beside the packages: the checkout's p4src/, or the installed copy (package data)
P4SRC = Path(__file__).resolve().parents[1] / "p4src"
REAL_COMPILER = "p4c-bm2-ss"
REAL_SWITCH = "simple_switch_grpc"
COMPILE_TIMEOUT_S = 600
STAMP = ".compiler"
DEFAULT_LOG_LEVEL = "warn"
# bmv2's port monitor reads every port's operstate this often (p4sim polls the same way); PI then
# (de)activates watched members. A switch has noticed a carrier change after about two periods.
PORT_STATUS_POLL_S = 0.2
PORT_STATUS_SETTLE_S = 3 * PORT_STATUS_POLL_S


def _venv_tool(name: str) -> str:
    """A console script of this environment (p4sim-compile, p4sim-switch), else the one on PATH."""
    local = Path(sys.executable).parent / name
    if local.exists():
        return str(local)
    return shutil.which(name) or name


def _resolve(command: str, what: str) -> str:
    """`command` with its executable made absolute; ValueError naming it if it cannot be found."""
    words = shlex.split(command)
    path = shutil.which(words[0]) if words else None
    if path is None and words and "/" not in words[0]:  # p4sim-compile, p4sim-switch: this environment's
        local = Path(sys.executable).parent / words[0]
        path = str(local) if os.access(local, os.X_OK) else None
    if path is None:
        raise ValueError(f"{what} {command!r}: not found or not executable; expected a path or a command on PATH")
    return shlex.join([os.path.abspath(path), *words[1:]])


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def choose_compiler(p4c: str | None = None) -> str:
    """`p4c`, else $P4C, else p4c-bm2-ss on PATH, else p4sim-compile; absolute, or ValueError."""
    p4c = p4c or os.environ.get("P4C") or shutil.which(REAL_COMPILER) or _venv_tool("p4sim-compile")
    return _resolve(p4c, "P4 compiler")


def choose_switch(switch: str | None = None) -> str:
    """`switch`, else $SWITCH, else simple_switch_grpc on PATH, else p4sim-switch; absolute, or ValueError."""
    switch = switch or os.environ.get("SWITCH") or shutil.which(REAL_SWITCH) or _venv_tool("p4sim-switch")
    return _resolve(switch, "switch binary")


def label(command: str) -> str:
    """'bmv2' for simple_switch*, 'p4c' for p4c*, 'p4sim' for p4sim's tools, else the file name."""
    name = Path(shlex.split(command)[0]).name if command.strip() else ""
    if name.startswith("simple_switch"):
        return "bmv2"
    if name.startswith("p4c"):
        return "p4c"
    return "p4sim" if name.startswith("p4sim") else name


@dataclass(frozen=True, slots=True)
class Target:
    """A compiler and a switch (each an absolute command; SWITCH may carry options)."""

    p4c: str
    switch: str

    @classmethod
    def from_env(cls, p4c: str | None = None, switch: str | None = None) -> Target:
        """The given tools, else $P4C/$SWITCH, else the real ones on PATH, else p4sim; ValueError for a
        missing one."""
        return cls(choose_compiler(p4c), choose_switch(switch))

    @property
    def name(self) -> str:
        """'p4c+bmv2', 'p4sim+p4sim', ...: compiler + switch."""
        return f"{label(self.p4c)}+{label(self.switch)}"

    # -- compiling ---------------------------------------------------------------------------------

    def compiler_id(self) -> str:
        """The compiler's path and the first line of its version: what a build directory records."""
        try:
            res = subprocess.run([*shlex.split(self.p4c), "--version"], stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True, timeout=30, check=False)
        except OSError as exc:
            raise ValueError(f"P4 compiler {self.p4c!r}: cannot run ({exc.strerror})") from None
        if res.returncode != 0:
            raise ValueError(f"P4 compiler {self.p4c!r}: --version exited {res.returncode}")
        return f"{self.p4c}\n{' '.join(res.stdout.split())}\n"

    def compile(self, source: Path, out_dir: Path, include: Path | None = None) -> None:
        """Compile one program to OUT/<name>.json and OUT/<name>.p4info.txtpb; ValueError with the
        compiler's last error line."""
        name = source.stem
        cmd = [*shlex.split(self.p4c), str(source), "-I", str(include or source.parent),
               "-o", str(out_dir / f"{name}.json"), "--p4runtime-files", str(out_dir / f"{name}.p4info.txtpb")]
        try:
            res = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=COMPILE_TIMEOUT_S)
        except OSError as exc:
            raise ValueError(f"P4 compiler {self.p4c!r}: cannot run ({exc.strerror})") from None
        if res.returncode != 0:
            errors = [ln for ln in (res.stderr or res.stdout).splitlines() if "error" in ln.lower()]
            last = errors or (res.stderr or res.stdout).strip().splitlines()
            raise ValueError(f"{source.name}: {label(self.p4c)} failed: {last[-1] if last else res.returncode}")

    def record_compiler(self, build: Path) -> bool:
        """Write this compiler's id into build/.compiler if it holds another (or none); True if written.

        Rewritten only on a change, so its mtime says when the chosen compiler last changed: every
        output older than it is stale (the Makefile's `$(BUILD)/.compiler` rule calls this too).
        """
        stamp = build / STAMP
        ident = self.compiler_id()
        if stamp.is_file() and stamp.read_text() == ident:
            return False
        build.mkdir(parents=True, exist_ok=True)
        stamp.write_text(ident)
        return True

    def stale_programs(self, build: Path, src: Path = P4SRC) -> list[str]:
        """Programs whose outputs are missing, or older than a source under `src` or than the compiler
        stamp (one rule, the Makefile's too: its outputs depend on p4src/**/*.p4 and build/.compiler)."""
        self.record_compiler(build)
        newest = (build / STAMP).stat().st_mtime
        if src.is_dir():
            newest = max([newest, *(f.stat().st_mtime for f in src.rglob("*.p4"))])
        out = []
        for prog in PROGRAMS:
            outs = [build / f"{prog}.json", build / f"{prog}.p4info.txtpb"]
            if not all(f.exists() for f in outs) or min(f.stat().st_mtime for f in outs) < newest:
                out.append(prog)
        return out

    def ensure_build(self, build: Path, src: Path = P4SRC) -> str:
        """Compile the stale programs of `src` into `build`; returns what was done (ValueError if it fails)."""
        stale = self.stale_programs(build, src)
        if not stale:
            return f"{build}/ up to date ({label(self.p4c)})"
        for prog in stale:
            outs = [build / f"{prog}.json", build / f"{prog}.p4info.txtpb"]
            try:
                self.compile(src / f"{prog}.p4", build, src)
            except ValueError:
                for f in outs:  # a half-written output is never taken for a built one
                    f.unlink(missing_ok=True)
                raise
        return f"compiled {', '.join(stale)} with {label(self.p4c)} into {build}/"

    # -- running a switch --------------------------------------------------------------------------

    def switch_command(self, ports: dict[int, str], device_id: int, grpc_addr: str,
                       json_path: Path | None = None, cpu_port: int = CPU_PORT,
                       options: tuple[str, ...] = (), target_options: tuple[str, ...] = ()) -> list[str]:
        """This target's switch command line (see `switch_command`)."""
        return switch_command(self.switch, ports, device_id, grpc_addr, json_path, cpu_port, options,
                              target_options)


def switch_command(switch: str, ports: dict[int, str], device_id: int, grpc_addr: str,
                   json_path: Path | None = None, cpu_port: int = CPU_PORT,
                   options: tuple[str, ...] = (), target_options: tuple[str, ...] = ()) -> list[str]:
    """The simple_switch_grpc command shape (p4sim-switch takes the same): `--no-p4` without a JSON;
    `options` go before the program, `target_options` (e.g. `--priority-queues 2`) after `--`.

    Unless SWITCH sets a log level itself, the switch runs at `-L warn`: bmv2's default level is
    trace, and it formats every per-packet trace line even with no log sink, which cuts its
    forwarding rate about threefold (scripts/bench/targets.py).
    """
    cmd = shlex.split(switch)
    if not {"-L", "--log-level"} & set(cmd) and not any(w.startswith("--log-level=") for w in cmd):
        cmd += ["-L", DEFAULT_LOG_LEVEL]
    for port, ifname in sorted(ports.items()):
        cmd += ["-i", f"{port}@{ifname}"]
    cmd += ["--device-id", str(device_id), *options]
    cmd += [str(json_path)] if json_path is not None else ["--no-p4"]
    return cmd + ["--", "--grpc-server-addr", grpc_addr, "--cpu-port", str(cpu_port), *target_options]


def missing_pairings() -> dict[str, str]:
    """The pairings `pairings()` leaves out for lack of the real tools, each with the reason."""
    lacking = [t for t in (REAL_COMPILER, REAL_SWITCH) if shutil.which(t) is None]
    if not lacking:
        return {}
    reason = f"{' and '.join(lacking)} not on PATH (the reference toolchain beside ../shared installs them)"
    return dict.fromkeys(("p4c+bmv2", "p4c+p4sim", "p4sim+bmv2"), reason)


def stacks() -> list[Target]:
    """The whole stacks installed here, each compiler with its own switch: p4sim + p4sim always, and
    p4c + bmv2 with the real tools."""
    return [t for t in pairings() if (Path(t.p4c).name == REAL_COMPILER) == (Path(t.switch).name == REAL_SWITCH)]


@cache
def hosts_devices(switch: str) -> bool:
    """True if the switch command runs several switches in one process (`--devices FILE`, as
    p4sim-switch does; simple_switch_grpc runs one): its --help says so."""
    try:
        res = subprocess.run([*shlex.split(switch), "--help"], capture_output=True, text=True, timeout=60,
                             check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return res.returncode == 0 and "--devices" in res.stdout and "--control-stdin" in res.stdout


def pairings() -> list[Target]:
    """Every compiler x switch pairing installed here: p4sim + p4sim always, and with the real tools
    p4c + bmv2, p4c + p4sim and p4sim + bmv2."""
    sim_c, sim_s = choose_compiler(_venv_tool("p4sim-compile")), choose_switch(_venv_tool("p4sim-switch"))
    real_c, real_s = shutil.which(REAL_COMPILER), shutil.which(REAL_SWITCH)
    out = [Target(sim_c, sim_s)]
    if real_c and real_s:
        out += [Target(real_c, real_s), Target(real_c, sim_s), Target(sim_c, real_s)]
    return out
