"""v1model externs: instances (counters, meters, registers, action profiles) and extern calls,
lowered to bmv2 arrays and simple_switch primitives."""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

from p4sim.compiler import ast as A
from p4sim.compiler.builder import Bmv2Json, P4InfoObj, id_annotation, source_info
from p4sim.compiler.env import DeclE, FieldE, HeaderE, StackE, StructE
from p4sim.compiler.errors import CompileError, Loc
from p4sim.compiler.exprs import ExprLowerer
from p4sim.compiler.jsonexpr import V, describe, hexstr, operand
from p4sim.compiler.types import (
    BitsT,
    BoolT,
    EnumT,
    ListT,
    ObjT,
    StructT,
    Type,
    bit_width,
    header_layout,
    is_scalar,
    strip,
)

# bmv2 calculation algorithm names for HashAlgorithm members
HASH_ALGOS = {"crc32": "crc32", "crc32_custom": "crc32_custom", "crc16": "crc16", "crc16_custom": "crc16_custom",
              "random": "random", "identity": "identity", "csum16": "csum16", "xor16": "xor16"}
_UNITS = {"packets": "packets", "bytes": "bytes", "packets_and_bytes": "both"}
MAX_SIZE = 2**32 - 1  # the largest size bmv2 reads from a JSON (an unsigned int)
_KINDS = ("counter", "direct_counter", "meter", "direct_meter", "register", "action_profile", "action_selector")

log = logging.getLogger(__name__)


class Lowering(ExprLowerer, ABC):
    """The statement lowerer as extern calls see it (p4sim.compiler.actions.StmtLowerer): expressions,
    the JSON document under construction, the control's context and writable fields."""

    bm: Bmv2Json
    ctx: Any

    @abstractmethod
    def lvalue(self, e: A.Expr) -> V:
        """A writable scalar field (StmtLowerer's)."""


@dataclass(slots=True, eq=False)
class InstInfo:
    """An extern instance and what the back end made of it."""

    kind: str
    name: str  # fully qualified
    decl: A.Instance
    size: int = 0
    unit: str = ""
    bitwidth: int = 0
    algo: str = ""
    tables: list[str] = field(default_factory=list)
    result_target: list[str] | None = None
    json: dict | None = None
    p4: P4InfoObj | None = None


def ctor_size(ev: Any, typ: ObjT, d: A.Instance, args: list[A.Expr], i: int, what: str = "size") -> int:
    """A constant size argument of an extern constructor, in the range of its declared type.

    v1model declares sizes `bit<32>`. p4c truncates a larger constant with a warning ("value does not
    fit in 32 bits": counter(4294967296000, ...) becomes a counter of size 0) and wraps a negative one
    to 2^32 - 1; a size is an amount, so here both are errors at the argument.
    """
    value = ev.const_int(args[i], f"a constant {what}")
    ptype = _ctor_param_type(ev, typ, len(args), i)
    if isinstance(ptype, BitsT) and 0 <= value <= (1 << ptype.width) - 1:
        ev.coerce(ev.expr(args[i]), ptype, args[i].loc, f"{d.name}: {what}")  # a typed constant of another width
    hi = (1 << ptype.width) - 1 if isinstance(ptype, BitsT) and not ptype.signed else MAX_SIZE
    if not 0 <= value <= hi:
        declared = f"bit<{ptype.width}>" if isinstance(ptype, BitsT) else "bit<32>"
        raise CompileError(args[i].loc, f"{d.name}: {what} {value} is not in 0..{hi} "
                           f"({typ.name} declares its {what} {declared})")
    return value


def _ctor_param_type(ev: Any, typ: ObjT, nargs: int, i: int) -> Type | None:
    """The declared type of argument i of the extern's constructor taking nargs arguments."""
    for m in getattr(typ.decl, "methods", ()):
        if m.ret is None and m.name == typ.name and len(m.params) == nargs:
            return strip(ev.types.resolve(m.params[i].typ, ev.scope))
    return None


