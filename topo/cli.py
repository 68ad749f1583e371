"""The command-line convention of every package's `__main__` (topo, tablegen, scripts): bad input is
one line on stderr, `PROG: message`, and exit status 2; a failed file operation exits 1. Warnings are
logged, and progress too with -v/--verbose, as `LEVEL logger: message` on stderr."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable


def main_of(prog: str, parser: argparse.ArgumentParser, run: Callable[[argparse.Namespace], int | None],
            argv: list[str] | None) -> int:
    """A package's `main`: parse argv, configure logging by its --verbose, run the command as run_command."""
    args = parser.parse_args(argv)
    configure_logging(args.verbose)
    return run_command(prog, lambda: run(args))


def configure_logging(verbose: bool) -> None:
    """Log warnings, and with `verbose` progress (INFO) too, as `LEVEL logger: message`."""
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")


def run_command(prog: str, body: Callable[[], int | None]) -> int:
    """Run a command's body; its exit status (None: 0), or 2 with `prog: message` for a ValueError,
    1 with `prog: message` for an OSError."""
    try:
        return body() or 0
    except ValueError as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 1
