"""Benchmark: p4sim-switch under abuse: open streams and concurrent unary calls served, and RSS over pipeline pushes.

Starts p4sim-switch (--no-p4) on a free loopback port, opens --streams StreamChannels, each on its
own connection and arbitrated, and with all of them open makes --unary concurrent unary calls
(Capabilities, GetForwardingPipelineConfig, Read, Write) and one new arbitration; prints how many
were answered and the switch's resident memory per idle stream. Then, on a fresh switch, pushes
p4src/fabric.p4 (compiled by p4sim-compile) --pushes times and prints the RSS along the way. Then a
wildcard Read of every register cell (entities streamed, how it ended, the switch's peak RSS growth)
and the slowest of 20 Writes while 8 such Reads wait on clients that never read; and on a switch
without a pipeline, 200 failing 1 MiB packet-outs from a client that never reads its stream (RSS
growth) and 20,000 messages before arbitration (log lines). The same code runs in
p4sim/tests/test_reliability.py.

    .venv/bin/python -m scripts.bench.p4sim_abuse [--streams 500] [--unary 500] [--pushes 100]
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
from pathlib import Path

from scripts.tools import p4sim_abuse as abuse

REPO = Path(__file__).resolve().parents[2]

def main() -> int:
    """Entry point."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--streams", type=int, default=500, metavar="N", help="open StreamChannels (default 500)")
    ap.add_argument("--unary", type=int, default=500, metavar="N", help="concurrent unary calls (default 500)")
    ap.add_argument("--pushes", type=int, default=100, metavar="N", help="pipeline pushes (default 100)")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    load = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="bench_abuse_") as tmp:
        out = Path(tmp)
        program = abuse.fabric_program(out)
        with abuse.p4sim_switch(out) as sw:
            served = abuse.flood(sw, program, args.streams, args.unary)
        with abuse.p4sim_switch(out) as sw:
            pushes = abuse.push_pipelines(sw, program, args.pushes)
        with abuse.p4sim_switch(out) as sw:
            reads = abuse.reads(sw, program)
        with abuse.p4sim_switch(out) as sw:
            flood = abuse.stream_flood(sw)
    print(f"p4sim-switch under abuse; load average before the run {load[0]:.1f} on {os.cpu_count()} CPUs:")
    print(f"  {served}")
    print(f"  {pushes}")
    print(f"  {reads}")
    print(f"  {flood}")
    ok = (served.streams, served.unary, served.late_arbitration) == (args.streams, args.unary, True)
    return 0 if ok and abs(pushes.growth) <= 0.05 else 1


if __name__ == "__main__":
    sys.exit(main())