def make_instance(ev: Any, bm: Bmv2Json, d: A.Instance, qname: str) -> InstInfo:
    """Evaluate an extern instantiation and add its bmv2 array and P4Info object."""
    typ = ev.types.resolve(d.typ, ev.scope)
    if not isinstance(typ, ObjT) or typ.kind != "extern":
        raise CompileError(d.loc, f"{d.name}: instantiation of {typ} is not supported (only v1model externs)")
    kind = typ.name
    if kind not in _KINDS:
        raise CompileError(d.loc, f"{d.name}: extern {kind} is not supported by p4sim")
    args = [a.expr for a in d.args]
    info = InstInfo(kind, qname, d)

    def arg_enum(i: int) -> str:
        e = args[i]
        if not (isinstance(e, A.Member)):
            raise CompileError(e.loc, f"{d.name}: expected an enum member like CounterType.packets")
        ev.expr(e)
        return e.name

    def need(n: int) -> None:
        if len(args) != n:
            raise CompileError(d.loc, f"{d.name}: {kind} takes {n} constructor arguments, found {len(args)}")

    def size(i: int, what: str = "size") -> int:
        return ctor_size(ev, typ, d, args, i, what)

    si = source_info(d.loc, d.name)
    if kind == "counter":
        need(2)
        info.size, info.unit = size(0), _UNITS[arg_enum(1)]
        info.json = {"name": qname, "id": len(bm.counter_arrays), "source_info": si, "size": info.size,
                     "is_direct": False}
        bm.counter_arrays.append(info.json)
        info.p4 = P4InfoObj("counter", qname, size=info.size, unit=info.unit)
    elif kind == "direct_counter":
        need(1)
        info.unit = _UNITS[arg_enum(0)]
        info.p4 = P4InfoObj("direct_counter", qname, unit=info.unit)
    elif kind == "meter":
        need(2)
        info.size, info.unit = size(0), arg_enum(1)
        info.json = {"name": qname, "id": len(bm.meter_arrays), "source_info": si, "is_direct": False,
                     "size": info.size, "rate_count": 2, "type": info.unit}
        bm.meter_arrays.append(info.json)
        info.p4 = P4InfoObj("meter", qname, size=info.size, unit=info.unit)
    elif kind == "direct_meter":
        need(1)
        info.unit = arg_enum(0)
        info.p4 = P4InfoObj("direct_meter", qname, unit=info.unit)
    elif kind == "register":
        need(1)
        targ = typ.args.get("T") if typ.args else None
        if targ is None or not (isinstance(strip(targ), (BitsT, BoolT)) or
                                isinstance(strip(targ), EnumT) and strip(targ).underlying is not None):
            raise CompileError(d.loc, f"{d.name}: register needs a bit<W> element type, e.g. register<bit<32>>")
        info.size, info.bitwidth = size(0), bit_width(strip(targ))
        info.json = {"name": qname, "id": len(bm.register_arrays), "source_info": si, "size": info.size,
                     "bitwidth": info.bitwidth}
        bm.register_arrays.append(info.json)
        info.p4 = P4InfoObj("register", qname, size=info.size, extra={"bitwidth": info.bitwidth})
    elif kind == "action_profile":
        need(1)
        info.size = size(0)
        info.p4 = P4InfoObj("action_profile", qname, size=info.size, extra={"with_selector": False})
    elif kind == "action_selector":
        need(3)
        info.algo = HASH_ALGOS[arg_enum(0)]
        info.size = size(1)
        info.bitwidth = size(2, "outputWidth")
        info.p4 = P4InfoObj("action_profile", qname, size=info.size, extra={"with_selector": True})
    if info.p4 is not None:
        info.p4.fixed_id, info.p4.loc = id_annotation(d.annos), d.loc
        bm.p4_objs.append(info.p4)
    bm.instances.append(info)
    return info


