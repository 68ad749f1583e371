"""`python -m emulation ocs-emulator | ocs-delay`: the emulated OCS's command lines."""

from __future__ import annotations

import argparse
import json
import logging
import signal
import threading
import time
from pathlib import Path
from typing import Any

from control.clock import measure_client
from control.ocs.driver import duplex_pairs, parse_pairs
from control.ocs.polatis import DEFAULT_PORT
from control.ocs.scpi import parse_address
from control.switch import Pipeline, SwitchSession
from emulation.links import check_ssh_option
from emulation.ocs.dataplane import IpLinkControl, P4RuntimeCircuits, parse_link_specs
from emulation.ocs.delay import THESIS_TABLE_4_3, DelayModel, summarize
from emulation.ocs.emulator import MAX_PORTS, EmulatedOcs
from emulation.ocs.options import (
    add_delay_args,
    add_experiment_args,
    check_options,
    delay_from_args,
    ports_arg,
)
from emulation.ocs.schedule import Schedule, ScheduleRunner, round_robin, write_dataplane_schedule
from emulation.ocs.server import ScpiServer
from p4rt.client import P4RuntimeClient

log = logging.getLogger(__name__)


def add_parsers(sub: Any) -> None:
    """Register the emulated OCS's subcommands."""
    p = sub.add_parser("ocs-emulator", help="run an emulated OCS speaking Polatis SCPI over TCP")
    p.add_argument("--listen", default=f"127.0.0.1:{DEFAULT_PORT}", metavar="<ip>:<port>",
                   help="SCPI address (port 0: any free port, printed on stdout)")
    p.add_argument("--ports", type=ports_arg, required=True, metavar="N",
                   help=f"N inputs and N outputs (1..{MAX_PORTS})")
    p.add_argument("--dataplane", default="none", metavar="<ip>:<port>|none",
                   help="P4Runtime address of the `ocs` switch whose `circuit` table to drive")
    p.add_argument("--device-id", type=int, default=0, metavar="N")
    p.add_argument("--election-id", type=int, default=1, metavar="N")
    p.add_argument("--p4info", metavar="FILE", help="push this ocs P4Info (with --config) instead of reading it")
    p.add_argument("--config", metavar="FILE", help="ocs device config (bmv2 JSON) to push with --p4info")
    p.add_argument("--port-map", action="append", default=[], metavar="SLOT=DPPORT",
                   help="data-plane port of a transceiver slot (default: the same number)")
    p.add_argument("--link", action="append", default=[], metavar="DPPORT=IFNAME",
                   help="interface set down/up with `ip link` while that port is dark/up (repeatable); "
                        "IFNAME:user@server: on that server, over ssh")
    p.add_argument("--ssh-option", action="append", default=[], metavar="KEY=VALUE",
                   help="an ssh option for --link's servers (repeatable; only options that run nothing)")
    p.add_argument("--events", metavar="FILE", help="append every OCS event as a JSON line")
    p.add_argument("--circuits", default="", metavar="a-b,c-d",
                   help="duplex circuits between slots to light at start, at once (default: none, all dark)")
    add_experiment_args(p)
    p.set_defaults(func=run_emulator)

    p = sub.add_parser("ocs-delay", help="sample the delay model and compare with thesis Table 4.3")
    p.add_argument("--samples", type=int, default=485, metavar="N")
    p.add_argument("--measure", action="store_true",
                   help="measure port-down to port-up from the emulator's own event log (N circuits at once)")
    add_delay_args(p)
    p.set_defaults(func=run_delay)


def _slot_map(specs: list[str]) -> dict[int, int] | None:
    if not specs:
        return None
    out = {}
    for spec in specs:
        a, sep, b = spec.partition("=")
        if not sep or not a.isdigit() or not b.isdigit():
            raise ValueError(f"port map {spec!r}: expected SLOT=DPPORT")
        out[int(a)] = int(b)
    return out


