"""The command-line convention of every package's `__main__` (topo, tablegen, scripts): bad input is
one line on stderr, `PROG: message`, and exit status 2; a failed file operation exits 1."""

from __future__ import annotations

import sys
from collections.abc import Callable


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
