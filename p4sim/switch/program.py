"""The bmv2 JSON document as typed values: what tables, actions and externs a program declares.

Follows p4lang/behavioral-model docs/JSON_format.md (version 2.x), as emitted by p4c-bm2-ss for
v1model. Only the parts the control plane needs are typed here; the code generator reads the raw
JSON for parsers, actions and control flow.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import Any

from p4sim.switch.operands import check_operands

log = logging.getLogger(__name__)

MAX_SIZE = 2**32 - 1  # the largest size bmv2 reads from a JSON (an unsigned int)
MATCH_KINDS = ("exact", "lpm", "ternary", "range", "valid")  # bmv2's; p4c writes an optional key as ternary


@dataclass(slots=True, frozen=True)
class KeyField:
    """One element of a table key: name (the JSON key `name`), match kind and width in bits."""

    name: str
    match_type: str
    bitwidth: int
    target: tuple[str, str] | str
    mask: int | None = None


@dataclass(slots=True, frozen=True)
class ActionInfo:
    """An action: its JSON name and id, and its runtime parameters as (name, bitwidth)."""

    name: str
    id: int
    params: tuple[tuple[str, int], ...]


@dataclass(slots=True, frozen=True)
class DefaultEntry:
    """The default entry the JSON sets: action id, data, and whether the control plane may change it."""

    action_id: int
    action_data: tuple[int, ...]
    action_const: bool
    action_entry_const: bool


@dataclass(slots=True)
class TableInfo:
    """A match-action table as declared in the JSON."""

    name: str
    id: int
    pipeline: str
    match_type: str
    type: str  # simple | indirect | indirect_ws
    action_profile: str | None
    max_size: int
    with_counters: bool
    direct_meters: str | None
    key: tuple[KeyField, ...]
    action_ids: tuple[int, ...]
    next_tables: dict[str, str | None]
    base_default_next: str | None
    default_entry: DefaultEntry | None
    const_entries: list[dict[str, Any]] = field(default_factory=list)
    support_timeout: bool = False

    @property
    def needs_priority(self) -> bool:
        """True if entries carry a priority (a ternary, range or optional field in the key)."""
        return any(k.match_type in ("ternary", "range", "optional") for k in self.key)

    @property
    def is_const(self) -> bool:
        """True if the JSON gives the entries (p4c `const entries`): the table is read-only."""
        return bool(self.const_entries)


@dataclass(slots=True, frozen=True)
class ProfileInfo:
    """An action profile (selector is None) or action selector (selector_algo, selector_input)."""

    name: str
    id: int
    max_size: int
    selector_algo: str | None
    selector_input: tuple[tuple[str, str], ...]


@dataclass(slots=True, frozen=True)
class ArrayInfo:
    """A counter, meter or register array. kind: counter | meter | register."""

    kind: str
    name: str
    id: int
    size: int
    is_direct: bool = False
    binding: str | None = None
    bitwidth: int = 0
    meter_type: str = "packets"
    rate_count: int = 2
    result_target: tuple[str, str] | None = None


@dataclass(slots=True, frozen=True)
class LearnList:
    """A digest (learn list): its id, name and the fields it carries, in order."""

    id: int
    name: str
    fields: tuple[tuple[str, str], ...]


def _int(hexstr: str | int | bool) -> int:
    """Value of a bmv2 hexstr ("0x0a", "-0x1") or a plain integer."""
    if isinstance(hexstr, bool):
        return int(hexstr)
    if isinstance(hexstr, int):
        return hexstr
    return int(hexstr, 16) if "x" in hexstr.lower() else int(hexstr)


parse_hexstr = _int


class Program:
    """A parsed and validated bmv2 JSON program (the names the control plane uses)."""

    def __init__(self, doc: dict[str, Any]) -> None:
        self.doc = doc
        self.header_types: dict[str, list[tuple[str, int, bool]]] = {}
        # header type -> its variable-length field (width "*"); its width above is the maximum, in bits
        self.varbit_fields: dict[str, str] = {}
        for ht in doc.get("header_types", []):
            fields = []
            for i, f in enumerate(ht["fields"]):
                width = f[1]
                if width == "*":
                    fixed = sum(int(g[1]) for g in ht["fields"] if g[1] != "*")
                    if "max_length" not in ht or i != len(ht["fields"]) - 1:
                        raise ValueError(f"header type {ht['name']}: variable-length field {f[0]!r} must be the "
                                         "last field and the header needs max_length")
                    width = int(ht["max_length"]) * 8 - fixed
                    self.varbit_fields[ht["name"]] = f[0]
                fields.append((f[0], int(width), bool(f[2]) if len(f) > 2 else False))
            self.header_types[ht["name"]] = fields
        self.headers: dict[str, dict[str, Any]] = {}
        self.header_by_id: dict[int, str] = {}
        for h in doc.get("headers", []):
            if h["header_type"] not in self.header_types:
                raise ValueError(f"header {h['name']}: unknown header_type {h['header_type']!r}")
            self.headers[h["name"]] = h
            self.header_by_id[h["id"]] = h["name"]
        self.header_stacks: dict[str, list[str]] = {
            s["name"]: [self.header_by_id[i] for i in s["header_ids"]] for s in doc.get("header_stacks", [])}
        self.errors: dict[str, int] = {e[0]: e[1] for e in doc.get("errors", [])}
        self.actions: dict[int, ActionInfo] = {}
        for a in doc.get("actions", []):
            self.actions[a["id"]] = ActionInfo(
                a["name"], a["id"], tuple((r["name"], int(r["bitwidth"])) for r in a.get("runtime_data", [])))
        self.tables: dict[str, TableInfo] = {}
        self.profiles: dict[str, ProfileInfo] = {}
        self.pipelines: dict[str, dict[str, Any]] = {}
        for pl in doc.get("pipelines", []):
            self.pipelines[pl["name"]] = pl
            for ap in pl.get("action_profiles", []):
                sel = ap.get("selector")
                self.profiles[ap["name"]] = ProfileInfo(
                    ap["name"], ap["id"], int(ap.get("max_size", 0)),
                    sel["algo"] if sel else None,
                    tuple(tuple(i["value"]) for i in sel["input"]) if sel else ())
            for t in pl.get("tables", []):
                self.tables[t["name"]] = self._table(pl["name"], t)
        self.counters: dict[str, ArrayInfo] = {
            c["name"]: ArrayInfo("counter", c["name"], c["id"], int(c.get("size", 0)),
                                 bool(c.get("is_direct")), c.get("binding"))
            for c in doc.get("counter_arrays", [])}
        self.meters: dict[str, ArrayInfo] = {
            m["name"]: ArrayInfo("meter", m["name"], m["id"], int(m.get("size", 0)),
                                 bool(m.get("is_direct")), m.get("binding"),
                                 meter_type=m.get("type", "packets"), rate_count=int(m.get("rate_count", 2)),
                                 result_target=tuple(m["result_target"]) if m.get("result_target") else None)
            for m in doc.get("meter_arrays", [])}
        self.registers: dict[str, ArrayInfo] = {
            r["name"]: ArrayInfo("register", r["name"], r["id"], int(r["size"]), bitwidth=int(r["bitwidth"]))
            for r in doc.get("register_arrays", [])}
        self.learn_lists: dict[int, LearnList] = {
            ll["id"]: LearnList(ll["id"], ll["name"], tuple(tuple(e["value"]) for e in ll.get("elements", [])))
            for ll in doc.get("learn_lists", [])}
        self.field_lists: dict[int, tuple[tuple[str, str], ...]] = {
            fl["id"]: tuple(tuple(e["value"]) for e in fl.get("elements", []) if e.get("type") == "field")
            for fl in doc.get("field_lists", [])}
        self.calculations: dict[str, dict[str, Any]] = {c["name"]: c for c in doc.get("calculations", [])}
        # header unions: name -> member header instances (header_unions' header_ids)
        self.header_unions: dict[str, list[str]] = {
            u["name"]: [self.header_by_id[i] for i in u["header_ids"]] for u in doc.get("header_unions", [])}
        union_by_id = {u["id"]: u["name"] for u in doc.get("header_unions", [])}
        # union name -> its members' names in the union type, in order (an extract from a union stack
        # names the member)
        member_names = {ut["name"]: [m[0] for m in ut["headers"]] for ut in doc.get("header_union_types", [])}
        self.union_member_names: dict[str, list[str]] = {
            u["name"]: member_names.get(u["union_type"], []) for u in doc.get("header_unions", [])}
        # header union stacks: name -> the unions of its elements, in order
        self.header_union_stacks: dict[str, list[str]] = {
            s["name"]: [union_by_id[i] for i in s["header_union_ids"]] for s in doc.get("header_union_stacks", [])}
        # parser value sets: name -> compressed bit width (the select key without byte padding)
        self.parse_vsets: dict[str, int] = {v["name"]: int(v["compressed_bitwidth"])
                                            for v in doc.get("parse_vsets", [])}
        self._validate()

    def _table(self, pipeline: str, t: dict[str, Any]) -> TableInfo:
        key = []
        for k in t.get("key", []):
            mt = k["match_type"]
            if mt not in MATCH_KINDS:
                raise ValueError(f"table {t['name']}: match_type {mt!r} is not one of {', '.join(MATCH_KINDS)}")
            target = k["target"]
            if mt == "valid":
                width = 1
                tgt: tuple[str, str] | str = target if isinstance(target, str) else target[0]
            else:
                tgt = (target[0], target[1])
                width = self.field_width(tgt)
            name = k.get("name") or (tgt if isinstance(tgt, str) else ".".join(tgt))
            mask = _int(k["mask"]) if k.get("mask") not in (None, "") else None
            key.append(KeyField(name, mt, width, tgt, mask))
        de = t.get("default_entry")
        default = None
        if de is not None:
            default = DefaultEntry(int(de["action_id"]), tuple(_int(v) for v in de.get("action_data", [])),
                                   bool(de.get("action_const", False)), bool(de.get("action_entry_const", False)))
        action_ids = tuple(t.get("action_ids") or ())
        if not action_ids:
            raise ValueError(f"table {t['name']}: no action_ids")
        return TableInfo(
            name=t["name"], id=t["id"], pipeline=pipeline, match_type=t.get("match_type", "exact"),
            type=t.get("type", "simple"), action_profile=t.get("action_profile"),
            max_size=int(t.get("max_size", 1024)), with_counters=bool(t.get("with_counters")),
            direct_meters=t.get("direct_meters"), key=tuple(key), action_ids=action_ids,
            next_tables=dict(t.get("next_tables", {})), base_default_next=t.get("base_default_next"),
            default_entry=default, const_entries=list(t.get("entries") or []),
            support_timeout=bool(t.get("support_timeout")))

    def field_width(self, ref: tuple[str, str] | list[str]) -> int:
        """Width in bits of header field (header, field); `$valid$` is 1 bit."""
        hdr, fname = ref[0], ref[1]
        if hdr not in self.headers:
            raise ValueError(f"field {hdr}.{fname}: unknown header instance {hdr!r}")
        if fname == "$valid$":
            return 1
        for name, width, _signed in self.header_types[self.headers[hdr]["header_type"]]:
            if name == fname:
                return width
        raise ValueError(f"field {hdr}.{fname}: header {hdr!r} has no field {fname!r}")

    def _validate(self) -> None:
        check_operands(self.doc)  # what bmv2 rejects at load time, p4sim rejects too
        self._check_sizes()
        for t in self.tables.values():
            for aid in t.action_ids:
                if aid not in self.actions:
                    raise ValueError(f"table {t.name}: unknown action id {aid}")
            if t.type in ("indirect", "indirect_ws") and t.action_profile not in self.profiles:
                raise ValueError(f"table {t.name}: unknown action_profile {t.action_profile!r}")
            if t.default_entry and t.default_entry.action_id not in self.actions:
                raise ValueError(f"table {t.name}: default action id {t.default_entry.action_id} is unknown")
        if "standard_metadata" not in self.headers:
            raise ValueError("bmv2 JSON: no 'standard_metadata' header instance (not a v1model program)")
        for name in ("ingress", "egress"):
            if name not in self.pipelines:
                raise ValueError(f"bmv2 JSON: no '{name}' pipeline (not a v1model program)")

    def _check_sizes(self) -> None:
        """ValueError naming the first object whose size is not an unsigned 32-bit int.

        bmv2 reads every size of the JSON as an unsigned int (jsoncpp asUInt): it aborts with
        "LargestInt out of UInt range" above 2^32 - 1, and std::bad_alloc well before that for arrays.
        """
        sized = [("table", t.name, t.max_size) for t in self.tables.values()]
        sized += [("action profile", p.name, p.max_size) for p in self.profiles.values()]
        sized += [(a.kind, a.name, a.size) for arrays in (self.counters, self.meters, self.registers)
                  for a in arrays.values()]
        for kind, name, size in sized:
            if not 0 <= size <= MAX_SIZE:
                raise ValueError(f"{kind} {name}: size {size} is not in 0..{MAX_SIZE} "
                                 "(bmv2 reads sizes as 32-bit unsigned ints)")

    def table_actions(self, table: str) -> dict[str, ActionInfo]:
        """The actions a table may use, by name (names are unique within one table)."""
        return {self.actions[a].name: self.actions[a] for a in self.tables[table].action_ids}

    def profile_actions(self, profile: str) -> dict[str, ActionInfo]:
        """The actions the members of an action profile may use (those of the tables sharing it)."""
        out: dict[str, ActionInfo] = {}
        for t in self.tables.values():
            if t.action_profile == profile:
                out.update(self.table_actions(t.name))
        return out


def parse_program(data: bytes | str) -> Program:
    """Parse bmv2 JSON text into a Program; ValueError on bad JSON or an unsupported program."""
    try:
        doc = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ValueError(f"bmv2 JSON: not valid JSON ({e})") from None
    if not isinstance(doc, dict):
        raise ValueError(f"bmv2 JSON: expected a JSON object at top level, got {type(doc).__name__}")
    version = doc.get("__meta__", {}).get("version")
    if not version or int(version[0]) != 2:
        raise ValueError(f"bmv2 JSON: __meta__.version {version!r} is not 2.x")
    try:
        return Program(doc)
    except (KeyError, TypeError, IndexError) as e:
        raise ValueError(f"bmv2 JSON: malformed document ({type(e).__name__}: {e})") from None
