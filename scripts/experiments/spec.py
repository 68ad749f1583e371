"""Experiment specs: one small YAML file per experiment (scripts/experiments/*.yaml).

A spec names the topology, the kind of experiment, the variants to compare (procedures or
forwarding modes, each optionally overriding rto_min, OCS options or the hold), the number of runs
and the timeline. Rates are the emulation's; `reference_rate_mbit` is the seed's, so every result
states its scale factor. Times (RTO, dark time, hold) are never scaled.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import Field, TypeAdapter, with_config
from typing_extensions import TypedDict  # pydantic reads typing.TypedDict only from Python 3.12

from control.plan import MAX_WAIT_S, PROCEDURES
from control.strategies import STRATEGIES
from emulation.holdloop import HOLD_PASSES_PER_S, tbf_args
from emulation.links import check_rto_min, check_sysctl
from emulation.ocs.options import check_ocs_args
from fabric.contract import MODES
from scripts.experiments.bulk import Bulk
from scripts.experiments.schema import (
    FORBID_EXTRA,
    Bool,
    Count,
    Name,
    NonNegative,
    Positive,
    Str,
    call_checked,
    checked,
)
from topo import generators
from topo.circuits import ocs_circuits
from topo.validate import validate

KINDS = ("reconfiguration", "route-flip", "load-balancing", "schedule", "strategies", "reservation", "alltoall")
GENERATORS = ("ucd4", "fattree", "leafspine", "ocscore")
# kind reservation: seed 001's variants: the reservation loop in the data plane (two-way, one-way), driven by
# the controller (the same schedulers, for a switch that only P4Runtime can program), or the electrical fabric
RESERVATIONS = ("two-way", "one-way", "two-way-controller", "one-way-controller", "electrical")
GATINGS = ("blind", "ungated", "gated", "electrical")  # kind alltoall: seed 002's ToRs (schedule_alltoall.py)
MAX_SPEC_BYTES = 1 << 20  # a spec is a page of YAML
MAX_RUNS = 10_000
MAX_DURATION_S = 86_400.0  # a day
MAX_RATE_MBIT = 1e6

Seconds = Annotated[float, Field(gt=0, le=MAX_DURATION_S, allow_inf_nan=False, strict=True)]
Rate = Annotated[float, Field(ge=0, le=MAX_RATE_MBIT, allow_inf_nan=False, strict=True)]
Algorithm = Annotated[str, Field(pattern=r"^[a-z0-9_]{1,16}$", strict=True)]  # a TCP congestion control


@with_config(FORBID_EXTRA)
@dataclass(slots=True)
class Stream:
    """One traffic stream: TCP (iperf3, rate 0 = unlimited) or sequence-numbered UDP."""

    src: Str
    dst: Str
    rate_mbit: Rate = 0.0
    proto: Literal["tcp", "udp"] = "tcp"
    role: Literal["dynamic", "static"] = "dynamic"  # the stream the metrics are about; "static" ones alongside
    cc: Algorithm = "cubic"  # TCP congestion control of the sender's socket (the thesis: CUBIC)

    @property
    def saturating(self) -> bool:
        """Unlimited TCP: it fills its bottleneck queue until it drops, whatever the network does."""
        return self.proto == "tcp" and not self.rate_mbit


@with_config(FORBID_EXTRA)
@dataclass(slots=True)
class Variant:
    """One arm of the comparison: what differs from the spec's defaults."""

    name: Name
    procedure: Literal[PROCEDURES] = "bbm"  # type: ignore[valid-type]
    mode: Literal[MODES] = "ecmp"  # type: ignore[valid-type]
    rto_min: Str | None = None
    ocs_args: list[Str] = field(default_factory=list)  # ocs-emulator options (emulation.ocs.options)
    hold_s: Annotated[float, Field(ge=0, le=MAX_WAIT_S, allow_inf_nan=False, strict=True)] = 1.0
    failover: Bool = True  # False: no shadow paths in the tables (the thesis's switches; bbm only)
    initial_map: Str | None = None  # circuit map before the event (default: the spec's, else the topology's)
    target_map: Str | None = None  # circuit map after it (default: the spec's)
    sysctl: dict[Str, Any] = field(default_factory=dict)  # every host's, e.g. net.ipv4.tcp_reordering (check_sysctl)
    mptcp_subflows: Annotated[int, Field(ge=0, le=8, strict=True)] = 0  # load balancing: 0 TCP; n MPTCP subflows
    strategy: Literal[STRATEGIES] = "none"  # type: ignore[valid-type]  # kind strategies (control.strategies)
    # kind reservation: how the optical core is reserved (two-way, one-way, or no OCS: the electrical
    # spine) and the workload's TDC (each ToR's host sends to the hosts of the next `tdc` ToRs)
    reservation: Literal[RESERVATIONS] | None = None  # type: ignore[valid-type]
    tdc: Annotated[int, Field(ge=1, le=255, strict=True)] | None = None
    gating: Literal[GATINGS] | None = None  # type: ignore[valid-type]  # kind alltoall: what the ToRs do
    topology: dict[Str, Any] | None = None  # a fabric of the variant's own instead of the spec's (same keys)


