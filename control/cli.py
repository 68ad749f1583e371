"""`python -m control install | set-mode | reconfigure | counters | status`: the controller's command lines."""

from __future__ import annotations

import argparse
import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from control.events import EventLog
from control.network import Network
from control.ocs.polatis import PolatisDriver
from control.ocs.scpi import parse_address
from control.plan import PROCEDURES, check_wait
from control.procedures import Reconfigurer
from control.switch import TARGETS, Pipeline
from fabric.contract import FAILOVER, MODES, PORT_COUNTERS, SPRAY_KINDS
from fabric.state import with_failover
from p4rt.client import wildcard
from p4rt.resources import CounterEntry
from p4rt.state import SwitchState
from p4rt.tls import TlsOptions
from tablegen.entries import generate_states
from tablegen.files import read
from topo.circuits import ocs_circuits, resolve_circuits
from topo.model import Topology, load

log = logging.getLogger(__name__)


def _wait(unit: str = "s") -> Callable[[str], float]:
    """An argparse type: a wait in `unit` checked as the procedures check it (control.plan.check_wait), so a
    NaN, negative or infinite one is refused before anything is written."""

    def parse(text: str) -> float:
        try:
            return check_wait("value", float(text), unit)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return parse


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--topo", required=True, metavar="<topo.json>", help="topology file (python -m topo)")
    p.add_argument("--build", default="build", metavar="<dir>",
                   help="fabric.json + fabric.p4info.txtpb (make p4-build); --target tofino: bf-p4c's output folder")
    p.add_argument("--target", choices=TARGETS, default="bmv2",
                   help="device config to push: bmv2 JSON (bmv2, p4sim; default) or Stratum's BfPipelineConfig "
                        "of bf-p4c's output (tofino)")
    p.add_argument("--host", default="127.0.0.1", metavar="<ip>", help="address of the switches' gRPC servers")
    p.add_argument("--election-id", type=int, default=1, metavar="N")
    p.add_argument("--timeout", type=_wait(), default=10.0, metavar="S")
    p.add_argument("--events", metavar="<file.jsonl>", help="append the event log here")
    p.add_argument("--tls-ca", metavar="<ca.pem>", help="P4Runtime over TLS: the CA of the switches' certificates")
    p.add_argument("--tls-cert", metavar="<cert.pem>", help="client certificate for mutual TLS (with --tls-key)")
    p.add_argument("--tls-key", metavar="<key.pem>", help="the client certificate's private key")
    p.add_argument("--tls-server-name", metavar="<name>",
                   help="the name the switches' certificates carry (default: the --host address)")


def _failover_arg(p: argparse.ArgumentParser, default: str | None = "on") -> None:
    p.add_argument("--failover", choices=FAILOVER, default=default,
                   help="data-plane fast failover: 'off' watches no port, so a dead port never moves traffic to the "
                        "other path version (the thesis's baselines)" + (f" (default {default})" if default else
                                                                       " (default: as the entries say)"))


def _circuits_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--circuits", metavar="<map|none|file.json>",
                   help="circuit map: a map name of the topology's OCS, 'none', or a JSON file (default: the default map)")


def add_parsers(sub: Any) -> None:
    """Register the controller subcommands."""
    p = sub.add_parser("install", help="push pipelines and install every switch's entries (reconciling)")
    _common(p)
    p.add_argument("--entries", metavar="<dir>", help="tablegen output directory (default: generate with --mode)")
    p.add_argument("--mode", choices=MODES, default="ecmp")
    p.add_argument("--spray", choices=SPRAY_KINDS, default="random")
    _circuits_arg(p)
    _failover_arg(p, None)
    p.add_argument("--watch", type=float, default=0, metavar="S",
                   help="then keep reconciling switches that restart, for S seconds (0: exit; -1: forever)")
    p.set_defaults(func=run_install)

    p = sub.add_parser("set-mode", help="switch the forwarding mode of every route (reconcile to that mode)")
    _common(p)
    p.add_argument("mode", choices=MODES)
    p.add_argument("--spray", choices=SPRAY_KINDS, default="random")
    _circuits_arg(p)
    _failover_arg(p)
    p.set_defaults(func=run_set_mode)

    p = sub.add_parser("reconfigure", help="reconfigure the OCS with a procedure")
    _common(p)
    p.add_argument("--procedure", choices=PROCEDURES, required=True)
    p.add_argument("--circuits", required=True, metavar="<map|file.json|a-b,c-d>",
                   help="the new circuits: a map name of the topology's OCS, a JSON file, or pairs a-b,c-d")
    p.add_argument("--ocs", default="127.0.0.1:5025", metavar="<ip>:<port>", help="the OCS's SCPI address")
    p.add_argument("--ocs-name", metavar="<name>", help="which OCS of the topology (default: the first)")
    p.add_argument("--mode", choices=MODES, default="ecmp")
    p.add_argument("--spray", choices=SPRAY_KINDS, default="random")
    _failover_arg(p)
    p.add_argument("--hold", type=_wait(), default=1.0, metavar="S", help="mbb-timed hold (default 1 s)")
    p.add_argument("--probe-timeout", type=_wait(), default=5.0, metavar="S")
    p.add_argument("--drain-ms", type=_wait("ms"), default=20.0, metavar="MS",
                   help="wait after moving traffic to the shadow, before the OCS command (default 20)")
    p.set_defaults(func=run_reconfigure)

    p = sub.add_parser("counters", help="print the non-zero port counters of every switch")
    _common(p)
    p.add_argument("--switch", action="append", metavar="<name>", help="only these switches")
    p.set_defaults(func=run_counters)

    p = sub.add_parser("status", help="reachability, pipeline and entry counts of every switch")
    _common(p)
    p.set_defaults(func=run_status)


