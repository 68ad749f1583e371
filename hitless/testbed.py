"""The testbed a researcher holds in their head: a topology running on a P4 target, a forwarding mode,
flows, a reconfiguration, counters and TCP metrics, and results that plot.

    with Testbed("ucd4", rate_mbit=20, fabric_rate_mbit=21) as tb:    # generator (or a topology file)
        tb.install("ecmp")                                           # forwarding mode of every route
        tb.pingall(); tb.iperf("h2", "h3")                           # loss %, Mbit/s
        tb.reconfigure("mbb", "reconfigured")                        # a procedure, timings
        tb.counters("s1"); tb.tcp("h2")                              # port counters, the host's TCP counters
        run = tb.measure("mbb", "reconfigured", stream=("h2", "h3", 16), seconds=8, at=3)

`Testbed(..., view=True)` also serves the live view (view/README.md) on 127.0.0.1:8765 (`view=0`: any
free port; `view_control=True`: the page may run `reconfigure`): `tb.view.url`.

A facade over what exists: `emulation.network.Emulation` (isolated: its own node names and gRPC
ports), `control.network.Network` and `control.procedures.Reconfigurer`, and for `measure` the
experiment runner's own run (`scripts.experiments.reconf.Reconfiguration`: captures at both ends, the procedure
at `at`, the metrics of scripts/README.md). Needs root and Mininet, like `hitless run-topo`.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from types import TracebackType
from typing import Any

from control.procedures import Reconfigurer, Result
from fabric.contract import MODES
from hitless.results import Run
from p4sim.target import REAL_COMPILER, REAL_SWITCH, Target, label
from scripts.experiments.reconf import Reconfiguration
from scripts.experiments.runner import HOME
from scripts.experiments.spec import Spec, Stream, Variant, make_topology
from scripts.hosts.hostproc import nstat
from scripts.hosts.kernel import nstat_delta
from tablegen.entries import generate_states
from topo.circuits import ocs_circuits, resolve_circuits
from topo.model import Topology, load
from topo.validate import validate
from view.live import DEFAULT_PORT, LiveView
from view.server import Controls

log = logging.getLogger(__name__)

TARGETS = ("p4sim", "bmv2")
OCS_SEED = 1  # the OCS delay model's seed, as the experiment runner's default


def choose_target(target: str | None) -> Target:
    """p4sim's compiler and switch, p4c and bmv2, or (None) the default: $P4C/$SWITCH, else bmv2 where
    installed, else p4sim (p4sim/target.py); ValueError for another name or a missing tool."""
    if target is None:
        return Target.from_env()
    if target == "p4sim":
        return Target.from_env("p4sim-compile", "p4sim-switch")
    if target == "bmv2":
        return Target.from_env(REAL_COMPILER, REAL_SWITCH)
    raise ValueError(f"target {target!r}: expected one of {', '.join(TARGETS)} (or None: the default)")


def make_topo(topology: str | Path | Topology, generator_args: dict[str, Any]) -> Topology:
    """A generator's topology (ucd4, fattree, leafspine, ocscore with its arguments), a topology file's,
    or the given one; validated."""
    if isinstance(topology, Topology):
        return validate(topology)
    if Path(topology).suffix == ".json":
        if generator_args:
            raise ValueError(f"{topology}: a topology file takes no generator arguments ({sorted(generator_args)})")
        return validate(load(topology))
    spec = Spec(name="testbed", kind="reconfiguration", topology={"generator": str(topology), **generator_args})
    try:
        return make_topology(spec)
    except (AttributeError, TypeError) as exc:
        raise ValueError(f"topology {topology!r} {generator_args}: {exc}; expected a generator of "
                         "topo.generators with its arguments, or a .json file") from None


class Testbed:
    """A running network: see the module docstring. `start()`/`stop()` or a `with` block."""

    def __init__(self, topology: str | Path | Topology = "ucd4", *, target: str | None = None,
                 mode: str = "ecmp", out: str | Path | None = None, build_dir: str | Path | None = None,
                 ocs_args: list[str] | None = None, rto_min: str | None = None, view: bool | int = False,
                 view_control: bool = False, **generator_args: Any) -> None:
        if mode not in MODES:
            raise ValueError(f"mode {mode!r}: expected one of {', '.join(MODES)}")
        self.topo = make_topo(topology, generator_args)
        self.target = choose_target(target)
        self.mode = mode
        self.failover = True
        # absolute: the hosts' captures write there from their own shells
        self.out = (Path(out) if out else Path("results") / time.strftime("testbed-%Y%m%d-%H%M%S")).resolve()
        self.build_dir = Path(build_dir) if build_dir else HOME / "build" / f"testbed-{label(self.target.p4c)}"
        self.ocs_args = list(ocs_args) if ocs_args is not None else ["--seed", str(OCS_SEED)]
        self.rto_min = rto_min
        self.emu: Any = None  # emulation.network.Emulation once started
        # the live view (view/): True on its default port, or a port number; `tb.view.url` once started
        self.view_port = None if view is False else (DEFAULT_PORT if view is True else int(view))
        self.view_control = view_control
        self.view: LiveView | None = None
        self._runs = 0

    # -- life cycle -----------------------------------------------------------------------------------

    def start(self) -> Testbed:
        """Compile the programs when stale, start the network with `mode`'s tables; stop on failure."""
        # imported here, not at the top: Mininet is needed to run a network, not to import the package
        from emulation.network import Emulation

        log.info("%s", self.target.ensure_build(self.build_dir))
        self.out.mkdir(parents=True, exist_ok=True)
        self.emu = Emulation.isolated(self.topo, self.mode, build_dir=self.build_dir, switch_bin=self.target.switch,
                                      ocs_args=self.ocs_args if self.topo.ocs else None, rto_min=self.rto_min,
                                      log_dir=self.out / "emulation")
        self.emu.start()
        if self.view_port is not None:
            try:
                controls = Controls(self._page_reconfigure, self._page_circuits) if self.view_control else None
                self.view = LiveView(self.emu, port=self.view_port, controls=controls, runs_under=self.out).start()
            except BaseException:
                self.stop()
                raise
            log.warning("view: %s", self.view.url)
        return self

    def _page_reconfigure(self, procedure: str, circuits: str, hold_s: float) -> str:
        res = self.reconfigure(procedure, circuits, hold_s)
        return f"{res.procedure}: total {res.total_ms:.1f} ms, control {res.control_ms:.1f} ms"

    def _page_circuits(self, circuits: str) -> str:
        new = ocs_circuits(self.topo, circuits)
        self.running.set_circuits(new)
        return f"circuits {new}: lit"

    def stop(self) -> None:
        """Stop everything the network started (safe to call twice)."""
        if self.view is not None:
            self.view.stop()
            self.view = None
        if self.emu is not None:
            self.emu.stop()
            self.emu = None

    def __enter__(self) -> Testbed:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()

    @property
    def running(self) -> Any:
        """The running Emulation (ValueError before start)."""
        if self.emu is None:
            raise ValueError("testbed: not started; expected `with Testbed(...) as tb:` or tb.start()")
        return self.emu

    @property
    def hosts(self) -> list[str]:
        """The hosts' names."""
        return [h.name for h in self.topo.hosts]

    # -- the network ----------------------------------------------------------------------------------

    def install(self, mode: str, circuits: str | None = None, failover: bool = True) -> int:
        """Every switch's tables for a forwarding mode (static, ecmp, spray) and circuit map (a map name,
        'none', pairs 'a-b,c-d'; default the OCS's current map); returns the number of writes."""
        if mode not in MODES:
            raise ValueError(f"mode {mode!r}: expected one of {', '.join(MODES)}")
        emu = self.running
        if circuits is None and emu.ocs is not None:
            circuits = ",".join(f"{a}-{b}" for a, b in emu.ocs.circuits) or "none"
        cmap = resolve_circuits(self.topo, circuits) if self.topo.ocs else None
        plans = emu.controller.sync(generate_states(emu.topo, mode, cmap, emu.spray, failover), step="install")
        self.mode, self.failover = mode, failover
        return sum(p.inserts + p.modifies + p.deletes for p in plans.values())

    def pingall(self) -> float:
        """Ping between every pair of hosts; the loss in percent."""
        return self.running.pingall()

    def iperf(self, client: str, server: str, seconds: float = 2.0) -> float:
        """One TCP transfer (iperf3) client -> server; the received rate in Mbit/s."""
        return self.running.iperf3(client, server, seconds=seconds)

    def reconfigure(self, procedure: str, circuits: str, hold_s: float = 1.0) -> Result:
        """Move the OCS to `circuits` (a map name or pairs 'a-b,c-d') with bbm, mbb-timed or mbb; the
        procedure's step timings (control.procedures.Result)."""
        emu = self.running
        new = ocs_circuits(self.topo, circuits)
        with emu.ocs.driver() as drv:
            result = Reconfigurer(emu.controller, drv, mode=self.mode, spray=emu.spray,
                                  failover=self.failover).run(procedure, new, hold_s=hold_s)
        emu.ocs.circuits = new
        return result

    def counters(self, switch: str, counter: str = "port_tx") -> dict[int, tuple[int, int]]:
        """A port counter of a switch or the OCS: port -> (packets, bytes)."""
        return self.running.counters(switch, counter)

    def tcp(self, host: str) -> dict[str, int]:
        """A host's TCP counters since its start (nstat: out_segs, retrans_segs, timeouts, fast_retrans, ...)."""
        emu = self.running
        if host not in emu.hosts:
            raise ValueError(f"host {host!r}: expected one of {', '.join(self.hosts)}")
        return nstat_delta({}, nstat(emu.hosts[host]))

    # -- measured runs --------------------------------------------------------------------------------

    def measure(self, procedure: str, circuits: str, stream: tuple[str, str, float] = ("h2", "h3", 16.0),
                seconds: float = 8.0, at: float = 3.0, failover: bool | None = None, hold_s: float = 1.0) -> Run:
        """One measured reconfiguration: from the OCS's initial map, a TCP stream (src, dst, Mbit/s)
        captured at both ends for `seconds`, the procedure at `at` s to the map `circuits`; its gap,
        loss, retransmissions, RTOs and series. failover: the fabric's fast failover to the shadow
        path (default off for bbm, the thesis's switches, else on)."""
        emu = self.running
        if emu.ocs is None:
            raise ValueError(f"topology {self.topo.name!r}: has no OCS to reconfigure")
        if not 0 < at < seconds:
            raise ValueError(f"at {at} s: expected between 0 and seconds ({seconds})")
        failover = procedure != "bbm" if failover is None else failover
        if not failover and procedure != "bbm":
            raise ValueError(f"failover off with {procedure!r}: expected bbm (the others move traffic to the shadow)")
        src, dst, mbit = stream
        variant = Variant(name=procedure, procedure=procedure, mode=self.mode, hold_s=hold_s,
                          failover=failover)
        spec = Spec(name="testbed", kind="reconfiguration", variants=[variant], duration_s=seconds, event_at_s=at,
                    target_map=circuits, streams=[Stream(src, dst, float(mbit))])
        self._runs += 1
        exp = Reconfiguration(emu, spec, variant)
        try:
            metrics = exp.run(self.out / f"run-{self._runs:03d}-{procedure}")
        finally:
            exp.close()
        return Run.of(metrics, self.out / f"run-{self._runs:03d}-{procedure}")
