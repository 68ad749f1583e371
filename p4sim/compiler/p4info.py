"""P4Info (P4Runtime spec section 6) from the compiled program, with p4c's ID scheme.

IDs: the top 8 bits are the P4Ids prefix of the object kind; the low 24 bits come from the
Jenkins one-at-a-time hash of the fully qualified name, probing upwards on collision, unless
the object has an @id annotation (p4c's P4RuntimeSymbolTable).
"""

from __future__ import annotations

from typing import Any

from google.protobuf import text_format
from p4.config.v1 import p4info_pb2

from p4sim.compiler import ast as A
from p4sim.compiler.builder import Bmv2Json, P4InfoObj, P4InfoTable, id_annotation
from p4sim.compiler.errors import CompileError
from p4sim.compiler.types import ListT, StructT, bit_width, strip

PREFIX = {"action": 0x01, "table": 0x02, "value_set": 0x03, "controller_header": 0x04,
          "action_profile": 0x11, "counter": 0x12, "direct_counter": 0x13, "meter": 0x14,
          "direct_meter": 0x15, "register": 0x16, "digest": 0x17}
_MATCH = {"exact": p4info_pb2.MatchField.EXACT, "lpm": p4info_pb2.MatchField.LPM,
          "ternary": p4info_pb2.MatchField.TERNARY, "range": p4info_pb2.MatchField.RANGE,
          "optional": p4info_pb2.MatchField.OPTIONAL}
_UNIT_C = {"packets": p4info_pb2.CounterSpec.PACKETS, "bytes": p4info_pb2.CounterSpec.BYTES,
           "both": p4info_pb2.CounterSpec.BOTH}
_UNIT_M = {"packets": p4info_pb2.MeterSpec.PACKETS, "bytes": p4info_pb2.MeterSpec.BYTES}


def jenkins_one_at_a_time(name: str) -> int:
    """Bob Jenkins' one-at-a-time hash of a name (32 bits), as p4c uses for P4Runtime IDs."""
    h = 0
    for b in name.encode():
        h = (h + b) & 0xFFFFFFFF
        h = (h + (h << 10)) & 0xFFFFFFFF
        h ^= h >> 6
    h = (h + (h << 3)) & 0xFFFFFFFF
    h ^= h >> 11
    h = (h + (h << 15)) & 0xFFFFFFFF
    return h


class IdAllocator:
    """Assigns P4Runtime IDs: @id first, then hashed names."""

    def __init__(self) -> None:
        self.used: set[int] = set()

    def fixed(self, kind: str, value: int, name: str, loc: Any = None) -> int:
        """Reserve an @id (given as the full id or as the low 24 bits)."""
        if value >> 24 and value >> 24 != PREFIX[kind]:
            raise CompileError(loc, f"@id({value:#x}) of {name} has the wrong prefix: expected {PREFIX[kind]:#04x}")
        pid = (PREFIX[kind] << 24) | (value & 0xFFFFFF)
        if pid in self.used:
            raise CompileError(loc, f"@id({value}) of {name} is already used")
        self.used.add(pid)
        return pid

    def hashed(self, kind: str, name: str) -> int:
        """An ID from the name's hash, probing on collisions."""
        low = jenkins_one_at_a_time(name)
        while True:
            pid = (PREFIX[kind] << 24) | (low & 0xFFFFFF)
            if pid not in self.used and (low & 0xFFFFFF) != 0:
                self.used.add(pid)
                return pid
            low += 1


def _aliases(names: list[str]) -> dict[str, str]:
    """Shortest dotted suffix of each name that is unique among all names (p4c's alias)."""
    out = {}
    for n in names:
        parts = n.split(".")
        for k in range(1, len(parts) + 1):
            suf = ".".join(parts[-k:])
            if sum(1 for m in names if m == suf or m.endswith("." + suf)) == 1:
                out[n] = suf
                break
        else:
            out[n] = n
    return out


def _numbered(repeated: Any, params: list[tuple[str, int]]) -> None:
    """Add (name, bitwidth) pairs as P4Info members numbered from 1 in order (action parameters,
    controller header fields)."""
    for i, (name, width) in enumerate(params, 1):
        m = repeated.add()
        m.id, m.name, m.bitwidth = i, name, width


