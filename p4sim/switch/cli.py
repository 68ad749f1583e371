"""Command line of p4sim-switch, shaped like simple_switch_grpc.

    p4sim-switch [options] [PROG.json | --no-p4] [-- --grpc-server-addr IP:PORT --cpu-port N]

    p4sim-switch --devices DEVICES.json [--control-stdin]   # several switches in one process

Target options (after `--`) are also accepted before it. The switch prints its listening address on
stderr, and stops cleanly on SIGTERM or SIGINT. Errors (missing interface, busy gRPC port,
unreadable JSON) print one line and exit with status 1. With --devices, each element of the file's
list is one switch's command line (p4sim/switch/host.py).
"""

import argparse
import json
import logging
import signal
import sys
import threading

from p4sim import package_version
from p4sim.switch.device import RING_KIB
from p4sim.switch.host import SwitchHost, parse_addr, parse_ports  # noqa: F401 - parse_* are this CLI's too

log = logging.getLogger("p4sim.switch")


GIL_SWITCH_INTERVAL_S = 0.0005


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser (the simple_switch_grpc command shape)."""
    p = argparse.ArgumentParser(prog="p4sim-switch", description="Run bmv2 JSON behind a P4Runtime server.")
    p.add_argument("json", nargs="?", metavar="PROG.json", help="bmv2 JSON program (or --no-p4)")
    p.add_argument("--no-p4", action="store_true", help="start without a program (set it over P4Runtime)")
    p.add_argument("-i", "--interface", action="append", default=[], metavar="PORT@IFACE",
                   help="attach a Linux interface as a port (repeatable)")
    p.add_argument("--device-id", type=int, default=0, metavar="N", help="P4Runtime device id (default 0)")
    p.add_argument("--log-console", action="store_true", help="log to the console (stderr)")
    p.add_argument("-L", "--log-level", default=None, metavar="LEVEL",
                   choices=["trace", "debug", "info", "warn", "error", "off"], help="log level (default info)")
    p.add_argument("--log-file", default=None, metavar="PATH", help="also log to this file")
    p.add_argument("--pcap", nargs="?", const=".", default=None, metavar="DIR",
                   help="write <iface>_in.pcap and <iface>_out.pcap for every port")
    p.add_argument("--thrift-port", type=int, default=None, metavar="PORT",
                   help="accepted for bmv2 compatibility; p4sim has no Thrift server")
    p.add_argument("--grpc-server-addr", default="127.0.0.1:9559", metavar="<ip>:<port>",
                   help="P4Runtime server address (default 127.0.0.1:9559)")
    p.add_argument("--grpc-server-ssl", action="store_true", help="P4Runtime over TLS (as simple_switch_grpc)")
    p.add_argument("--grpc-server-cacert", metavar="<ca.pem>", help="CA certificate to verify clients against")
    p.add_argument("--grpc-server-cert", metavar="<cert.pem>", help="the server's certificate (chain)")
    p.add_argument("--grpc-server-key", metavar="<key.pem>", help="the server's private key")
    p.add_argument("--grpc-server-with-client-auth", action="store_true",
                   help="require a client certificate signed by --grpc-server-cacert (mutual TLS)")
    p.add_argument("--cpu-port", type=int, default=None, metavar="N", help="CPU port for packet-in/out")
    p.add_argument("--version", action="version", version=f"{package_version()}-p4sim")
    p.add_argument("--priority-queues", type=int, default=1, metavar="N",
                   help="priority queues per port (default 1): a packet whose standard_metadata.priority "
                        "is N or more is dropped, as by simple_switch")
    p.add_argument("--data-plane", choices=["native", "python"], default="native",
                   help="native: the program as compiled C and a native packet loop when a C compiler is "
                        "available (default); python: p4sim's Python data path")
    p.add_argument("--ring-kib", type=int, default=RING_KIB, metavar="KIB",
                   help=f"each port's receive ring with the native data plane (default {RING_KIB}, as libpcap's for bmv2)")
    p.add_argument("--devices", metavar="FILE",
                   help="run several switches in this process: a JSON list of their command lines")
    p.add_argument("--control-stdin", action="store_true",
                   help="read `stop ID` and `start [ARGS]` lines from standard input; its end stops every device")
    return p


def _setup_logging(args: argparse.Namespace) -> None:
    levels = {"trace": logging.DEBUG, "debug": logging.DEBUG, "info": logging.INFO, "warn": logging.WARNING,
              "error": logging.ERROR, "off": logging.CRITICAL + 1}
    level = levels[args.log_level] if args.log_level else (logging.INFO if args.log_console else logging.WARNING)
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if args.log_file:
        handlers.append(logging.FileHandler(args.log_file))
    logging.basicConfig(level=level, handlers=handlers, format="%(asctime)s %(levelname)s %(name)s: %(message)s")


def main(argv: list[str] | None = None) -> int:
    """Entry point."""
    args = parse_device(list(sys.argv[1:] if argv is None else argv))
    _setup_logging(args)
    try:
        return _run(args)
    except ValueError as e:
        sys.stderr.write(f"p4sim-switch: {e}\n")
        return 1


def parse_device(argv: list[str]) -> argparse.Namespace:
    """A command line (one device's, or the host's) as parsed arguments."""
    return build_parser().parse_args([a for a in argv if a != "--"])


def load_devices(path: str) -> list[argparse.Namespace]:
    """The devices of a --devices file: a JSON list of command lines (lists of strings)."""
    try:
        with open(path) as f:
            specs = json.load(f)
    except (OSError, ValueError) as e:
        raise ValueError(f"devices file {path!r}: cannot read ({e})") from None
    if not isinstance(specs, list) or not all(isinstance(a, list) and all(isinstance(w, str) for w in a)
                                              for a in specs):
        raise ValueError(f"devices file {path!r}: expected a JSON list of command lines (lists of strings)")
    return [_device_args(a) for a in specs]


def _device_args(argv: list[str]) -> argparse.Namespace:
    try:
        return parse_device(argv)
    except SystemExit:  # argparse printed why
        raise ValueError(f"device {' '.join(argv)[:80]!r}: bad command line") from None


def _control(host: SwitchHost, stop: threading.Event) -> None:
    """Commands on standard input, one a line: `stop ID`, `start ["-i", "1@veth1", ...]`; its end stops all."""
    for line in sys.stdin:
        verb, _, rest = line.strip().partition(" ")
        try:
            if verb == "stop" and rest.strip().isdigit():
                host.stop(int(rest))
            elif verb == "start":
                argv = json.loads(rest)
                if not isinstance(argv, list) or not all(isinstance(w, str) for w in argv):
                    raise ValueError("start: expected a JSON list of strings")
                host.start(_device_args(argv))
            elif verb:
                raise ValueError(f"control command {line.strip()[:40]!r}: expected `stop ID` or `start [ARGS]`")
        except ValueError as e:
            sys.stderr.write(f"p4sim-switch: {e}\n")
            sys.stderr.flush()
    stop.set()


def _run(args: argparse.Namespace) -> int:
    from p4sim.switch.heap import limit_malloc_arenas

    limit_malloc_arenas()  # before the I/O and gRPC threads start
    # While a P4Runtime request is decoded, the I/O thread gets the GIL back within 0.5 ms
    # (Python's default is 5 ms: a forwarding stall of up to that per request).
    sys.setswitchinterval(GIL_SWITCH_INTERVAL_S)
    if args.devices:
        if args.interface or args.json or args.no_p4:
            raise ValueError("devices given both in --devices and on the command line; give them in one place")
        specs = load_devices(args.devices)
    else:
        specs = [args]
    host = SwitchHost()
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    try:
        for spec in specs:
            host.start(spec)
        if args.control_stdin:
            threading.Thread(target=_control, args=(host, stop), name="p4sim-control", daemon=True).start()
        while not stop.wait(0.5):
            pass
    finally:
        host.stop_all()
    return 0
