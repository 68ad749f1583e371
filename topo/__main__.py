"""python -m topo: generate, show and draw topologies (running one is `python -m emulation run`)."""

from __future__ import annotations

import argparse
import sys

from topo import generators
from topo.cli import main_of
from topo.draw import draw
from topo.model import DEFAULT_GRPC_BASE, Topology, dumps, load, save
from topo.summary import summary
from topo.validate import validate


def build_parser(prog: str = "python -m topo") -> argparse.ArgumentParser:
    """The argument parser."""
    p = argparse.ArgumentParser(prog=prog, description="Topologies: generate, show, draw.")
    p.add_argument("-v", "--verbose", action="store_true", help="log progress")
    sub = p.add_subparsers(dest="command", required=True)
    g = sub.add_parser("generate", help="generate a topology JSON file")
    g.add_argument("kind", choices=("fattree", "leafspine", "ucd4", "ocscore"))
    g.add_argument("--k", type=int, default=4, metavar="<even>", help="fat-tree arity (default 4)")
    g.add_argument("--leaves", type=int, default=6, metavar="<n>", help="leaf-spine leaves (default 6)")
    g.add_argument("--spines", type=int, metavar="<n>", help="spines (default: leafspine 2, ocscore 0)")
    g.add_argument("--tors", type=int, default=4, metavar="<n>", help="ocscore: ToRs around the OCS (default 4)")
    g.add_argument("--hosts-per-tor", type=int, default=2, metavar="<n>", help="ocscore: default 2")
    g.add_argument("--hosts-per-leaf", type=int, default=24, metavar="<n>", help="default 24")
    g.add_argument("--rate", type=float, metavar="<mbit>",
                   help="link rate in Mbit/s (default: fattree 20, ocscore 100, leafspine and ucd4 1000)")
    g.add_argument("--delay", default="0.1ms", metavar="<delay>", help="link delay (default 0.1ms)")
    g.add_argument("--grpc-base", type=int, default=DEFAULT_GRPC_BASE, metavar="<port>",
                   help=f"device N gets gRPC port base+N (default {DEFAULT_GRPC_BASE})")
    g.add_argument("--hybrid", action="store_true", help="attach ToR ports to an OCS (fattree, leafspine)")
    g.add_argument("--hybrid-tors", metavar="<a,b,...>", help="the ToRs to attach (default: all)")
    g.add_argument("--optical-uplinks", type=int, default=1, metavar="<n>", help="OCS ports per ToR (default 1)")
    g.add_argument("--replace", action="store_true",
                   help="hybrid: turn the ToR's last uplinks into the optical ports instead of adding ports")
    g.add_argument("-o", "--output", metavar="<file>", help="output file (default: stdout)")
    s = sub.add_parser("show", help="summarise a topology file")
    s.add_argument("topology", metavar="<topo.json>")
    d = sub.add_parser("draw", help="draw a topology file")
    d.add_argument("topology", metavar="<topo.json>")
    d.add_argument("-o", "--output", required=True, metavar="<file.png>")
    return p


def generate(args: argparse.Namespace) -> Topology:
    """The topology the generate arguments describe."""
    if args.kind == "fattree":
        topo = generators.fattree(args.k, args.rate if args.rate is not None else 20.0, args.delay, args.grpc_base)
    elif args.kind == "ocscore":
        if args.hybrid:
            raise ValueError("--hybrid: ocscore already has its OCS (add spines with --spines)")
        topo = generators.ocscore(args.tors, args.hosts_per_tor, args.optical_uplinks, args.spines or 0,
                                  args.rate if args.rate is not None else 100.0, args.delay, args.grpc_base)
    elif args.kind == "leafspine":
        topo = generators.leafspine(args.leaves, 2 if args.spines is None else args.spines, args.hosts_per_leaf,
                                    args.rate if args.rate is not None else 1000.0, args.delay, args.grpc_base)
    else:
        if args.hybrid:
            raise ValueError("--hybrid: ucd4 already has its OCS")
        topo = generators.ucd4(args.rate if args.rate is not None else 1000.0, args.delay, args.grpc_base)
    if args.hybrid:
        tors = args.hybrid_tors.split(",") if args.hybrid_tors else None
        generators.hybrid(topo, tors, args.optical_uplinks, replace=args.replace)
    return validate(topo)


def main(argv: list[str] | None = None, prog: str = "python -m topo") -> int:
    """Entry point."""
    return main_of("topo", build_parser(prog), run, argv)


def run(args: argparse.Namespace) -> None:
    """The command `main` parsed."""
    if args.command == "generate":
        topo = generate(args)
        if args.output:
            save(topo, args.output)
            print(f"{args.output}: {len(topo.switches)} switches, {len(topo.hosts)} hosts, "
                  f"{len(topo.links)} links, {len(topo.ocs)} OCS")
        else:
            sys.stdout.write(dumps(topo))
    elif args.command == "show":
        print("\n".join(summary(validate(load(args.topology)))))
    elif args.command == "draw":
        draw(validate(load(args.topology)), args.output)
        print(args.output)


if __name__ == "__main__":
    sys.exit(main())