@with_config(FORBID_EXTRA)
@dataclass(slots=True)
class Workload:
    """Load-balancing flows (seed 004): classes of sizes, pairs running at once, rounds per run."""

    classes: dict[Str, Count] = field(default_factory=lambda: {"query": 131072, "short": 512000, "long": 26214400})
    pairs: Count = 8
    concurrent: Bool = True
    cc: Algorithm = "cubic"
    # "pairs": one client per server (seed 004's silent derangement); "noisy": `clients` clients each
    # fetching from `fan_in` servers at once (seed 004's 2 x 7-to-1 incast), all flows concurrent
    pattern: Literal["pairs", "noisy"] = "pairs"
    clients: Count = 2
    fan_in: Count = 7


Micros = Annotated[int, Field(ge=0, le=10_000_000, strict=True)]


@with_config(FORBID_EXTRA)
@dataclass(slots=True)
class Reservation:
    """Kind reservation (seed 001): the flows, the calendar, the reservation controller and the ToRs'
    holds; the paper's microseconds are milliseconds here (scripts/experiments/seed001.py)."""

    flow_kb: Count = 128  # bytes each flow sends (KB)
    flows_per_pair: Annotated[int, Field(ge=1, le=64, strict=True)] = 1
    # every server's flows in all, split evenly over its TDC destination racks (the paper: 40 at every
    # TDC); when set, each pair carries flows_per_server / TDC flows instead of flows_per_pair
    flows_per_server: Annotated[int, Field(ge=1, le=64, strict=True)] | None = None
    slot_ms: Positive = 10.0
    night_ms: NonNegative = 1.0  # T_sw
    proc_ms: NonNegative = 10.0  # T_proc = T_oh
    cycle_slots: Annotated[int, Field(ge=2, le=1024, strict=True)] = 300  # a guarded ToR: 3 phase ranges a slot
    guard_ms: NonNegative = 0.0  # T_guard: slack added to each window
    poll_ms: Positive = 10.0  # the controller reads each ToR's holds this often
    burst_kb: Count = 50  # largest burst granted at once
    assembly_ms: NonNegative | None = None  # how long a VOQ assembles before it asks (default slot_ms)
    burst_growth: NonNegative = 0.0  # a window's extra bytes per byte a second the path grows
    max_hold_ms: Count = 1500
    depth: Count = 48  # hold depth per path (the VOQ)
    # each ToR's hold loop, passes a second (emulation/holdloop.py): a quarter of the emulation's default,
    # since a ToR here holds all its traffic, and 4 ToRs' loops at 4000 under SCHED_FIFO switches took
    # the CPU from the hosts (bmv2, TDC 3 two-way: 4 of 12 flows done in 40 s against 12 of 12 in 6.6 s)
    hold_passes: Count = 1000
    before_us: Micros = 3000  # the ToR's guard before each night
    after_us: Micros | None = None  # ... after it (default: the ToR's and the OCS's clock error bounds)
    fresh_us: Micros | None = None  # a lit decision older than this at egress goes round again
    audit_every: Annotated[int, Field(ge=0, strict=True)] = 20  # read the OCS's slot_circuit back every N rounds
    # the loop in the data plane (scripts/experiments/seed001_loop.py): a request unanswered this long is asked
    # again (default two slots), and the slots a grant's trip adds beyond the next slot boundary
    loop_retry_ms: Positive | None = None
    loop_trip_slots: Annotated[int, Field(ge=0, le=16, strict=True)] = 0
    sample_s: Positive = 0.2  # ss sampling period

    def check(self) -> Reservation:
        """The rules across fields; ValueError naming the first that fails."""
        if self.slot_ms * 1000 - self.night_ms * 1000 - self.before_us - (self.after_us or 0) < 1:
            raise ValueError(f"reservation.slot_ms {self.slot_ms}: its day less the guards (before_us "
                             f"{self.before_us}, after_us {self.after_us}) leaves a ToR no time to send")
        tbf_args(self.hold_passes)
        return self


