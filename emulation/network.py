"""The emulation behind `make run-topo`: a topology of P4 switches, hosts and an emulated OCS in Mininet.

Python API (what the experiments build on)::

    from emulation.network import Emulation
    from topo.generators import ucd4

    with Emulation(ucd4(), "ecmp", build_dir="build", ocs_args=["--instant"]) as emu:
        emu.pingall()                       # -> loss in percent (Mininet's pingAll)
        emu.cmd("h1", "ping -c1 10.0.2.2")  # a shell command on a host, its output
        rc, out = emu.run("h1", "true")     # ... with its exit code
        mbps = emu.iperf3("h2", "h3", seconds=2)
        emu.set_circuits([(3, 4), (2, 5)])  # OCS only (tables untouched); returns once carrier matches
        emu.counters("s1", "port_tx")       # {port: (packets, bytes)} over P4Runtime
        emu.controller                      # control.network.Network, tables installed for the mode
        emu.ocs                             # OcsProcess: .address (SCPI host:port), .driver(), .circuits
        emu.net, emu.hosts, emu.switches    # the Mininet net, host nodes and P4Switch nodes by name

`Emulation(topo, mode, ...)` takes a `topo.model.Topology` (or a path to its JSON), one of
static/ecmp/spray, and options: `switch_bin` (default $SWITCH, else simple_switch_grpc or
p4sim-switch from PATH), `build_dir` (fabric/ocs JSON + P4Info), `spray` (random|rr), `circuits`
(initial circuit map: a map name, "none", a JSON file; default the topology's default map),
`ocs_args` (extra `ocs-emulator` options, e.g. ["--instant"] or ["--poll-ms", "50"]),
`switches_per_process` (fabric switches a process runs where the switch binary can run several;
default: one each below HOSTED_FROM switches, else HOST_PROCESSES processes), `rto_min`
(e.g. "10ms", set on every host route), `hold_passes` (each fabric switch's hold loop: passes a
second, emulation/holdloop.py), `pcap`, `log_dir`, `grpc_base` (renumber gRPC ports from
this base), `prefix` (prepended to every Mininet node and so interface name: runs side by side need
distinct prefixes and gRPC bases), `watch` (reconcile restarted switches), `on_progress(stage, detail)`,
`servers` (run over these servers, `localhost` for this machine, placed by pod:
emulation/clusterbuild.py), `placement` (nodes on servers of your choice) and `ssh_options` (ssh's
own options for reaching them).
Dicts and methods take topology names (`h1`, not `<prefix>h1`); `emu.intf(node, port)` gives the
Linux interface name. Route changes for a new circuit map: `control.procedures.Reconfigurer` on
`emu.controller` and `emu.ocs.driver()` (what the CLI's `reconfigure` does). `start()`/`stop()` or the context
manager; `stop()` is safe to call twice and after a failed start. Every PID and interface goes into
a state file (emulation.state) that `python -m emulation clean-net` uses after a killed run.
The network itself (names, nodes, links, hosts) is built by emulation.netbuild; this module starts
and stops what runs on it.
"""

from __future__ import annotations

import copy
import json
import logging
import os
import random
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from mininet.net import Mininet
from mininet.node import Host

from control.events import EventLog
from control.network import Network
from control.ocs.driver import duplex_pairs
from control.procedures import circuits_from_ocs
from control.switch import Pipeline
from emulation.cluster import LOCAL, RemoteProcess
from emulation.clusterbuild import (
    ClusterBuild,
    check_ocs_local,
    cross_links,
    place_by_pod,
    run_in_shell,
    underlay_rtt_ms,
)
from emulation.fibre import Fibre
from emulation.holdloop import HOLD_PASSES_PER_S, HoldLoop, loop_drops, tbf_args
from emulation.links import (
    HostCommand,
    carrier,
    carrier_path,
    check_rto_min,
    parse_servers,
    ssh_option_values,
)
from emulation.netbuild import MininetBuild, Names
from emulation.ocs.options import check_ocs_args
from emulation.ocs.process import OcsProcess, first_line, ports_up_since
from emulation.p4switch import P4Switch, SwitchStartError, free_grpc_base, port_is_free
from emulation.priority import HOST_NICE, RunPriorities, nice_argv
from emulation.state import (
    RunState,
    clean_state,
    cpu_seconds,
    interface_exists,
    new_log_dir,
    secure_dir,
)
from emulation.switchhost import SwitchHost
from emulation.switchproc import stop as stop_process
from fabric.contract import MODES, SPRAY_KINDS
from p4rt.client import P4RuntimeClient
from p4rt.resources import CounterEntry
from p4rt.schema import short_name
from p4sim.target import choose_switch, hosts_devices
from tablegen.entries import generate_states
from topo.circuits import resolve_circuits
from topo.model import CPU_PORT, HOLD_IN_PORT, HOLD_OUT_PORT, OcsPort, Topology, load
from topo.validate import validate

