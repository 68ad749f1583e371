"""`python -m emulation run | build | clean-net`: the command lines behind `make run-topo`, `make p4-build` and
`make clean-net` (`build --tofino CHIP`: the TNA programs with bf-p4c, emulation/tofino.py).

`run` generates (or loads) the topology, compiles the programs when build/ is stale, starts the
emulation (emulation.network.Emulation) with one progress line per stage, then opens the Mininet CLI
or runs `--cmd` (a Mininet CLI command, `<node> <shell command>`, or a script file of such lines)
and exits with a code that reflects the result. Every exit path, Ctrl-C and SIGTERM included, tears
the emulation down.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from emulation.holdloop import HOLD_PASSES_PER_S, tbf_args
from emulation.links import check_rto_min, check_ssh_option, parse_servers
from emulation.ocs.options import check_ocs_args
from emulation.priority import SoftirqBoost
from emulation.state import STATE_DIR, clean_net
from emulation.tofino import CHIPS, INSTALLED_BF_P4C, Chip, chip, compile_program, find_bf_p4c
from emulation.tofino import PROGRAMS as TOFINO_PROGRAMS
from fabric.contract import MODES, SPRAY_KINDS
from p4sim.target import P4SRC, STAMP, Target, label
from topo import generators
from topo.model import DEFAULT_GRPC_BASE, Topology, load
from topo.validate import validate

log = logging.getLogger(__name__)

PINGALL = ("pingall", "pingallfull")
# A layer above adds options to `run` (hitless/cli.py: the live view) and sets `args.attach(args, emu)`,
# a context entered while the emulation runs.
Extend = Callable[[argparse.ArgumentParser], None]


def add_parsers(sub: Any, extend: Extend | None = None) -> None:
    """Register `run`, `build` and `clean-net`; `extend` adds options to `run`."""
    r = sub.add_parser("run", aliases=["run-topo"], help="run a topology of P4 switches in Mininet (make run-topo)")
    r.add_argument("--topo", default="fattree", choices=("fattree", "leafspine", "ucd4"),
                   help="generated topology (default fattree)")
    r.add_argument("--topo-file", metavar="<topo.json>", help="a topology file instead of --topo")
    r.add_argument("--k", type=int, default=4, metavar="<even>", help="fat-tree arity (default 4)")
    r.add_argument("--mode", default="ecmp", choices=MODES)
    r.add_argument("--spray", default="random", choices=SPRAY_KINDS)
    r.add_argument("--ocs", type=int, default=0, choices=(0, 1),
                   help="1: attach the ToRs to an emulated OCS (ucd4 always has one)")
    r.add_argument("--circuits", metavar="<map|none|file.json>", help="initial circuit map (default: the default map)")
    r.add_argument("--ocs-arg", action="append", default=[], metavar="<opt>",
                   help="extra ocs-emulator option, e.g. --ocs-arg=--instant (repeatable)")
    r.add_argument("--cmd", metavar="<command|script>", help="run this Mininet CLI command or script, then exit")
    add_target_options(r)
    r.set_defaults(func=run)
    r.add_argument("--grpc-base", type=int, default=DEFAULT_GRPC_BASE, metavar="<port>",
                   help=f"device N listens on base+N (default {DEFAULT_GRPC_BASE}; generated topologies only)")
    r.add_argument("--prefix", default="", metavar="<text>",
                   help="prefix of every Mininet node (and interface) name, for runs side by side")
    r.add_argument("--rto-min", metavar="<time>", help="TCP rto_min on every host route, e.g. 10ms (us, ms or s; up to 120 s)")
    r.add_argument("--hold-passes", type=int, default=HOLD_PASSES_PER_S, metavar="<n>",
                   help=f"passes a second of each fabric switch's hold loop (default {HOLD_PASSES_PER_S}; "
                        "emulation/holdloop.py)")
    r.add_argument("--pcap", action="store_true", help="switches write pcaps into the log directory")
    r.add_argument("--switches-per-process", type=int, metavar="<n>",
                   help="fabric switches one process runs, where the switch binary can run several "
                        "(default: one each for small topologies, 16 processes for large ones)")
    r.add_argument("--log-dir", metavar="<dir>", help="switch logs and event logs (default /var/log/hitless/<run id>, $HITLESS_LOG_DIR)")
    r.add_argument("--servers", metavar="<a,b,...>",
                   help="run over these servers with Mininet's cluster edition, placed by pod (localhost: this "
                        "machine; the others reached as root over ssh, with the project and toolchain at the "
                        "same paths; emulation/README.md)")
    r.add_argument("--ssh-option", action="append", default=[], metavar="<opt>",
                   help="an ssh -o option for reaching the servers, e.g. IdentityFile=/root/.ssh/testbed (repeatable)")
    if extend is not None:
        extend(r)
    b = sub.add_parser("build", help="compile p4src/ into the build directory when stale (make p4-build)")
    add_target_options(b)
    b.add_argument("--record-compiler", action="store_true",
                   help="only record the chosen compiler in <build>/.compiler when it changed (the Makefile's "
                        "stamp rule): every output older than that file is stale")
    b.add_argument("--tofino", choices=[c.name for c in CHIPS], metavar="<chip>",
                   help="compile p4src/tna/ with bf-p4c for this chip (tofino, tofino2) instead: each program's "
                        "Stratum pipeline config in <build>/tofino/<chip>/<program>/<program>.pb.bin, for "
                        "`install --target tofino --build <build>/tofino/<chip>`")
    b.set_defaults(func=build)
    c = sub.add_parser("clean-net", help="remove what a killed run left behind (its recorded PIDs and interfaces)")
    c.add_argument("--force", action="store_true", help="also runs whose process is still alive")
    c.set_defaults(func=clean)


def add_target_options(p: argparse.ArgumentParser) -> None:
    """--switch, --p4c and --build (p4sim/target.py chooses the defaults)."""
    p.add_argument("--switch", metavar="<binary>",
                   help="P4 switch (default $SWITCH, else simple_switch_grpc on PATH, else p4sim-switch)")
    p.add_argument("--p4c", metavar="<binary>",
                   help="P4 compiler used when build/ is stale or from another compiler "
                        "(default $P4C, else p4c-bm2-ss on PATH, else p4sim-compile)")
    p.add_argument("--build", default="build", metavar="<dir>", help="compiled programs (default build)")
    p.add_argument("--p4src", type=Path, default=P4SRC, metavar="<dir>",
                   help=f"the P4 programs compiled when stale (default {P4SRC}: the package's)")


def build(args: argparse.Namespace) -> int:
    """`build`: compile what is stale (missing, older than p4src/ or than the compiler stamp)."""
    if args.tofino:
        return build_tofino(Path(args.build), chip(args.tofino), args.p4src)
    target = Target.from_env(args.p4c)
    if args.record_compiler:
        if target.record_compiler(Path(args.build)):
            print(f"{args.build}/{STAMP}: now {label(target.p4c)} ({target.p4c})")
        return 0
    print(target.ensure_build(Path(args.build), args.p4src))
    return 0


def build_tofino(build: Path, target: Chip, p4src: Path) -> int:
    """`build --tofino CHIP`: bf-p4c's output and pipeline config of each TNA program (reused while
    unchanged); 1 with the compiler's errors if one fails."""
    bf = find_bf_p4c()
    if bf is None:
        raise ValueError(f"bf-p4c: not installed (not $BF_P4C, on PATH or at {INSTALLED_BF_P4C}); "
                         "expected the toolchain of ../shared (make setup)")
    failed = 0
    for program in TOFINO_PROGRAMS:
        c = compile_program(bf, program, target, build / "tofino", p4src)
        if c.ok:
            print(f"{program} for {target.name}: {c.config} ({c.config.stat().st_size} bytes, with {c.p4info.name}), "
                  f"compiled in {c.seconds:.0f} s{' (reused)' if c.cached else ''}")
        else:
            failed += 1
            print(f"{program} for {target.name}: bf-p4c failed (log {c.out / 'bf-p4c.log'}):\n  " + "\n  ".join(c.errors))
    return 1 if failed else 0


