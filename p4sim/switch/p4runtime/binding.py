"""A P4Info bound to a loaded p4sim pipeline: every P4Info object resolved to its device object by name.

PI maps P4Info onto bmv2 by names (p4c gives a P4Info object and its bmv2 JSON object the same fully
qualified name), so a P4Info that does not describe the device config is rejected at
SetForwardingPipelineConfig with INVALID_ARGUMENT, naming the first object that does not match.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

from p4sim.switch.p4runtime.errors import invalid
from p4sim.switch.p4runtime.schema import OPTIONAL, ActionProfileInfo, ResourceInfo, Schema, TableInfo
from p4sim.switch.values import FieldMatch, Ternary

if TYPE_CHECKING:
    from p4sim.switch.externs import CounterArray, DirectMeter, MeterArray, RegisterArray, ValueSet
    from p4sim.switch.pipeline import Pipeline
    from p4sim.switch.profiles import ActionProfile
    from p4sim.switch.tables import Table

log = logging.getLogger(__name__)
D = TypeVar("D")  # a device object: ActionProfile, CounterArray, MeterArray, RegisterArray

# p4c-bm2-ss writes an `optional` key field as "ternary" in the bmv2 JSON (backends/bmv2/common/
# control.h); PI then installs a P4Runtime optional match as a ternary one with a full mask.
_KIND_OK = {"exact": ("exact", "valid"), "lpm": ("lpm",), "ternary": ("ternary",), "range": ("range",),
            OPTIONAL: ("optional", "ternary")}


@dataclass(slots=True)
class TableBinding:
    """A P4Info table and its device table, with what writes to it need at hand."""

    info: TableInfo
    table: Table
    profile: ActionProfile | None
    direct_meter: DirectMeter | None
    has_direct_counter: bool
    # optional fields the device holds as ternary: (key position, full mask)
    optional_as_ternary: tuple[tuple[int, int], ...] = ()
    # controller_metadata and metadata of entries, by entry handle (only those that set them)
    extra: dict[int, tuple[int, bytes]] = field(default_factory=dict)


@dataclass(slots=True)
class Binding:
    """A committed (or verified) forwarding pipeline: P4Info schema, device pipeline, bindings by ID."""

    schema: Schema
    pipeline: Pipeline
    tables: dict[int, TableBinding] = field(default_factory=dict)
    profiles: dict[int, ActionProfile] = field(default_factory=dict)
    counters: dict[int, CounterArray] = field(default_factory=dict)
    meters: dict[int, MeterArray] = field(default_factory=dict)
    registers: dict[int, RegisterArray] = field(default_factory=dict)
    digest_by_learn_id: dict[int, int] = field(default_factory=dict)
    value_sets: dict[int, ValueSet] = field(default_factory=dict)

    def table(self, table_id: int) -> TableBinding:
        """Return the binding of a P4Info table ID (INVALID_ARGUMENT if unknown, or not in the device config)."""
        tb = self.tables.get(table_id)
        if tb is None:
            info = self.schema.table(table_id)  # raises the right error for an unknown ID
            raise invalid(f"table {info.name!r} is not in the device config (the compiler removed it)")
        return tb


def device_key(tb: TableBinding, key: tuple[FieldMatch | None, ...]) -> tuple[FieldMatch | None, ...]:
    """Return a P4Runtime match key in the device's terms (optional fields held as ternary: full mask)."""
    if not tb.optional_as_ternary:
        return key
    out = list(key)
    for i, mask in tb.optional_as_ternary:
        m = out[i]
        if m is not None:
            out[i] = Ternary(m.value, mask)  # type: ignore[union-attr]
    return tuple(out)


def _by_name(infos: dict[int, ActionProfileInfo | ResourceInfo], device: dict[str, D], what: str) -> dict[int, D]:
    """The device object of each P4Info object, by P4Info ID; INVALID_ARGUMENT for one the device lacks."""
    out = {}
    for info in infos.values():
        if info.name not in device:
            raise invalid(f"P4Info {what} {info.name!r} is not in the device config")
        out[info.id] = device[info.name]
    return out


