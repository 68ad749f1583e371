"""Reconfiguration procedures as plans: the ordered steps of bbm, mbb-timed and mbb, without I/O or clock.

`plan(procedure, old, new, view)` computes the switch states a run writes (tablegen's states for the
old and new circuits, the electrical shadow, the gradual flip) and returns them with the steps that
write them, after the setup done before the event (this run's failover setting on the switches);
`control.procedures` performs them. Each step is a frozen value with a canonical line (`str(step)`),
so a procedure's order can be read and tested without a network:

    failover-off: sync s1,s2,s3,s4 -> old (keep)
    prepare: encode shadow, mid, gradual, new
    to-shadow: sync s1,s2,s3,s4 -> shadow (keep; versions s2 path 3 -> 1 gradual)
    drain: hold 328 ms (flowlet_config gap+max_hold of s2 + drain 20 ms)
    ocs: ocs set [(3,4),(2,5)]

Baselines are transforms (plan -> plan) passed to `plan`: `no_shadow` gives the thesis's switches
(no electrical shadow paths, so a dark port drops traffic). The thesis's timed hold H is mbb-timed's
`hold_s` option.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import ClassVar

from control.ocs.driver import duplex_pairs
from fabric.contract import (
    FLOWLET_CONFIG,
    FLOWLET_GAP_US,
    FLOWLET_MAX_HOLD_US,
    PATH_VERSION,
    SET_FLOWLET,
    SET_VERSION_GRADUAL,
    VERSIONED_TABLES,
)
from fabric.forwarding import Forwarding
from fabric.state import Peers, affected_paths, path_versions, with_failover, with_versions
from p4rt.schema import short_name
from p4rt.state import SwitchState
from tablegen.entries import generate_states
from tablegen.graph import Fabric
from topo.model import Topology

PROCEDURES = ("bbm", "mbb-timed", "mbb")

Circuits = list[tuple[int, int]]
States = dict[str, SwitchState]
Port = tuple[str, int]  # (switch, port)

# flowlet_config as tablegen writes it (p4src/README.md): a flow moves to a gradually set version once
# drained (TCP) or after an idle gap over GAP (other flows), or once the change has waited MAX_HOLD
FLOWLET_GAP_MS = FLOWLET_GAP_US / 1000
FLOWLET_MAX_HOLD_MS = FLOWLET_MAX_HOLD_US / 1000

# The longest wait a procedure takes in one step (the hold, the drain, a probe's timeout): an hour. NaN,
# a negative or an infinite one would fail only when the step sleeps, after the OCS has moved.
MAX_WAIT_S = 3600.0


def check_wait(name: str, value: object, unit: str = "s") -> float:
    """A wait in seconds or ms (`unit`), finite, from 0 to MAX_WAIT_S; ValueError naming it otherwise."""
    limit = MAX_WAIT_S * (1000 if unit == "ms" else 1)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= limit:  # NaN fails
        raise ValueError(f"{name} {value!r}: expected {'milliseconds' if unit == 'ms' else 'seconds'} from 0 "
                         f"to {limit:.0f}")
    return float(value)


def flowlet_wait_ms(state: SwitchState) -> float:
    """GAP + MAX_HOLD of a switch's flowlet_config as its state sets it (the program's default if not):
    every flow has left a gradually changed version that long after the write."""
    for d in state.defaults:
        if short_name(d.table) == FLOWLET_CONFIG and d.action == SET_FLOWLET:
            return (int(d.params["gap_us"]) + int(d.params["max_hold_us"])) / 1000
    return FLOWLET_GAP_MS + FLOWLET_MAX_HOLD_MS


def with_gradual_versions(state: SwitchState, paths: Iterable[int]) -> SwitchState:
    """A copy whose `path_version` entries of `paths` move flows gradually (`set_version_gradual`)."""
    pids = {int(p) for p in paths}
    have = path_versions(state)
    st = with_versions(state, {pid: have.get(pid, 0) for pid in pids})  # explicit entries for every path
    for e in st.entries:
        if short_name(e.table) == PATH_VERSION and int(e.match["path_id"]) in pids:
            e.action = SET_VERSION_GRADUAL
    return st


def without_shadow(state: SwitchState) -> SwitchState:
    """A copy whose version-1 (shadow) entries equal version 0: no fast failover to the bypass.

    The thesis's switches (PicOS/OpenFlow) had no shadow path; a dark optical port simply dropped
    traffic. bbm on these states is the thesis's OST; on the normal states fast failover rescues it.
    """
    st = state.copy()
    v0 = {(short_name(e.table), int(e.match["path_id"])): e for e in st.entries
          if short_name(e.table) in VERSIONED_TABLES and int(e.match.get("version", 0)) == 0}
    for e in st.entries:
        key = (short_name(e.table), int(e.match.get("path_id", -1)))
        if key[0] in VERSIONED_TABLES and int(e.match.get("version", 0)) == 1 and key in v0:
            src = v0[key]
            e.action, e.params = src.action, dict(src.params)
            e.member_id, e.group_id = src.member_id, src.group_id
    return st


# -- steps ------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PathVersions:
    """Paths of one switch that a synced state puts on one version (gradually or at once)."""

    switch: str
    paths: tuple[int, ...]
    version: int
    gradual: bool = False

    def __str__(self) -> str:
        return f"{self.switch} path {','.join(map(str, self.paths))} -> {self.version}" + \
            (" gradual" if self.gradual else "")


@dataclass(frozen=True, slots=True)
class Prepare:
    """Encode the named states before the timed steps (memoised), so those only diff and write."""

    states: tuple[str, ...]
    name: str = "prepare"
    control: ClassVar[bool] = False

    def __str__(self) -> str:
        return f"{self.name}: encode {', '.join(self.states)}"


@dataclass(frozen=True, slots=True)
class Sync:
    """Reconcile these switches to a named state of the plan (`delete=False` keeps what it lacks)."""

    name: str
    state: str
    switches: tuple[str, ...]
    delete: bool = True
    versions: tuple[PathVersions, ...] = ()
    control: ClassVar[bool] = True

    def __str__(self) -> str:
        notes = [] if self.delete else ["keep"]
        if self.versions:
            notes.append("versions " + "; ".join(map(str, self.versions)))
        tail = f" ({'; '.join(notes)})" if notes else ""
        return f"{self.name}: sync {','.join(self.switches)} -> {self.state}{tail}"


@dataclass(frozen=True, slots=True)
class SetCircuits:
    """Command the OCS to these duplex circuits (`pairs`: its one-way connections)."""

    circuits: tuple[tuple[int, int], ...]
    pairs: tuple[tuple[int, int], ...]
    name: str = "ocs"
    control: ClassVar[bool] = False

    def __str__(self) -> str:
        return f"{self.name}: ocs set [{','.join(f'({a},{b})' for a, b in self.circuits)}]"


@dataclass(frozen=True, slots=True)
class WaitLight:
    """Wait until the OCS reports every commanded connection complete (mirrors settled)."""

    ports: tuple[int, ...]
    name: str = "ocs-mirrors"
    control: ClassVar[bool] = False

    def __str__(self) -> str:
        return f"{self.name}: wait-light ports {','.join(map(str, self.ports))}"


@dataclass(frozen=True, slots=True)
class Probe:
    """Prove each new circuit in both directions: probes out of src until one comes in at dst."""

    links: tuple[tuple[Port, Port], ...]
    name: str = "probe"
    control: ClassVar[bool] = False

    def __str__(self) -> str:
        return f"{self.name}: probe " + ", ".join(f"{a[0]}:{a[1]} -> {b[0]}:{b[1]}" for a, b in self.links)


@dataclass(frozen=True, slots=True)
class Hold:
    """Wait a fixed time (mbb-timed's hold H, or the drain of packets still on the old path)."""

    name: str
    ms: float
    reason: str
    control: ClassVar[bool] = False

    def __str__(self) -> str:
        return f"{self.name}: hold {self.ms:g} ms ({self.reason})"


Step = Prepare | Sync | SetCircuits | WaitLight | Probe | Hold


@dataclass(frozen=True, slots=True)
class Plan:
    """The steps of one run and the named states its Sync and Prepare steps refer to."""

    procedure: str
    old: tuple[tuple[int, int], ...]
    new: tuple[tuple[int, int], ...]
    steps: tuple[Step, ...]
    states: dict[str, States] = field(default_factory=dict)
    affected: dict[str, list[int]] = field(default_factory=dict)  # ingress switch -> paths it flips
    basis: States = field(default_factory=dict)  # what the switches were synced to when it was planned
    hold_s: float = 1.0  # with `transforms`, what it was planned with (to plan it again)
    transforms: tuple[Transform, ...] = ()
    # done when the run is prepared, before its event and its timings: this run's failover setting
    setup: tuple[Sync, ...] = ()

    def lines(self) -> list[str]:
        """The canonical line of every step, in order, the setup's first."""
        return [str(s) for s in (*self.setup, *self.steps)]

    def left(self, failed: int) -> str:
        """What the network holds when step `failed` (an index of `steps`) failed after those before it."""
        step, done = self.steps[failed], self.steps[:failed]
        if isinstance(step, SetCircuits):
            ocs = "the OCS on the old circuits or part-way to the new ones"
        elif any(isinstance(s, SetCircuits) for s in done):
            ocs = f"the OCS on the new circuits {list(self.new)}"
        else:
            ocs = f"the OCS on the old circuits {list(self.old)}"
        syncs = [s for s in done if isinstance(s, Sync)]
        routes = _ROUTES[syncs[-1].state.removesuffix(NO_SHADOW)] if syncs else "the routes unchanged"
        if isinstance(step, Sync):
            routes += f" (the switches of {step.name!r} may hold its state in part)"
        return f"{ocs}, {routes}"


# what a plan's named states put traffic on (Plan.left)
_ROUTES = {"shadow": "the affected routes on their electrical shadow paths",
           "mid": "the new circuits' paths installed and the affected routes still on their shadow paths",
           "gradual": "the affected routes moving onto the new circuits at flowlet boundaries",
           "new": "the routes of the new circuits"}
NO_SHADOW = "-no-shadow"  # the suffix no_shadow gives the states it rewrites


Transform = Callable[[Plan], Plan]


def no_shadow(p: Plan) -> Plan:
    """The thesis's switches: every state without electrical shadow paths (bbm only; the others need them)."""
    if p.procedure != "bbm":
        raise ValueError(f"no_shadow with procedure {p.procedure!r}: expected bbm (the others move traffic "
                         "to the shadow paths)")
    name = {k: f"{k}{NO_SHADOW}" for k in p.states}
    steps = tuple(replace(s, states=tuple(name[k] for k in s.states)) if isinstance(s, Prepare) else
                  replace(s, state=name[s.state]) if isinstance(s, Sync) else s for s in p.steps)
    states = {name[k]: {n: without_shadow(st) for n, st in sts.items()} for k, sts in p.states.items()}
    return replace(p, steps=steps, states=states)


# -- what planning knows of the network ---------------------------------------------------------------------


@dataclass(slots=True)
class View:
    """The network as planning sees it: topology, table mode, what the switches hold, the pipeline's features."""

    topo: Topology
    ocs_name: str
    ocs_size: int
    mode: str = "ecmp"
    spray: str = "random"
    failover: bool = True  # False: no port_liveness member watches its port
    current: States = field(default_factory=dict)  # what each switch was last synced to
    profiles: dict[str, str] | None = None  # table -> action profile (None: fabric.state's default)
    gradual: bool = True  # the pipeline has set_version_gradual
    switches: tuple[str, ...] | None = None  # the switches the controller writes (None: every fabric switch)

    def circuit_map(self, circuits: Circuits) -> dict[str, Circuits]:
        """Every OCS's circuits: these for ours, the default map for the others."""
        out = {o.name: list(o.circuit_maps.get(o.default_map, [])) if o.default_map else [] for o in self.topo.ocs}
        out[self.ocs_name] = [tuple(c) for c in circuits]
        return out

    def states(self, circuits: Circuits) -> States:
        """tablegen's states for this OCS's circuits (other OCSes keep their default maps)."""
        return generate_states(self.topo, self.mode, self.circuit_map(circuits), self.spray, self.failover)

    def peers(self, circuits: Circuits) -> Peers:
        """Switch -> port -> the switch it reaches, with these circuits lit."""
        fab = Fabric(self.topo, self.circuit_map(circuits))
        return {s: {port: peer.node for port, peer in ports.items()} for s, ports in fab.peers.items()}

    @property
    def addresses(self) -> list[int]:
        """Every host address (the destinations whose forwarding a change may move)."""
        return [int(ipaddress.IPv4Address(h.address)) for h in self.topo.hosts]

    @property
    def ingress(self) -> list[str]:
        """The switches hosts attach to (where versions are set)."""
        hosts = self.topo.host_map()
        return sorted({lk.a for lk in self.topo.links if lk.b in hosts} |
                      {lk.b for lk in self.topo.links if lk.a in hosts})

    @property
    def attach(self) -> dict[int, Port]:
        """OCS port -> the (switch, port) its fibre reaches."""
        return {p.port: (p.switch, p.switch_port) for p in self.topo.ocs_map()[self.ocs_name].ports}


# -- planning -----------------------------------------------------------------------------------------------


def _versions(states: States, paths: dict[str, set[int]]) -> tuple[PathVersions, ...]:
    """What these states do with these paths: grouped per switch, version and gradual."""
    out = []
    for sw in sorted(states):
        pids = paths.get(sw, set())
        if not pids:
            continue
        acts = {int(e.match["path_id"]): (int(e.params["version"]), e.action == SET_VERSION_GRADUAL)
                for e in states[sw].entries if short_name(e.table) == PATH_VERSION}
        groups: dict[tuple[int, bool], list[int]] = {}
        for pid in sorted(pids):
            groups.setdefault(acts.get(pid, (0, False)), []).append(pid)
        out += [PathVersions(sw, tuple(p), v, g) for (v, g), p in sorted(groups.items())]
    return tuple(out)


def check_shadow(old: States, new: States, addresses: Sequence[int], profiles: dict[str, str] | None) -> None:
    """Raise ValueError when a shadow (version 1) path changes with the circuits (it must be electrical)."""
    for s in old:
        if s not in new:
            continue
        before, after = Forwarding(old[s], profiles), Forwarding(new[s], profiles)
        for a in addresses:
            if before.signature(a, 1) != after.signature(a, 1):
                raise ValueError(f"switch {s}: the shadow (version 1) path to {ipaddress.IPv4Address(a)} "
                                 "changes with the circuits; expected a shadow on electrical/static links")


def new_links(old: Circuits, new: Circuits, attach: dict[int, Port]) -> tuple[tuple[Port, Port], ...]:
    """Both directions of every circuit in `new` that `old` lacks, as (switch, port) pairs."""
    added = [c for c in new if c not in old and tuple(reversed(c)) not in old]
    return tuple(d for a, b in added for d in ((attach[a], attach[b]), (attach[b], attach[a])))


def failover_setting(view: View, old: States) -> States:
    """What gives every switch this run's failover setting (bbm's outage depends on it): a synced switch
    its state with the liveness groups changed, one never synced (a fresh controller) the old circuits'
    state, to be written without deletions; switches that have the setting are left out."""
    names = view.switches if view.switches is not None else tuple(old)
    out = {n: with_failover(st, view.failover) for n, st in view.current.items()}
    out = {n: st for n, st in out.items() if st != view.current[n]}
    out.update({n: old[n] for n in names if n not in view.current and n in old})
    return out


def plan(procedure: str, old: Circuits, new: Circuits, view: View, hold_s: float = 1.0, drain_ms: float = 20.0,
         flowlet_ms: float = FLOWLET_GAP_MS + FLOWLET_MAX_HOLD_MS, transforms: Sequence[Transform] = ()) -> Plan:
    """The steps reconfiguring the OCS from `old` to `new` with one procedure, then each transform applied;
    the setup (`failover_setting`, not transformed) comes before them."""
    if procedure not in PROCEDURES:
        raise ValueError(f"procedure {procedure!r}: expected one of {PROCEDURES}")
    check_wait("hold_s", hold_s)
    check_wait("drain_ms", drain_ms, "ms")
    check_wait("flowlet_ms", flowlet_ms, "ms")
    old, new = [tuple(c) for c in old], [tuple(c) for c in new]
    st_old, st_new = view.states(old), view.states(new)
    setting = failover_setting(view, st_old)
    view = replace(view, current={**view.current, **setting})  # what the switches hold after the setup
    ocs_set = SetCircuits(tuple(new), tuple(duplex_pairs(new, view.ocs_size)))
    if procedure == "bbm":
        out = Plan(procedure, tuple(old), tuple(new), (
            Prepare(("new",)),
            ocs_set,
            Sync("routes", "new", tuple(st_new)),
        ), {"new": st_new})
    else:
        out = _plan_mbb(procedure, old, new, st_old, st_new, ocs_set, view, hold_s, drain_ms, flowlet_ms)
    for t in transforms:
        out = t(out)
    if setting:
        name = "failover-on" if view.failover else "failover-off"
        out = replace(out, setup=(Sync(name, "old", tuple(sorted(setting)), delete=False),),
                      states={**out.states, "old": setting})
    return replace(out, basis=dict(view.current), hold_s=hold_s, transforms=tuple(transforms))


def _plan_mbb(procedure: str, old: Circuits, new: Circuits, st_old: States, st_new: States, ocs_set: SetCircuits,
              view: View, hold_s: float, drain_ms: float, flowlet_ms: float) -> Plan:
    """mbb-timed and mbb: shadow, drain, OCS, (hold | new paths and probes), flip, clean up."""
    peers_old, peers_new = view.peers(old), view.peers(new)
    addresses, ingress = view.addresses, view.ingress
    affected_old = affected_paths(st_old, st_new, addresses, ingress, peers_old, peers_new, view.profiles)
    affected_new = affected_paths(st_new, st_old, addresses, ingress, peers_new, peers_old, view.profiles)
    check_shadow(st_old, st_new, addresses, view.profiles)
    current = {n: view.current.get(n, st) for n, st in st_old.items()}  # the install, else the generated old
    shadow = {s: with_versions(st, dict.fromkeys(affected_old.get(s, ()), 1)) for s, st in current.items()}
    mid = {s: with_versions(st, dict.fromkeys(affected_new.get(s, ()), 1)) for s, st in st_new.items()}
    # mbb moves flows at flowlet boundaries both ways: measured on ucd4, the old circuit (through the
    # OCS) is slower than the shadow, and the shadow slower than the new one
    flowlets = procedure == "mbb" and view.gradual
    if flowlets:
        shadow = {s: with_gradual_versions(st, affected_old.get(s, ())) for s, st in shadow.items()}
    gradual = {s: with_gradual_versions(st, affected_new.get(s, ())) for s, st in st_new.items()} \
        if flowlets else st_new

    def flowlet_hold(name: str, affected: dict[str, set[int]]) -> Hold:
        chosen = sorted(s for s, paths in affected.items() if paths)
        wait = max((flowlet_wait_ms(current[s]) for s in chosen if s in current), default=flowlet_ms)
        return Hold(name, wait + drain_ms, f"flowlet_config gap+max_hold of {','.join(chosen) or '-'} "
                    f"+ drain {drain_ms:g} ms")

    steps: list[Step] = [
        Prepare(("shadow", "mid", "gradual", "new") if flowlets else ("shadow", "mid", "new")),
        Sync("to-shadow", "shadow", tuple(shadow), delete=False, versions=_versions(shadow, affected_old)),
        # nothing may darken the old circuit while a flow can still be pinned to it
        flowlet_hold("drain", affected_old) if flowlets else Hold("drain", drain_ms, "drain"),
        ocs_set,
        WaitLight(tuple(sorted({p for c in new for p in c}))),
    ]
    to_mid = Sync("new-paths", "mid", tuple(mid), delete=False, versions=_versions(mid, affected_new))
    if procedure == "mbb-timed":
        steps += [Hold("hold", hold_s * 1000, "mbb-timed"), to_mid]
    else:
        steps += [to_mid, Probe(new_links(old, new, view.attach))]
    if flowlets:
        # Onto the (shorter) new circuit at flowlet boundaries, so no flow's packets overtake its own
        # still on the shadow path; nothing the flows may still be pinned to (the shadow version, old
        # paths) is rewritten or deleted until every flow has moved.
        steps += [Sync("flip", "gradual", tuple(gradual), delete=False, versions=_versions(gradual, affected_new)),
                  flowlet_hold("flowlet-hold", affected_new),
                  Sync("settle", "new", tuple(st_new), versions=_versions(st_new, affected_new))]
    else:
        steps.append(Sync("flip", "new", tuple(st_new), versions=_versions(st_new, affected_new)))
    states = {"shadow": shadow, "mid": mid, "new": st_new}
    if flowlets:
        states["gradual"] = gradual
    return Plan(procedure, tuple(old), tuple(new), tuple(steps), states,
                {s: sorted(p) for s, p in affected_new.items() if p})