def topology(args: argparse.Namespace) -> Topology:
    """The topology the run arguments describe (generated or loaded; OCS attached with --ocs 1)."""
    if args.topo_file:
        topo = load(args.topo_file)
    elif args.topo == "fattree":
        topo = generators.fattree(args.k, grpc_base=args.grpc_base)
    elif args.topo == "leafspine":
        topo = generators.leafspine(grpc_base=args.grpc_base)
    else:
        topo = generators.ucd4(grpc_base=args.grpc_base)
    if args.ocs and not topo.ocs:
        generators.hybrid(topo)
    return validate(topo)


def check_command(topo: Topology, line: str) -> None:
    """Raise ValueError for a --cmd (or a line of its script) that run_command would not know."""
    # imported here, not at the top: Mininet is an optional heavy dependency
    from emulation.shell import HitlessCLI

    path = Path(line)
    lines = [raw.strip() for raw in path.read_text().splitlines()] if path.is_file() else [line]
    nodes = {n.name for n in [*topo.hosts, *topo.switches, *topo.ocs]}
    for raw in lines:
        word = raw.split(None, 1)[0] if raw and not raw.startswith("#") else None
        if word and word not in PINGALL and word not in nodes and not hasattr(HitlessCLI, f"do_{word}"):
            raise ValueError(f"command {word!r}: expected a Mininet CLI command, a node name or a script file")


