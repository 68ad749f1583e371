"""Reconfiguration procedures: bbm (thesis OST), mbb-timed (thesis MBB) and mbb (hitless).

mbb's two flips (old circuit -> electrical shadow, shadow -> new circuit) are flowlet-gated
(`set_version_gradual`, p4src/README.md): each flow moves at a flowlet boundary (a TCP flow once it
is drained, others at an idle gap), so packets on the shorter path never overtake the flow's own
packets on the longer one; the procedure then waits GAP + MAX_HOLD
(read from the switches' `flowlet_config`) + drain_ms before it darkens or rewrites what flows may
still be pinned to. mbb-timed and bbm flip immediately (the thesis's procedures).

Each step is an event in the EventLog (JSON lines, monotonic and wall clock). Every switch write is
a reconcile to a whole state, so each switch's desired state is always one that forwards: after a
fault the procedure stops, reports the step, and leaves traffic where the last completed step put it
(for mbb, on the electrical shadow paths), and the network watcher restores that state on a switch
that restarts.
"""

from __future__ import annotations

import ipaddress
import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from control.entities import TableEntry
from control.events import EventLog
from control.network import Network, generate_states
from control.ocs.driver import OcsDriver, duplex_pairs
from control.reconcile import Index
from control.state import SwitchState, affected_paths, forwarding_signature
from tablegen.schema import FLOWLET_GAP_US, FLOWLET_MAX_HOLD_US

log = logging.getLogger(__name__)

PROCEDURES = ("bbm", "mbb-timed", "mbb")

Circuits = list[tuple[int, int]]

# flowlet_config as tablegen writes it (p4src/README.md): a flow moves to a gradually set version once
# drained (TCP) or after an idle gap over GAP (other flows), or once the change has waited MAX_HOLD
FLOWLET_GAP_MS = FLOWLET_GAP_US / 1000
FLOWLET_MAX_HOLD_MS = FLOWLET_MAX_HOLD_US / 1000


class ProcedureError(Exception):
    """A procedure stopped at `step`; traffic stays on the path the last completed step set."""

    def __init__(self, step: str, cause: BaseException) -> None:
        super().__init__(f"step {step!r} failed: {cause}")
        self.step = step
        self.cause = cause


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


def with_gradual_versions(state: SwitchState, paths: Iterable[int]) -> SwitchState:
    """A copy whose `path_version` entries of `paths` move flows gradually (`set_version_gradual`)."""
    pids = {int(p) for p in paths}
    have = state.path_versions()
    st = state.with_versions({pid: have.get(pid, 0) for pid in pids})  # explicit entries for every path
    for e in st.entries:
        if e.table.rsplit(".", 1)[-1] == "path_version" and int(e.match["path_id"]) in pids:
            e.action = "set_version_gradual"
    return st


