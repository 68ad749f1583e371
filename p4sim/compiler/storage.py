"""bmv2 storage of P4 values (p4c's HeaderConverter): the headers and metadata the V1Switch blocks
share, and local variables. Header instances are named after the headers struct's fields, scalar
metadata fields `<StructType>.<field>` in the `scalars` header, a struct of scalars is a metadata
header, a tuple a struct of fields f0, f1, ..."""

from __future__ import annotations

from typing import Any

from p4sim.compiler.builder import Bmv2Json
from p4sim.compiler.env import Ent, FieldE, StructE
from p4sim.compiler.errors import CompileError
from p4sim.compiler.types import ListT, StackT, StructT, Type, VarbitT, is_scalar, strip


def as_struct(bm: Bmv2Json, name: str, t: Type) -> Type:
    """A tuple type as the struct that holds it (fields f0, f1, ...: `t[i]` reads fi); other types as they are."""
    ts = strip(t)
    if isinstance(ts, ListT):
        return StructT("tuple", bm.unique(f"tuple_{name}"), [(f"f{i}", it) for i, it in enumerate(ts.items)])
    return t


def make_storage(bm: Bmv2Json, name: str, t: Type, loc: Any = None) -> Ent:
    """bmv2 storage for a value of type t named name."""
    ts = strip(t)
    if isinstance(ts, StructT) and ts.kind == "header_union":  # as in the headers struct (p4c's HeaderConverter)
        return bm.add_union(bm.unique(name), ts)
    if is_scalar(ts):
        return bm.scalar(name, t)
    if isinstance(ts, VarbitT):  # p4c: a metadata header of its own, type $varbit<N>, field `field`
        h = bm.add_header(bm.unique(name), StructT("header", f"$varbit{ts.max_width}", [("field", ts)]), True)
        return FieldE([h.inst, "field"], t)
    if isinstance(ts, ListT):
        return make_storage(bm, name, as_struct(bm, name, ts), loc)
    if isinstance(ts, StructT) and ts.kind == "header":
        inst = bm.unique(name)
        return bm.add_header(inst, ts, False)
    if isinstance(ts, StackT):
        return bm.add_stack(bm.unique(name), ts)
    if isinstance(ts, StructT) and _flat_struct(ts):  # p4c: a metadata header per struct variable
        return bm.add_header(bm.unique(name), ts, True)
    if isinstance(ts, StructT):
        return StructE({n: make_storage(bm, f"{name}.{n}", ft, loc) for n, ft in ts.fields}, ts)
    raise CompileError(loc, f"{name}: variables of type {t} are not supported")



def shared_storage(bm: Bmv2Json, hdr_t: Type, meta_t: Type, field_lists: dict[int, list[dict]],
                   loc: Any = None) -> tuple[Ent, Ent]:
    """Storage of the program's headers and user metadata, named as p4c does: header instances by
    field name, scalar fields `<StructType>.<field>`, nested metadata structs as metadata headers."""
    hs = strip(hdr_t)
    if not isinstance(hs, StructT):
        raise CompileError(loc, f"the headers type {hdr_t} must be a struct")
    hdr = _header_struct(bm, hs, "", loc)
    ms = strip(meta_t)
    if not isinstance(ms, StructT):
        raise CompileError(loc, f"the metadata type {meta_t} must be a struct")
    meta = _meta_struct(bm, ms, field_lists, loc)
    return hdr, meta


def _header_struct(bm: Bmv2Json, st: StructT, prefix: str, loc: Any) -> StructE:
    members: dict[str, Ent] = {}
    for n, t in st.fields:
        ts = strip(as_struct(bm, n, t))
        name = f"{prefix}{n}"
        if isinstance(ts, StructT) and ts.kind == "header":
            members[n] = bm.add_header(bm.unique(name), ts, False)
        elif isinstance(ts, StructT) and ts.kind == "header_union":
            members[n] = bm.add_union(bm.unique(name), ts)
        elif isinstance(ts, StackT):
            members[n] = bm.add_stack(bm.unique(name), ts)
        elif isinstance(ts, StructT):  # p4c rejects this; p4sim flattens with `_`
            members[n] = _header_struct(bm, ts, name + "_", loc)
        elif is_scalar(ts):
            members[n] = bm.scalar(f"{st.name}.{n}", t)
        else:
            raise CompileError(loc, f"headers field {n} of type {t} is not supported")
    return StructE(members, st)


def _flat_struct(ts: StructT) -> bool:
    return all(is_scalar(strip(ft)) for _, ft in ts.fields)


def _meta_struct(bm: Bmv2Json, st: StructT, field_lists: dict[int, list[dict]], loc: Any) -> StructE:
    members: dict[str, Ent] = {}
    for n, t in st.fields:
        ts = strip(as_struct(bm, n, t))
        if isinstance(ts, StructT) and ts.kind == "header":
            members[n] = bm.add_header(bm.unique(n), ts, False)
        elif isinstance(ts, StackT):
            members[n] = bm.add_stack(bm.unique(n), ts)
        elif isinstance(ts, StructT) and _flat_struct(ts):
            h = bm.add_header(bm.unique(n), ts, True)
            members[n] = h
            for fname, _ in ts.fields:
                _field_list_annos(ts.field_annos.get(fname, []), [h.inst, fname], field_lists)
        elif isinstance(ts, StructT):
            members[n] = _meta_struct(bm, ts, field_lists, loc)
        elif not is_scalar(ts):
            raise CompileError(loc, f"metadata field {n} of type {t} is not supported")
        else:
            f = bm.scalar(f"{st.name}.{n}", t)
            members[n] = f
            _field_list_annos(st.field_annos.get(n, []), f.ref, field_lists)
    return StructE(members, st)


def _field_list_annos(annos: list, ref: list[str], field_lists: dict[int, list[dict]]) -> None:
    for a in annos:
        if a.name == "field_list":
            for idx in a.args:
                if isinstance(idx, int):
                    field_lists.setdefault(idx, []).append({"type": "field", "value": list(ref)})