def field_refs(sl: Lowering, e: A.Expr, pre: list[dict] | None = None) -> list[dict]:
    """The bmv2 fields of a field-list argument: `{a, b}`, a struct, a header or one field. With `pre`,
    any other value (`{h.f ^ 0xffff}`, `{h.isValid()}`) is computed into a temporary by a primitive
    appended to it, as p4c does."""
    v = sl.expr(e)
    out: list[dict] = []

    def walk(v: V, loc: Loc) -> None:
        ent = v.ent
        if isinstance(ent, FieldE):
            out.append({"type": "field", "value": list(ent.ref)})
        elif isinstance(ent, HeaderE):
            for _path, n, _t in header_layout(ent.type):
                out.append({"type": "field", "value": [ent.inst, n]})
        elif isinstance(ent, StructE):
            for m in ent.members.values():
                walk(sl.entity_value(m, e), loc)
        elif isinstance(ent, StackE):
            for h in ent.elems:
                walk(sl.entity_value(h, e), loc)
        elif isinstance(v.t, ListT) and isinstance(v.const, list):
            for item in v.const:
                walk(item, loc)
        elif v.const is not None and isinstance(v.const, int) and is_scalar(strip(v.t)):  # an error, a bool too
            width = bit_width(strip(v.t))
            out.append({**hexstr(int(v.const), width), "bitwidth": width})  # bmv2 needs it: the width is not in the string
        elif pre is not None and v.j is not None and isinstance(strip(v.t), (BitsT, BoolT)):
            tmp = sl.ctx.new_local(sl.bm.fresh("tmp"), v.t, loc)
            pre.append(prim("assign", [{"type": "field", "value": tmp.ref}, sl.data(v, loc)], loc, describe(e)))
            out.append({"type": "field", "value": list(tmp.ref)})
        else:
            raise CompileError(loc, f"{describe(e)}: expected fields, a header or a struct in a field list")

    walk(v, e.loc)
    return out


def _enum_member(sl: Lowering, e: A.Expr, enum: str) -> str:
    v = sl.expr(e)
    t = strip(v.t)
    if not isinstance(t, EnumT) or t.name != enum or not isinstance(e, A.Member):
        raise CompileError(e.loc, f"{describe(e)}: expected a {enum} member")
    return e.name


def prim(op: str, params: list[dict], loc: Loc, fragment: str) -> dict:
    """A bmv2 primitive call (parameters in bmv2's parameter form, see exprs.operand)."""
    return {"op": op, "parameters": [operand(p) for p in params], "source_info": source_info(loc, fragment)}


def _preserving_list(sl: Lowering, e: A.Expr) -> int:
    """Id of the JSON field list `field_list<index>` (p4c's getFieldListById); when no metadata field
    has @field_list(index), p4c warns and uses a new empty list."""
    idx = sl.const_int(e, "a constant field list index")
    for fl in sl.bm.field_lists:
        if fl["name"] == f"field_list{idx}":
            return fl["id"]
    log.warning("%s:%s: no user metadata fields tagged with @field_list(%d)", e.loc.file, e.loc.line, idx)
    return sl.bm.new_field_list([], sl.bm.unique("empty"))


def _check_digest_data(v: V, t: Type, e: A.Expr) -> None:
    """The data of digest<T> must have as many members as T."""
    st, vt = strip(t), strip(v.t)
    n_t = len(st.fields) if isinstance(st, StructT) else len(st.items) if isinstance(st, ListT) else None
    n_v = len(vt.fields) if isinstance(vt, StructT) else len(vt.items) if isinstance(vt, ListT) else None
    if n_t is None:
        raise CompileError(e.loc, f"digest type argument must be a struct or a tuple, found {t}")
    if n_v != n_t:
        raise CompileError(e.loc, f"digest data {describe(e)} does not match {t}: expected {n_t} members")


