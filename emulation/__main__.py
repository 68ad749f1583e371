"""python -m emulation: run a topology in Mininet, build the P4 programs, clean up after a killed run,
and run the emulated OCS."""

from __future__ import annotations

import argparse
import logging
import sys

from control.ocs.driver import OcsError
from emulation import cli as network_cli
from emulation.cli import Extend
from emulation.ocs import cli as ocs_cli
from p4rt.errors import P4RuntimeError


def build_parser(prog: str = "python -m emulation", extend: Extend | None = None) -> argparse.ArgumentParser:
    """The argument parser; `extend` adds options to `run` (the `hitless` command's live view)."""
    p = argparse.ArgumentParser(prog=prog, description=__doc__)
    p.add_argument("-v", "--verbose", action="store_true", help="log progress")
    sub = p.add_subparsers(dest="command", required=True)
    network_cli.add_parsers(sub, extend)
    ocs_cli.add_parsers(sub)
    return p


def main(argv: list[str] | None = None, prog: str = "python -m emulation", extend: Extend | None = None) -> int:
    """Entry point."""
    args = build_parser(prog, extend).parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        return args.func(args)
    except (ValueError, OcsError, P4RuntimeError) as exc:
        print(f"emulation {args.command}: {exc}", file=sys.stderr)
        return 2
    except (RuntimeError, OSError) as exc:  # a switch or daemon that failed to start, a failed command
        print(f"emulation {args.command}: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