Rate_pps = Annotated[float, Field(gt=0, le=1e6, allow_inf_nan=False, strict=True)]


@with_config(FORBID_EXTRA)
@dataclass(slots=True)
class Alltoall:
    """Kind alltoall (seed 002): every host's traffic to every other over the OCS's time-flow schedule
    (scripts/experiments/schedule_alltoall.py); `duration_s` is how long the senders send."""

    proto: Literal["udp", "tcp"] = "udp"  # udp: paced datagrams (loss, dark drops); tcp: iperf3 (goodput)
    pps: Rate_pps = 50.0  # datagrams a second of each of the N(N-1) streams
    hot_pps: Rate_pps | None = None  # ... of the two between ToR 1's and ToR 2's hosts (default pps)
    size: Annotated[int, Field(ge=1, le=1472, strict=True)] = 64  # UDP payload of each datagram
    schedule: Literal["round-robin", "largest-first"] = "round-robin"  # the OCS's cycle (control/demand.py)
    day_ms: Positive = 10.0
    night_ms: NonNegative = 1.0
    before_us: Micros = 2000  # gated: the ToR's guard before each night
    after_us: Micros | None = None  # ... after it (default: the ToR's and the OCS's clock error bounds)
    depth: Count = 64  # hold depth per destination ToR
    hold_passes: Count = HOLD_PASSES_PER_S

    def check(self) -> Alltoall:
        """The rules across fields; ValueError naming the first that fails."""
        tbf_args(self.hold_passes)
        return self


@with_config(FORBID_EXTRA)
class Schedule(TypedDict, total=False):
    """Kind schedule: the OCS's round robin (slots, day and night) and the UDP probe stream's rate."""

    slots: list[Count]
    day_ms: Positive
    night_ms: NonNegative
    pps: Annotated[float, Field(gt=0, le=1e6, allow_inf_nan=False, strict=True)]
    gap_ms: NonNegative


@with_config(FORBID_EXTRA)
@dataclass(slots=True)
class Spec:
    """A whole experiment."""

    name: Name
    kind: Literal[KINDS]  # type: ignore[valid-type]
    description: Str = ""
    topology: dict[Str, Any] = field(default_factory=lambda: {"generator": "ucd4"})  # make_topology checks it
    reference_rate_mbit: Annotated[float, Field(gt=0, le=MAX_RATE_MBIT, allow_inf_nan=False, strict=True)] | None = None
    variants: list[Variant] = field(default_factory=list)
    runs: Annotated[int, Field(ge=1, le=MAX_RUNS, strict=True)] = 1
    duration_s: Seconds = 20.0
    event_at_s: Seconds = 10.0
    target_map: Str = "reconfigured"
    initial_map: Str | None = None
    streams: list[Stream] = field(default_factory=list)
    workload: Workload = field(default_factory=Workload)
    schedule: Schedule = field(default_factory=dict)  # type: ignore[assignment]
    bulk: Bulk = field(default_factory=Bulk)  # kind strategies: seed 003's bulk transfers (scripts.experiments.bulk)
    reservation: Reservation = field(default_factory=Reservation)
    alltoall: Alltoall = field(default_factory=Alltoall)
    path: Str = ""

    @property
    def link_rate_mbit(self) -> float:
        """The emulated link rate."""
        return float(self.topology.get("rate_mbit", 1000.0))

    @property
    def scale(self) -> float | None:
        """Emulated rate / the seed's rate (None when the spec names no reference)."""
        return self.link_rate_mbit / self.reference_rate_mbit if self.reference_rate_mbit else None


