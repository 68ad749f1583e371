"""Reconfiguration procedures: bbm (thesis OST), mbb-timed (thesis MBB) and mbb (hitless), run from a plan.

`control.plan` says what a procedure does, in order (pure); the `Executor` here does it: it syncs the
switches, commands the OCS, waits, probes and holds, and logs every step to the event log it is given.

mbb's two flips (old circuit -> electrical shadow, shadow -> new circuit) are flowlet-gated
(`set_version_gradual`, p4src/README.md): each flow moves at a flowlet boundary (a TCP flow once it
is drained, others at an idle gap), so packets on the shorter path never overtake the flow's own
packets on the longer one; the procedure then waits GAP + MAX_HOLD (the switches' `flowlet_config`
as their desired states set it) + drain_ms before it darkens or rewrites what flows may still be
pinned to. mbb-timed and bbm flip immediately (the thesis's procedures).

Everything a run computes (the plan, the encoded states, the failover setting) can be done before the
event (`Reconfigurer.prepare`), so the run itself only writes, commands the OCS, waits and probes:
on a machine of few cores, the controller's planning and encoding at the event took CPU the emulated
switches needed (e1 on bmv2: prepare 0.1-3 s under load, the switches' queues dropping meanwhile).

Each step is an event in the EventLog (JSON lines, monotonic and wall clock). Every switch write is
a reconcile to a whole state, so each switch's desired state is always one that forwards: after a
fault the procedure stops, reports the step, and leaves traffic where the last completed step put it
(for mbb, on the electrical shadow paths), and the network watcher restores that state on a switch
that restarts.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NoReturn

from control.events import EventLog
from control.network import Network
from control.ocs.driver import OcsDriver
from control.plan import (
    FLOWLET_GAP_MS,
    FLOWLET_MAX_HOLD_MS,
    PROCEDURES,
    Circuits,
    Hold,
    Plan,
    Prepare,
    Probe,
    SetCircuits,
    States,
    Step,
    Sync,
    Transform,
    View,
    WaitLight,
    check_wait,
    plan,
    with_gradual_versions,
)
from fabric.contract import PATH_VERSION, SET_VERSION_GRADUAL

log = logging.getLogger(__name__)

__all__ = ["PROCEDURES", "Executor", "ProcedureError", "Reconfigurer", "Result", "circuits_from_ocs",
           "with_gradual_versions"]


UNCHANGED = "the OCS and the routes unchanged"  # what a run left that failed before its first step


class ProcedureError(Exception):
    """A procedure stopped at `step`; traffic stays on the path the last completed step set, which `left`
    says (Plan.left), with how to recover."""

    def __init__(self, step: str, cause: BaseException, left: str = UNCHANGED) -> None:
        super().__init__(f"step {step!r} failed: {cause}; left {left}; to recover, run the procedure again (it "
                         "starts from the circuits the OCS holds) or install the routes of those circuits "
                         "(python -m control install --circuits ...)")
        self.step = step
        self.cause = cause
        self.left = left


@dataclass(slots=True)
class Result:
    """Timings of one run (ms): control time excludes waiting for the OCS and the timed hold."""

    procedure: str
    steps: dict[str, float] = field(default_factory=dict)
    control_ms: float = 0.0
    total_ms: float = 0.0
    affected: dict[str, list[int]] = field(default_factory=dict)
    probes: int = 0


def circuits_from_ocs(ocs: OcsDriver) -> Circuits:
    """The duplex circuits (a, b), a < b, an OCS holds (connections both ways)."""
    n = ocs.size
    conns = ocs.query()
    out = []
    for i, o in conns.items():
        a, b = i, o - n
        if a < b and conns.get(b) == n + a:
            out.append((a, b))
    return sorted(out)


class Executor:
    """Performs a plan's steps on a Network and an OCS; every step and write goes to `events`."""

    def __init__(self, net: Network, ocs: OcsDriver, events: EventLog, probe_timeout: float = 5.0) -> None:
        self.net, self.ocs, self.events = net, ocs, events
        self.probe_timeout = probe_timeout
        self._t_start = 0.0

    def start(self, procedure: str, old: Circuits, new: Circuits, hold_s: float) -> Result:
        """Log `procedure-start` and start the run's clock."""
        self._t_start = time.monotonic()
        self.events.log("procedure-start", procedure=procedure, old=old, new=new, hold_s=hold_s)
        return Result(procedure)

    def steps(self, p: Plan, res: Result) -> None:
        """Perform every step in order; a failing step is logged and raised as ProcedureError."""
        res.affected = p.affected
        for i, step in enumerate(p.steps):
            try:
                self._timed(p, step, res)
            except Exception as exc:
                self.fail(res, step.name, exc, p.left(i))

    def fail(self, res: Result, step: str, exc: BaseException, left: str | None = None) -> NoReturn:
        """Log `procedure-error` and raise ProcedureError(step) saying what the run `left`."""
        err = ProcedureError(step, exc, left or UNCHANGED)
        self.events.log("procedure-error", procedure=res.procedure, step=step, error=str(exc), left=err.left)
        raise err from exc

    def done(self, res: Result) -> Result:
        """Log `procedure-done` with the run's timings."""
        res.total_ms = (time.monotonic() - self._t_start) * 1000
        self.events.log("procedure-done", procedure=res.procedure, total_ms=res.total_ms, control_ms=res.control_ms,
                        steps=res.steps, affected=res.affected)
        return res

    def execute(self, p: Plan, hold_s: float = 1.0) -> Result:
        """A whole run of a plan: its setup, then start, steps, done."""
        self.setup(p)
        res = self.start(p.procedure, list(p.old), list(p.new), hold_s)
        self.steps(p, res)
        return self.done(res)

    def _timed(self, p: Plan, step: Step, res: Result) -> None:
        t0 = time.monotonic()
        self.events.log("step-start", procedure=res.procedure, step=step.name)
        self._do(p, step, res)
        ms = (time.monotonic() - t0) * 1000
        res.steps[step.name] = res.steps.get(step.name, 0.0) + ms
        if step.control:
            res.control_ms += ms
        self.events.log("step-done", procedure=res.procedure, step=step.name, ms=ms)

    def _do(self, p: Plan, step: Step, res: Result) -> None:
        if isinstance(step, Prepare):
            self._prepare([p.states[name] for name in step.states])
        elif isinstance(step, Sync):
            self._sync(p, step)
        elif isinstance(step, SetCircuits):
            self.ocs.set_map(list(step.pairs))
        elif isinstance(step, WaitLight):
            self.ocs.wait_complete()
        elif isinstance(step, Probe):
            for src, dst in step.links:
                pr = self.net.probe(src, dst, timeout=self.probe_timeout)
                res.probes += pr.sent
                self.events.log("probe-ok", src=list(src), dst=list(dst), sent=pr.sent, rtt_ms=pr.rtt_ms)
        elif isinstance(step, Hold):
            time.sleep(step.ms / 1000)
        else:
            raise TypeError(f"step {step!r}: expected one of control.plan's steps")

    def _sync(self, p: Plan, step: Sync) -> None:
        states = p.states[step.state]
        self.net.sync({s: states[s] for s in step.switches}, delete=step.delete, step=step.name,
                      trust_cache=True, events=self.events)

    def setup(self, p: Plan) -> None:
        """Write the plan's setup (this run's failover setting), before the event: its syncs' writes are
        logged under their names, as no step of the run."""
        for step in p.setup:
            self._sync(p, step)

    def prepare(self, p: Plan) -> None:
        """Encode every state the plan's Prepare steps name (a session keeps what it encoded)."""
        for step in p.steps:
            if isinstance(step, Prepare):
                self._prepare([p.states[name] for name in step.states])

    def _prepare(self, batches: Sequence[States]) -> None:
        """Encode every state the run will write, so the timed steps only diff and write."""
        for batch in batches:
            for name, st in batch.items():
                if name in self.net.sessions:
                    self.net.sessions[name].prepare(st)


