"""Tables to bmv2 JSON (keys, actions, default entry, const entries, action profiles, direct
resources) and P4Info table records."""

from __future__ import annotations

from typing import Any

from p4sim.compiler import ast as A
from p4sim.compiler.builder import P4InfoTable, id_annotation, source_info
from p4sim.compiler.env import DeclE, FieldE
from p4sim.compiler.errors import CompileError, Loc
from p4sim.compiler.exprs import ExprLowerer, V, describe, hexstr, mask_of
from p4sim.compiler.externs import InstInfo, is_instance, prim
from p4sim.compiler.types import BitsT, BoolT, StructT, bit_width, strip

_KINDS = {"exact", "lpm", "ternary", "range", "optional", "selector"}
DEFAULT_SIZE = 1024
MAX_TABLE_SIZE = 2**31 - 1  # p4c: a table size is a C++ int ("Value too large for int")


class TableLowerer:
    """Builds the tables of one control's pipeline."""

    def __init__(self, ctrl: Any) -> None:
        self.c = ctrl
        self.profiles: dict[str, dict] = {}
        self.sc = ctrl.scope

    def hidden(self, name: str, action: str, aid: int, nxt: str | None, loc: Loc) -> str:
        """A keyless table that always runs one action (p4c's tbl_* tables)."""
        name = self.c.bm.unique(name)
        self.c.pipeline["tables"].append({
            "name": name, "id": self._next_id(), "source_info": source_info(loc, action),
            "key": [], "match_type": "exact", "type": "simple", "max_size": 1024, "with_counters": False,
            "support_timeout": False, "direct_meters": None, "action_ids": [aid], "actions": [action],
            "base_default_next": nxt, "next_tables": {action: nxt},
            "default_entry": {"action_id": aid, "action_const": True, "action_data": [],
                              "action_entry_const": True}})
        return name

    def _next_id(self) -> int:
        return sum(len(p["tables"]) for p in self.c.bm.pipelines) + len(self.c.pipeline["tables"])

    def apply(self, ent: DeclE, nexts: dict, nxt: str | None, loc: Loc) -> str:
        """Lower the table `ent` applied once, with its successors."""
        t: A.TableDecl = ent.decl
        c = self.c
        self.sc = ent.extra if ent.extra is not None else c.scope
        if ent.qname in c.applied:
            raise CompileError(loc, f"table {ent.qname} is applied more than once (bmv2 allows one application)")
        c.applied.add(ent.qname)
        ev = ExprLowerer(self.sc, c.prog)
        keys, p4keys, selector_in, widths = [], [], [], []
        pre: list[dict] = []  # computed keys: assignments into temporaries before the table (p4c's SimplifyKey)
        kinds = []
        for k in t.keys:
            if k.match_kind not in _KINDS:
                raise CompileError(k.loc, f"match kind {k.match_kind!r} is not supported: expected one of "
                                   f"{', '.join(sorted(_KINDS))}")
            v = ev.expr(k.expr)
            name = _key_name(k)
            target, mask, width = self._key_target(ev, k, v, ent.qname, pre)
            if k.match_kind == "selector":
                selector_in.append({"type": "field", "value": target})
                continue
            kinds.append(k.match_kind)
            keys.append({"match_type": "ternary" if k.match_kind == "optional" else k.match_kind, "name": name, "target": target,
                         "mask": hexstr(mask, width)["value"] if mask is not None else None})
            p4keys.append((name, width, k.match_kind))
            widths.append(width)
        if kinds.count("lpm") > 1:
            raise CompileError(t.loc, f"table {t.name}: at most one lpm key is allowed")
        match_type = "exact"
        for mk in ("lpm", "ternary", "optional", "range"):
            if mk in kinds:
                match_type = "ternary" if mk == "optional" else mk
        # actions
        names, ids, refs = [], [], []
        for ar in t.actions:
            aent = self.sc.lookup(ar.name)
            if not isinstance(aent, DeclE) or aent.kind != "action":
                raise CompileError(ar.loc, f"{ar.name}: not an action")
            n_dir = sum(1 for p in aent.decl.params if p.direction)
            if len(ar.args) != n_dir:
                raise CompileError(ar.loc, f"{ar.name}: the actions list binds only directional parameters "
                                   f"({n_dir} here), found {len(ar.args)} arguments")
            aid = c.action_id(aent, ar.loc, ar.args, self.sc)
            c.p4info_action(aent)
            scope = "DEFAULT_ONLY" if A.anno(ar.annos, "defaultonly") else (
                "TABLE_ONLY" if A.anno(ar.annos, "tableonly") else "")
            names.append(aent.qname)
            ids.append(aid)
            refs.append((aent.qname, scope))
        default, default_name, const_default = self._default(t, names, ids, ev)
        if default_name not in names:  # the implicit NoAction: in P4Info too, default-only (p4c)
            names.append(default_name)
            ids.append(default["action_id"])
            refs.append((default_name, "DEFAULT_ONLY"))
            c.p4info_action(self.sc.lookup(default_name))
        props = dict(t.props)
        size = 0
        if "size" in props:
            size_expr = props.pop("size")
            size = ev.const_int(size_expr, "a constant size")
            if not 0 <= size <= MAX_TABLE_SIZE:  # p4c: "Value too large for int"
                raise CompileError(size_expr.loc, f"table {t.name}: size {size} is not in 0..{MAX_TABLE_SIZE} "
                                   "(p4c holds a table size in an int)")
        if t.entries is not None:
            size = len(t.entries)  # as p4c: a table with entries is sized to them
        size = size or DEFAULT_SIZE
        info = P4InfoTable(ent.qname, p4keys, refs, size, default_name if const_default else None)
        info.initial_default = (default_name, [int(v, 16) for v in default["action_data"]])
        info.annos = [a.name for a in t.annos]
        info.fixed_id, info.loc = id_annotation(t.annos), t.loc
        tj: dict = {"name": ent.qname, "id": self._next_id(), "source_info": source_info(t.loc, t.name),
                    "key": keys, "match_type": match_type, "type": "simple", "max_size": size,
                    "with_counters": False, "support_timeout": False, "direct_meters": None,
                    "action_ids": ids, "actions": names}
        impl = props.pop("implementation", None)
        if impl is not None:
            prof = self._profile(ev, impl, ent.qname, selector_in)
            tj["type"] = "indirect_ws" if prof.kind == "action_selector" else "indirect"
            tj["action_profile"] = prof.name
            info.implementation = prof.name
        elif selector_in:
            raise CompileError(t.loc, f"table {t.name}: selector keys need an action_selector implementation")
        for prop in ("counters", "meters"):
            e = props.pop(prop, None)
            if e is None:
                continue
            inst = self._instance(ev, e, "direct_counter" if prop == "counters" else "direct_meter")
            inst.tables.append(ent.qname)
            info.direct.append(inst.name)
            assert inst.p4 is not None
            inst.p4.extra["table"] = ent.qname
            if prop == "counters":
                tj["with_counters"] = True
                c.bm.counter_arrays.append({"name": inst.name, "id": len(c.bm.counter_arrays),
                                            "source_info": source_info(inst.decl.loc, inst.decl.name),
                                            "is_direct": True, "binding": ent.qname})
            else:
                tj["direct_meters"] = inst.name
                mj = {"name": inst.name, "id": len(c.bm.meter_arrays),
                      "source_info": source_info(inst.decl.loc, inst.decl.name), "is_direct": True,
                      "rate_count": 2, "type": inst.unit, "size": size, "binding": ent.qname,
                      "result_target": None}
                inst.json = mj
                c.bm.meter_arrays.append(mj)
        st = props.pop("support_timeout", None)
        if st is not None:
            sv = ev.expr(st)
            if not isinstance(sv.const, bool):
                raise CompileError(st.loc, "support_timeout must be true or false")
            tj["support_timeout"] = info.idle_timeout = sv.const
        for leftover, e in props.items():
            raise CompileError(e.loc, f"table property {leftover!r} is not supported")
        tj["base_default_next"] = nxt
        if "__HIT__" in nexts:
            tj["base_default_next"] = None  # as p4c: successors come from next_tables only
            tj["next_tables"] = {"__HIT__": nexts["__HIT__"], "__MISS__": nexts["__MISS__"]}
        elif "__SWITCH__" in nexts:
            targets, dflt = nexts["__SWITCH__"]
            for label in targets:
                if label not in [n.split(".")[-1] for n in names] and label not in names:
                    raise CompileError(loc, f"switch label {label} is not an action of table {t.name}")
            tj["next_tables"] = {n: targets.get(n.split(".")[-1], targets.get(n, dflt)) for n in names}
        else:
            tj["next_tables"] = {n: nxt for n in names}
        if tj["type"] == "simple":
            tj["default_entry"] = default  # p4c gives indirect tables no default entry
        if t.entries is not None:
            tj["entries"] = self._entries(ev, t, widths, names, ids)
            info.is_const = t.entries_const
        c.pipeline["tables"].append(tj)
        if not A.anno(t.annos, "hidden"):
            c.bm.p4_tables.append(info)
        if pre:
            act = c.bm.unique(f"{c.stem}{t.loc.line}")
            aid = c.bm.add_action(act, [], pre, t.loc)
            return self.hidden(f"tbl_{act}", act, aid, ent.qname, t.loc)
        return ent.qname

    def _key_target(self, ev: ExprLowerer, k: A.KeyElem, v: V, table: str,
                    pre: list[dict]) -> tuple[list[str], int | None, int]:
        if isinstance(v.ent, FieldE):
            return list(v.ent.ref), None, bit_width(strip(v.t))
        e = k.expr
        if isinstance(e, A.Call) and isinstance(e.func, A.Member) and e.func.name == "isValid":
            hv = ev.expr(e.func.expr)
            return [hv.ent.inst, "$valid$"], None, 1
        if isinstance(e, A.Binary) and e.op == "&":
            fv, mv = ev.expr(e.left), ev.expr(e.right)
            if isinstance(fv.ent, FieldE) and isinstance(mv.const, int):
                return list(fv.ent.ref), mv.const, bit_width(strip(fv.t))
        if isinstance(e, A.Slice):
            fv = ev.expr(e.expr)
            if isinstance(fv.ent, FieldE):
                hi, lo = ev.const_int(e.hi), ev.const_int(e.lo)
                return list(fv.ent.ref), mask_of(hi - lo + 1) << lo, bit_width(strip(fv.t))
        if v.j is None or not isinstance(strip(v.t), (BitsT, BoolT)) and v.const is None:
            raise CompileError(k.loc, f"table key {describe(e)}: expected a bit<W> or bool expression, found {v.t}")
        tmp = self.c.bm.scalar(f"key_{table.split('.')[-1]}_{len(pre)}", v.t)
        pre.append(prim("assign", [{"type": "field", "value": tmp.ref}, ev.data(v, k.loc)], k.loc, describe(e)))
        return list(tmp.ref), None, bit_width(strip(v.t))

    def _default(self, t: A.TableDecl, names: list[str], ids: list[int], ev: ExprLowerer) -> tuple[dict, str, bool]:
        c = self.c
        ar = t.default_action
        if ar is None:
            ar = A.ActionRef("NoAction", [], [], t.loc)
        aent = self.sc.lookup(ar.name)
        if not isinstance(aent, DeclE) or aent.kind != "action":
            raise CompileError(ar.loc, f"{ar.name}: default action is not an action")
        if t.default_action is not None and aent.qname not in names:
            raise CompileError(ar.loc, f"default action {ar.name} is not in the actions of table {t.name}")
        data = self._action_data(ev, aent, ar)
        aid = c.action_id(aent, ar.loc, ar.args, self.sc)
        return ({"action_id": aid, "action_const": t.default_const, "action_data": data,
                 "action_entry_const": t.default_const}, aent.qname, t.default_const)

    def _action_data(self, ev: ExprLowerer, aent: DeclE, ar: A.ActionRef) -> list[str]:
        d: A.ActionDecl = aent.decl
        if len(ar.args) != len(d.params):
            raise CompileError(ar.loc, f"action {ar.name} takes {len(d.params)} arguments, found {len(ar.args)}")
        out = []
        for p, a in zip(d.params, ar.args, strict=True):
            if p.direction:
                continue  # bound at compile time, not action data
            pt = self.c.prog.resolve(p.typ, self.sc)
            v = ev.coerce(ev.expr(a.expr, strip(pt)), pt, a.expr.loc, f"argument {p.name}")
            if v.const is None:
                raise CompileError(a.expr.loc, f"argument {p.name} of {ar.name} must be a constant")
            out.append(hexstr(int(v.const), bit_width(strip(pt)))["value"])
        return out

    def _instance(self, ev: ExprLowerer, e: A.Expr, kind: str) -> InstInfo:
        if not isinstance(e, A.Name):
            raise CompileError(e.loc, f"expected the name of a {kind} instance")
        ent = self.sc.get(e.name, e.loc)
        if not is_instance(ent) or ent.extra.kind != kind:
            raise CompileError(e.loc, f"{e.name} is not a {kind}")
        return ent.extra

    def _profile(self, ev: ExprLowerer, e: A.Expr, table: str, selector_in: list[dict]) -> InstInfo:
        if not isinstance(e, A.Name):
            raise CompileError(e.loc, "implementation must name an action_profile or action_selector instance "
                               "(p4c wants a named instance)")
        ent = self.sc.get(e.name, e.loc)
        if not is_instance(ent) or ent.extra.kind not in ("action_profile", "action_selector"):
            raise CompileError(e.loc, f"{e.name} is not an action_profile or action_selector")
        info: InstInfo = ent.extra
        if info.kind == "action_selector" and not selector_in:
            raise CompileError(e.loc, f"table {table}: an action_selector needs `selector` keys")
        info.tables.append(table)
        assert info.p4 is not None
        info.p4.extra.setdefault("tables", []).append(table)
        if info.name not in self.profiles:
            pj: dict = {"name": info.name, "id": sum(len(p["action_profiles"]) for p in self.c.bm.pipelines)
                        + len(self.c.pipeline["action_profiles"]),
                        "source_info": source_info(info.decl.loc, info.decl.name), "max_size": info.size}
            if info.kind == "action_selector":
                pj["selector"] = {"algo": info.algo, "input": selector_in}
            self.profiles[info.name] = pj
            self.c.pipeline["action_profiles"].append(pj)
        return info

    def _entries(self, ev: ExprLowerer, t: A.TableDecl, widths: list[int], names: list[str],
                 ids: list[int]) -> list[dict]:
        out = []
        for prio, en in enumerate(t.entries or [], 1):
            if len(en.keys) != len(widths):
                raise CompileError(en.loc, f"entry has {len(en.keys)} keys, table {t.name} has {len(widths)}")
            kinds = [k.match_kind for k in t.keys if k.match_kind != "selector"]
            mks = [self._entry_key(ev, mk, ke, w) for mk, ke, w in zip(kinds, en.keys, widths, strict=True)]
            aent = self.sc.lookup(en.action.name)
            if not isinstance(aent, DeclE) or aent.qname not in names:
                raise CompileError(en.action.loc, f"{en.action.name} is not an action of table {t.name}")
            data = self._action_data(ev, aent, en.action)
            ej = {"source_info": source_info(en.loc, "entry"), "match_key": mks,
                  "action_entry": {"action_id": self.c.action_id(aent, en.action.loc, en.action.args, self.sc),
                                   "action_data": data},
                  "priority": prio}
            pa = A.anno(en.annos, "priority")
            if en.priority is not None:
                # P4 priorities: the larger wins; bmv2's: the smaller. p4c orders such entries by P4
                # priority, largest first (stable), and numbers them 1, 2, ... (rewritten below)
                ej["_p4_priority"] = ev.const_int(en.priority, "a constant priority")
            elif pa is not None and pa.args and isinstance(pa.args[0], int):
                ej["priority"] = pa.args[0]  # p4c's @priority(n) on an entry
            out.append(ej)
        if out and all("_p4_priority" in ej for ej in out):
            out.sort(key=lambda ej: -ej["_p4_priority"])
            for rank, ej in enumerate(out, 1):
                del ej["_p4_priority"]
                ej["priority"] = rank
        for ej in out:  # mixed with @priority(n) or positional ones (p4c refuses that): the value as given
            if "_p4_priority" in ej:
                ej["priority"] = ej.pop("_p4_priority")
        return out

    def _entry_key(self, ev: ExprLowerer, mk: str, e: A.Expr, width: int) -> dict:
        t = BitsT(width)
        full = mask_of(width)

        def val(x: A.Expr) -> int:
            v = ev.expr(x, t)
            if isinstance(strip(v.t), BoolT):
                return int(bool(v.const))
            return ev.coerce(v, t, x.loc, "key").const

        if isinstance(e, A.Default):
            value, mask, lo, hi = 0, 0, 0, full
        elif isinstance(e, A.Mask):
            value, mask = val(e.value), val(e.mask)
            lo, hi = value, value
        elif isinstance(e, A.Range):
            lo, hi = val(e.lo), val(e.hi)
            value, mask = lo, full
        else:
            value = val(e)
            mask, lo, hi = full, value, value
        if mk == "exact":
            if mask != full:
                raise CompileError(e.loc, "exact keys need an exact value in entries")
            return {"match_type": "exact", "key": hexstr(value, width)["value"]}
        if mk == "lpm":
            plen = bin(mask).count("1")
            if mask != (mask_of(plen) << (width - plen)):
                raise CompileError(e.loc, "lpm entry mask is not a prefix")
            return {"match_type": "lpm", "key": hexstr(value & mask, width)["value"], "prefix_length": plen}
        if mk == "optional" and mask not in (0, full):
            raise CompileError(e.loc, "optional keys take an exact value or _ in entries")
        if mk in ("ternary", "optional"):
            return {"match_type": "ternary", "key": hexstr(value & mask, width)["value"],
                    "mask": hexstr(mask, width)["value"]}
        if mk == "range":
            return {"match_type": "range", "start": hexstr(lo, width)["value"], "end": hexstr(hi, width)["value"]}
        raise CompileError(e.loc, f"entries for {mk} keys are not supported")