def _topo(args: argparse.Namespace):
    return load(args.topo)


def _pipeline(args: argparse.Namespace):
    return Pipeline.for_target(args.target, "fabric", args.build)


@contextmanager
def _network(args: argparse.Namespace, topo, events: EventLog, names=None) -> Iterator[Network]:
    """The switches a command drives (all, or `names`); closed, with the event log, when it ends."""
    tls = TlsOptions.from_args(args.tls_ca, args.tls_cert, args.tls_key, args.tls_server_name)
    net = Network(topo, _pipeline(args), host=args.host, election_id=(0, args.election_id), events=events,
                  timeout=args.timeout, names=names, tls=tls)
    try:
        yield net
    finally:
        net.close()
        events.close()


def _events(args: argparse.Namespace) -> EventLog:
    return EventLog(args.events)


def _circuit_map(topo, spec: str | None) -> dict[str, list[tuple[int, int]]] | None:
    if spec is None:
        return None
    return resolve_circuits(topo, spec)


def load_states(directory: str) -> dict[str, SwitchState]:
    """Every fabric document of a tablegen output directory."""
    d = Path(directory)
    if not d.is_dir():
        raise ValueError(f"entries {directory!r}: not a directory")
    out = {}
    for f in sorted(d.glob("*.json")):
        st = read(f)  # a file that is not JSON, or not an entry document, is named in the error
        if st.program == "fabric":
            out[st.name] = st
    return out


def run_install(args: argparse.Namespace) -> int:
    """install."""
    topo = _topo(args)
    events = _events(args)
    if args.entries:
        states = load_states(args.entries)
        if args.failover is not None:
            states = {n: with_failover(st, args.failover == "on") for n, st in states.items()}
    else:
        states = generate_states(topo, args.mode, _circuit_map(topo, args.circuits), args.spray,
                                 args.failover != "off")
    with _network(args, topo, events) as net:
        t0 = time.monotonic()
        plans = net.install(states)
        dt = time.monotonic() - t0
        total = sum(p.inserts + p.modifies + p.deletes for p in plans.values())
        for name, p in sorted(plans.items()):
            print(f"{name}: {p}")
        print(f"installed {len(plans)} switches, {total} writes in {dt * 1000:.0f} ms")
        if args.watch:
            net.start_watch()
            end = float("inf") if args.watch < 0 else time.monotonic() + args.watch
            while time.monotonic() < end:
                time.sleep(0.2)
    return 0


def run_set_mode(args: argparse.Namespace) -> int:
    """set-mode."""
    topo = _topo(args)
    events = _events(args)
    states = generate_states(topo, args.mode, _circuit_map(topo, args.circuits), args.spray, args.failover == "on")
    with _network(args, topo, events) as net:
        plans = net.install(states)
        print(f"mode {args.mode}, failover {args.failover}: " + ", ".join(f"{n} {p}" for n, p in sorted(plans.items())))
    return 0


def parse_circuits(topo: Topology, ocs_name: str | None, spec: str) -> list[tuple[int, int]]:
    """The circuits of one OCS a spec names (topo/circuits.py: map name, none, a-b,c-d, JSON file)."""
    return ocs_circuits(topo, spec, ocs_name)


def run_reconfigure(args: argparse.Namespace) -> int:
    """reconfigure."""
    topo = _topo(args)
    events = _events(args)
    new = parse_circuits(topo, args.ocs_name, args.circuits)
    host, port = parse_address(args.ocs)
    with _network(args, topo, events) as net:
        with PolatisDriver(host, port, timeout=args.timeout) as ocs:
            rec = Reconfigurer(net, ocs, args.ocs_name, args.mode, args.spray, events, args.probe_timeout,
                               args.drain_ms, failover=args.failover == "on")
            old = None
            net.connect()
            res = rec.run(args.procedure, new, old, hold_s=args.hold)
        steps = ", ".join(f"{k} {v:.1f}" for k, v in res.steps.items())
        print(f"{res.procedure}: total {res.total_ms:.1f} ms, control {res.control_ms:.1f} ms ({steps})")
    return 0


def run_counters(args: argparse.Namespace) -> int:
    """counters."""
    topo = _topo(args)
    events = EventLog()
    with _network(args, topo, events, names=args.switch) as net:
        def read(sess):
            sess.client.election_id = (0, 0)  # a backup reads without taking over from the controller
            sess.client.connect()
            sess.client.schema = sess.pipeline.schema
            rows = []
            for name in PORT_COUNTERS:
                for c in sess.client.read_entities([CounterEntry(name)]):
                    if c.packets or c.bytes:
                        rows.append(str(c))
            return rows

        for name, rows in sorted(net.each(read).items()):
            for row in rows:
                print(f"{name} {row}")
    return 0


def run_status(args: argparse.Namespace) -> int:
    """status."""
    topo = _topo(args)
    events = EventLog()
    bad = 0
    with _network(args, topo, events) as net:
        def status(sess):
            try:
                # a backup session (election id 0) reads without taking over from the running controller
                sess.client.election_id = (0, 0)
                sess.client.connect(timeout=2)
                have = sess.client.get_pipeline()
            except Exception as exc:
                return f"unreachable ({exc})"
            if have is None:
                return "no pipeline"
            ok = "ours" if sess.client.pipeline_cookie == sess.pipeline.cookie else "other pipeline"
            n = len(sess.client.read([wildcard(have, "table_entry")]))
            return f"{ok}, {n} entries"

        for name, text in sorted(net.each(status).items()):
            bad += not text.startswith("ours")
            print(f"{name} ({net.sessions[name].address}): {text}")
    return 1 if bad else 0