class Reconfigurer:
    """Plans and runs the procedures on a Network and one OCS of its topology."""

    def __init__(self, net: Network, ocs: OcsDriver, ocs_name: str | None = None, mode: str = "ecmp",
                 spray: str = "random", events: EventLog | None = None, probe_timeout: float = 5.0,
                 drain_ms: float = 20.0, failover: bool = True, flowlet_gap_ms: float = FLOWLET_GAP_MS,
                 flowlet_hold_ms: float = FLOWLET_MAX_HOLD_MS) -> None:
        self.net = net
        self.ocs = ocs
        topo_ocs = net.topo.ocs_map()
        if not topo_ocs:
            raise ValueError(f"topology {net.topo.name!r}: has no OCS; expected one to reconfigure")
        self.ocs_name = ocs_name or next(iter(topo_ocs))
        if self.ocs_name not in topo_ocs:
            raise ValueError(f"OCS {self.ocs_name!r}: expected one of {sorted(topo_ocs)}")
        self.mode, self.spray = mode, spray
        # False: the states leave every port unwatched, so bbm's outage is not hidden by fast failover
        self.failover = failover
        self.events = events or net.events
        self.probe_timeout = check_wait("probe_timeout", probe_timeout)
        for name, ms in (("drain_ms", drain_ms), ("flowlet_gap_ms", flowlet_gap_ms),
                         ("flowlet_hold_ms", flowlet_hold_ms)):
            check_wait(name, ms, "ms")
        # after the flip to the shadow, packets already tagged version 0 are still on their way over
        # the old circuit; wait that long (>= the longest one-way path delay) before darkening it
        self.drain_ms = drain_ms
        # mbb's flip onto the new circuits is gradual (fabric.p4 flowlet_config: GAP, MAX_HOLD); every
        # flow has moved GAP + MAX_HOLD after the write, its last old-path packets drain_ms later
        self.flowlet_gap_ms, self.flowlet_hold_ms = flowlet_gap_ms, flowlet_hold_ms
        base = View(net.topo, self.ocs_name, ocs.size, mode, spray, failover)
        self.addresses, self.ingress, self.attach = base.addresses, base.ingress, base.attach

    def view(self, procedure: str = "mbb") -> View:
        """What planning needs of the network now: the synced states, the schema's profiles and features."""
        return View(self.net.topo, self.ocs_name, self.ocs.size, self.mode, self.spray, self.failover,
                    current=self.net.desired(), profiles=self._profiles(),
                    gradual=procedure == "mbb" and self._has_gradual(), switches=tuple(self.net.sessions))

    def states(self, circuits: Circuits) -> States:
        """tablegen's states for this OCS's circuits (other OCSes keep their default maps)."""
        return View(self.net.topo, self.ocs_name, self.ocs.size, self.mode, self.spray, self.failover).states(circuits)

    def plan(self, procedure: str, new: Circuits, old: Circuits, hold_s: float = 1.0,
             transforms: Sequence[Transform] = ()) -> Plan:
        """The plan of one run from `old` to `new` on this network as it is now."""
        return plan(procedure, old, new, self.view(procedure), hold_s=hold_s, drain_ms=self.drain_ms,
                    flowlet_ms=self.flowlet_gap_ms + self.flowlet_hold_ms, transforms=transforms)

    def prepare(self, procedure: str, new: Circuits, old: Circuits | None = None, hold_s: float = 1.0,
                transforms: Sequence[Transform] = (), events: EventLog | None = None) -> Plan:
        """Everything a run can do before its event: the plan, its setup written (this run's failover
        setting on the switches) and every state it writes encoded; `run_prepared` then only writes,
        commands and waits."""
        if procedure not in PROCEDURES:
            raise ValueError(f"procedure {procedure!r}: expected one of {PROCEDURES}")
        check_wait("hold_s", hold_s)  # before the first write (the setup), not when the hold sleeps
        old = circuits_from_ocs(self.ocs) if old is None else old
        p = self.plan(procedure, new, old, hold_s, transforms)
        ex = Executor(self.net, self.ocs, events or self.events)
        ex.setup(p)
        ex.prepare(p)
        return p

    def run(self, procedure: str, new: Circuits, old: Circuits | None = None, hold_s: float = 1.0,
            transforms: Sequence[Transform] = (), events: EventLog | None = None) -> Result:
        """Reconfigure the OCS from `old` (default: what it holds) to `new` with one procedure, planned
        and prepared at once (the run's time includes both)."""
        if procedure not in PROCEDURES:
            raise ValueError(f"procedure {procedure!r}: expected one of {PROCEDURES}")
        check_wait("hold_s", hold_s)  # before procedure-start is logged (prepare checks it too)
        ex = Executor(self.net, self.ocs, events or self.events, self.probe_timeout)
        old = circuits_from_ocs(self.ocs) if old is None else old
        res = ex.start(procedure, old, new, hold_s)
        try:
            p = self.prepare(procedure, new, old, hold_s, transforms, ex.events)
        except Exception as exc:
            ex.fail(res, "plan", exc)
        ex.steps(p, res)
        return ex.done(res)

    def run_prepared(self, p: Plan, events: EventLog | None = None) -> Result:
        """Run a plan made by `prepare`; planned again (and said so) if a switch was synced since."""
        ex = Executor(self.net, self.ocs, events or self.events, self.probe_timeout)
        res = ex.start(p.procedure, list(p.old), list(p.new), p.hold_s)
        desired = self.net.desired()
        stale = sorted(n for n, st in p.basis.items() if desired.get(n) is not st)
        if stale:
            ex.events.log("plan-stale", switches=stale)
            try:
                p = self.prepare(p.procedure, list(p.new), list(p.old), p.hold_s, p.transforms, ex.events)
            except Exception as exc:
                ex.fail(res, "plan", exc)
        ex.steps(p, res)
        return ex.done(res)

    def _has_gradual(self) -> bool:
        """Does the fabric program have `set_version_gradual` (older pipelines flip immediately)?"""
        sess = next(iter(self.net.sessions.values()), None)
        if sess is None:
            return False
        schema = sess.schema
        try:
            schema.table_action(schema.tables[PATH_VERSION], SET_VERSION_GRADUAL)
        except (ValueError, KeyError):
            log.warning("the fabric pipeline has no set_version_gradual: mbb flips immediately")
            return False
        return True

    def _profiles(self) -> dict[str, str]:
        """Table -> the action profile implementing it, from the fabric schema."""
        sess = next(iter(self.net.sessions.values()), None)
        if sess is None:
            return {}
        schema = sess.schema
        out = {}
        for t in schema.tables:
            prof = schema.table_profile(t)
            if prof is not None:
                out[t.preamble.name.rsplit(".", 1)[-1]] = prof.preamble.name.rsplit(".", 1)[-1]
        return out
