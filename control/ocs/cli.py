"""`python -m control ocs`: drive an OCS (a Polatis or the emulator) over SCPI."""

from __future__ import annotations

import argparse
import logging
from typing import Any

from control.ocs.driver import duplex_pairs, parse_pairs
from control.ocs.polatis import DEFAULT_PORT, PolatisDriver
from control.ocs.scpi import parse_address

log = logging.getLogger(__name__)


def add_parsers(sub: Any) -> None:
    """Register the `ocs` subcommand."""
    p = sub.add_parser("ocs", help="drive an OCS (Polatis or the emulator) over SCPI")
    p.add_argument("--ocs", default=f"127.0.0.1:{DEFAULT_PORT}", metavar="<ip>:<port>")
    p.add_argument("--timeout", type=float, default=5.0, metavar="S")
    p.add_argument("--duplex", action="store_true", help="A:B are transceiver slots: connect both directions")
    p.add_argument("--wait", action="store_true", help="wait for the mirrors (*OPC?) after a change")
    p.add_argument("action", choices=["connect", "disconnect", "set", "show", "status", "reset"])
    p.add_argument("pairs", nargs="*", metavar="IN:OUT", help="connections (or a port for status)")
    p.set_defaults(func=run_ocs)





def run_ocs(args: argparse.Namespace) -> int:
    """One driver action against an OCS."""
    host, port = parse_address(args.ocs)
    with PolatisDriver(host, port, timeout=args.timeout) as drv:
        if args.action == "show":
            print(f"{drv.identify()}  size {drv.size}")
            for i, o in drv.query().items():
                print(f"{i} -> {o}")
            return 0
        if args.action == "status":
            if len(args.pairs) != 1 or not args.pairs[0].isdigit():
                raise ValueError(f"status {args.pairs!r}: expected one port number")
            st = drv.port_status(int(args.pairs[0]))
            print(f"port {st.port}: peer {st.connected_to} light {st.light}")
            return 0
        if args.action == "reset":
            drv.reset()
            return 0
        pairs = parse_pairs(args.pairs)
        if args.duplex:
            pairs = duplex_pairs(pairs, drv.size)
        {"connect": drv.connect, "disconnect": drv.disconnect, "set": drv.set_map}[args.action](pairs)
        if args.wait:
            drv.wait_complete()
    return 0