def extern_function(sl: Lowering, name: str, c: A.Call) -> list[dict]:
    """Primitives for a call to a v1model extern function."""
    args = [a.expr for a in c.args]
    frag = describe(c)
    loc = c.loc
    sl.bm.extern_calls += 1
    pre: list[dict] = []  # field list values computed first (field_refs)

    def need(*ns: int) -> None:
        if len(args) not in ns:
            raise CompileError(loc, f"{name} takes {' or '.join(map(str, ns))} arguments, found {len(args)}")

    if name == "static_assert":  # checked at compile time; nothing at run time
        sl.static_assert(c)
        return []
    if name == "mark_to_drop":
        need(1)
        v = sl.expr(args[0])
        if not isinstance(v.ent, HeaderE) or v.ent.inst != "standard_metadata":
            raise CompileError(args[0].loc, "mark_to_drop expects standard_metadata")
        return [prim("mark_to_drop", [{"type": "header", "value": "standard_metadata"}], loc, frag)]
    if name == "random":
        need(3)
        dst = sl.lvalue(args[0])
        lo = sl.coerce(sl.expr(args[1], dst.t), dst.t, args[1].loc, "lower bound")
        hi = sl.coerce(sl.expr(args[2], dst.t), dst.t, args[2].loc, "upper bound")
        return [prim("modify_field_rng_uniform", [dst.j, lo.j, hi.j], loc, frag)]
    if name == "hash":
        need(5)
        dst = sl.lvalue(args[0])
        algo = HASH_ALGOS[_enum_member(sl, args[1], "HashAlgorithm")]
        base = sl.expr(args[2], dst.t)
        mx = sl.expr(args[4], dst.t)
        if base.j is None or mx.j is None:
            raise CompileError(loc, "hash base and max must be integers")
        calc = sl.bm.add_calculation(algo, field_refs(sl, args[3], pre), loc, frag)
        return pre + [prim("modify_field_with_hash_based_offset",
                     [dst.j, base.j, {"type": "calculation", "value": calc}, mx.j], loc, frag)]
    if name == "digest":
        need(2)
        recv = sl.expr(args[0], BitsT(32))
        v = sl.expr(args[1])
        t = v.t
        if c.type_args:  # digest<T>(receiver, {...}): T names the digest, the list fills it
            t = sl.types.resolve(c.type_args[0], sl.scope)
            _check_digest_data(v, t, args[1])
        st = strip(t)
        fields = field_refs(sl, args[1], pre)
        if isinstance(st, StructT):
            # p4c (P4RuntimeArchHandlerV1Model::getDigestCall): the type's control-plane name
            a = A.anno(st.annos, "name")
            tname = str(a.args[0]).lstrip(".") if a and a.args else st.name
        elif isinstance(st, ListT):
            # p4c auto-names a digest of a tuple type digest_0, digest_1, ... in call order
            names = sl.bm.digest_names
            tname = names.setdefault(id(c), f"digest_{len(names)}")
        else:
            raise CompileError(args[1].loc, f"digest data must be a struct or a list, found {t}")
        lid = sl.bm.add_learn_list(tname, fields)
        sl.ctx.digest(tname, t, loc)
        return pre + [prim("generate_digest", [recv.j, hexstr(lid)], loc, frag)]
    if name in ("clone", "clone3", "clone_preserving_field_list"):
        need(2 if name == "clone" else 3)
        kind = _enum_member(sl, args[0], "CloneType")
        session = sl.coerce(sl.expr(args[1], BitsT(32)), BitsT(32), args[1].loc, "session")
        if name == "clone":
            fl = sl.bm.new_field_list([], sl.bm.unique("fl"))  # p4c: an empty list per clone() call
        elif name == "clone3":  # p4c before the _preserving_field_list externs: a list named fl
            fl = sl.bm.new_field_list(field_refs(sl, args[2], pre), sl.bm.unique("fl"))
        else:
            fl = _preserving_list(sl, args[2])
        op = "clone_ingress_pkt_to_egress" if kind == "I2E" else "clone_egress_pkt_to_egress"
        return pre + [prim(op, [session.j, hexstr(fl)], loc, frag)]
    if name in ("resubmit", "recirculate", "resubmit_preserving_field_list", "recirculate_preserving_field_list"):
        need(1)
        base = name.split("_")[0]
        if "preserving" in name:
            fl = _preserving_list(sl, args[0])
        else:  # deprecated resubmit(data)/recirculate(data): older p4c named the list after the call
            fl = sl.bm.new_field_list(field_refs(sl, args[0], pre), base)
        return pre + [prim(base, [hexstr(fl)], loc, frag)]  # simple_switch primitive taking a field list id
    if name == "log_msg":
        need(1, 2)
        if not isinstance(args[0], A.StrLit):
            raise CompileError(args[0].loc, "log_msg expects a string literal")
        vals = field_refs(sl, args[1], pre) if len(args) == 2 else []
        return pre + [prim("log_msg", [{"type": "string", "value": args[0].value},
                                 {"type": "parameters_vector", "value": vals}], loc, frag)]
    if name == "truncate":
        need(1)
        n = sl.coerce(sl.expr(args[0], BitsT(32)), BitsT(32), args[0].loc, "length")
        return [prim("truncate", [n.j], loc, frag)]
    if name in ("assert", "assume"):
        need(1)
        v = sl.expr(args[0])
        return [prim(name, [sl.data(V(sl.cond(v, loc), BoolT()), loc)], loc, frag)]
    if name in ("verify_checksum", "update_checksum", "verify_checksum_with_payload",
                "update_checksum_with_payload"):
        raise CompileError(loc, f"{name} may only be called in the VerifyChecksum/ComputeChecksum controls")
    if name == "verify":
        raise CompileError(loc, "verify may only be called in parsers")
    raise CompileError(loc, f"extern function {name} is not supported by p4sim")


