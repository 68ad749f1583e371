"""The bmv2 JSON document under construction (bmv2 docs/JSON_format.md), plus P4Info records."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from p4sim.compiler.env import FieldE, HeaderE, StackE, StructE
from p4sim.compiler.errors import Loc
from p4sim.compiler.types import BitsT, StackT, StructT, Type, VarbitT, bit_width, strip

JSON_VERSION = [2, 23]

# standard_metadata as simple_switch defines it (field, width); p4c pads the header to bytes.
STD_META = [
    ("ingress_port", 9), ("egress_spec", 9), ("egress_port", 9), ("instance_type", 32),
    ("packet_length", 32), ("enq_timestamp", 32), ("enq_qdepth", 19), ("deq_timedelta", 32),
    ("deq_qdepth", 19), ("ingress_global_timestamp", 48), ("egress_global_timestamp", 48),
    ("mcast_grp", 16), ("egress_rid", 16), ("checksum_error", 1), ("parser_error", 32), ("priority", 3),
]


def id_annotation(annos: list[Any]) -> int | None:
    """The value of an @id annotation, if any."""
    for a in annos:
        if a.name == "id" and a.args and isinstance(a.args[0], int):
            return a.args[0]
    return None


def source_info(loc: Loc | None, fragment: str) -> dict:
    """bmv2 source_info object."""
    if loc is None:
        return {"filename": "<builtin>", "line": 0, "column": 0, "source_fragment": fragment}
    return {"filename": loc.file, "line": loc.line, "column": loc.col, "source_fragment": fragment}


@dataclass(slots=True)
class P4InfoTable:
    """What P4Info needs about one control-plane table."""

    name: str
    keys: list[tuple[str, int, str]]      # (name, bitwidth, match kind)
    actions: list[tuple[str, str]]        # (action name, scope: '', 'DEFAULT_ONLY', 'TABLE_ONLY')
    size: int
    const_default: str | None = None
    initial_default: tuple[str, list[int]] | None = None  # the default action and its arguments
    implementation: str | None = None
    direct: list[str] = field(default_factory=list)
    is_const: bool = False
    idle_timeout: bool = False
    annos: list[str] = field(default_factory=list)
    id: int | None = None
    fixed_id: int | None = None  # from @id
    loc: Any = None


@dataclass(slots=True)
class P4InfoObj:
    """A P4Info action, counter, meter, register, action profile, digest or controller header."""

    kind: str
    name: str
    id: int | None = None
    params: list[tuple[str, int]] = field(default_factory=list)
    size: int = 0
    unit: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    fixed_id: int | None = None  # from @id
    loc: Any = None


class Bmv2Json:
    """Collects header types, instances, actions, pipelines... and renders the JSON document."""

    def __init__(self, program_file: str) -> None:
        self.program_file = program_file
        self.header_types: list[dict] = []
        self._htypes: dict[str, str] = {}
        self.headers: list[dict] = []
        self.scalars: list[list] = []
        self._scalar_names: set[str] = set()
        self._names: set[str] = set()
        self._fresh = -1
        self.header_stacks: list[dict] = []
        self.field_lists: list[dict] = []
        self.learn_lists: list[dict] = []
        self.calculations: list[dict] = []
        self.counter_arrays: list[dict] = []
        self.meter_arrays: list[dict] = []
        self.register_arrays: list[dict] = []
        self.actions: list[dict] = []
        self.action_ids: dict[str, int] = {}
        self.parse_vsets: list[dict] = []
        self.header_union_types: list[dict] = []
        self.header_unions: list[dict] = []
        self.header_union_stacks: list[dict] = []
        self.digest_names: dict[int, str] = {}  # id of a digest call on a tuple -> digest_N
        self.action_memo: dict[str, int] = {}  # action name + bound directional arguments -> id
        self.parsers: list[dict] = []
        self.deparsers: list[dict] = []
        self.pipelines: list[dict] = []
        self.checksums: list[dict] = []
        self.errors: list[list] = []
        self.enums: list[dict] = []
        self.field_aliases: list[list] = []
        self.p4_tables: list[P4InfoTable] = []
        self.p4_objs: list[P4InfoObj] = []
        self.node_count = 0
        self.instances: list[Any] = []  # externs.InstInfo of every extern instance
        self.header_type({"name": "scalars_0", "fields": []})
        self.headers.append({"name": "scalars", "id": 0, "header_type": "scalars_0", "metadata": True,
                             "pi_omit": True})
        std = StructT("struct", "standard_metadata", [(n, BitsT(w)) for n, w in STD_META])
        self.std = self.add_header("standard_metadata", std, True)

    def fresh(self, base: str) -> str:
        """A fresh source-level name for a temporary the front end introduces (`tmp_3`)."""
        self._fresh += 1
        return f"{base}_{self._fresh}"

    def unique(self, base: str) -> str:
        """A name not used before by nodes, synthesized actions or calculations."""
        name, i = base, 0
        while name in self._names:
            name = f"{base}_{i}"
            i += 1
        self._names.add(name)
        return name

    def header_type(self, ht: dict) -> str:
        """Add a header type (by name, once)."""
        if ht["name"] not in self._htypes:
            ht = {"name": ht["name"], "id": len(self.header_types), "fields": ht["fields"],
                  **({"max_length": ht["max_length"]} if "max_length" in ht else {})}
            self.header_types.append(ht)
            self._htypes[ht["name"]] = ht["name"]
        return ht["name"]

    def struct_header_type(self, st: StructT) -> str:
        """The header type of a header (or metadata struct) declaration."""
        fields: list[list] = []
        total = 0
        varbit = False
        for n, t in st.fields:
            ts = strip(t)
            w = bit_width(ts)
            if isinstance(ts, VarbitT):  # bmv2: width "*", the header's max_length in bytes
                fields.append([n, "*"])
                varbit = True
            else:
                fields.append([n, w, bool(isinstance(ts, BitsT) and ts.signed)])
            total += w
        if total % 8 and st.kind != "header":  # headers are checked to be whole bytes when declared
            fields.append(["_padding", 8 - total % 8, False])
        ht: dict = {"name": st.name, "fields": fields}
        if varbit:
            ht["max_length"] = total // 8
        return self.header_type(ht)

    def add_header(self, inst: str, st: StructT, metadata: bool) -> HeaderE:
        """A header instance of type st."""
        ht = self.struct_header_type(st)
        self.headers.append({"name": inst, "id": len(self.headers), "header_type": ht, "metadata": metadata,
                             "pi_omit": True})
        return HeaderE(inst, st, metadata)

    def add_union(self, name: str, ut: StructT) -> StructE:
        """A header union: member header instances `name.member` (p4c's HeaderConverter), the union
        and its type; a StructE of the members whose type has kind header_union."""
        members = {m: self.add_header(f"{name}.{m}", strip(mt), False) for m, mt in ut.fields}  # type: ignore[arg-type]
        if not any(t["name"] == ut.name for t in self.header_union_types):
            self.header_union_types.append({"name": ut.name, "id": len(self.header_union_types),
                                            "headers": [[m, strip(mt).name] for m, mt in ut.fields]})  # type: ignore[attr-defined]
        self.header_unions.append({"name": name, "id": len(self.header_unions), "union_type": ut.name,
                                   "header_ids": [self._header_id(h.inst) for h in members.values()]})
        return StructE(dict(members), ut)

    def add_stack(self, name: str, st: StackT) -> StackE:
        """A header stack and its element instances `name[i]`; a stack of header unions has unions
        `name[i]` (members `name[i].m`) and a header_union_stacks entry (p4c's HeaderConverter)."""
        if st.elem.kind == "header_union":
            unions = [self.add_union(f"{name}[{i}]", st.elem) for i in range(st.size)]
            first = len(self.header_unions) - st.size
            self.header_union_stacks.append({"name": name, "id": len(self.header_union_stacks),
                                             "union_type": st.elem.name, "size": st.size,
                                             "header_union_ids": list(range(first, first + st.size))})
            return StackE(name, st, unions)  # type: ignore[arg-type]
        elems = [self.add_header(f"{name}[{i}]", st.elem, False) for i in range(st.size)]
        self.header_stacks.append({"name": name, "id": len(self.header_stacks),
                                   "header_type": self.struct_header_type(st.elem), "size": st.size,
                                   "header_ids": [self._header_id(e.inst) for e in elems]})
        return StackE(name, st, elems)

    def _header_id(self, inst: str) -> int:
        for h in self.headers:
            if h["name"] == inst:
                return h["id"]
        raise KeyError(inst)

    def scalar(self, name: str, t: Type) -> FieldE:
        """A new field of the `scalars` metadata header."""
        base, i = name, 0
        while name in self._scalar_names:
            name = f"{base}_{i}"
            i += 1
        self._scalar_names.add(name)
        ts = strip(t)
        self.scalars.append([name, bit_width(ts), bool(isinstance(ts, BitsT) and ts.signed)])
        return FieldE(["scalars", name], t)

    def add_action(self, name: str, params: list[tuple[str, int]], prims: list[dict], loc: Loc | None) -> int:
        """Add an action; returns its id."""
        aid = len(self.actions)
        for i, pr in enumerate(prims):  # jump targets: relative while lowering, absolute in bmv2 JSON
            rel = pr.pop("_rel", None)
            if rel is not None:
                pr["parameters"] = pr["parameters"] + [{"type": "hexstr", "value": f"0x{i + rel:02x}"}]
        self.actions.append({"name": name, "id": aid,
                             "runtime_data": [{"name": n, "bitwidth": w} for n, w in params],
                             "primitives": prims})
        if loc is not None:
            self.actions[-1]["source_info"] = source_info(loc, name)
        self.action_ids.setdefault(name, aid)
        return aid

    def add_calculation(self, algo: str, inputs: list[dict], loc: Loc | None, fragment: str) -> str:
        """A calculation (hash or checksum over fields); returns its name."""
        name = self.unique("calc")
        self.calculations.append({"name": name, "id": len(self.calculations), "source_info":
                                  source_info(loc, fragment), "algo": algo, "input": inputs})
        return name

    def new_field_list(self, elements: list[dict], name: str) -> int:
        """A new field list (ids from 1, in creation order, as p4c's nextId); returns its id."""
        fid = len(self.field_lists) + 1
        self.field_lists.append({"id": fid, "name": name, "elements": elements})
        return fid

    def add_learn_list(self, name: str, elements: list[dict]) -> int:
        """A learn list (digest); returns its id."""
        for ll in self.learn_lists:
            if ll["name"] == name:
                return ll["id"]
        lid = len(self.learn_lists) + 1
        self.learn_lists.append({"id": lid, "name": name, "source_info": source_info(None, name),
                                 "elements": elements})
        return lid

    def document(self) -> dict:
        """The complete bmv2 JSON object."""
        total = sum(f[1] for f in self.scalars)
        fields = list(self.scalars)
        if total % 8:
            fields.append(["_padding_0", 8 - total % 8, False])
        self.header_types[0]["fields"] = fields
        aliases = [[f"{pre}.{n}", ["standard_metadata", n]] for pre, names in (
            ("queueing_metadata", ["enq_timestamp", "enq_qdepth", "deq_timedelta", "deq_qdepth"]),
            ("intrinsic_metadata", ["ingress_global_timestamp", "egress_global_timestamp", "mcast_grp",
                                    "egress_rid", "priority"])) for n in names]
        return {
            "header_types": self.header_types,
            "headers": self.headers,
            "header_stacks": self.header_stacks,
            "header_union_types": self.header_union_types,
            "header_unions": self.header_unions,
            "header_union_stacks": self.header_union_stacks,
            "field_lists": self.field_lists,
            "errors": self.errors,
            "enums": self.enums,
            "parsers": self.parsers,
            "parse_vsets": self.parse_vsets,
            "deparsers": self.deparsers,
            "meter_arrays": self.meter_arrays,
            "counter_arrays": self.counter_arrays,
            "register_arrays": self.register_arrays,
            "calculations": self.calculations,
            "learn_lists": self.learn_lists,
            "actions": self.actions,
            "pipelines": self.pipelines,
            "checksums": self.checksums,
            "force_arith": [],
            "extern_instances": [],
            "field_aliases": aliases,
            "program": self.program_file,
            "__meta__": {"version": JSON_VERSION, "compiler": "p4sim"},
        }