class Reconfigurer:
    """Runs the procedures on a Network and one OCS of its topology."""

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
        self.attach = {p.port: (p.switch, p.switch_port) for p in topo_ocs[self.ocs_name].ports}
        self.mode, self.spray = mode, spray
        # False: the states leave every port unwatched, so bbm's outage is not hidden by fast failover
        self.failover = failover
        self.events = events or net.events
        self.probe_timeout = probe_timeout
        # after the flip to the shadow, packets already tagged version 0 are still on their way over
        # the old circuit; wait that long (>= the longest one-way path delay) before darkening it
        self.drain_ms = drain_ms
        # mbb's flip onto the new circuits is gradual (fabric.p4 flowlet_config: GAP, MAX_HOLD); every
        # flow has moved GAP + MAX_HOLD after the write, its last old-path packets drain_ms later
        self.flowlet_gap_ms, self.flowlet_hold_ms = flowlet_gap_ms, flowlet_hold_ms
        hosts = net.topo.hosts
        self.addresses = [int(ipaddress.IPv4Address(h.address)) for h in hosts]
        self.ingress = sorted({lk.a for lk in net.topo.links if lk.b in net.topo.host_map()} |
                              {lk.b for lk in net.topo.links if lk.a in net.topo.host_map()})

    def states(self, circuits: Circuits) -> dict[str, SwitchState]:
        """tablegen's states for this OCS's circuits (other OCSes keep their default maps)."""
        return generate_states(self.net.topo, self.mode, self._map(circuits), self.spray, self.failover)

    def _map(self, circuits: Circuits) -> dict[str, Circuits]:
        out = {o.name: list(o.circuit_maps.get(o.default_map, [])) if o.default_map else []
               for o in self.net.topo.ocs}
        out[self.ocs_name] = [tuple(c) for c in circuits]
        return out

    def run(self, procedure: str, new: Circuits, old: Circuits | None = None, hold_s: float = 1.0) -> Result:
        """Reconfigure the OCS from `old` (default: what it holds) to `new` with one procedure."""
        if procedure not in PROCEDURES:
            raise ValueError(f"procedure {procedure!r}: expected one of {PROCEDURES}")
        old = circuits_from_ocs(self.ocs) if old is None else old
        self._ensure_failover(old)
        res = Result(procedure)
        t_start = time.monotonic()
        self.events.log("procedure-start", procedure=procedure, old=old, new=new, hold_s=hold_s)
        st_old, st_new = self.states(old), self.states(new)
        pairs = duplex_pairs(new, self.ocs.size)
        step = "plan"
        try:
            if procedure == "bbm":
                step = "prepare"
                self._timed(res, step, lambda: self._prepare(st_new), control=False)
                step = "ocs"
                self._timed(res, step, lambda: self.ocs.set_map(pairs), control=False)
                step = "routes"
                self._timed(res, step, lambda: self.net.sync(st_new, step="routes", trust_cache=True))
            else:
                peers_old, peers_new = self._peers(old), self._peers(new)
                profiles = self._profiles()
                affected_old = affected_paths(st_old, st_new, self.addresses, self.ingress, peers_old, peers_new,
                                              profiles)
                affected_new = affected_paths(st_new, st_old, self.addresses, self.ingress, peers_new, peers_old,
                                              profiles)
                res.affected = {s: sorted(p) for s, p in affected_new.items() if p}
                self._check_shadow(st_old, st_new)
                shadow = {s: st.with_versions(dict.fromkeys(affected_old.get(s, ()), 1))
                          for s, st in self._current(st_old).items()}
                mid = {s: st.with_versions(dict.fromkeys(affected_new.get(s, ()), 1)) for s, st in st_new.items()}
                # mbb moves flows at flowlet boundaries both ways: measured on ucd4, the old circuit
                # (through the OCS) is slower than the shadow, and the shadow slower than the new one
                flowlets = procedure == "mbb" and self._has_gradual()
                if flowlets:
                    shadow = {s: with_gradual_versions(st, affected_old.get(s, ())) for s, st in shadow.items()}
                gradual = {s: with_gradual_versions(st, affected_new.get(s, ())) for s, st in st_new.items()} \
                    if flowlets else st_new
                step = "prepare"
                self._timed(res, step, lambda: self._prepare(shadow, mid, gradual, st_new), control=False)
                step = "to-shadow"
                self._timed(res, step, lambda: self.net.sync(shadow, delete=False, step=step, trust_cache=True))
                # nothing may darken the old circuit while a flow can still be pinned to it
                step = "drain"
                self._timed(res, step, lambda: self._flowlet_hold(affected_old) if flowlets else
                            time.sleep(self.drain_ms / 1000), control=False)
                step = "ocs"
                self._timed(res, step, lambda: self.ocs.set_map(pairs), control=False)
                step = "ocs-mirrors"
                self._timed(res, step, lambda: self.ocs.wait_complete(), control=False)
                if procedure == "mbb-timed":
                    step = "hold"
                    self._timed(res, step, lambda: time.sleep(hold_s), control=False)
                    step = "new-paths"
                    self._timed(res, step, lambda: self.net.sync(mid, delete=False, step=step, trust_cache=True))
                else:
                    step = "new-paths"
                    self._timed(res, step, lambda: self.net.sync(mid, delete=False, step=step, trust_cache=True))
                    step = "probe"
                    self._timed(res, step, lambda: self._probe_new(old, new, res), control=False)
                if flowlets:
                    # Onto the (shorter) new circuit at flowlet boundaries, so no flow's packets overtake
                    # its own still on the shadow path; nothing the flows may still be pinned to (the
                    # shadow version, old paths) is rewritten or deleted until every flow has moved.
                    step = "flip"
                    self._timed(res, step, lambda: self.net.sync(gradual, delete=False, step=step,
                                                                 trust_cache=True))
                    step = "flowlet-hold"
                    self._timed(res, step, lambda: self._flowlet_hold(affected_new), control=False)
                    step = "settle"
                else:
                    step = "flip"
                self._timed(res, step, lambda: self.net.sync(st_new, step=step, trust_cache=True))
        except Exception as exc:
            self.events.log("procedure-error", procedure=procedure, step=step, error=str(exc))
            raise ProcedureError(step, exc) from exc
        res.total_ms = (time.monotonic() - t_start) * 1000
        self.events.log("procedure-done", procedure=procedure, total_ms=res.total_ms, control_ms=res.control_ms,
                        steps=res.steps, affected=res.affected)
        return res

    def _ensure_failover(self, old: Circuits) -> None:
        """Before a run: give every switch this run's failover setting (bbm's outage depends on it).

        A switch synced by this controller gets its liveness groups changed; one it never synced (a
        fresh `reconfigure` process) is reconciled, without deletions, to the old circuits' state.
        """
        have = self.net.desired()
        fix = {n: st.with_failover(self.failover) for n, st in have.items()}
        fix = {n: st for n, st in fix.items() if st != have[n]}
        unsynced = [n for n in self.net.sessions if n not in have]
        if unsynced:
            generated = self.states(old)
            fix.update({n: generated[n] for n in unsynced if n in generated})
        if fix:
            self.net.sync(fix, delete=False, step="failover-on" if self.failover else "failover-off",
                          trust_cache=True)

    def _peers(self, circuits: Circuits) -> dict[str, dict[int, str]]:
        """Switch -> port -> the switch it reaches, with these circuits lit."""
        from tablegen.fabric import Fabric

        fab = Fabric(self.net.topo, self._map(circuits))
        return {s: {port: peer.node for port, peer in ports.items()} for s, ports in fab.peers.items()}

    def _flowlet_hold(self, affected: dict[str, set[int]]) -> None:
        """Wait until every flow has left the old version: GAP + MAX_HOLD (the switches' flowlet_config,
        the largest over the flipped ingress switches), then drain_ms for its last old-path packets."""
        read: list[float] = []
        for name in sorted(s for s, paths in affected.items() if paths and s in self.net.sessions):
            try:
                got = self.net.sessions[name].client.read_entities(
                    [TableEntry("flowlet_config", default=True, action=None)])
                conf = next(e for e in got if isinstance(e, TableEntry) and e.default)
                read.append((int(conf.params["gap_us"]) + int(conf.params["max_hold_us"])) / 1000)
            except Exception as exc:  # noqa: BLE001 - an unreadable config: the defaults below
                log.warning("switch %s: flowlet_config unreadable (%s)", name, exc)
        wait_ms = max(read) if read else self.flowlet_gap_ms + self.flowlet_hold_ms
        self.events.log("flowlet-wait", ms=wait_ms + self.drain_ms)
        time.sleep((wait_ms + self.drain_ms) / 1000)

    def _has_gradual(self) -> bool:
        """Does the fabric program have `set_version_gradual` (older pipelines flip immediately)?"""
        sess = next(iter(self.net.sessions.values()), None)
        if sess is None:
            return False
        schema = sess.schema
        try:
            schema.table_action(schema.tables["path_version"], "set_version_gradual")
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

    def _prepare(self, *states: dict[str, SwitchState]) -> None:
        """Encode every state the run will write (memoised), so the timed steps only diff and write."""
        for batch in states:
            for name, st in batch.items():
                if name in self.net.sessions:
                    Index.of_state(self.net.sessions[name].schema, st)

    def _current(self, fallback: dict[str, SwitchState]) -> dict[str, SwitchState]:
        """What each switch was last synced to (the install), else the generated old state."""
        have = self.net.desired()
        return {n: have.get(n, st) for n, st in fallback.items()}

    def _check_shadow(self, old: dict[str, SwitchState], new: dict[str, SwitchState]) -> None:
        for s in old:
            for a in self.addresses:
                if s in new and forwarding_signature(old[s], a, 1, self._profiles()) != \
                        forwarding_signature(new[s], a, 1, self._profiles()):
                    raise ValueError(f"switch {s}: the shadow (version 1) path to {ipaddress.IPv4Address(a)} "
                                     "changes with the circuits; expected a shadow on electrical/static links")

    def _timed(self, res: Result, step: str, fn, control: bool = True) -> Any:
        t0 = time.monotonic()
        self.events.log("step-start", procedure=res.procedure, step=step)
        out = fn()
        ms = (time.monotonic() - t0) * 1000
        res.steps[step] = res.steps.get(step, 0.0) + ms
        if control:
            res.control_ms += ms
        self.events.log("step-done", procedure=res.procedure, step=step, ms=ms)
        return out

    def _probe_new(self, old: Circuits, new: Circuits, res: Result) -> None:
        added = [c for c in new if c not in old and tuple(reversed(c)) not in old]
        for a, b in added:
            for src, dst in ((self.attach[a], self.attach[b]), (self.attach[b], self.attach[a])):
                pr = self.net.probe(src, dst, timeout=self.probe_timeout)
                res.probes += pr.sent
                self.events.log("probe-ok", src=list(src), dst=list(dst), sent=pr.sent, rtt_ms=pr.rtt_ms)
