"""Experiment specs: one small YAML file per experiment (scripts/experiments/*.yaml).

A spec names the topology, the kind of experiment, the variants to compare (procedures or
forwarding modes, each optionally overriding rto_min, OCS options or the hold), the number of runs
and the timeline. Rates are the emulation's; `reference_rate_mbit` is the seed's, so every result
states its scale factor. Times (RTO, dark time, hold) are never scaled.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import yaml

from control.plan import PROCEDURES
from control.strategies import STRATEGIES
from emulation.links import check_rto_min, check_sysctl
from emulation.ocs.options import check_ocs_args
from fabric.contract import MODES
from scripts.bulk import Bulk
from topo import generators
from topo.validate import validate

KINDS = ("reconfiguration", "route-flip", "load-balancing", "schedule", "strategies")
GENERATORS = ("ucd4", "fattree", "leafspine")


@dataclass(slots=True)
class Stream:
    """One traffic stream: TCP (iperf3, rate 0 = unlimited) or sequence-numbered UDP."""

    src: str
    dst: str
    rate_mbit: float = 0.0
    proto: str = "tcp"
    role: str = "dynamic"  # the stream the metrics are about; "static" streams are reported alongside
    cc: str = "cubic"  # TCP congestion control of the sender's socket (the thesis: CUBIC)

    @property
    def saturating(self) -> bool:
        """Unlimited TCP: it fills its bottleneck queue until it drops, whatever the network does."""
        return self.proto == "tcp" and not self.rate_mbit


@dataclass(slots=True)
class Variant:
    """One arm of the comparison: what differs from the spec's defaults."""

    name: str
    procedure: str = "bbm"
    mode: str = "ecmp"
    rto_min: str | None = None
    ocs_args: list[str] = field(default_factory=list)
    hold_s: float = 1.0
    failover: bool = True  # False: no shadow paths in the tables (the thesis's switches; bbm only)
    initial_map: str | None = None  # circuit map before the event (default: the spec's, else the topology's)
    target_map: str | None = None  # circuit map after it (default: the spec's)
    sysctl: dict[str, str] = field(default_factory=dict)  # set in every host, e.g. net.ipv4.tcp_reordering
    mptcp_subflows: int = 0  # load balancing: 0 plain TCP; n >= 1 MPTCP sockets with n subflows (scripts/lb.py)
    strategy: str = "none"  # kind strategies: seed 003's use of the optical links (control.strategies)


@dataclass(slots=True)
class Workload:
    """Load-balancing flows (seed 004): classes of sizes, pairs running at once, rounds per run."""

    classes: dict[str, int] = field(default_factory=lambda: {"query": 131072, "short": 512000, "long": 26214400})
    pairs: int = 8
    concurrent: bool = True
    cc: str = "cubic"
    # "pairs": one client per server (seed 004's silent derangement); "noisy": `clients` clients each
    # fetching from `fan_in` servers at once (seed 004's 2 x 7-to-1 incast), all flows concurrent
    pattern: str = "pairs"
    clients: int = 2
    fan_in: int = 7


@dataclass(slots=True)
class Spec:
    """A whole experiment."""

    name: str
    kind: str
    description: str = ""
    topology: dict[str, Any] = field(default_factory=lambda: {"generator": "ucd4"})
    reference_rate_mbit: float | None = None
    variants: list[Variant] = field(default_factory=list)
    runs: int = 1
    duration_s: float = 20.0
    event_at_s: float = 10.0
    target_map: str = "reconfigured"
    initial_map: str | None = None
    streams: list[Stream] = field(default_factory=list)
    workload: Workload = field(default_factory=Workload)
    schedule: dict[str, Any] = field(default_factory=dict)
    bulk: Bulk = field(default_factory=Bulk)  # kind strategies: seed 003's bulk transfers (scripts.bulk)
    path: str = ""

    @property
    def link_rate_mbit(self) -> float:
        """The emulated link rate."""
        return float(self.topology.get("rate_mbit", 1000.0))

    @property
    def scale(self) -> float | None:
        """Emulated rate / the seed's rate (None when the spec names no reference)."""
        return self.link_rate_mbit / self.reference_rate_mbit if self.reference_rate_mbit else None


