"""The control-plane interface of a P4 program (tables, match fields, actions, parameters, widths),
read from its P4Info or from p4c's IR, and the comparison of two programs' interfaces.

The v1model program (P4Info from p4c) and the TNA program (P4Info from bf-p4c) must offer the same
interface, so tablegen and the controller need no Tofino special case (issue 21). Without bf-p4c,
p4c's front and mid end still read the TNA program (`p4c-bm2-ss --toJSON`, before the bmv2 back end
refuses a non-V1Switch): its IR holds every table and action with the P4Info names they will have
(@name), which is a weaker but genuine check of the same interface. p4c's own P4Info generator has
no TNA support ("Arch 'tna' not supported by P4Runtime serializer"), and p4sim-compile does not read
tna.p4.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from google.protobuf import text_format
from p4.config.v1 import p4info_pb2

_CONTROL = re.compile(r"(?:^|\.)((?:Fabric|Ocs)(?:Ingress|Egress)\..*)$")
_MATCH = {p4info_pb2.MatchField.EXACT: "exact", p4info_pb2.MatchField.LPM: "lpm",
          p4info_pb2.MatchField.TERNARY: "ternary", p4info_pb2.MatchField.RANGE: "range",
          p4info_pb2.MatchField.OPTIONAL: "optional"}


def local_name(name: str) -> str:
    """A P4 name from its control on ("pipe.FabricIngress.acl.acl" -> "FabricIngress.acl.acl"),
    NoAction and friends without their leading dot."""
    name = name.lstrip(".")
    m = _CONTROL.search(name)
    return m.group(1) if m else name


@dataclass(slots=True)
class Table:
    """A table as the control plane sees it."""

    match: list[tuple[str, int, str]]  # (name, bit width, match kind), in key order
    actions: list[str]
    implementation: str | None = None


@dataclass(slots=True)
class Interface:
    """Tables and actions (parameters: name and width) by local name."""

    tables: dict[str, Table] = field(default_factory=dict)
    actions: dict[str, list[tuple[str, int]]] = field(default_factory=dict)


def from_p4info(path: str | Path) -> Interface:
    """The interface in a P4Info text file."""
    info = text_format.Parse(Path(path).read_text(), p4info_pb2.P4Info())
    actions = {a.preamble.id: a for a in info.actions}
    profiles = {p.preamble.id: local_name(p.preamble.name) for p in info.action_profiles}
    out = Interface()
    for a in info.actions:
        out.actions[local_name(a.preamble.name)] = [(p.name, p.bitwidth) for p in a.params]
    for t in info.tables:
        out.tables[local_name(t.preamble.name)] = Table(
            [(m.name, m.bitwidth, _MATCH.get(m.match_type, str(m.match_type))) for m in t.match_fields],
            sorted(local_name(actions[r.id].preamble.name) for r in t.action_refs),
            profiles.get(t.implementation_id))
    return out


class _Ir:
    """p4c's IR JSON (--toJSON): nodes are written once, then referenced by Node_ID."""

    def __init__(self, doc: Any) -> None:
        self.nodes: dict[int, dict[str, Any]] = {}
        self._index(doc)

    def _index(self, node: Any) -> None:
        stack = [node]
        while stack:
            n = stack.pop()
            if isinstance(n, dict):
                if "Node_Type" in n:
                    self.nodes.setdefault(n["Node_ID"], n)
                stack.extend(n.values())
            elif isinstance(n, list):
                stack.extend(n)

    def get(self, ref: Any) -> Any:
        if isinstance(ref, dict) and "Node_Type" not in ref and "Node_ID" in ref:
            return self.nodes.get(ref["Node_ID"], ref)
        return ref

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        return [n for n in self.nodes.values() if n["Node_Type"] == kind]

    def annotation(self, node: dict[str, Any], name: str) -> str | None:
        """The string of @name(...) and the like; "" for an annotation without one (@hidden)."""
        for a in self.get(node.get("annotations", {})).get("vec", []):
            a = self.get(a)
            if a.get("name") == name:
                for v in self.get(a.get("body", {}).get("value", {})).get("vec", []) or []:
                    v = self.get(v)
                    if v.get("Node_Type") == "StringLiteral":
                        return str(v["value"])
                return ""
        return None

    def width(self, type_ref: Any) -> int:
        t = self.get(type_ref)
        if t.get("Node_Type") in ("Type_Bits", "Type_Varbits"):
            return int(t["size"])
        if t.get("Node_Type") == "Type_Boolean":
            return 1
        raise ValueError(f"IR type {t.get('Node_Type')!r} (node {t.get('Node_ID')}): expected bit<W>")


    def key_width(self, expr: dict[str, Any]) -> int:
        """The width of a key expression. When the metadata struct holds a nested struct, p4c's bmv2
        mid end flattens it (meta.path_id becomes meta._path_id20) but leaves the member's type the
        struct's; the field is then found by its flattened name in the original struct."""
        t = self.get(expr["type"])
        if t.get("Node_Type") != "Type_Struct" or expr.get("Node_Type") != "Member":
            return self.width(expr["type"])
        stem = re.sub(r"^_(.*?)\d+$", r"\1", expr["member"])
        found = self._field_width(t, stem)
        if found is None:
            raise ValueError(f"IR member {expr['member']!r}: no field of {t.get('name')!r} flattens to it")
        return found

    def _field_width(self, struct: dict[str, Any], stem: str) -> int | None:
        for f in (self.get(x) for x in self.get(struct["fields"])["vec"]):
            ft = self.get(f["type"])
            if f["name"] == stem:
                return self.width(ft)
            if ft.get("Node_Type") == "Type_Struct" and stem.startswith(f["name"] + "_"):
                inner = self._field_width(ft, stem[len(f["name"]) + 1:])
                if inner is not None:
                    return inner
        return None


    def profile_of(self, instances: dict[str, dict[str, Any]], name: str) -> dict[str, Any] | None:
        """The instance P4Runtime names a table's implementation after: the instance itself, or the
        ActionProfile a TNA ActionSelector is built on (bf-p4c's P4Info of standard externs)."""
        inst = instances.get(name)
        if inst is None:
            return None
        args = [self.get(a) for a in self.get(inst.get("arguments", {})).get("vec", [])]
        first = self.get(args[0].get("expression", {})) if args else {}
        inner = instances.get(self.get(first.get("path", {})).get("name", "")) if first.get("Node_Type") == "PathExpression" else None
        return inner if inner is not None and self._type_name(inner) == "ActionProfile" else inst

    def _type_name(self, inst: dict[str, Any]) -> str:
        t = self.get(inst.get("type", {}))
        t = self.get(t.get("baseType", t))
        return str(self.get(t.get("path", {})).get("name", t.get("name", "")))


