"""python -m hitless: the `hitless` command (hitless/cli.py)."""

import sys

from hitless.cli import main

if __name__ == "__main__":
    sys.exit(main())