def _key_name(k: A.KeyElem) -> str:
    """The control-plane name of a key: its @name, or p4c's name for the expression (TableKeyNames)."""
    a = A.anno(k.annos, "name")
    if a and a.args and isinstance(a.args[0], str):
        return a.args[0]
    name = key_expr_name(k.expr)
    if name is None:
        raise CompileError(k.loc, f"{describe(k.expr)}: complex key expression requires a @name annotation")
    return name


def key_expr_name(e: A.Expr) -> str | None:
    """p4c's key name of an expression: fields by their (@name) path, `$valid$`, slices, masks."""
    if isinstance(e, A.Name):
        return e.name
    if isinstance(e, A.Member):
        left = key_expr_name(e.expr)
        st = strip(e.expr.type) if e.expr.type is not None else None
        fname = e.name
        if isinstance(st, StructT):
            fa = A.anno(st.field_annos.get(e.name, []), "name")
            if fa and fa.args and isinstance(fa.args[0], str):
                fname = fa.args[0]
        if fname.startswith("."):
            return fname[1:]
        return None if left is None else f"{left}.{fname}"
    if isinstance(e, A.Call) and isinstance(e.func, A.Member) and e.func.name == "isValid" and not e.args:
        left = key_expr_name(e.func.expr)
        return None if left is None else f"{left}.$valid$"
    if isinstance(e, A.Index):
        left, right = key_expr_name(e.expr), key_expr_name(e.index)
        return None if left is None or right is None else f"{left}[{right}]"
    if isinstance(e, A.IntLit):
        return {16: hex, 2: bin, 8: oct}.get(e.base, str)(e.value).replace("0o", "0o")
    if isinstance(e, A.Slice):
        parts = [key_expr_name(x) for x in (e.expr, e.hi, e.lo)]
        return None if None in parts else f"{parts[0]}[{parts[1]}:{parts[2]}]"
    if isinstance(e, A.Binary) and e.op == "&":
        left, right = key_expr_name(e.left), key_expr_name(e.right)
        return None if left is None or right is None else f"{left} & {right}"
    return None
