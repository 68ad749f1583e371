"""python -m scripts: run experiments, re-analyse and summarise them, and the demo."""

from __future__ import annotations

import argparse
import functools
import sys
from pathlib import Path
from typing import Any

from emulation.cli import Extend
from emulation.links import check_ssh_option, parse_servers
from scripts.demo import demo
from scripts.experiment import analyze_all, report, run
from scripts.experiments import spec as specmod
from scripts.experiments.runner import HOME
from topo.cli import main_of


def build_parser(prog: str = "python -m scripts", extend: Extend | None = None) -> argparse.ArgumentParser:
    """The argument parser; `extend` adds options to `run` (the `hitless` command's live view)."""
    p = argparse.ArgumentParser(prog=prog, description="hitless experiments")
    p.add_argument("-v", "--verbose", action="store_true", help="log progress of every component")
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run an experiment spec (resumable), then summarise it")
    r.add_argument("spec", metavar="<spec.yaml>")
    r.add_argument("--out", metavar="<dir>", help="results directory (default results/<spec name>)")
    r.add_argument("--runs", type=int, metavar="<n>", help="override the spec's number of runs")
    r.add_argument("--duration", type=float, metavar="<s>", help="override the run length")
    r.add_argument("--event-at", type=float, metavar="<s>", help="override the reconfiguration time")
    r.add_argument("--variants", metavar="<a,b>", help="only these variants")
    r.add_argument("--transfers", type=int, metavar="<n>", help="kind strategies: override bulk.transfers (24, 48, 72)")
    r.add_argument("--stretch", type=float, metavar="<x>",
                   help="kind strategies: transfer sizes and SSE times x (2: e6-strategies at the paper's time scale)")
    r.add_argument("--rate", type=float, metavar="<mbit>",
                   help="the dynamic streams' rate instead of the spec's (a machine that cannot carry it with room)")
    r.add_argument("--link-rate", type=float, metavar="<mbit>",
                   help="the topology's link rate instead of the spec's (unlimited streams on a machine that "
                        "cannot carry the spec's rate with room; queues keep their frames)")
    r.add_argument("--servers", metavar="<a,b,...>",
                   help="run over these servers (localhost: this machine; emulation/README.md), placed by pod")
    r.add_argument("--ssh-option", action="append", default=[], metavar="<opt>",
                   help="an ssh -o option for reaching the servers, e.g. IdentityFile=/root/.ssh/testbed (repeatable)")
    r.add_argument("--place", metavar="<node=server,...>",
                   help="with --servers: these nodes on these servers instead of by pod (e.g. h2=srv2,h3=srv2)")
    r.add_argument("--seed", type=int, default=1, metavar="<n>", help="OCS delay model seed (default 1)")
    r.add_argument("--build", metavar="<dir>", help="compiled programs (default build/, compiled when stale)")
    if extend is not None:
        extend(r)
    s = sub.add_parser("report", help="summary tables and plots of a results directory")
    s.add_argument("spec", metavar="<spec.yaml>")
    s.add_argument("--out", metavar="<dir>", help="results directory (default results/<spec name>)")
    s.add_argument("--transfers", type=int, metavar="<n>", help="kind strategies: the bulk.transfers the runs used (only for runs that do not record it)")
    s.add_argument("--max-load", type=float, metavar="<load>",
                   help="kind strategies: also summarise only the runs under this 1-minute load average")
    a = sub.add_parser("analyze", help="recompute metrics.json of every run from its raw files")
    a.add_argument("spec", metavar="<spec.yaml>")
    a.add_argument("--out", metavar="<dir>")
    d = sub.add_parser("demo", help="short experiments 1 and 5; results/demo/summary.json")
    d.add_argument("--out", default=str(HOME / "results" / "demo"), metavar="<dir>")
    d.add_argument("--runs", type=int, default=5, metavar="<n>", help="runs per procedure/mode (default 5)")
    d.add_argument("--reanalyze", action="store_true", help="only recompute metrics and summaries of stored runs")
    d.add_argument("--build", metavar="<dir>", help="compiled programs (default build/, compiled when stale)")
    return p


def main(argv: list[str] | None = None, prog: str = "python -m scripts", extend: Extend | None = None) -> int:
    """Entry point."""
    return main_of("scripts", build_parser(prog, extend), run_args, argv)


def cluster_options(args: argparse.Namespace) -> dict[str, Any] | None:
    """Emulation's servers, ssh_options and placement from --servers, --ssh-option and --place
    (checked: names that reach ssh), or None on one machine."""
    if not args.servers:
        if args.place or args.ssh_option:
            raise ValueError("--place and --ssh-option go with --servers; expected --servers too")
        return None
    placement = {}
    for item in (args.place or "").split(","):
        if item:
            node, sep, server = item.partition("=")
            if not sep:
                raise ValueError(f"--place {item!r}: expected node=server")
            placement[node] = server
    return {"servers": parse_servers(args.servers), "placement": placement,
            "ssh_options": [w for opt in args.ssh_option for w in check_ssh_option(opt)]}


def run_args(args: argparse.Namespace) -> int:
    """The command `main` parsed."""
    if args.command == "demo":
        return demo(Path(args.out), args.runs, args.reanalyze, Path(args.build) if args.build else None)
    sp = specmod.load(args.spec)
    if args.command == "run" and args.variants:
        keep = args.variants.split(",")
        unknown = sorted(set(keep) - {v.name for v in sp.variants})
        if unknown:
            raise ValueError(f"--variants {unknown}: expected some of {[v.name for v in sp.variants]}")
        sp.variants = [v for v in sp.variants if v.name in keep]
    out = Path(args.out) if args.out else HOME / "results" / sp.name
    if args.command == "run":
        sp = specmod.stretch(specmod.shorten(sp, args.runs, args.duration, args.event_at), args.stretch)
        sp = specmod.at_link_rate(specmod.at_rate(sp, args.rate), args.link_rate)
    if getattr(args, "transfers", None) is not None:
        sp.bulk.transfers = args.transfers
        sp.bulk.check()
    if args.command == "run":
        attach = getattr(args, "attach", None)  # the live view's, when a layer above added it (extend)
        counts = run(sp, out, seed=args.seed, build=Path(args.build) if args.build else None,
                     watch=functools.partial(attach, args) if attach is not None else None, cluster=cluster_options(args))
        print(f"[{sp.name}] {counts['ran']} ran, {counts['skipped']} already done, {counts['failed']} failed")
        return 1 if counts["failed"] else 0
    if args.command == "analyze":
        print(f"[{sp.name}] re-analysed {analyze_all(sp, out)} runs")
    report(sp, out, max_load=getattr(args, "max_load", None))
    return 0


if __name__ == "__main__":
    sys.exit(main())
