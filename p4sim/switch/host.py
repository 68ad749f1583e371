"""Several switches in one p4sim-switch process: each device with its own ports, device id, program
and P4Runtime server, started and stopped on its own.

A device is what `p4sim-switch ARGS` runs (the simple_switch_grpc command shape, parsed by cli.py);
a host runs any number of them side by side. A device that fails, or whose pipeline is pushed again,
or that is stopped (`stop ID` on the control input), leaves the others running: each has its own
lock, packet loop and server. The process-wide settings (malloc arenas, the GIL's switch interval,
the garbage collector's freeze) are made once for all of them.
"""

from __future__ import annotations

import argparse
import logging
import socket
import sys
import threading
from dataclasses import dataclass
from typing import Any

from p4sim.switch.device import Device

log = logging.getLogger(__name__)


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


def check_port_free(host: str, port: int) -> None:
    """ValueError unless host:port can be bound (so a busy port is one clear line, before anything starts)."""
    fam = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(fam, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError as e:
            raise ValueError(f"gRPC address {host}:{port} is not available ({e.strerror})") from None


@dataclass(slots=True)
class Hosted:
    """A running device: the Device, its P4Runtime server (None: data plane only) and its address."""

    device: Device
    server: Any
    address: str

    def stop(self) -> None:
        """Stop serving, then stop the packet loop and close the ports."""
        if self.server is not None:
            self.server.stop()
        self.device.stop()


class SwitchHost:
    """The devices of one p4sim-switch process, by device id."""

    def __init__(self) -> None:
        self.devices: dict[int, Hosted] = {}
        self._lock = threading.Lock()

    def start(self, args: argparse.Namespace) -> Hosted:
        """Start a device from its parsed command line; ValueError with one line if it cannot be."""
        from p4sim.switch.heap import settle_heap

        if args.json and args.no_p4:
            raise ValueError(f"program {args.json!r} given together with --no-p4; give one")
        ports = parse_ports(args.interface)
        host, gport = parse_addr(args.grpc_server_addr)
        with self._lock:
            if args.device_id in self.devices:
                raise ValueError(f"device id {args.device_id}: already running in this process")
            taken = {i for h in self.devices.values() for i in h.device.ports.values()}
            if taken & set(ports.values()):
                raise ValueError(f"interface {sorted(taken & set(ports.values()))[0]}: used by another device here")
        tls = None
        if (args.grpc_server_ssl or args.grpc_server_cacert or args.grpc_server_cert or args.grpc_server_key
                or args.grpc_server_with_client_auth):
            from p4sim.switch.p4runtime.tls import server_tls
            tls = server_tls(args.grpc_server_ssl, args.grpc_server_cacert, args.grpc_server_cert,
                             args.grpc_server_key, args.grpc_server_with_client_auth)
        dev = Device(ports=ports, cpu_port=args.cpu_port, device_id=args.device_id, pcap_dir=args.pcap,
                     nb_queues=args.priority_queues, freeze_heap=True, native=args.data_plane == "native",
                     ring_kib=args.ring_kib)
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
        check_port_free(host, gport)
        dev.start()
        try:
            server = _start_server(dev, args.grpc_server_addr, args.device_id, tls)
        except (OSError, RuntimeError, ValueError) as e:
            dev.stop()
            raise ValueError(f"gRPC address {args.grpc_server_addr}: cannot listen ({e})") from None
        settle_heap()  # the server's objects too
        hosted = Hosted(dev, server, getattr(server, "address", args.grpc_server_addr))
        with self._lock:
            self.devices[args.device_id] = hosted
        where = (f"P4Runtime server listening on {hosted.address}" if server is not None
                 else "no P4Runtime server (data plane only)")
        sys.stderr.write(f"p4sim-switch: device {args.device_id}, {len(ports)} port(s), {where}\n")
        sys.stderr.flush()
        return hosted

    def stop(self, device_id: int) -> None:
        """Stop one device (the others keep running); ValueError if it is not running here."""
        with self._lock:
            hosted = self.devices.pop(device_id, None)
        if hosted is None:
            raise ValueError(f"device id {device_id}: not running in this process")
        hosted.stop()
        log.info("device %d stopped: %s", device_id, hosted.device.stats)
        sys.stderr.write(f"p4sim-switch: device {device_id} stopped\n")
        sys.stderr.flush()

    def stop_all(self) -> None:
        """Stop every device."""
        for device_id in list(self.devices):
            try:
                self.stop(device_id)
            except ValueError:
                pass


def _start_server(dev: Device, addr: str, device_id: int, tls: object | None = None) -> object | None:
    try:
        from p4sim.switch.p4runtime.server import start_server  # type: ignore[import-not-found]
    except ImportError as e:
        log.warning("P4Runtime server not available (%s); running the data plane only", e)
        return None
    return start_server(dev, addr, device_id, tls=tls)
