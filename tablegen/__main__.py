"""python -m tablegen: command line."""

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    """Entry point."""
    parser = argparse.ArgumentParser(prog="python -m tablegen")
    parser.add_subparsers(dest="command")
    args = parser.parse_args(argv)
    print(f"tablegen: command {args.command!r} is not implemented yet", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
