"""Command line of p4sim-compile, shaped like p4c-bm2-ss."""

import argparse
import logging
import sys

from p4sim import package_version
from p4sim.compiler.compile import compile_file, write_outputs
from p4sim.compiler.errors import CompileError


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser (the p4c-bm2-ss command shape)."""
    p = argparse.ArgumentParser(prog="p4sim-compile", description="Compile P4_16 (v1model) to bmv2 JSON + P4Info.")
    p.add_argument("program", metavar="PROG.p4")
    p.add_argument("-o", dest="output", metavar="PROG.json", required=True)
    p.add_argument("--p4runtime-files", metavar="PROG.p4info.txtpb")
    p.add_argument("-I", dest="include", action="append", default=[], metavar="DIR")
    p.add_argument("-D", dest="define", action="append", default=[], metavar="NAME[=VALUE]")
    p.add_argument("-v", dest="verbose", action="store_true", help="log progress")
    p.add_argument("--version", action="version", version=f"p4sim-compile {package_version()}")
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point: compile, print `FILE:LINE:COL: error: ...` and exit 1 on errors."""
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING, format="%(message)s")
    try:
        res = compile_file(args.program, args.include, args.define)
        write_outputs(res, args.output, args.p4runtime_files)
    except CompileError as exc:
        sys.stderr.write(f"{exc}\n")
        return 1
    except (ValueError, OSError) as exc:
        sys.stderr.write(f"p4sim-compile: error: {exc}\n")
        return 1
    except Exception as exc:  # a compiler bug: no output files, one line, details with -v
        logging.getLogger(__name__).debug("internal error", exc_info=True)
        sys.stderr.write(f"{args.program}: internal compiler error: {exc!r} (run with -v for details)\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
