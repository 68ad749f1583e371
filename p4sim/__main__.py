"""python -m p4sim compile|switch ...: the embedded P4 target."""

import sys

from p4sim.compiler import cli as compile_cli
from p4sim.switch import cli as switch_cli

COMMANDS = {"compile": compile_cli.main, "switch": switch_cli.main}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in COMMANDS:
        print(f"usage: python -m p4sim {{{'|'.join(COMMANDS)}}} ...", file=sys.stderr)
        sys.exit(2)
    sys.exit(COMMANDS[sys.argv[1]](sys.argv[2:]))