_SPEC = TypeAdapter(Spec)


def _variants(raw: Any, kind: str, defaults: Any, path: str) -> list[Any]:
    """The variants as mappings: a bare name is a procedure (a mode for load balancing); the defaults under each."""
    if not isinstance(defaults, dict):
        raise ValueError(f"{path}: defaults {defaults!r:.60}: expected a mapping of variant keys")
    if not isinstance(raw, list):
        raise ValueError(f"{path}: variants {raw!r:.60}: expected a list of names or mappings")
    out = []
    for i, item in enumerate(raw):
        if isinstance(item, str):
            key = {"load-balancing": "mode", "reservation": "reservation", "alltoall": "gating"}.get(kind, "procedure")
            item = {"name": item, key: item}
        if not isinstance(item, dict):
            raise ValueError(f"{path}: variants[{i}] {item!r:.60}: expected a name or a mapping")
        out.append({**defaults, **item})
    return out


def parse(data: Any, path: str = "<spec>") -> Spec:
    """A Spec from parsed YAML; ValueError of one line naming the bad key and value."""
    if not isinstance(data, dict):
        raise ValueError(f"{path}: {type(data).__name__}; expected a mapping at the top")
    data = dict(data)
    kind = data.get("kind")
    if kind not in KINDS:
        raise ValueError(f"{path}: kind {kind!r:.60}; expected one of {KINDS}")
    variants = _variants(data.pop("variants", None) or [{"name": "default"}], kind, data.pop("defaults", None) or {},
                         path)
    return _checked({**data, "variants": variants, "path": path})


def _checked(data: dict[str, Any]) -> Spec:
    """The schema (types, ranges, names, unknown keys), then the rules across fields."""
    path = str(data.get("path") or "<spec>")
    spec = checked(_SPEC, data, path)
    for i, v in enumerate(spec.variants):
        _check_variant(v, spec.kind, f"{path}: variants[{i}]")
    names = [v.name for v in spec.variants]
    if len(set(names)) != len(names):
        raise ValueError(f"{path}: variant names {names}; expected each once")
    try:
        spec.bulk.check()
        spec.reservation.check()
        spec.alltoall.check()
        if spec.kind == "schedule":
            for v in spec.variants:
                check_ocs_args(schedule_ocs_args(spec) + v.ocs_args)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None
    if spec.kind in ("reconfiguration", "route-flip") and not spec.streams:
        raise ValueError(f"{path}: no streams; expected at least one for kind {spec.kind}")
    if spec.kind == "strategies" and "hybrid" not in spec.topology:
        raise ValueError(f"{path}: kind strategies without topology.hybrid; expected a hybrid leaf-spine")
    if spec.kind in ("reconfiguration", "route-flip") and not spec.event_at_s < spec.duration_s:
        raise ValueError(f"{path}: event_at_s {spec.event_at_s}; expected inside (0, duration_s={spec.duration_s})")
    _check_topology(spec, make_topology(spec))
    for v in spec.variants:
        if v.topology is not None:
            make_topology(spec, v)
    return spec


