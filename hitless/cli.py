"""`hitless`: one command for the whole testbed. Each subcommand is a package's own command line (the
same parser, options and errors as `python -m topo|tablegen|control|emulation|scripts`), so
`hitless COMMAND --help` is that package's help."""

from __future__ import annotations

import importlib
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

PROG = "hitless"
BENCHES = Path(__file__).resolve().parents[1] / "scripts" / "bench"


@dataclass(frozen=True, slots=True)
class Command:
    """A subcommand: the module whose `main(argv, prog)` runs it, and whether its name is the first word
    of that module's own command line (`hitless install` is `python -m control install`)."""

    name: str
    module: str
    help: str
    group: str
    passes_name: bool = False

    def run(self, argv: list[str]) -> int:
        """Run it with the words after its name (and the live view's options where it runs a network)."""
        main: Callable[..., int] = importlib.import_module(self.module).main  # type: ignore[attr-defined]
        extra = {}
        if self.name in VIEW_OPTIONS:
            from view import cli as view_cli  # the web stack: only for the commands that serve it

            extra["extend"] = getattr(view_cli, VIEW_OPTIONS[self.name])
        if self.passes_name:
            return main([self.name, *argv], prog=PROG, **extra)
        return main(argv, prog=f"{PROG} {self.name}", **extra)


# the commands that run a network, and the view/cli.py function adding their --view options
VIEW_OPTIONS = {"run-topo": "add_options", "experiment": "add_watch_options"}


def _first_words(module: str, group: str, helps: dict[str, str]) -> tuple[Command, ...]:
    """Commands whose name is the first word of `module`'s own command line."""
    return tuple(Command(name, module, text, group, passes_name=True) for name, text in helps.items())


COMMANDS = (
    Command("topo", "topo.__main__", "generate, show and draw topologies (fattree, leafspine, ucd4, ocscore)", "topology"),
    Command("tables", "tablegen.__main__", "table entries of a topology and forwarding mode; `check`, `diff`", "topology"),
    *_first_words("emulation.__main__", "emulation", {
        "run-topo": "run a topology of P4 switches in Mininet, as root (make run-topo)",
        "build": "compile p4src/ when stale (make p4-build)",
        "ocs-emulator": "an emulated OCS speaking Polatis SCPI over TCP",
        "clean-net": "remove what a killed run left behind (make clean-net)"}),
    *_first_words("control.__main__", "controller", {
        "install": "push pipelines and install every switch's entries",
        "set-mode": "switch every route to static, ecmp or spray",
        "reconfigure": "reconfigure the OCS with bbm, mbb-timed or mbb",
        "status": "reachability, pipeline and entries of every switch",
        "counters": "the non-zero port counters of every switch",
        "ocs": "drive an OCS (Polatis or the emulator) over SCPI"}),
    Command("experiment", "scripts.__main__", "`run`, `report`, `analyze` an experiment spec, or the `demo`",
            "experiments"),
    Command("view", "view.cli", "replay finished runs in the live view's page (run-topo/experiment run --view: live)",
            "experiments"),
    Command("setup", "hitless.system", "what pip cannot install: Debian's packages (apt), Mininet, p4runtime's "
            "modules for this protobuf", "set-up"),
)
BY_NAME = {c.name: c for c in COMMANDS}
ALIASES = {"run": "run-topo", "tablegen": "tables"}


def bench_names() -> list[str]:
    """The benchmarks (scripts/bench/NAME.py), by NAME."""
    return sorted(p.stem for p in BENCHES.glob("*.py") if p.stem != "__init__")


def bench(argv: list[str]) -> int:
    """`hitless bench [NAME [ARGS]]`: one benchmark with its arguments, or every one (make bench)."""
    names = bench_names()
    if argv[:1] in (["-h"], ["--help"]):
        print(f"usage: {PROG} bench [NAME [ARGS ...]]   (NAME --help for its options)\n\n"
              f"Without NAME, every benchmark with its defaults. NAME: {', '.join(names)}")
        return 0
    if argv and argv[0] not in names:
        print(f"{PROG} bench: {argv[0]!r}: expected one of {', '.join(names)}", file=sys.stderr)
        return 2
    for name in argv[:1] or names:
        if not argv:
            print(f"   bench {name}", flush=True)
        rc = subprocess.call([sys.executable, "-m", f"scripts.bench.{name}", *argv[1:]])
        if rc:
            return rc
    return 0


def usage() -> str:
    """`hitless --help`."""
    lines = [f"usage: {PROG} COMMAND [ARGS ...]    ({PROG} COMMAND --help: its options)", "",
             "A P4 testbed for hybrid electrical/optical datacenter networks. Commands:"]
    groups: dict[str, list[tuple[str, str]]] = {}
    for c in COMMANDS:
        groups.setdefault(c.group, []).append((c.name, c.help))
    groups["experiments"].append(("bench", "benchmarks: compiler, switch, P4Runtime, tablegen, emulation"))
    groups["set-up"].append(("tofino-check", "check p4src/tna/ for Tofino 1 and 2 (make tofino-check)"))
    for group, items in groups.items():
        lines += ["", f"{group}:"] + [f"  {name:14}{text}" for name, text in items]
    lines += ["", f"Aliases: {', '.join(f'{a} = {c}' for a, c in ALIASES.items())}. The same commands as "
              "`python -m topo|tablegen|emulation|control|scripts`; the Python API is `import hitless`."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `hitless` console script."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help", "help"):
        print(usage())
        return 0 if args else 2
    name, rest = ALIASES.get(args[0], args[0]), args[1:]
    if name == "bench":
        return bench(rest)
    if name == "tofino-check":
        from scripts.tools import tofino_check

        return tofino_check.main(rest)
    command = BY_NAME.get(name)
    if command is None:
        print(f"{PROG}: {args[0]!r}: not a command; expected one of "
              f"{', '.join([*BY_NAME, 'bench', 'tofino-check'])} ({PROG} --help)", file=sys.stderr)
        return 2
    return command.run(rest)


if __name__ == "__main__":
    sys.exit(main())
