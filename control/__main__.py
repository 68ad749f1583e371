"""python -m control: command line of the controller and the optical side."""

from __future__ import annotations

import argparse
import logging
import sys

from control import cli as net_cli
from control.ocs import cli as ocs_cli
from control.ocs.driver import OcsError
from control.procedures import ProcedureError
from p4rt.errors import P4RuntimeError


def build_parser(prog: str = "python -m control") -> argparse.ArgumentParser:
    """The top-level parser with every subcommand."""
    parser = argparse.ArgumentParser(prog=prog, description=__doc__)
    parser.add_argument("-v", "--verbose", action="count", default=0, help="-v info, -vv debug")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    net_cli.add_parsers(sub)
    ocs_cli.add_parsers(sub)
    return parser


def main(argv: list[str] | None = None, prog: str = "python -m control") -> int:
    """Entry point."""
    parser = build_parser(prog)
    args = parser.parse_args(argv)
    level = logging.WARNING - 10 * min(args.verbose, 2)
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if not getattr(args, "func", None):
        parser.print_help()
        return 1
    try:
        return args.func(args)
    except (ValueError, OSError, OcsError, P4RuntimeError, ProcedureError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