def run_command(emu: Any, line: str) -> int:
    """Run one --cmd: a script file, `pingall`, `<node> <shell>`, or any Mininet CLI command; 0 = success."""
    # imported here, not at the top: Mininet is an optional heavy dependency
    from emulation.shell import HitlessCLI

    path = Path(line)
    if path.is_file():
        for raw in path.read_text().splitlines():
            raw = raw.strip()
            if raw and not raw.startswith("#"):
                print(f"*** {raw}", flush=True)
                rc = run_command(emu, raw)
                if rc:
                    return rc
        return 0
    words = line.split(None, 1)
    if not words:
        return 0
    if words[0] in PINGALL:
        loss = emu.pingall() if words[0] == "pingall" else _pingallfull(emu)
        return 0 if loss == 0 else 1
    if words[0] in emu.hosts or words[0] in emu.switches:
        rc, out = emu.run(words[0], words[1] if len(words) > 1 else "true")
        sys.stdout.write(out)
        sys.stdout.flush()
        return rc
    with open(os.devnull) as null:  # no interactive loop, no terminal: one command
        cli = HitlessCLI(emu, stdin=null, script=os.devnull)
        cli.onecmd(line)
    return 1 if cli.failed else 0


def _pingallfull(emu: Any) -> float:
    results = emu.net.pingAllFull()
    sent = sum(r[2][0] for r in results)
    received = sum(r[2][1] for r in results)
    return 100.0 * (sent - received) / sent if sent else 100.0


class _Terminated(Exception):
    """SIGTERM or SIGHUP: leave through the clean-up path."""


def _on_signal(signum: int, _frame: Any) -> None:
    raise _Terminated(signal.Signals(signum).name)


def _quiet_mininet() -> None:
    from mininet.log import lg, setLogLevel

    setLogLevel("output")
    lg.propagate = False  # Mininet prints itself; the root handler would repeat every line


def run(args: argparse.Namespace) -> int:
    """`run`: bring the emulation up, hand over the CLI or run --cmd, always tear down."""
    # imported here, not at the top: Mininet is an optional heavy dependency
    from emulation.network import Emulation
    from emulation.shell import HitlessCLI

    t0 = time.monotonic()

    def progress(stage: str, detail: str) -> None:
        print(f"[{time.monotonic() - t0:6.1f} s] {stage}: {detail}", flush=True)

    if args.rto_min:
        check_rto_min(args.rto_min)  # before anything runs: the value goes to `ip route` in every host
    tbf_args(args.hold_passes)  # before anything runs: the value goes to `tc`
    check_ocs_args(args.ocs_arg)  # before anything runs: the options go to the OCS emulator
    servers = parse_servers(args.servers) if args.servers else None  # names that reach ssh
    ssh = [w for opt in args.ssh_option for w in check_ssh_option(opt)]
    if os.geteuid() != 0:
        raise ValueError("run: needs root (Mininet creates namespaces and veth pairs); expected sudo")
    topo = topology(args)
    progress("topology", f"{topo.name}: {len(topo.switches)} switches, {len(topo.hosts)} hosts, "
             f"{len(topo.links)} links, {len(topo.ocs)} OCS")
    if args.cmd:
        check_command(topo, args.cmd)
    build = Path(args.build)
    target = Target.from_env(args.p4c, args.switch)
    progress("compile", target.ensure_build(build, args.p4src))
    _quiet_mininet()
    emu = Emulation(topo, args.mode, build_dir=build, switch_bin=target.switch, spray=args.spray,
                    circuits=args.circuits, ocs_args=args.ocs_arg, rto_min=args.rto_min, pcap=args.pcap,
                    log_dir=args.log_dir, on_progress=progress, prefix=args.prefix, hold_passes=args.hold_passes,
                    switches_per_process=args.switches_per_process, servers=servers, ssh_options=ssh)
    old = {s: signal.signal(s, _on_signal) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        emu.start()
        progress("memory", f"{emu.rss_bytes() / 2**20:.0f} MiB resident over {len(emu.pids()) + 1} processes"
                 f"{' on this machine' if emu.servers else ''}")
        attach = getattr(args, "attach", None)
        with attach(args, emu) if attach is not None else contextlib.nullcontext():
            if args.cmd:
                rc = run_command(emu, args.cmd)
                progress("done", f"{args.cmd!r} exit {rc}")
                return rc
            HitlessCLI(emu)
            return 0
    except KeyboardInterrupt:
        print("interrupted: cleaning up", file=sys.stderr)
        return 130
    except _Terminated as exc:
        print(f"{exc}: cleaning up", file=sys.stderr)
        return 143
    finally:
        emu.stop()
        for s, h in old.items():
            signal.signal(s, h)
        progress("stopped", "every switch, host, interface and daemon of this run removed")


def clean(args: argparse.Namespace) -> int:
    """`clean-net`."""
    lines = clean_net(force=args.force)
    if SoftirqBoost(STATE_DIR).reap():
        lines.append("softirq threads: back to the niceness found before the first run raised them")
    for line in lines:
        print(line)
    if not lines:
        print(f"nothing to clean ({STATE_DIR} has no run records)")
    return 0
