"""Command line of p4sim-compile, shaped like p4c-bm2-ss."""

import argparse
import sys


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser (the p4c-bm2-ss command shape)."""
    p = argparse.ArgumentParser(prog="p4sim-compile", description="Compile P4_16 (v1model) to bmv2 JSON + P4Info.")
    p.add_argument("program", metavar="PROG.p4")
    p.add_argument("-o", dest="output", metavar="PROG.json", required=True)
    p.add_argument("--p4runtime-files", metavar="PROG.p4info.txtpb")
    p.add_argument("-I", dest="include", action="append", default=[], metavar="DIR")
    p.add_argument("-D", dest="define", action="append", default=[], metavar="NAME[=VALUE]")
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point."""
    build_parser().parse_args(argv)
    sys.stderr.write("p4sim-compile: the compiler is not implemented yet\n")
    return 1
