"""Command line of p4sim-switch, shaped like simple_switch_grpc.

    p4sim-switch [options] [PROG.json | --no-p4] [-- --grpc-server-addr IP:PORT --cpu-port N]

Target options (after `--`) are also accepted before it. The switch prints its listening address on
stderr, and stops cleanly on SIGTERM or SIGINT. Errors (missing interface, busy gRPC port,
unreadable JSON) print one line and exit with status 1.
"""

import argparse
import logging
import signal
import socket
import sys
import threading

from p4sim import package_version

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
    return p


def parse_ports(specs: list[str]) -> dict[int, str]:
    """{port: interface} from PORT@IFACE specs; ValueError for a malformed or duplicate one."""
    ports: dict[int, str] = {}
    for spec in specs:
        num, sep, iface = spec.partition("@")
        if not sep or not num.isdigit() or not iface:
            raise ValueError(f"interface {spec!r}: expected PORT@IFACE, e.g. 1@veth1")
        port = int(num)
        if port in ports:
            raise ValueError(f"interface {spec!r}: port {port} given twice")
        if iface in ports.values():
            raise ValueError(f"interface {spec!r}: interface {iface} given twice")
        ports[port] = iface
    return ports


def parse_addr(addr: str) -> tuple[str, int]:
    """(host, port) from IP:PORT; ValueError if malformed."""
    host, sep, port = addr.rpartition(":")
    if not sep or not port.isascii() or not port.isdigit() or not host or not 0 < int(port) < 65536:
        raise ValueError(f"gRPC address {addr!r}: expected IP:PORT with PORT 1..65535, e.g. 127.0.0.1:9559")
    return host.strip("[]"), int(port)


def _check_port_free(host: str, port: int) -> None:
    fam = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(fam, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError as e:
            raise ValueError(f"gRPC address {host}:{port} is not available ({e.strerror})") from None


def _setup_logging(args: argparse.Namespace) -> None:
    levels = {"trace": logging.DEBUG, "debug": logging.DEBUG, "info": logging.INFO, "warn": logging.WARNING,
              "error": logging.ERROR, "off": logging.CRITICAL + 1}
    level = levels[args.log_level] if args.log_level else (logging.INFO if args.log_console else logging.WARNING)
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if args.log_file:
        handlers.append(logging.FileHandler(args.log_file))
    logging.basicConfig(level=level, handlers=handlers, format="%(asctime)s %(levelname)s %(name)s: %(message)s")


def _start_server(dev: object, addr: str, device_id: int, tls: object | None = None) -> object | None:
    try:
        from p4sim.switch.p4runtime.server import start_server  # type: ignore[import-not-found]
    except ImportError as e:
        log.warning("P4Runtime server not available (%s); running the data plane only", e)
        return None
    return start_server(dev, addr, device_id, tls=tls)


def main(argv: list[str] | None = None) -> int:
    """Entry point."""
    argv = list(sys.argv[1:] if argv is None else argv)
    argv = [a for a in argv if a != "--"]
    args = build_parser().parse_args(argv)
    _setup_logging(args)
    try:
        return _run(args)
    except ValueError as e:
        sys.stderr.write(f"p4sim-switch: {e}\n")
        return 1


def _run(args: argparse.Namespace) -> int:
    from p4sim.switch.device import Device
    from p4sim.switch.heap import limit_malloc_arenas, settle_heap

    limit_malloc_arenas()  # before the I/O and gRPC threads start
    # While a P4Runtime request is decoded, the I/O thread gets the GIL back within 0.5 ms
    # (Python's default is 5 ms: a forwarding stall of up to that per request).
    sys.setswitchinterval(GIL_SWITCH_INTERVAL_S)

    if args.json and args.no_p4:
        raise ValueError(f"program {args.json!r} given together with --no-p4; give one")
    ports = parse_ports(args.interface)
    host, gport = parse_addr(args.grpc_server_addr)
    tls = None
    if (args.grpc_server_ssl or args.grpc_server_cacert or args.grpc_server_cert or args.grpc_server_key
            or args.grpc_server_with_client_auth):
        from p4sim.switch.p4runtime.tls import server_tls
        tls = server_tls(args.grpc_server_ssl, args.grpc_server_cacert, args.grpc_server_cert,
                         args.grpc_server_key, args.grpc_server_with_client_auth)
    dev = Device(ports=ports, cpu_port=args.cpu_port, device_id=args.device_id, pcap_dir=args.pcap,
                 nb_queues=args.priority_queues, freeze_heap=True)
    if args.json:
        try:
            with open(args.json, "rb") as f:
                data = f.read()
        except OSError as e:
            raise ValueError(f"program {args.json!r}: cannot read ({e.strerror})") from None
        try:
            dev.commit_pipeline(dev.load_pipeline(data))
        except ValueError as e:
            raise ValueError(f"program {args.json!r}: {e}") from None
    _check_port_free(host, gport)
    dev.start()
    stop = threading.Event()
    server = None
    try:
        try:
            server = _start_server(dev, args.grpc_server_addr, args.device_id, tls)
        except (OSError, RuntimeError) as e:
            raise ValueError(f"gRPC address {args.grpc_server_addr}: cannot listen ({e})") from None
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: stop.set())
        settle_heap()  # the server's objects too
        bound = getattr(server, "address", args.grpc_server_addr)
        where = (f"P4Runtime server listening on {bound}" if server is not None
                 else "no P4Runtime server (data plane only)")
        sys.stderr.write(f"p4sim-switch: device {args.device_id}, {len(ports)} port(s), {where}\n")
        sys.stderr.flush()
        while not stop.wait(0.5):
            pass
    finally:
        if server is not None:
            server.stop()
        dev.stop()
    log.info("stopped: %s", dev.stats)
    return 0