def run_emulator(args: argparse.Namespace) -> int:
    """Serve an emulated OCS until SIGINT/SIGTERM."""
    # every option is checked before anything is opened, connected or written
    host, port = parse_address(args.listen)
    delay = check_options(args)
    port_map = _slot_map(args.port_map)
    if port_map is not None:
        port_map = {s: port_map.get(s, s) for s in range(1, args.ports + 1)}
    ssh_words = [w for option in args.ssh_option for w in check_ssh_option(option)]
    links = IpLinkControl(parse_link_specs(args.link), ssh_words=ssh_words) if args.link else None
    initial = duplex_pairs(parse_pairs(args.circuits.split(",")), args.ports) if args.circuits else []
    schedule = None
    if args.schedule == "round-robin":
        schedule = Schedule(round_robin(args.ports, args.schedule_slots or None), args.day_ms, args.night_ms)
    timeflow = schedule is not None and args.schedule_mode == "dataplane"
    if timeflow and args.dataplane == "none":
        raise ValueError("--schedule-mode dataplane: expected --dataplane ADDR (the ocs switch)")
    events_file = open(Path(args.events), "a", buffering=1) if args.events else None  # noqa: SIM115
    ev_lock = threading.Lock()

    def on_event(record: dict[str, Any]) -> None:
        if events_file is not None:
            with ev_lock:
                events_file.write(json.dumps(record) + "\n")

    session = circuits = None
    if args.dataplane != "none":
        session = SwitchSession("ocs", args.dataplane, args.device_id, ocs_pipeline(args),
                                election_id=(0, args.election_id))
        session.connect()
        circuits = P4RuntimeCircuits(session)
        circuits.clear_all()
    # With the cycle in the time-flow tables the data plane is the schedule's own: SCPI commands
    # are answered but drive neither the circuit table (the schedule overrides it) nor the fibres.
    ocs = EmulatedOcs(args.ports, delay, None if timeflow else circuits, None if timeflow else links,
                      port_map, on_event)
    if links is not None and not timeflow:
        ocs.init_links()
    if initial:
        ocs.set_map(initial, delay=DelayModel.instant())
    server = ScpiServer((host, port), ocs, max_clients=args.max_clients, idle_timeout=args.idle_timeout)
    runner = None
    if schedule is not None:
        if timeflow:
            assert circuits is not None and session is not None
            sched = write_dataplane_schedule(circuits, schedule, args.ports, port_map)
            clock = measure_client(session.client)  # where the cycle's epoch is in host time, for the ToRs
            on_event({"event": "timeflow-schedule", "t_mono": time.monotonic(), "slots": sched.slots,
                      "day_us": sched.day_us, "night_us": sched.night_us, "epoch_us": sched.epoch_us,
                      "epoch_mono": clock.to_host(sched.epoch_us), "clock_error_us": clock.error_us})
            if links is not None:  # the time-flow tables darken frames, not fibres: every scheduled port lit
                pm = port_map or {p: p for p in range(1, args.ports + 1)}
                lit = {i for pairs in schedule.maps for i, _ in pairs}
                links.set_links([(pm[p], p in lit) for p in range(1, args.ports + 1)])
        else:
            runner = ScheduleRunner(ocs, schedule)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    server.start()
    if circuits is not None:
        circuits.watch(stop)
    if runner is not None:
        runner.start()
    print(f"ocs-emulator: {args.ports}x{args.ports} listening on {host}:{server.port} "
          f"dataplane={args.dataplane} delay={delay.params()}", flush=True)
    stop.wait()
    if runner is not None:
        runner.stop()
    server.shutdown()
    server.server_close()
    ocs.close()
    if links is not None:
        links.close()
    if session is not None:
        session.close()
    if events_file is not None:
        events_file.close()
    return 0


def ocs_pipeline(args: argparse.Namespace) -> Pipeline:
    """The ocs switch's pipeline: --p4info and --config, or the one the switch runs (which a restarted
    switch then cannot get back: no config to push)."""
    if args.p4info and args.config:
        return Pipeline.load("ocs", args.p4info, args.config)
    with P4RuntimeClient(args.dataplane, device_id=args.device_id, election_id=(0, 0)) as probe:
        schema = probe.get_pipeline()
        if schema is None:
            raise ValueError(f"ocs switch {args.dataplane}: has no pipeline; expected --p4info and --config")
        return Pipeline("ocs", schema, b"", probe.pipeline_cookie)


def measure_port_flaps(model: DelayModel, n: int) -> list[float]:
    """Connect n circuits on an emulated OCS and time each port from the command to its port-up event."""
    events: list[dict[str, Any]] = []
    ocs = EmulatedOcs(n, model, on_event=events.append)
    try:
        ocs.connect([(i, n + i) for i in range(1, n + 1)])
        if not ocs.wait_settled(timeout=60):
            raise ValueError(f"measure: {n} ports not up within 60 s")
    finally:
        ocs.close()
    t_cmd = next(e["t_mono"] for e in events if e["event"] == "command")
    return [(e["t_mono"] - t_cmd) * 1000 for e in events if e["event"] == "port-up"]


def run_delay(args: argparse.Namespace) -> int:
    """Print the model's Table 4.3 columns next to the thesis's."""
    model = delay_from_args(args)
    if args.measure:
        samples = measure_port_flaps(model, args.samples)
    else:
        samples = [model.sample_port_up() for _ in range(args.samples)]
    stats = summarize(samples)
    print(f"{'':8}" + "".join(f"{k:>8}" for k in THESIS_TABLE_4_3))
    print(f"{'model':8}" + "".join(f"{stats[k]:8.0f}" for k in THESIS_TABLE_4_3))
    print(f"{'thesis':8}" + "".join(f"{v:8}" for v in THESIS_TABLE_4_3.values()))
    print(f"(n={stats['n']}, params {model.params()})")
    return 0