def build_p4info(bm: Bmv2Json) -> p4info_pb2.P4Info:
    """The P4Info message of the compiled program."""
    info = p4info_pb2.P4Info()
    info.pkg_info.arch = "v1model"
    objs = bm.p4_objs
    alloc = IdAllocator()
    entries: list[tuple[str, str, object]] = [("table", t.name, t) for t in bm.p4_tables]
    entries += [(o.kind, o.name, o) for o in objs]
    for kind, name, obj in entries:
        if obj.fixed_id is not None:  # type: ignore[attr-defined]
            obj.id = alloc.fixed(kind, obj.fixed_id, name, obj.loc)  # type: ignore[attr-defined]
    for kind, name, obj in sorted(entries, key=lambda e: (PREFIX[e[0]], e[1])):
        if obj.id is None:  # type: ignore[attr-defined]
            obj.id = alloc.hashed(kind, name)  # type: ignore[attr-defined]
    alias = _aliases([name for _, name, _ in entries])
    ids = {(k, n): o.id for k, n, o in entries}  # type: ignore[attr-defined]

    def pre(msg: object, obj: P4InfoObj | P4InfoTable, annos: list[str] | None = None) -> None:
        msg.preamble.id = obj.id  # type: ignore[attr-defined]
        msg.preamble.name = obj.name  # type: ignore[attr-defined]
        msg.preamble.alias = alias[obj.name]  # type: ignore[attr-defined]
        for a in annos or []:
            msg.preamble.annotations.append(a)  # type: ignore[attr-defined]

    action_params = {o.name: o.params for o in objs if o.kind == "action"}
    for t in sorted(bm.p4_tables, key=lambda t: t.id or 0):
        tm = info.tables.add()
        pre(tm, t)
        for i, (kname, w, mk) in enumerate(t.keys, 1):
            mf = tm.match_fields.add()
            mf.id, mf.name, mf.bitwidth, mf.match_type = i, kname, w, _MATCH[mk]
        for aname, scope in t.actions:
            ar = tm.action_refs.add()
            ar.id = ids[("action", aname)]
            if scope:
                ar.scope = p4info_pb2.ActionRef.Scope.Value(scope)
                ar.annotations.append("@defaultonly" if scope == "DEFAULT_ONLY" else "@tableonly")
        if t.const_default:
            tm.const_default_action_id = ids[("action", t.const_default)]
        if t.initial_default is not None and ("action", t.initial_default[0]) in ids:
            name, args = t.initial_default
            ida = tm.initial_default_action
            ida.action_id = ids[("action", name)]
            widths = [w for _, w in action_params[name]]
            for i, (v, w) in enumerate(zip(args, widths, strict=True), 1):
                ida.arguments.add(param_id=i, value=v.to_bytes((w + 7) // 8, "big"))
        if t.implementation:
            tm.implementation_id = ids[("action_profile", t.implementation)]
        for dname in t.direct:
            kind = "direct_counter" if ("direct_counter", dname) in ids else "direct_meter"
            tm.direct_resource_ids.append(ids[(kind, dname)])
        tm.size = t.size
        if t.is_const:
            tm.is_const_table = True
        if t.idle_timeout:
            tm.idle_timeout_behavior = p4info_pb2.Table.NOTIFY_CONTROL
    bykind: dict[str, list[P4InfoObj]] = {}
    for o in objs:
        bykind.setdefault(o.kind, []).append(o)
    for kind in bykind:
        bykind[kind].sort(key=lambda o: o.id or 0)
    for o in bykind.get("action", []):
        am = info.actions.add()
        pre(am, o, [_annotation(a) for a in o.extra["decl"].annos if a.name not in ("name", "id")])
        _numbered(am.params, o.params)
    for o in bykind.get("action_profile", []):
        pm = info.action_profiles.add()
        pre(pm, o)
        for tname in o.extra.get("tables", []):
            pm.table_ids.append(ids[("table", tname)])
        pm.with_selector = bool(o.extra.get("with_selector"))
        pm.size = o.size

    def resource(repeated: Any, o: P4InfoObj, units: dict[str, int]) -> Any:
        msg = repeated.add()
        pre(msg, o)
        msg.spec.unit = units[o.unit]
        return msg

    for kind, units, indirect, direct in (("counter", _UNIT_C, info.counters, info.direct_counters),
                                          ("meter", _UNIT_M, info.meters, info.direct_meters)):
        for o in bykind.get(kind, []):
            resource(indirect, o, units).size = o.size
        for o in bykind.get(f"direct_{kind}", []):
            if "table" in o.extra:  # a direct resource no table uses is left out
                resource(direct, o, units).direct_table_id = ids[("table", o.extra["table"])]
    for o in bykind.get("controller_header", []):
        cm = info.controller_packet_metadata.add()
        pre(cm, o, [f'@controller_header("{o.name}")'])
        _numbered(cm.metadata, o.params)
    for o in bykind.get("register", []):
        rm = info.registers.add()
        pre(rm, o)
        rm.type_spec.bitstring.bit.bitwidth = o.extra["bitwidth"]
        rm.size = o.size
    for o in bykind.get("digest", []):
        dm = info.digests.add()
        pre(dm, o)
        st = strip(o.extra["type"])
        if isinstance(st, ListT):
            for it in st.items:
                dm.type_spec.tuple.members.add().bitstring.bit.bitwidth = bit_width(strip(it))
        elif isinstance(st, StructT):
            dm.type_spec.struct.name = st.name
            sm = info.type_info.structs[st.name]
            for fname, ft in st.fields:
                m = sm.members.add()
                m.name = fname
                m.type_spec.bitstring.bit.bitwidth = bit_width(strip(ft))
        else:
            dm.type_spec.bitstring.bit.bitwidth = bit_width(st)
    for o in bykind.get("value_set", []):
        vm = info.value_sets.add()
        pre(vm, o)
        for i, (mname, w) in enumerate(o.params, 1):
            mf = vm.match.add()
            mf.id, mf.bitwidth, mf.match_type = i, w, p4info_pb2.MatchField.EXACT
            if mname:  # a struct member; a bit<W> value set has one unnamed field, as p4c
                mf.name = mname
        vm.size = o.size
    if info.tables:
        info.type_info.SetInParent()  # p4c writes it for a program with tables, empty when no type needs it
    return info


def _annotation(a: A.Annotation) -> str:
    """An annotation as P4Info carries it: `@noWarn("unused")`."""
    if not a.args:
        return f"@{a.name}"
    return f"@{a.name}(" + ", ".join(f'"{v}"' if isinstance(v, str) and not v.startswith('"') else str(v)
                                     for v in a.args) + ")"


def controller_headers(bm: Bmv2Json, structs: list[StructT]) -> None:
    """Record @controller_header headers for P4Info."""
    for st in structs:
        a = A.anno(st.annos, "controller_header")
        if st.kind == "header" and a and a.args:
            bm.p4_objs.append(P4InfoObj("controller_header", str(a.args[0]),
                                        params=[(n, bit_width(strip(t))) for n, t in st.fields],
                                        fixed_id=id_annotation(st.annos)))


def to_text(info: p4info_pb2.P4Info) -> str:
    """Protobuf text format of the P4Info."""
    return text_format.MessageToString(info)
