"""python -m control: command line."""

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    """Entry point."""
    parser = argparse.ArgumentParser(prog="python -m control")
    parser.add_subparsers(dest="command")
    args = parser.parse_args(argv)
    print(f"control: command {args.command!r} is not implemented yet", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