def from_p4c_ir(path: str | Path) -> Interface:
    """The interface of a program in p4c's IR after its mid end (p4c-bm2-ss --toJSON FILE)."""
    ir = _Ir(json.loads(Path(path).read_text()))
    actions_by_name: dict[str, dict[str, Any]] = {}
    out = Interface()
    for a in ir.of_type("P4Action"):
        actions_by_name.setdefault(a["name"], a)
        full = ir.annotation(a, "name")
        if full is None or ir.annotation(a, "hidden") is not None:
            continue
        params = ir.get(ir.get(a["parameters"])["parameters"])["vec"]
        out.actions[local_name(full)] = [
            (ir.annotation(p := ir.get(q), "name") or p["name"], ir.width(p["type"])) for q in params]
    instances = {d["name"]: d for d in ir.of_type("Declaration_Instance")}
    for t in ir.of_type("P4Table"):
        full = ir.annotation(t, "name")
        if full is None or ir.annotation(t, "hidden") is not None:
            continue
        props = {ir.get(p)["name"]: ir.get(p) for p in ir.get(ir.get(t["properties"])["properties"])["vec"]}
        match = []
        if "key" in props:
            for k in ir.get(ir.get(props["key"]["value"])["keyElements"])["vec"]:
                k = ir.get(k)
                kind = ir.get(ir.get(k["matchType"])["path"])["name"]
                if kind == "selector":
                    continue  # selector inputs are no match field in P4Info
                expr = ir.get(k["expression"])
                name = ir.annotation(k, "name") or expr.get("member", "")
                match.append((name, ir.key_width(expr), kind))
        names = []
        for el in ir.get(ir.get(props["actions"]["value"])["actionList"])["vec"]:
            expr = ir.get(ir.get(el)["expression"])
            method = ir.get(expr["method"]) if expr["Node_Type"] == "MethodCallExpression" else expr
            internal = ir.get(method["path"])["name"]
            decl = actions_by_name.get(internal)
            names.append(local_name((decl and ir.annotation(decl, "name")) or internal))
        impl = None
        if "implementation" in props:
            ref = ir.get(ir.get(props["implementation"]["value"])["expression"])
            inst = ir.profile_of(instances, ir.get(ref.get("path", {})).get("name", ""))
            impl = local_name((inst and ir.annotation(inst, "name")) or ir.get(ref.get("path", {})).get("name", ""))
        out.tables[local_name(full)] = Table(match, sorted(names), impl)
    return out


def compare(v1model: Interface, tna: Interface, allowed: dict[str, str] | None = None) -> list[str]:
    """Every difference between two interfaces in what the control plane uses (tables, their match
    fields with widths and kinds, their actions and profiles, the parameters of those actions), as one
    line each; a line whose text is a key of `allowed` (a Tofino-forced difference, with its reason)
    is left out."""
    allowed = allowed or {}
    diffs: list[str] = []
    for name in sorted(set(v1model.tables) | set(tna.tables)):
        a, b = v1model.tables.get(name), tna.tables.get(name)
        if a is None or b is None:
            diffs.append(f"table {name}: only in {'tna' if a is None else 'v1model'}")
            continue
        if [(n, w) for n, w, _ in a.match] != [(n, w) for n, w, _ in b.match]:
            diffs.append(f"table {name}: match fields {a.match} != {b.match}")
        else:
            for (field_name, _, ka), (_, _, kb) in zip(a.match, b.match, strict=True):
                if ka != kb:
                    diffs.append(f"table {name}: match field {field_name}: {ka} on v1model, {kb} on tna")
        if a.actions != b.actions:
            diffs.append(f"table {name}: actions {a.actions} != {b.actions}")
        if a.implementation != b.implementation:
            diffs.append(f"table {name}: implementation {a.implementation} != {b.implementation}")
        for action in a.actions:
            pa, pb = v1model.actions.get(action), tna.actions.get(action)
            if pb is not None and pa != pb:
                diffs.append(f"action {action}: parameters {pa} != {pb}")
    return [d for d in diffs if d not in allowed]
