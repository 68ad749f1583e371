"""P4Info schema: the objects of a P4Info message indexed by ID, with what the server checks against.

Names are the P4Info preamble names; for p4c output they equal the bmv2 JSON names, which is how PI
maps P4Info objects onto the bmv2 target (and how this server maps them onto the p4sim Device).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from p4sim.switch.p4runtime.errors import invalid
from p4sim.switch.p4runtime.proto import p4i

EXACT, LPM, TERNARY, RANGE, OPTIONAL = "exact", "lpm", "ternary", "range", "optional"
_MATCH_KINDS = {
    p4i.MatchField.EXACT: EXACT,
    p4i.MatchField.LPM: LPM,
    p4i.MatchField.TERNARY: TERNARY,
    p4i.MatchField.RANGE: RANGE,
    p4i.MatchField.OPTIONAL: OPTIONAL,
}
_COUNTER_UNITS = {p4i.CounterSpec.BYTES: "bytes", p4i.CounterSpec.PACKETS: "packets",
                  p4i.CounterSpec.BOTH: "both"}


@dataclass(slots=True)
class MatchFieldInfo:
    """One match field of a table."""

    id: int
    name: str
    bitwidth: int
    kind: str


@dataclass(slots=True)
class ParamInfo:
    """One parameter of an action."""

    id: int
    name: str
    bitwidth: int


@dataclass(slots=True)
class ActionInfo:
    """An action: its parameters in declaration order (the order of bmv2 runtime_data)."""

    id: int
    name: str
    params: list[ParamInfo]
    params_by_id: dict[int, ParamInfo]
    order: dict[int, int]  # param id -> position


@dataclass(slots=True)
class ActionRefInfo:
    """How an action may be used in a table (P4Info ActionRef scope)."""

    id: int
    table_only: bool
    default_only: bool


@dataclass(slots=True)
class TableInfo:
    """A table: match fields in key order, allowed actions, implementation and direct resources."""

    id: int
    name: str
    match_fields: list[MatchFieldInfo]
    fields_by_id: dict[int, MatchFieldInfo]
    actions: dict[int, ActionRefInfo]
    const_default_action_id: int
    implementation_id: int
    direct_counter_id: int
    direct_meter_id: int
    is_const: bool
    size: int
    needs_priority: bool
    idle_timeout: bool = False


@dataclass(slots=True)
class ActionProfileInfo:
    """An action profile or selector."""

    id: int
    name: str
    table_ids: list[int]
    with_selector: bool
    size: int
    max_group_size: int


@dataclass(slots=True)
class ResourceInfo:
    """A counter, meter or register array (direct or indirect)."""

    id: int
    name: str
    size: int
    unit: str = ""
    table_id: int = 0
    bitwidth: int = 0
    meter_kind: str = "trTCM"  # meters: MeterSpec.type as the device's MeterConfig.kind


@dataclass(slots=True)
class MetadataInfo:
    """One field of a controller header (packet_in / packet_out)."""

    id: int
    name: str
    bitwidth: int


@dataclass(slots=True)
class DigestInfo:
    """A digest: the bitwidths of the struct members it carries, in order."""

    id: int
    name: str
    member_widths: list[int]


@dataclass(slots=True)
class ValueSetInfo:
    """A parser value set: the widths of its exact match fields, in order, and its size."""

    id: int
    name: str
    widths: list[int]
    size: int


@dataclass(slots=True)
class Schema:
    """A P4Info message indexed by ID."""

    p4info: p4i.P4Info
    tables: dict[int, TableInfo] = field(default_factory=dict)
    actions: dict[int, ActionInfo] = field(default_factory=dict)
    action_ids_by_name: dict[str, int] = field(default_factory=dict)
    action_profiles: dict[int, ActionProfileInfo] = field(default_factory=dict)
    counters: dict[int, ResourceInfo] = field(default_factory=dict)
    direct_counters: dict[int, ResourceInfo] = field(default_factory=dict)
    meters: dict[int, ResourceInfo] = field(default_factory=dict)
    direct_meters: dict[int, ResourceInfo] = field(default_factory=dict)
    registers: dict[int, ResourceInfo] = field(default_factory=dict)
    digests: dict[int, DigestInfo] = field(default_factory=dict)
    value_sets: dict[int, ValueSetInfo] = field(default_factory=dict)
    packet_in: list[MetadataInfo] = field(default_factory=list)
    packet_out: list[MetadataInfo] = field(default_factory=list)

    def table(self, table_id: int) -> TableInfo:
        """Return the table with this ID, or raise INVALID_ARGUMENT (PI's 'Invalid P4 id')."""
        return _lookup(self.tables, table_id, "table")

    def action(self, action_id: int) -> ActionInfo:
        """Return the action with this ID."""
        return _lookup(self.actions, action_id, "action")

    def action_profile(self, profile_id: int) -> ActionProfileInfo:
        """Return the action profile with this ID."""
        return _lookup(self.action_profiles, profile_id, "action profile")

    def counter(self, counter_id: int) -> ResourceInfo:
        """Return the (indirect) counter with this ID."""
        return _lookup(self.counters, counter_id, "counter")

    def meter(self, meter_id: int) -> ResourceInfo:
        """Return the (indirect) meter with this ID."""
        return _lookup(self.meters, meter_id, "meter")

    def register(self, register_id: int) -> ResourceInfo:
        """Return the register with this ID."""
        return _lookup(self.registers, register_id, "register")

    def digest(self, digest_id: int) -> DigestInfo:
        """Return the digest with this ID."""
        return _lookup(self.digests, digest_id, "digest")

    def value_set(self, value_set_id: int) -> ValueSetInfo:
        """Return the value set with this ID."""
        return _lookup(self.value_sets, value_set_id, "value set")


def _lookup(index: dict, object_id: int, what: str):
    try:
        return index[object_id]
    except KeyError:
        if object_id == 0:
            raise invalid(f"missing {what} id") from None
        raise invalid(f"invalid P4 id {object_id:#x}: no {what} with this id") from None


def _bitwidth(type_spec: p4i.P4DataTypeSpec) -> int:
    if type_spec.HasField("bitstring"):
        bs = type_spec.bitstring
        kind = bs.WhichOneof("type_spec")
        return getattr(bs, kind).bitwidth if kind else 0
    if type_spec.HasField("bool"):
        return 1
    return 0


_PREAMBLE_KINDS = (("tables", "table"), ("actions", "action"), ("action_profiles", "action profile"),
                   ("counters", "counter"), ("direct_counters", "direct counter"), ("meters", "meter"),
                   ("direct_meters", "direct meter"), ("controller_packet_metadata", "controller header"),
                   ("value_sets", "value set"), ("registers", "register"), ("digests", "digest"),
                   ("externs", "extern"))


def check_ids(p4info: p4i.P4Info) -> None:
    """ValueError naming the first object whose ID or name is zero, empty or not unique.

    As Stratum's P4InfoManager: every preamble has a non-zero ID unique in the whole P4Info and a
    non-empty name unique among the objects of its kind; here also the IDs and names of the match
    fields of each table, the parameters of each action and the fields of each controller header
    (the server finds them by ID: a duplicate would make the object unwritable).
    """
    ids: dict[int, str] = {}
    for attr, kind in _PREAMBLE_KINDS:
        names: set[str] = set()
        objs = p4info.externs if attr == "externs" else getattr(p4info, attr)
        preambles = [i.preamble for e in objs for i in e.instances] if attr == "externs" else [o.preamble for o in objs]
        for pre in preambles:
            what = f"P4Info {kind} {pre.name!r}"
            if pre.id == 0:
                raise ValueError(f"{what} has id 0; expected a non-zero id")
            if not pre.name:
                raise ValueError(f"P4Info {kind} id {pre.id:#x} has no name")
            if pre.id in ids:
                raise ValueError(f"{what}: id {pre.id:#x} is not unique (also {ids[pre.id]})")
            if pre.name in names:
                raise ValueError(f"{what}: the name is not unique among the {kind}s")
            ids[pre.id] = f"{kind} {pre.name!r}"
            names.add(pre.name)
    for t in p4info.tables:
        _check_members(f"table {t.preamble.name!r}", "match field", [(m.id, m.name) for m in t.match_fields])
    for a in p4info.actions:
        _check_members(f"action {a.preamble.name!r}", "parameter", [(p.id, p.name) for p in a.params])
    for c in p4info.controller_packet_metadata:
        _check_members(f"controller header {c.preamble.name!r}", "field", [(m.id, m.name) for m in c.metadata])


def _check_members(owner: str, kind: str, members: list[tuple[int, str]]) -> None:
    ids: dict[int, str] = {}
    names: set[str] = set()
    for mid, name in members:
        if mid == 0:
            raise ValueError(f"P4Info {owner}: {kind} {name!r} has id 0; expected a non-zero id")
        if mid in ids:
            raise ValueError(f"P4Info {owner}: {kind} id {mid} is not unique ({ids[mid]!r} and {name!r})")
        if name in names:
            raise ValueError(f"P4Info {owner}: {kind} name {name!r} is not unique")
        ids[mid] = name
        names.add(name)


def build_schema(p4info: p4i.P4Info) -> Schema:
    """Index a P4Info message; raise ValueError when it is inconsistent (a dangling or duplicate ID)."""
    check_ids(p4info)
    s = Schema(p4info=p4info)
    for a in p4info.actions:
        params = [ParamInfo(p.id, p.name, p.bitwidth) for p in a.params]
        s.actions[a.preamble.id] = ActionInfo(a.preamble.id, a.preamble.name, params, {p.id: p for p in params},
                                              {p.id: i for i, p in enumerate(params)})
        s.action_ids_by_name[a.preamble.name] = a.preamble.id
    for c in p4info.counters:
        s.counters[c.preamble.id] = ResourceInfo(c.preamble.id, c.preamble.name, c.size,
                                                 _COUNTER_UNITS.get(c.spec.unit, "both"))
    for c in p4info.direct_counters:
        s.direct_counters[c.preamble.id] = ResourceInfo(c.preamble.id, c.preamble.name, 0,
                                                        _COUNTER_UNITS.get(c.spec.unit, "both"),
                                                        table_id=c.direct_table_id)
    for m in p4info.meters:
        s.meters[m.preamble.id] = ResourceInfo(m.preamble.id, m.preamble.name, m.size,
                                               p4i.MeterSpec.Unit.Name(m.spec.unit).lower(),
                                               meter_kind=_meter_kind(m.spec))
    for m in p4info.direct_meters:
        s.direct_meters[m.preamble.id] = ResourceInfo(m.preamble.id, m.preamble.name, 0,
                                                      p4i.MeterSpec.Unit.Name(m.spec.unit).lower(),
                                                      table_id=m.direct_table_id,
                                                      meter_kind=_meter_kind(m.spec))
    for r in p4info.registers:
        s.registers[r.preamble.id] = ResourceInfo(r.preamble.id, r.preamble.name, r.size,
                                                  bitwidth=_bitwidth(r.type_spec))
    for ap in p4info.action_profiles:
        s.action_profiles[ap.preamble.id] = ActionProfileInfo(
            ap.preamble.id, ap.preamble.name, list(ap.table_ids), ap.with_selector, ap.size,
            ap.max_group_size)
    for t in p4info.tables:
        fields = []
        for mf in t.match_fields:
            kind = _MATCH_KINDS.get(mf.match_type)
            if kind is None:
                raise ValueError(f"match field {mf.name!r} of table {t.preamble.name!r} has match type "
                                 f"{mf.match_type}, expected exact, lpm, ternary, range or optional")
            fields.append(MatchFieldInfo(mf.id, mf.name, mf.bitwidth, kind))
        actions = {}
        for ref in t.action_refs:
            if ref.id not in s.actions:
                raise ValueError(f"table {t.preamble.name!r} refers to unknown action id {ref.id:#x}")
            actions[ref.id] = ActionRefInfo(ref.id, ref.scope == p4i.ActionRef.TABLE_ONLY,
                                            ref.scope == p4i.ActionRef.DEFAULT_ONLY)
        direct_counter = direct_meter = 0
        for rid in t.direct_resource_ids:
            if rid in s.direct_counters:
                direct_counter = rid
            elif rid in s.direct_meters:
                direct_meter = rid
        if t.implementation_id and t.implementation_id not in s.action_profiles:
            raise ValueError(f"table {t.preamble.name!r} refers to unknown implementation id "
                             f"{t.implementation_id:#x}")
        s.tables[t.preamble.id] = TableInfo(
            id=t.preamble.id, name=t.preamble.name, match_fields=fields,
            fields_by_id={f.id: f for f in fields}, actions=actions,
            const_default_action_id=t.const_default_action_id,
            implementation_id=t.implementation_id, direct_counter_id=direct_counter,
            direct_meter_id=direct_meter, is_const=t.is_const_table, size=t.size,
            needs_priority=any(f.kind in (TERNARY, RANGE, OPTIONAL) for f in fields),
            idle_timeout=t.idle_timeout_behavior == p4i.Table.NOTIFY_CONTROL)
    structs = p4info.type_info.structs
    for d in p4info.digests:
        widths: list[int] = []
        spec = d.type_spec
        if spec.HasField("struct") and spec.struct.name in structs:
            widths = [_bitwidth(m.type_spec) for m in structs[spec.struct.name].members]
        elif spec.HasField("bitstring"):
            widths = [_bitwidth(spec)]
        s.digests[d.preamble.id] = DigestInfo(d.preamble.id, d.preamble.name, widths)
    for vs in p4info.value_sets:
        if any(m.match_type != p4i.MatchField.EXACT for m in vs.match):
            raise ValueError(f"value set {vs.preamble.name!r}: only exact match fields are supported")
        s.value_sets[vs.preamble.id] = ValueSetInfo(vs.preamble.id, vs.preamble.name,
                                                    [m.bitwidth for m in vs.match], vs.size)
    for cpm in p4info.controller_packet_metadata:
        md = [MetadataInfo(m.id, m.name, m.bitwidth) for m in cpm.metadata]
        if cpm.preamble.name == "packet_in":
            s.packet_in = md
        elif cpm.preamble.name == "packet_out":
            s.packet_out = md
    return s


_METER_KINDS = {"SINGLE_RATE_THREE_COLOR": "srTCM", "SINGLE_RATE_TWO_COLOR": "sr2C"}


def _meter_kind(spec: p4i.MeterSpec) -> str:
    """The device meter kind of a P4Info MeterSpec (two-rate three-colour unless it says otherwise)."""
    names = {v.number: v.name for v in p4i.MeterSpec.DESCRIPTOR.fields_by_name["type"].enum_type.values}
    return _METER_KINDS.get(names.get(spec.type, ""), "trTCM")
