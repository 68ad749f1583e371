"""`python -m p4sim.tests.golden --update`: regenerate the compiler's golden files."""

import argparse
import sys

from p4sim.tests import golden


def main() -> int:
    """Entry point."""
    ap = argparse.ArgumentParser(prog="python -m p4sim.tests.golden", description=__doc__)
    ap.add_argument("--update", action="store_true", help="rewrite the golden files from the current compiler")
    args = ap.parse_args()
    if not args.update:
        ap.print_help()
        return 2
    for name in golden.update():
        print(f"updated {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