def _check_variant(v: Variant, kind: str, where: str) -> None:
    """A variant's rules beyond its types: options that reach commands, and what goes with what."""
    if not v.failover and v.procedure != "bbm":
        raise ValueError(f"{where}: failover false with {v.procedure!r}; expected bbm (the others move traffic "
                         "to the shadow paths)")
    try:
        for key, value in v.sysctl.items():
            check_sysctl(key, value)
        check_ocs_args(v.ocs_args)
        if v.rto_min is not None:
            check_rto_min(v.rto_min)
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None
    if v.strategy != "none" and kind != "strategies":
        raise ValueError(f"{where}: strategy {v.strategy!r} with kind {kind!r}; expected kind strategies")
    if v.mptcp_subflows and kind != "load-balancing":
        raise ValueError(f"{where}: mptcp_subflows with kind {kind!r}; expected kind load-balancing")
    given = (v.reservation is not None, v.tdc is not None)
    if given != ((True, True) if kind == "reservation" else (False, False)):
        raise ValueError(f"{where}: reservation {v.reservation!r}, tdc {v.tdc!r} with kind {kind!r}; expected both "
                         "with kind reservation and neither with another")
    if (v.gating is not None) != (kind == "alltoall"):
        raise ValueError(f"{where}: gating {v.gating!r} with kind {kind!r}; expected one with kind alltoall, "
                         "else none")


def _check_topology(spec: Spec, topo: Any) -> None:
    """Streams between hosts of the topology; circuit maps its OCS has (a map name, none, pairs, a file)."""
    hosts = {h.name for h in topo.hosts}
    for i, s in enumerate(spec.streams):
        for end in (s.src, s.dst):
            if end not in hosts:
                raise ValueError(f"{spec.path}: streams[{i}] host {end!r}: expected one of the topology's "
                                 f"{len(hosts)} hosts ({', '.join(sorted(hosts)[:6])}, ...)")
    if spec.kind == "alltoall":
        for i, v in enumerate(spec.variants):
            own = make_topology(spec, v)
            if v.gating != "electrical" and len(own.ocs) != 1:
                raise ValueError(f"{spec.path}: variants[{i}] gating {v.gating}: expected a topology with one OCS")
        return
    if spec.kind == "reservation":
        tors = len({p.switch for o in topo.ocs for p in o.ports})
        for i, v in enumerate(spec.variants):
            if len(topo.ocs) != 1 or not 1 <= (v.tdc or 0) < tors:
                raise ValueError(f"{spec.path}: variants[{i}] tdc {v.tdc}: expected 1..{tors - 1} for the "
                                 f"{tors} ToRs of one OCS")
            per_server = spec.reservation.flows_per_server
            if per_server is not None and per_server % v.tdc:
                raise ValueError(f"{spec.path}: variants[{i}] tdc {v.tdc}: reservation.flows_per_server "
                                 f"{per_server} does not split evenly over {v.tdc} destination racks")
            if v.reservation == "electrical" and len(topo.switches) == tors:
                raise ValueError(f"{spec.path}: variants[{i}] reservation electrical: the topology has no "
                                 "electrical spine; expected topology.spines >= 1")
        return
    if not topo.ocs or spec.kind in ("load-balancing", "strategies"):
        return
    for i, v in enumerate(spec.variants):  # the maps each variant runs with (its own, else the spec's)
        for key, m in (("initial_map", v.initial_map or spec.initial_map), ("target_map", v.target_map or spec.target_map)):
            if m is not None:
                try:
                    ocs_circuits(topo, m, topo.ocs[0].name)
                except (ValueError, KeyError) as exc:
                    raise ValueError(f"{spec.path}: variants[{i}] {key} {m!r}: {exc}") from None


def schedule_ocs_args(spec: Spec) -> list[str]:
    """Kind schedule: the OCS emulator's round robin from the spec's `schedule` (a variant's own
    --day-ms/--night-ms, after these, win)."""
    s = spec.schedule
    args = ["--schedule", "round-robin", "--day-ms", str(s.get("day_ms", 100)), "--night-ms", str(s.get("night_ms", 10))]
    if s.get("slots"):
        args += ["--schedule-slots", ",".join(str(x) for x in s["slots"])]
    return args