def _build(cls: type, data: Any, where: str) -> Any:
    if not isinstance(data, dict):
        raise ValueError(f"{where}: {data!r}; expected a mapping")
    names = {f.name for f in fields(cls)}
    unknown = sorted(set(data) - names)
    if unknown:
        raise ValueError(f"{where}: unknown keys {unknown}; expected some of {sorted(names)}")
    try:
        return cls(**data)
    except TypeError as exc:
        raise ValueError(f"{where}: {exc}") from None


def _variant(item: Any, kind: str, base: dict[str, Any], i: int) -> Variant:
    where = f"variants[{i}]"
    if isinstance(item, str):
        item = {"name": item, ("mode" if kind == "load-balancing" else "procedure"): item}
    v = _build(Variant, {**base, **item}, where)
    if v.procedure not in PROCEDURES:
        raise ValueError(f"{where}: procedure {v.procedure!r}; expected one of {PROCEDURES}")
    if not v.failover and v.procedure != "bbm":
        raise ValueError(f"{where}: failover false with {v.procedure!r}; expected bbm (the others move traffic "
                         "to the shadow paths)")
    if not isinstance(v.sysctl, dict):
        raise ValueError(f"{where}: sysctl {v.sysctl!r}; expected a mapping of net.* keys to numbers")
    for key, value in v.sysctl.items():
        try:
            check_sysctl(key, value)
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
    try:
        check_ocs_args(v.ocs_args)
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None
    if v.rto_min is not None:
        try:
            check_rto_min(v.rto_min)
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
    if v.mode not in MODES:
        raise ValueError(f"{where}: mode {v.mode!r}; expected one of {MODES}")
    if not isinstance(v.mptcp_subflows, int) or isinstance(v.mptcp_subflows, bool) or not 0 <= v.mptcp_subflows <= 8:
        raise ValueError(f"{where}: mptcp_subflows {v.mptcp_subflows!r}; expected 0 (TCP) or 1..8 subflows")
    if v.strategy not in STRATEGIES:
        raise ValueError(f"{where}: strategy {v.strategy!r}; expected one of {STRATEGIES}")
    if v.strategy != "none" and kind != "strategies":
        raise ValueError(f"{where}: strategy {v.strategy!r} with kind {kind!r}; expected kind strategies")
    if v.mptcp_subflows and kind != "load-balancing":
        raise ValueError(f"{where}: mptcp_subflows with kind {kind!r}; expected kind load-balancing")
    return v


