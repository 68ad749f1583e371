"""python -m tablegen: write entry files for a topology, or check a directory of them.

  python -m tablegen topo.json --mode ecmp -o DIR [--circuits initial|none|FILE] [--spray random|rr]
                    [--failover on|off]
  python -m tablegen check DIR topo.json [--pairs N] [--mode ecmp] [--failover on|off]
  python -m tablegen diff OLD_DIR NEW_DIR
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from fabric.contract import FAILOVER, MODES, SPRAY_KINDS
from p4rt.diff import diff_states
from p4rt.state import SwitchState
from tablegen.check import check
from tablegen.files import read, write
from tablegen.graph import Fabric
from topo.circuits import resolve_circuits
from topo.cli import configure_logging, run_command
from topo.model import load
from topo.validate import validate


def gen_parser(prog: str = "python -m tablegen") -> argparse.ArgumentParser:
    """The parser of the generate form."""
    p = argparse.ArgumentParser(prog=prog,
                                description="Write one entry file per switch (and OCS) for a topology. "
                                            f"`{prog} check --help` for the checker, `{prog} diff --help` to compare two outputs.")
    p.add_argument("topology", metavar="<topo.json>")
    p.add_argument("--mode", choices=MODES, default="ecmp", help="forwarding mode (default ecmp)")
    p.add_argument("--spray", choices=SPRAY_KINDS, default="random", help="spray member choice (default random)")
    p.add_argument("--circuits", metavar="<map|none|file.json>",
                   help="circuit map: a map name of the topology's OCS, 'none', or a JSON file "
                        "{\"<ocs>\": [[a, b], ...]} (default: each OCS's default map)")
    p.add_argument("--failover", choices=FAILOVER, default="on",
                   help="data-plane fast failover: 'off' watches no port, so a dead port never moves traffic "
                        "to the other path version (default on)")
    p.add_argument("-o", "--output", required=True, metavar="<dir>", help="output directory")
    p.add_argument("--check", action="store_true", help="check the written entries afterwards")
    p.add_argument("-v", "--verbose", action="store_true", help="log progress")
    return p


def _sub_parser(prog: str, command: str, description: str, *positional: tuple[str, str]) -> argparse.ArgumentParser:
    """The parser of `PROG COMMAND` with its positional arguments (name, metavar) and -v."""
    p = argparse.ArgumentParser(prog=f"{prog} {command}", description=description)
    for name, metavar in positional:
        p.add_argument(name, metavar=metavar)
    p.add_argument("-v", "--verbose", action="store_true", help="log progress")
    return p


def check_parser(prog: str = "python -m tablegen") -> argparse.ArgumentParser:
    """The parser of the check form."""
    p = _sub_parser(prog, "check", "Walk the entries of DIR for host pairs: reachability, loops, least-cost groups, "
                    "MACs, liveness.", ("directory", "<dir>"), ("topology", "<topo.json>"))
    p.add_argument("--pairs", type=int, default=4096, metavar="<n>",
                   help="check all host pairs up to n, else a seeded sample of n (default 4096)")
    p.add_argument("--seed", type=int, default=1, metavar="<n>", help="sample seed (default 1)")
    p.add_argument("--mode", choices=MODES, help="also require multipath groups wherever next hops are equal-cost")
    p.add_argument("--failover", choices=FAILOVER,
                   help="also require the liveness groups of this setting (default: accept either)")
    return p


def diff_parser(prog: str = "python -m tablegen") -> argparse.ArgumentParser:
    """The parser of the diff form."""
    return _sub_parser(prog, "diff", "Print the changes from the entries of OLD to those of NEW, per switch, in a safe "
                       "install order (+ insert, ~ modify, - delete).", ("old", "<old dir>"), ("new", "<new dir>"))


def run_diff(old: str, new: str) -> int:
    """Print the per-switch changes between two entry directories."""
    dirs = [Path(old), Path(new)]
    for d in dirs:
        if not d.is_dir():
            raise ValueError(f"entry directory {str(d)!r}: not a directory")
    names = sorted({f.stem for d in dirs for f in d.glob("*.json")})
    total = 0
    for name in names:
        a, b = (d / f"{name}.json" for d in dirs)
        old_st, new_st = (read(f) if f.exists() else None for f in (a, b))
        program = (old_st or new_st).program  # type: ignore[union-attr]  # one of the two exists
        empty = SwitchState(name, program)
        changes = diff_states(old_st or empty, new_st or empty)
        total += len(changes)
        for c in changes:
            print(f"{name}: {c}")
    print(f"{total} changes on {len(names)} switches")
    return 0


def run_check(directory: str, topo_path: str, pairs: int, seed: int, mode: str | None,
              failover: str | None = None) -> int:
    """Check a directory; print the report; 0 when it passes."""
    topo = validate(load(topo_path))
    d = Path(directory)
    if not d.is_dir():
        raise ValueError(f"entry directory {directory!r}: not a directory")

    def loader(name: str) -> SwitchState | None:
        f = d / f"{name}.json"
        return read(f) if f.exists() else None

    t0 = time.perf_counter()
    report = check(topo, loader, pairs, seed, mode, None if failover is None else failover == "on")
    print(f"checked {report.pairs} host pairs x 2 versions ({report.walks} walks, {report.groups_checked} "
          f"groups, {report.switches_loaded} switches, max {report.max_hops} switch hops) "
          f"in {time.perf_counter() - t0:.1f} s: {'OK' if report.ok else 'FAILED'}")
    for e in report.errors:
        print(f"  {e}")
    return 0 if report.ok else 1


def main(argv: list[str] | None = None, prog: str = "python -m tablegen") -> int:
    """Entry point."""
    argv = list(sys.argv[1:] if argv is None else argv)
    command = argv[0] if argv and argv[0] in ("check", "diff") else "generate"
    if command == "check":
        args = check_parser(prog).parse_args(argv[1:])
    elif command == "diff":
        args = diff_parser(prog).parse_args(argv[1:])
    else:
        args = gen_parser(prog).parse_args(argv)
    configure_logging(args.verbose)
    return run_command("tablegen", lambda: run(command, args))


def run(command: str, args: argparse.Namespace) -> int:
    """The command `main` parsed."""
    if command == "diff":
        return run_diff(args.old, args.new)
    if command == "check":
        return run_check(args.directory, args.topology, args.pairs, args.seed, args.mode, args.failover)
    topo = validate(load(args.topology))
    fabric = Fabric(topo, resolve_circuits(topo, args.circuits))
    t0 = time.perf_counter()
    s = write(fabric, args.mode, args.output, args.spray, args.failover == "on")
    tables = ", ".join(f"{t} {n}" for t, n in sorted(s.by_table.items()))
    print(f"{args.output}: {s.files} files, {s.entries} table entries ({tables}), {s.members} members, "
          f"{s.groups} groups in {time.perf_counter() - t0:.1f} s")
    if args.check:
        return run_check(args.output, args.topology, 4096, 1, args.mode, args.failover)
    return 0


if __name__ == "__main__":
    sys.exit(main())
