"""Command line of p4sim-switch, shaped like simple_switch_grpc."""

import argparse
import sys


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser (the simple_switch_grpc command shape)."""
    p = argparse.ArgumentParser(prog="p4sim-switch", description="Run bmv2 JSON behind a P4Runtime server.")
    p.add_argument("json", nargs="?", metavar="PROG.json")
    p.add_argument("--no-p4", action="store_true")
    p.add_argument("-i", "--interface", action="append", default=[], metavar="PORT@IFACE")
    p.add_argument("--device-id", type=int, default=0, metavar="N")
    p.add_argument("--grpc-server-addr", default="127.0.0.1:9559", metavar="<ip>:<port>")
    p.add_argument("--cpu-port", type=int, metavar="N")
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point."""
    build_parser().parse_args(argv)
    sys.stderr.write("p4sim-switch: the switch is not implemented yet\n")
    return 1
