"""P4Info schema: P4 objects by name (unique-suffix matching) or id."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Generic, TypeVar

from p4rt.proto import p4i, text_format

log = logging.getLogger(__name__)

T = TypeVar("T")


def short_name(name: str) -> str:
    """The last component of a dotted P4 name ("FabricIngress.route" -> "route")."""
    return name.rsplit(".", 1)[-1]


def resolve_suffix(query: str, names: Iterable[str], kind: str) -> str:
    """The one name equal to `query` or ending in "." + `query`; raises with the candidates otherwise."""
    names = list(names)
    if query in names:
        return query
    hits = [n for n in names if n.endswith("." + query)]
    if len(hits) == 1:
        return hits[0]
    if not hits:
        raise ValueError(f"unknown {kind} {query!r}: expected one of {sorted(names)}")
    raise ValueError(f"ambiguous {kind} {query!r}: candidates {sorted(hits)}")


class _Index(Generic[T]):
    """The P4Info objects of one kind, by full name, alias and id."""

    def __init__(self, kind: str, objects: Iterable[T]) -> None:
        self.kind = kind
        self.by_name: dict[str, T] = {}
        self.by_id: dict[int, T] = {}
        for obj in objects:
            pre = obj.preamble  # type: ignore[attr-defined]
            self.by_name[pre.name] = obj
            if pre.alias and pre.alias != pre.name:
                self.by_name.setdefault(pre.alias, obj)
            self.by_id[pre.id] = obj

    def __getitem__(self, key: str | int) -> T:
        if isinstance(key, int):
            try:
                return self.by_id[key]
            except KeyError:
                raise ValueError(f"unknown {self.kind} id {key}: not in the P4Info") from None
        return self.by_name[resolve_suffix(key, self.by_name, self.kind)]

    def __iter__(self):
        return iter(self.by_id.values())

    def __len__(self) -> int:
        return len(self.by_id)


class P4Schema:
    """A loaded P4Info with name resolution for every object kind."""

    def __init__(self, p4info: p4i.P4Info) -> None:
        self.p4info = p4info
        # identifies the P4Info's content (ids and widths), e.g. for caches of encoded entities
        self.fingerprint = hashlib.sha256(p4info.SerializeToString(deterministic=True)).hexdigest()
        self.tables: _Index[p4i.Table] = _Index("table", p4info.tables)
        self.actions: _Index[p4i.Action] = _Index("action", p4info.actions)
        self.action_profiles: _Index[p4i.ActionProfile] = _Index("action profile", p4info.action_profiles)
        self.counters: _Index[p4i.Counter] = _Index("counter", p4info.counters)
        self.direct_counters: _Index[p4i.DirectCounter] = _Index("direct counter", p4info.direct_counters)
        self.meters: _Index[p4i.Meter] = _Index("meter", p4info.meters)
        self.direct_meters: _Index[p4i.DirectMeter] = _Index("direct meter", p4info.direct_meters)
        self.registers: _Index[p4i.Register] = _Index("register", p4info.registers)
        self.digests: _Index[p4i.Digest] = _Index("digest", p4info.digests)
        self.packet_metadata: _Index[p4i.ControllerPacketMetadata] = _Index(
            "controller packet metadata", p4info.controller_packet_metadata
        )

    @classmethod
    def from_text(cls, text: str) -> P4Schema:
        """Parse a P4Info in protobuf text format."""
        info = p4i.P4Info()
        try:
            text_format.Parse(text, info)
        except text_format.ParseError as exc:
            raise ValueError(f"P4Info text: {exc}") from None
        return cls(info)

    @classmethod
    def from_bytes(cls, data: bytes) -> P4Schema:
        """Parse a P4Info, binary or text (detected)."""
        try:
            return cls.from_text(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            info = p4i.P4Info()
            info.ParseFromString(data)
            return cls(info)

    @classmethod
    def load(cls, path: str | Path) -> P4Schema:
        """Load a P4Info file (.txt/.txtpb text or .bin/.pb binary)."""
        return cls.from_bytes(Path(path).read_bytes())

    # Lookups inside objects -------------------------------------------------------------------

    def match_field(self, table: p4i.Table, name: str | int) -> p4i.MatchField:
        """A table's match field by (suffix of its) name or id."""
        if isinstance(name, int):
            for mf in table.match_fields:
                if mf.id == name:
                    return mf
            raise ValueError(f"unknown match field id {name} in table {table.preamble.name!r}")
        fields = {mf.name: mf for mf in table.match_fields}
        return fields[resolve_suffix(name, fields, f"match field of table {table.preamble.name!r}")]

    def param(self, action: p4i.Action, name: str | int) -> p4i.Action.Param:
        """An action parameter by name or id."""
        if isinstance(name, int):
            for p in action.params:
                if p.id == name:
                    return p
            raise ValueError(f"unknown param id {name} of action {action.preamble.name!r}")
        params = {p.name: p for p in action.params}
        return params[resolve_suffix(name, params, f"param of action {action.preamble.name!r}")]

    def table_action(self, table: p4i.Table, name: str) -> p4i.Action:
        """An action usable in `table`, resolved among the table's action refs first."""
        allowed = {self.actions[ref.id].preamble.name for ref in table.action_refs}
        full = resolve_suffix(name, allowed, f"action of table {table.preamble.name!r}")
        return self.actions[full]

    def table_profile(self, table: p4i.Table) -> p4i.ActionProfile | None:
        """The action profile or selector implementing `table`, if any."""
        if not table.implementation_id:
            return None
        return self.action_profiles.by_id.get(table.implementation_id)

    def profile_table(self, profile: p4i.ActionProfile) -> p4i.Table:
        """The (first) table an action profile serves, whose actions its members may use."""
        if not profile.table_ids:
            raise ValueError(f"action profile {profile.preamble.name!r}: serves no table")
        return self.tables[profile.table_ids[0]]

    def direct_counter_of(self, table: p4i.Table) -> p4i.DirectCounter | None:
        """The direct counter attached to `table`, if any."""
        for rid in table.direct_resource_ids:
            if rid in self.direct_counters.by_id:
                return self.direct_counters.by_id[rid]
        return None

    def needs_priority(self, table: p4i.Table) -> bool:
        """True when the table has ternary, range or optional fields (so entries carry a priority)."""
        kinds = {p4i.MatchField.TERNARY, p4i.MatchField.RANGE, p4i.MatchField.OPTIONAL}
        return any(mf.match_type in kinds for mf in table.match_fields)