def parse(data: Any, path: str = "<spec>") -> Spec:
    """A Spec from parsed YAML; ValueError names the bad key."""
    if not isinstance(data, dict):
        raise ValueError(f"{path}: {type(data).__name__}; expected a mapping at the top")
    data = dict(data)
    kind = data.get("kind")
    if kind not in KINDS:
        raise ValueError(f"{path}: kind {kind!r}; expected one of {KINDS}")
    defaults = data.pop("defaults", {}) or {}
    raw_variants = data.pop("variants", None) or [{"name": "default"}]
    streams = [_build(Stream, s, f"{path}: streams[{i}]") for i, s in enumerate(data.pop("streams", []) or [])]
    workload = _build(Workload, data.pop("workload", {}) or {}, f"{path}: workload")
    bulk = _build(Bulk, data.pop("bulk", {}) or {}, f"{path}: bulk")
    try:
        bulk.check()
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None
    if workload.pattern not in ("pairs", "noisy"):
        raise ValueError(f"{path}: workload.pattern {workload.pattern!r}; expected pairs or noisy")
    if workload.clients < 1 or workload.fan_in < 1:
        raise ValueError(f"{path}: workload clients {workload.clients} fan_in {workload.fan_in}; expected >= 1 each")
    spec = _build(Spec, data, path)
    spec = replace(spec, streams=streams, workload=workload, bulk=bulk, path=path,
                   variants=[_variant(v, kind, defaults, i) for i, v in enumerate(raw_variants)])
    names = [v.name for v in spec.variants]
    if len(set(names)) != len(names):
        raise ValueError(f"{path}: variant names {names}; expected each once")
    if spec.runs < 1:
        raise ValueError(f"{path}: runs {spec.runs}; expected >= 1")
    if spec.topology.get("generator") not in GENERATORS:
        raise ValueError(f"{path}: topology.generator {spec.topology.get('generator')!r}; expected one of {GENERATORS}")
    for s in spec.streams:
        if s.proto not in ("tcp", "udp"):
            raise ValueError(f"{path}: stream {s.src}->{s.dst} proto {s.proto!r}; expected tcp or udp")
    if kind in ("reconfiguration", "route-flip") and not spec.streams:
        raise ValueError(f"{path}: no streams; expected at least one for kind {kind}")
    if kind == "strategies" and "hybrid" not in spec.topology:
        raise ValueError(f"{path}: kind strategies without topology.hybrid; expected a hybrid leaf-spine")
    if kind in ("reconfiguration", "route-flip") and not 0 < spec.event_at_s < spec.duration_s:
        raise ValueError(f"{path}: event_at_s {spec.event_at_s}; expected inside (0, duration_s={spec.duration_s})")
    return spec


def load(path: str | Path) -> Spec:
    """Read and check one spec file."""
    p = Path(path)
    try:
        data = yaml.safe_load(p.read_text())
    except OSError as exc:
        raise ValueError(f"spec {str(p)!r}: {exc.strerror}; expected a readable YAML file") from None
    except yaml.YAMLError as exc:
        raise ValueError(f"spec {str(p)!r}: not YAML ({str(exc).splitlines()[0]})") from None
    return parse(data, str(p))


def shorten(spec: Spec, runs: int | None = None, duration_s: float | None = None,
            event_at_s: float | None = None) -> Spec:
    """A copy with fewer runs or a shorter timeline (the demo's and the tests' versions)."""
    return replace(spec, runs=runs or spec.runs, duration_s=duration_s or spec.duration_s,
                   event_at_s=event_at_s or spec.event_at_s)


def stretch(spec: Spec, factor: float | None) -> Spec:
    """A copy whose bulk transfers and SSE are `factor` times as long (kind strategies: the same rate,
    so completion times and the round robin's epochs stretch alike, seed 003 §3.1's scaling rule)."""
    if factor is None or factor == 1:
        return spec
    if isinstance(factor, bool) or not isinstance(factor, (int, float)) or not 0 < factor <= 100:
        raise ValueError(f"stretch {factor!r}: expected a factor above 0 and at most 100")
    if spec.kind != "strategies":
        raise ValueError(f"stretch with kind {spec.kind!r}: expected kind strategies (bulk transfers)")
    b = spec.bulk
    bulk = replace(b, mouse_bytes=max(1, round(b.mouse_bytes * factor)),
                   elephant_bytes=max(1, round(b.elephant_bytes * factor)), sse_s=b.sse_s * factor)
    return replace(spec, bulk=bulk.check())


def make_topology(spec: Spec) -> Any:
    """The topo.model.Topology the spec describes (topo.generators with its parameters)."""
    args = dict(spec.topology)
    gen = args.pop("generator")
    hybrid = args.pop("hybrid", None)
    queue = args.pop("switch_queue_pkts", None)
    topo = getattr(generators, gen)(**args)
    if hybrid is not None:
        generators.hybrid(topo, **(hybrid or {}))
    if queue is not None:
        topo.params["switch_queue_pkts"] = queue  # the emulation bounds every switch port's queue
    return validate(topo)