def instance_method(sl: Lowering, info: InstInfo, method: str, c: A.Call) -> list[dict]:
    """Primitives for a method call on an extern instance."""
    args = [a.expr for a in c.args]
    frag, loc = describe(c), c.loc
    idx = BitsT(32)

    def need(n: int) -> None:
        if len(args) != n:
            raise CompileError(loc, f"{info.kind}.{method} takes {n} arguments, found {len(args)}")

    def index(e: A.Expr) -> dict:
        # v1model's index type parameter I: bit<32> by convention, any unsigned width accepted
        v = sl.expr(e, idx)
        t = strip(v.t)
        if v.const is not None and isinstance(v.const, int) and not isinstance(v.const, bool):
            if v.const < 0:
                raise CompileError(e.loc, f"index {v.const} is negative")
            return hexstr(v.const, 32)
        if not isinstance(t, BitsT) or t.signed:
            raise CompileError(e.loc, f"index has type {v.t}, expected bit<W>")
        return v.j

    if info.kind == "counter" and method == "count":
        need(1)
        return [prim("count", [{"type": "counter_array", "value": info.name}, index(args[0])], loc, frag)]
    if info.kind == "direct_counter" and method == "count":
        need(0)
        return []  # counted by bmv2 for the table entry
    if info.kind == "meter" and method == "execute_meter":
        need(2)
        dst = sl.lvalue(args[1])
        return [prim("execute_meter", [{"type": "meter_array", "value": info.name}, index(args[0]), dst.j],
                     loc, frag)]
    if info.kind == "direct_meter" and method == "read":
        need(1)
        dst = sl.lvalue(args[0])
        if info.result_target is not None and info.result_target != dst.j["value"]:
            raise CompileError(loc, f"{info.name}: direct meter read into two different fields")
        info.result_target = dst.j["value"]
        return []
    if info.kind == "register" and method == "read":
        need(2)
        dst = sl.lvalue(args[0])
        if bit_width(strip(dst.t)) != info.bitwidth:
            raise CompileError(args[0].loc, f"width mismatch: {describe(args[0])} has type {dst.t}, "
                               f"register {info.name} holds bit<{info.bitwidth}>")
        return [prim("register_read", [dst.j, {"type": "register_array", "value": info.name},
                                       index(args[1])], loc, frag)]
    if info.kind == "register" and method == "write":
        need(2)
        t = BitsT(info.bitwidth)
        v = sl.coerce(sl.expr(args[1], t), t, args[1].loc, "register value")
        return [prim("register_write", [{"type": "register_array", "value": info.name}, index(args[0]),
                                        sl.data(v, args[1].loc)], loc, frag)]
    raise CompileError(loc, f"{info.kind}.{method}: no such method (or not supported by p4sim)")


def is_instance(ent: object) -> bool:
    """A DeclE bound to an extern instance."""
    return isinstance(ent, DeclE) and ent.kind == "instance" and isinstance(ent.extra, InstInfo)