log = logging.getLogger(__name__)

LINK_UP_TIMEOUT_S = 15.0
# Switches share processes from this many on (a binary that can run several, emulation/switchhost.py),
# in about this many processes: a process per pod of a k=16 fat-tree, and enough to use every core
HOSTED_FROM = 32
HOST_PROCESSES = 16
OCS_START_TIMEOUT_S = 30.0

Progress = Callable[[str, str], None]


def renumber_grpc(topo: Topology, base: int) -> Topology:
    """A copy of topo whose device N listens on base + N."""
    out = copy.deepcopy(topo)
    for s in out.switches:
        s.grpc_port = base + s.device_id
    for o in out.ocs:
        o.grpc_port = base + o.device_id
    return out


def node_prefix() -> str:
    """A short random prefix for Mininet node names, so that runs of other users do not collide."""
    rng = random.Random(os.getpid() ^ time.monotonic_ns())
    return "x" + "".join(rng.choice("abcdefghijkmnpqrstuvwxyz23456789") for _ in range(2))


class Emulation:
    """A running emulation of one topology; see the module docstring."""

    def __init__(self, topo: Topology | str | Path, mode: str = "ecmp", *, build_dir: str | Path = "build",
                 switch_bin: str | None = None, spray: str = "random", circuits: str | None = None,
                 ocs_args: list[str] | None = None, rto_min: str | None = None, pcap: bool = False,
                 log_dir: str | Path | None = None, grpc_base: int | None = None,
                 on_progress: Progress | None = None, watch: bool = True, prefix: str = "",
                 hold_passes: int = HOLD_PASSES_PER_S, switches_per_process: int | None = None,
                 servers: list[str] | None = None, ssh_options: list[str] | None = None,
                 placement: dict[str, str] | None = None) -> None:
        if mode not in MODES:
            raise ValueError(f"mode {mode!r}: expected one of {', '.join(MODES)}")
        if spray not in SPRAY_KINDS:
            raise ValueError(f"spray {spray!r}: expected one of {', '.join(SPRAY_KINDS)}")
        t = load(topo) if isinstance(topo, (str, Path)) else topo
        validate(t)
        self.topo = renumber_grpc(t, grpc_base) if grpc_base is not None else t
        self.mode = mode
        self.spray = spray
        self.circuits_spec = circuits
        self.build_dir = Path(build_dir)
        self.switch_bin = switch_bin
        self.ocs_args = check_ocs_args(list(ocs_args or []))  # the experiment's options only, checked now
        self.rto_min = check_rto_min(rto_min) if rto_min else None
        tbf_args(hold_passes)  # checked before anything starts
        self.hold_passes = hold_passes  # each fabric switch's hold loop: passes a second (emulation/holdloop.py)
        if switches_per_process is not None and switches_per_process < 1:
            raise ValueError(f"switches per process {switches_per_process}: expected 1 or more")
        self.switches_per_process = switches_per_process  # None: chosen by size (switch_hosts)
        self.servers = parse_servers(",".join(servers)) if servers else None  # a cluster run (emulation/cluster.py)
        if self.servers and len(self.servers) != len(servers):
            raise ValueError(f"servers {servers!r}: expected names without commas")
        self.ssh_options = list(ssh_options or [])
        self.server_of = self._place(placement or {})  # checked now
        self.tunnel_delay_ms: dict[tuple[str, str], float | None] = {}  # per pair of servers, measured at start
        self.hosts_of: dict[str, SwitchHost] = {}
        self.pcap = pcap
        self.watch = watch
        if prefix and not prefix.replace("_", "").isalnum():
            raise ValueError(f"prefix {prefix!r}: expected letters, digits or _")
        self.prefix = prefix  # Mininet node (and so interface) names are prefix + topology name
        self.names = Names(self.topo, prefix)
        self.on_progress = on_progress or (lambda stage, detail: log.info("%s: %s", stage, detail))
        self.state: RunState | None = None
        self._priorities: RunPriorities | None = None
        self.log_dir = Path(log_dir) if log_dir else None
        self.net: Mininet | None = None
        self.hosts: dict[str, Host] = {}
        self.switches: dict[str, P4Switch] = {}
        self.controller = None  # control.network.Network once tables are installed
        self.events = None
        self.ocs: OcsProcess | None = None
        self._ocs_log = None

    @classmethod
    def isolated(cls, topo: Topology, mode: str = "ecmp", **kwargs: Any) -> Emulation:
        """An emulation on free gRPC ports and with node names of its own (a random prefix), so that it
        runs beside another one; its topology (`emu.topo`) is renumbered to those ports."""
        base = free_grpc_base(len(topo.switches) + len(topo.ocs) + 1)
        return cls(topo, mode, grpc_base=base, prefix=node_prefix(), **kwargs)

    # -- life cycle -----------------------------------------------------------------------------------

    def __enter__(self) -> Emulation:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self) -> Emulation:
        """Build the network, start switches, OCS and controller; clean up and re-raise on failure."""
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def _start(self) -> None:
        self._preflight()
        self.state = RunState.create()
        self._priorities = RunPriorities(Path(self.state.path).parent)
        self._priorities.acquire()
        if self.log_dir is None:
            self.log_dir = new_log_dir(self.state.run_id)  # /var/log/hitless/<run id>/ (HITLESS_LOG_DIR)
        else:
            self.log_dir = secure_dir(self.log_dir, 0o755, ancestors=False)  # made here, or this user's alone
        self._build()
        self._start_switches()
        if self.topo.ocs:
            self._start_ocs()
        self._install()
        self.on_progress("ready", f"{len(self.hosts)} hosts, {len(self.switches)} switches, logs in {self.log_dir}")

    def _preflight(self) -> None:
        """Every check that needs nothing started: binaries, build outputs, ports, interface names."""
        self.switch_bin = choose_switch(self.switch_bin)
        programs = ["fabric"] + (["ocs"] if self.topo.ocs else [])
        for prog in programs:
            for suffix in (".json", ".p4info.txtpb"):
                f = self.build_dir / f"{prog}{suffix}"
                if not f.exists():
                    raise ValueError(f"{f}: missing; expected `make p4-build` outputs in {self.build_dir}")
        for dev in [*self.topo.switches, *self.topo.ocs]:
            if self.is_remote(dev.name):
                continue  # checked on its server as it starts (emulation.cluster.ClusterSwitch)
            if not port_is_free(dev.grpc_port):
                raise ValueError(f"gRPC port 127.0.0.1:{dev.grpc_port} of {dev.name}: already in use "
                                 "(another run? `make clean-net`, or another grpc base)")
        for name in self.names.interfaces():
            if interface_exists(name):
                raise ValueError(f"interface {name}: already exists (another run? `make clean-net`)")

    def fibre(self, ocs: str, port: OcsPort) -> Fibre:
        """The interfaces of the fibre from a ToR port to an OCS port."""
        return self.names.fibre(ocs, port)

    def _place(self, placement: dict[str, str]) -> dict[str, str]:
        """Each node's server on a cluster run: by pod (emulation/clusterbuild.py), then `placement`'s
        own choices; {} on one machine."""
        if not self.servers:
            if placement:
                raise ValueError("placement without servers; expected servers too")
            return {}
        nodes = {n.name for n in [*self.topo.switches, *self.topo.hosts, *self.topo.ocs]}
        for node, server in placement.items():
            if node not in nodes or server not in self.servers:
                raise ValueError(f"placement {node}={server}: expected a node of {self.topo.name} and one of "
                                 f"the servers {', '.join(self.servers)}")
        server_of = {**place_by_pod(self.topo, self.servers), **placement}
        check_ocs_local(self.topo, server_of)
        return server_of

    def is_remote(self, name: str) -> bool:
        """Whether a topology node runs on another server (a cluster run's; never on one machine)."""
        return self.server_of.get(name, LOCAL) != LOCAL

    def cross_links(self) -> list[tuple[str, str]]:
        """The links and fibres between two servers of a cluster run (none on one machine)."""
        return cross_links(self.topo, self.server_of) if self.server_of else []

    def hold_loop(self, switch: str) -> HoldLoop:
        """The interfaces of a fabric switch's hold loop (its ports HOLD_OUT_PORT and HOLD_IN_PORT)."""
        return self.names.hold_loop(switch)

    def intf(self, node: str, port: int) -> str:
        """The Linux interface of a topology node's port."""
        return self.names.intf(node, port)

    def _switch_params(self, program: str, device_id: int, grpc_port: int) -> dict:
        return {"switch_bin": self.switch_bin, "json_path": str((self.build_dir / f"{program}.json").resolve()),
                "device_id": device_id, "grpc_port": grpc_port, "log_dir": str(self.log_dir),
                "pcap_dir": str(self.log_dir / "pcap") if self.pcap else None}

    def _switch_hosts(self) -> dict[str, SwitchHost]:
        """The fabric switches that share a process, and with whom: none when the switch binary runs
        one switch a process (bmv2) or when one a process is asked for; else groups of
        `switches_per_process` in topology order (a fat-tree's pods together), by default 1 up to
        HOSTED_FROM switches and beyond that as many as make HOST_PROCESSES processes."""
        assert self.switch_bin is not None and self.log_dir is not None
        n = len(self.topo.switches)
        per = self.switches_per_process
        if per is None:
            per = 1 if n < HOSTED_FROM else -(-n // HOST_PROCESSES)
        if per <= 1 or self.servers or not hosts_devices(self.switch_bin):
            return {}
        out: dict[str, SwitchHost] = {}
        for i in range(0, n, per):
            host = SwitchHost(f"switch-host-{i // per}", self.switch_bin, self.log_dir)
            for s in self.topo.switches[i:i + per]:
                out[s.name] = host
        return out

    def _build(self) -> None:
        t0 = time.monotonic()
        assert self.state is not None
        # interfaces are recorded before they exist, so a run killed half-way is still cleaned
        self.state.add_interfaces(self.names.interfaces())
        build = (ClusterBuild(self.names, self.servers, self.server_of, self.ssh_options, self.rto_min) if self.servers
                 else MininetBuild(self.names, self.rto_min))
        self.net, self.hosts, self.switches = build.net, build.hosts, build.switches  # filled as it goes
        self.hosts_of = self._switch_hosts()
        build.add_nodes(self.state, self._switch_params, self.hosts_of)
        build.add_links(self.hold_passes)
        build.config_hosts()
        self.on_progress("links", build.summary(time.monotonic() - t0))
        if self.servers:
            self._report_servers()

    def _report_servers(self) -> None:
        """The progress lines of a cluster run: nodes a server, then every link between two servers
        with what their tunnel adds one way (half the underlay's round trip, measured now)."""
        placed = {srv: sum(1 for s in self.server_of.values() if s == srv) for srv in self.servers}
        tunnels = self.cross_links()
        self.on_progress("servers", f"nodes {placed}; {len(tunnels)} links and fibres between servers (VXLAN)")
        nodes = {**self.hosts, **self.switches}
        pairs = dict.fromkeys(tuple(sorted((self.server_of[x], self.server_of[y]), key=lambda s: s != LOCAL))
                              for x, y in tunnels)  # this machine first: it pings the other
        for a, b in pairs:
            node = next(n for name, n in nodes.items() if self.server_of[name] == a)
            far = next(n for name, n in nodes.items() if self.server_of[name] == b)
            rtt = underlay_rtt_ms(node, far.serverIP)
            self.tunnel_delay_ms[(a, b)] = rtt / 2 if rtt is not None else None
            links = [f"{x}-{y}" for x, y in tunnels if {self.server_of[x], self.server_of[y]} == {a, b}]
            added = f"{rtt / 2:.3f} ms one way" if rtt is not None else "no reply to ping"
            self.on_progress("servers", f"{a} and {b}: a tunnel adds {added} (underlay RTT/2); links {', '.join(links)}")

    def _start_switches(self) -> None:
        t0 = time.monotonic()
        assert self.net is not None and self.state is not None
        sws = list(self.switches.values())
        try:
            for sw in sws:
                sw.start([])
                if sw.local_pid is not None:  # a remote switch's: the ssh session that runs it (emulation/cluster.py)
                    self.state.add_process(sw.local_pid, f"switch {sw.name}")
            for host in dict.fromkeys(self.hosts_of.values()):
                host.launch()
                assert host.proc is not None
                self.state.add_process(host.proc.pid, host.name)
            P4Switch.batchStartup(tuple(sws))
        except SwitchStartError as exc:
            raise RuntimeError(str(exc)) from None
        self.net.started = {}
        hosts = len(set(self.hosts_of.values()))
        where = f" in {hosts} processes" if hosts else ""
        self.on_progress("switches", f"{len(sws)} x {Path(shlex.split(self.switch_bin)[0]).name} listening{where} "
                         f"in {time.monotonic() - t0:.1f} s")

    # -- OCS ------------------------------------------------------------------------------------------

    def _start_ocs(self) -> None:
        t0 = time.monotonic()
        assert self.state is not None and self.log_dir is not None
        if len(self.topo.ocs) != 1:
            raise ValueError(f"{len(self.topo.ocs)} OCSes: expected at most one (the emulator drives one)")
        o = self.topo.ocs[0]
        size = max(p.port for p in o.ports)
        cmd = [sys.executable, "-m", "emulation", "ocs-emulator", "--listen", "127.0.0.1:0", "--ports", str(size),
               "--dataplane", f"127.0.0.1:{o.grpc_port}", "--device-id", str(o.device_id),
               "--p4info", str(self.build_dir / "ocs.p4info.txtpb"), "--config", str(self.build_dir / "ocs.json"),
               "--events", str(self.log_dir / "ocs-events.jsonl")]
        for p in o.ports:
            # the fibre's patch goes down while dark: both switch ports lose carrier (fibre.py); a ToR's
            # end on another server is set there (its switch node's `user@server`)
            tor_end, ocs_end = self.fibre(o.name, p).patch
            where = f":{self.switches[p.switch].dest}" if self.is_remote(p.switch) else ""
            cmd += ["--link", f"{p.port}={tor_end}{where}", "--link", f"{p.port}={ocs_end}"]
        cmd += [arg for v in ssh_option_values(self.ssh_options) for arg in ("--ssh-option", v)]
        cmd += self.ocs_args
        self._ocs_log = open(self.log_dir / "ocs-emulator.log", "wb")  # noqa: SIM115 - closed in stop()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=self._ocs_log, start_new_session=True)
        self.state.add_process(proc.pid, "ocs-emulator")
        line = first_line(proc, self._ocs_log, OCS_START_TIMEOUT_S)
        if "listening on " not in line:
            stop_process(proc)
            tail = (self.log_dir / "ocs-emulator.log").read_text(errors="replace").strip().splitlines()
            raise RuntimeError(f"ocs-emulator exited with code {proc.returncode}: {tail[-1] if tail else line}")
        address = line.split("listening on ", 1)[1].split()[0]
        self.ocs = OcsProcess(o.name, size, proc, address)
        circuits = resolve_circuits(self.topo, self.circuits_spec).get(o.name, [])
        if _option(self.ocs_args, "--schedule-mode") == "dataplane":
            circuits = []  # the ocs switch's time-flow tables hold the cycle; the emulator lit its fibres
        else:
            self.set_circuits(circuits)
        self.on_progress("ocs", f"{o.name} {size}x{size} at {address}, circuits {circuits} "
                         f"up in {time.monotonic() - t0:.1f} s")

    def set_circuits(self, circuits: list[tuple[int, int]], timeout: float = LINK_UP_TIMEOUT_S) -> None:
        """Set the OCS's duplex circuits (replacing all); return once the new ones carry light end to end.

        Waits for the emulator's `port-up` event of every port of a new circuit (so a port that was up
        under the old map is not taken for up before it went dark), then for carrier to match the map:
        ports of the circuits up, every other fibred port dark.
        """
        if self.ocs is None:
            raise ValueError("set_circuits: this emulation has no OCS")
        new = [(int(a), int(b)) for a, b in circuits]
        events = self.log_dir / "ocs-events.jsonl" if self.log_dir else None
        offset = events.stat().st_size if events is not None and events.exists() else 0
        with self.ocs.driver() as drv:
            # against what the OCS holds, not self.ocs.circuits: procedures change it through their own
            # driver (a circuit both maps have lights no port and sends no port-up event to wait for)
            held = circuits_from_ocs(drv)
            changed = {p for c in set(map(frozenset, new)) - set(map(frozenset, held)) for p in c}
            drv.set_map(duplex_pairs(new, self.ocs.size))
            drv.wait_complete()
        self.ocs.circuits = new
        deadline = time.monotonic() + timeout
        if events is not None:
            while changed - ports_up_since(events, offset):
                if time.monotonic() > deadline:
                    raise RuntimeError(f"OCS ports {sorted(changed - ports_up_since(events, offset))}: "
                                       f"not up after {timeout:.0f} s")
                time.sleep(0.01)
        self.wait_ocs_links(max(0.1, deadline - time.monotonic()))

    def servers_not_seeing(self, folder: Path) -> list[str]:
        """The servers of this run's remote hosts on which `folder` (here) is not the same folder: a
        file made here is not there at the same path (no shared file system). Empty on one machine."""
        remote = {self.server_of[n]: node for n, node in self.hosts.items() if self.is_remote(n)}
        if not remote:
            return []
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".shared-") as marker:
            return sorted(srv for srv, node in remote.items()
                          if run_in_shell(node, HostCommand(["test", "-e", marker.name]))[0] != 0)

    def record_process(self, proc: Any, what: str) -> None:
        """Record a process started in a host (a capture, a traffic generator) in the run record, so
        `make clean-net` stops it after a killed run; a remote host's by its ssh session here (stopping
        that ends it there: emulation.cluster.RemoteProcess)."""
        if self.state is not None:
            self.state.add_process(proc.local_pid if isinstance(proc, RemoteProcess) else proc.pid, f"{what} (host)")

    def ocs_link_up(self, ocs_port: int) -> bool:
        """True when the ToR-side interface fibred to this OCS port has carrier."""
        o = self.topo.ocs_map()[self.ocs.name] if self.ocs else None
        if o is None:
            return False
        for p in o.ports:
            if p.port == ocs_port:
                ifname = self.intf(p.switch, p.switch_port)
                if not self.is_remote(p.switch):
                    return carrier(ifname)
                return self.switches[p.switch].cmd("cat", carrier_path(ifname)).strip() == "1"  # on its server
        raise ValueError(f"OCS port {ocs_port}: not wired; expected one of {[p.port for p in o.ports]}")

    def wait_ocs_links(self, timeout: float = LINK_UP_TIMEOUT_S) -> None:
        """Wait until the ToR side of every fibred OCS port has carrier exactly when a circuit lights it."""
        assert self.ocs is not None
        lit = {p for c in self.ocs.circuits for p in c}
        ports = [p.port for p in self.topo.ocs_map()[self.ocs.name].ports]
        deadline = time.monotonic() + timeout
        while True:
            wrong = sorted(p for p in ports if self.ocs_link_up(p) != (p in lit))
            if not wrong:
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"OCS ports {wrong}: carrier does not match circuits {self.ocs.circuits} "
                                   f"after {timeout:.0f} s")
            time.sleep(0.02)

    # -- controller -----------------------------------------------------------------------------------

    def _install(self) -> None:
        t0 = time.monotonic()
        assert self.log_dir is not None
        self.events = EventLog(self.log_dir / "events.jsonl")
        circuits = resolve_circuits(self.topo, self.circuits_spec) if self.topo.ocs else None
        states = generate_states(self.topo, self.mode, circuits, self.spray)
        self.controller = Network(self.topo, Pipeline.from_build("fabric", self.build_dir), events=self.events,
                                  addresses={name: sw.grpc_host for name, sw in self.switches.items()})
        plans = self.controller.install(states)
        if self.watch:
            self.controller.start_watch()
        writes = sum(p.inserts + p.modifies + p.deletes for p in plans.values())
        self.on_progress("tables", f"{self.mode}: {writes} writes to {len(plans)} switches "
                         f"in {time.monotonic() - t0:.1f} s")

    # -- using it -------------------------------------------------------------------------------------

    def node(self, name: str):
        """A Mininet node (host or switch) by name."""
        if name in self.hosts:
            return self.hosts[name]
        if name in self.switches:
            return self.switches[name]
        raise ValueError(f"node {name!r}: unknown; expected a host or switch of {self.topo.name}")

    def cmd(self, host: str, *args: str) -> str:
        """Run a shell command on a node and return its output."""
        return self.node(host).cmd(*args)

    def run(self, host: str, command: str) -> tuple[int, str]:
        """Run a shell command on a node; returns (exit code, output)."""
        out = self.node(host).cmd(f"{command}; echo __rc=$?")
        body, _, rc = out.rpartition("__rc=")
        return int(rc.strip() or 1), body

    def pingall(self, timeout: float | None = 2.0) -> float:
        """Mininet's pingAll over every host pair; returns the loss in percent."""
        assert self.net is not None
        return float(self.net.pingAll(timeout=str(timeout) if timeout else None))

    def iperf3(self, client: str, server: str, seconds: float = 2.0, port: int = 5201,
               extra: str = "") -> float:
        """One iperf3 TCP run client -> server (a host); returns the received rate in Mbit/s."""
        srv_host = self.topo.host_map().get(server)
        if srv_host is None:
            raise ValueError(f"iperf3 server {server!r}: not a host")
        srv = self.hosts[server].popen(nice_argv(HOST_NICE, ["iperf3", "-s", "-1", "-p", str(port)]),
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 5
            while "LISTEN" not in self.hosts[server].cmd(f"ss -Htln sport = :{port}"):
                if time.monotonic() > deadline or srv.poll() is not None:
                    raise RuntimeError(f"iperf3 server on {server}: not listening")
                time.sleep(0.05)
            rc, out = self.run(client, f"iperf3 -J -c {srv_host.address} -p {port} -t {seconds} {extra}")
            try:
                data = json.loads(out[out.index("{"):])
            except ValueError:
                raise RuntimeError(f"iperf3 {client} -> {server}: no JSON result (exit {rc})") from None
            if "error" in data:
                raise RuntimeError(f"iperf3 {client} -> {server}: {data['error']}")
            return data["end"]["sum_received"]["bits_per_second"] / 1e6
        finally:
            if srv.poll() is None:
                srv.terminate()
                try:
                    srv.wait(timeout=3)
                except subprocess.TimeoutExpired:
                    srv.kill()
                    srv.wait()

    def counters(self, switch: str, counter: str = "port_tx") -> dict[int, tuple[int, int]]:
        """A port counter (fabric.contract.PORT_COUNTERS) of a fabric switch or the OCS, read over
        P4Runtime: port -> (packets, bytes), the ports that counted anything."""
        return self.port_counters(switch, (counter,))[counter]

    def port_counters(self, switch: str, names: Iterable[str]) -> dict[str, dict[int, tuple[int, int]]]:
        """Port counters of a fabric switch or the OCS in one batched read: counter -> port -> (packets,
        bytes), the ports that counted anything.

        Only the cells of the device's ports are read (its topology ports, the CPU port and a fabric
        switch's hold loop), not whole arrays: a wildcard read of four 512-cell counters cost bmv2 and
        this controller about 30 times as much (scripts/bench/control_stall.py, read-counters)."""
        names = list(names)
        ocs = next((o for o in self.topo.ocs if o.name == switch), None)
        if ocs is not None and self.ocs is not None:
            ports = {p.port for p in ocs.ports} | {CPU_PORT}
            # the emulator is the OCS's controller: read as a backup session (election id 0)
            client = P4RuntimeClient(f"127.0.0.1:{ocs.grpc_port}", ocs.device_id, election_id=(0, 0),
                                     schema=Pipeline.from_build("ocs", self.build_dir).schema)
            try:
                client.connect()
                got = client.read_entities([CounterEntry(c, p) for c in names for p in sorted(ports)])
            finally:
                client.close()
        elif self.controller is not None and switch in self.controller.sessions:
            ports = set(self.topo.switch_map()[switch].ports) | {CPU_PORT, HOLD_OUT_PORT, HOLD_IN_PORT}
            got = self.controller.read(switch, [CounterEntry(c, p) for c in names for p in sorted(ports)])
        else:
            raise ValueError(f"switch {switch!r}: not a switch or OCS of this running emulation")
        out: dict[str, dict[int, tuple[int, int]]] = {c: {} for c in names}
        asked = {short_name(c): c for c in names}  # read back under their short names
        for c in got:
            if c.packets or c.bytes:
                out[asked[c.counter]][c.index] = (c.packets, c.bytes)
        return out

    def hold_loop_drops(self) -> dict[str, int]:
        """Per fabric switch, held packets its hold loop's queue dropped (full: emulation/holdloop.py)."""
        return {s.name: loop_drops(self.hold_loop(s.name)) for s in self.topo.switches}

    def switch_cpu_seconds(self) -> dict[str, float]:
        """CPU time each running switch process (fabric and OCS) on this machine has used so far, by
        switch name."""
        out = {}
        for name, sw in self._local(self.switches).items():
            pid = sw.pid_started
            used = cpu_seconds(pid) if pid else None
            if used is not None:
                out[name] = used
        return out

    def pids(self) -> dict[str, int]:
        """Every live process of the emulation on this machine (switches, OCS emulator, node shells), by
        description."""
        out = {}
        for name, sw in self._local(self.switches).items():
            if sw.pid_started:
                out[f"switch {name}"] = sw.pid_started
            out[f"shell {name}"] = sw.pid
        for name, h in self._local(self.hosts).items():
            out[f"host {name}"] = h.pid
        if self.ocs is not None and self.ocs.proc.poll() is None:
            out["ocs-emulator"] = self.ocs.proc.pid
        return out

    def _local(self, nodes: dict[str, Any]) -> dict[str, Any]:
        """The nodes on this machine (a cluster run's remote ones have PIDs of their servers)."""
        return {n: node for n, node in nodes.items() if not self.is_remote(n)}

    def rss_bytes(self) -> int:
        """Sum of the resident memory of the emulation's processes, this Python process included."""
        total = 0
        for pid in dict.fromkeys([*self.pids().values(), os.getpid()]):  # hosted switches share a pid
            try:
                for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1]) * 1024
            except OSError:
                pass
        return total

    # -- tear down ------------------------------------------------------------------------------------

    def stop(self) -> None:
        """Stop controller, OCS emulator, switches and hosts; remove every interface; idempotent."""
        if self.controller is not None:
            try:
                self.controller.close()
            except Exception as exc:  # noqa: BLE001 - tearing down: log and go on
                log.warning("controller close: %s", exc)
            self.controller = None
        if self.events is not None:
            self.events.close()
            self.events = None
        if self.ocs is not None:
            stop_process(self.ocs.proc)
            if self.ocs.proc.stdout:
                self.ocs.proc.stdout.close()
            self.ocs = None
        if self._ocs_log is not None:
            self._ocs_log.close()
            self._ocs_log = None
        for sw in self.switches.values():  # signal every switch first: they exit in parallel
            if sw.pid_started:
                try:
                    sw.proc.terminate()
                except OSError:
                    pass
        for host in dict.fromkeys(self.hosts_of.values()):
            host.stop()
        if self.net is not None:
            try:
                self.net.stop()
            except Exception as exc:  # noqa: BLE001 - fall back to the state file below
                log.warning("mininet stop: %s", exc)
            self.net = None
        if self.state is not None:
            clean_state(self.state)  # whatever Mininet did not remove (a half-built net)
            if self._priorities is not None:
                self._priorities.release()
                self._priorities = None
            self.state = None




def _option(args: list[str], name: str) -> str | None:
    """The value of the last `name VALUE` in an argument list (None if absent)."""
    value = None
    for a, b in zip(args, args[1:], strict=False):
        if a == name:
            value = b
    return value