def load(path: str | Path) -> Spec:
    """Read and check one spec file."""
    p = Path(path)
    try:
        with p.open("rb") as f:
            text = f.read(MAX_SPEC_BYTES + 1)
        if len(text) > MAX_SPEC_BYTES:
            raise ValueError(f"spec {str(p)!r}: larger than {MAX_SPEC_BYTES} bytes; expected a YAML page")
        data = yaml.safe_load(text)
    except OSError as exc:
        raise ValueError(f"spec {str(p)!r}: {exc.strerror}; expected a readable YAML file") from None
    except yaml.YAMLError as exc:
        raise ValueError(f"spec {str(p)!r}: not YAML ({str(exc).splitlines()[0]})") from None
    except RecursionError:  # the YAML reader recurses once per level of nesting
        raise ValueError(f"spec {str(p)!r}: nested too deep; expected a spec's few levels") from None
    return parse(data, str(p))


def shorten(spec: Spec, runs: int | None = None, duration_s: float | None = None,
            event_at_s: float | None = None) -> Spec:
    """A copy with fewer runs or a shorter timeline (the demo's and the tests' versions), checked again."""
    return _checked(asdict(replace(spec, runs=runs or spec.runs, duration_s=duration_s or spec.duration_s,
                                   event_at_s=event_at_s or spec.event_at_s)))


def at_rate(spec: Spec, rate_mbit: float | None) -> Spec:
    """A copy whose dynamic streams (the ones the metrics are about) send at `rate_mbit`: the same
    experiment on a machine that cannot carry the spec's rate with room (scripts/hosts/machine.py)."""
    if rate_mbit is None:
        return spec
    if isinstance(rate_mbit, bool) or not isinstance(rate_mbit, (int, float)) or not 0 < rate_mbit <= 100_000:
        raise ValueError(f"rate {rate_mbit!r}: expected Mbit/s above 0 and at most 100000")
    if not any(s.role == "dynamic" and s.rate_mbit for s in spec.streams):
        raise ValueError(f"rate with spec {spec.name!r}: expected a dynamic stream of a fixed rate to set")
    streams = [replace(s, rate_mbit=float(rate_mbit)) if s.role == "dynamic" and s.rate_mbit else s
               for s in spec.streams]
    return _checked(asdict(replace(spec, streams=streams)))


def at_link_rate(spec: Spec, rate_mbit: float | None) -> Spec:
    """A copy whose topology's links (a variant's own topology's too) run at `rate_mbit`: an experiment
    of unlimited streams on a machine whose switches cannot carry the spec's rate with room. Queues keep
    their frames (so hold twice the time at half the rate); the report's scale factor follows."""
    if rate_mbit is None:
        return spec
    if isinstance(rate_mbit, bool) or not isinstance(rate_mbit, (int, float)) or not 0 < rate_mbit <= 100_000:
        raise ValueError(f"link rate {rate_mbit!r}: expected Mbit/s above 0 and at most 100000")
    variants = [replace(v, topology={**v.topology, "rate_mbit": float(rate_mbit)}) if v.topology is not None else v
                for v in spec.variants]
    return _checked(asdict(replace(spec, topology={**spec.topology, "rate_mbit": float(rate_mbit)}, variants=variants)))


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


def make_topology(spec: Spec, variant: Variant | None = None) -> Any:
    """The topo.model.Topology the spec describes, or the variant's own when it names one
    (topo.generators with its parameters, each checked against the generator's signature first)."""
    args = dict(variant.topology if variant is not None and variant.topology is not None else spec.topology)
    gen = args.pop("generator", None)
    if gen not in GENERATORS:
        raise ValueError(f"{spec.path}: topology.generator {gen!r:.60}; expected one of {GENERATORS}")
    hybrid = args.pop("hybrid", None)
    queue = args.pop("switch_queue_pkts", None)
    topo = call_checked(getattr(generators, gen), args, f"{spec.path}: topology")
    if hybrid is not None:
        if not isinstance(hybrid, dict):
            raise ValueError(f"{spec.path}: topology.hybrid {hybrid!r:.60}: expected a mapping of hybrid() options")
        call_checked(generators.hybrid, {"topo": topo, **hybrid}, f"{spec.path}: topology.hybrid")
    if queue is not None:
        topo.params["switch_queue_pkts"] = queue  # the emulation bounds every switch port's queue
    try:
        return validate(topo)
    except ValueError as exc:
        raise ValueError(f"{spec.path}: topology: {exc}") from None