def bind(schema: Schema, pipeline: Pipeline) -> Binding:
    """Resolve every P4Info object of the schema in the pipeline; raise INVALID_ARGUMENT on a mismatch."""
    prog = pipeline.program
    b = Binding(schema, pipeline)
    json_actions: dict[str, list] = {}
    for a in prog.actions.values():
        json_actions.setdefault(a.name, []).append(a)
    for a in schema.actions.values():
        cands = json_actions.get(a.name)
        if not cands:
            # p4c's P4Info can list an action its JSON dropped (a NoAction no table of the JSON keeps);
            # PI does not cross-check, and a write naming it fails as an unknown action of the table
            log.info("P4Info action %r is not in the device config", a.name)
            continue
        widths = [p.bitwidth for p in a.params]
        if not any([w for _, w in c.params] == widths for c in cands):
            raise invalid(f"P4Info action {a.name!r} has parameter widths {widths}, the device config "
                          f"{[w for _, w in cands[0].params]}")
    b.profiles = _by_name(schema.action_profiles, pipeline.profiles, "action profile")
    direct_meter_of = {m.info.binding: m for m in pipeline.direct_meters.values()}
    direct_counter_tables = set(pipeline.direct_counters.values())
    for t in schema.tables.values():
        table = pipeline.tables.get(t.name)
        if table is None:
            # p4c lists a table its JSON dropped as dead code (gauntlet_nested_switch-bmv2: applied after
            # a return that always runs); PI loads such a config, and a write naming the table fails
            log.info("P4Info table %r is not in the device config", t.name)
            continue
        key = table.info.key
        if len(key) != len(t.match_fields):
            raise invalid(f"P4Info table {t.name!r} has {len(t.match_fields)} match fields, the device "
                          f"config {len(key)}")
        for mf, kf in zip(t.match_fields, key, strict=True):
            # bitwidth 0: a key that is not bit<W> (an `error`, p4c's P4Info has no width for it; the JSON
            # has 32 bits), which PI accepts as it is
            if kf.match_type not in _KIND_OK[mf.kind] or (kf.bitwidth != mf.bitwidth and mf.bitwidth):
                raise invalid(f"match field {mf.name!r} of table {t.name!r} is {mf.kind} bit<{mf.bitwidth}> in "
                              f"P4Info, {kf.match_type} bit<{kf.bitwidth}> in the device config")
        json_action_names = {prog.actions[a].name for a in table.info.action_ids}
        for aid in t.actions:
            if schema.actions[aid].name not in json_action_names and schema.actions[aid].name in json_actions:
                raise invalid(f"action {schema.actions[aid].name!r} of table {t.name!r} is not one of the "
                              "table's actions in the device config")
        profile = None
        if t.implementation_id:
            profile = b.profiles[t.implementation_id]
        opt = tuple((i, (1 << mf.bitwidth) - 1) for i, (mf, kf) in enumerate(zip(t.match_fields, key, strict=True))
                    if mf.kind == OPTIONAL and kf.match_type == "ternary")
        b.tables[t.id] = TableBinding(t, table, profile, direct_meter_of.get(t.name),
                                      t.name in direct_counter_tables, opt)
    b.counters = _by_name(schema.counters, pipeline.counters, "counter")
    b.meters = _by_name(schema.meters, pipeline.meters, "meter")
    b.registers = _by_name(schema.registers, pipeline.registers, "register")
    learn_by_name = {ll.name: ll.id for ll in prog.learn_lists.values()}
    for d in schema.digests.values():
        if d.name not in learn_by_name:
            raise invalid(f"P4Info digest {d.name!r} is not a learn list of the device config")
        b.digest_by_learn_id[learn_by_name[d.name]] = d.id
    for vs in schema.value_sets.values():
        dev = pipeline.value_sets.get(vs.name)
        if dev is None:
            raise invalid(f"P4Info value set {vs.name!r} is not a parse_vset of the device config")
        if sum(vs.widths) != dev.width:
            raise invalid(f"P4Info value set {vs.name!r} has {sum(vs.widths)} bits, the device config {dev.width}")
        b.value_sets[vs.id] = dev
    return b
