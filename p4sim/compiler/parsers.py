"""The parser (states, extract, select), the deparser, and the checksum controls in bmv2 JSON."""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

from p4sim.compiler import ast as A
from p4sim.compiler.actions import StmtLowerer
from p4sim.compiler.builder import source_info
from p4sim.compiler.controls import PREFIX, BlockContext
from p4sim.compiler.env import ConstE, DeclE, FieldE, HeaderE, StackE, StructE
from p4sim.compiler.errors import CompileError
from p4sim.compiler.externs import HASH_ALGOS, field_refs
from p4sim.compiler.jsonexpr import V, describe, mask_of, operand
from p4sim.compiler.lookahead import LookaheadExpander
from p4sim.compiler.types import BitsT, BoolT, EnumT, ErrorT, StringT, StructT, VarbitT, bit_width, strip

log = logging.getLogger(__name__)


class ParserLowerer(BlockContext):
    """Lowers the V1Switch parser into bmv2's `parser`."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.packet: str | None = None

    def run(self, roles: list) -> dict:
        """Lower the parser; returns its JSON."""
        d: A.ParserDecl = self.decl
        self.packet = d.params[0].name
        self.scope.add(self.packet, DeclE("packet", None, "packet_in"))
        self.bind_params(d.params[1:], roles)
        sl = StmtLowerer(self.scope, self.prog, self)
        init: list[A.Stmt] = []
        for loc_decl in d.locals:
            self.declare_local(loc_decl, sl, init)
        self.states: list[dict] = []
        self._names: set[str] = set()
        self.parser_states(d, self.scope, "", None, init)
        pj = {"name": "parser", "id": 0, "init_state": "start", "parse_states": self.states}
        self.bm.parsers.append(pj)
        return pj

    def parser_states(self, d: A.ParserDecl, scope: Any, prefix: str, accept: str | None,
                      init: list[A.Stmt]) -> str:
        """Lower the states of parser d (the top parser, or an inlined sub-parser instance named by
        prefix whose `accept` continues at state accept); returns the JSON name of its start state."""
        names = {s.name for s in d.states}
        if "start" not in names:
            raise CompileError(d.loc, f"parser {d.name} has no start state")
        for s in d.states:
            if s.name in ("accept", "reject"):
                raise CompileError(s.loc, f"state {s.name} cannot be redefined")
        rename = {n: self._state_name(f"{prefix}{n}") for n in names}

        def target(n: str, loc: Any) -> str | None:
            if n == "accept":
                return accept
            if n == "reject":
                # as p4c's bmv2 back end: the parser ends as if it accepted (no parser error)
                log.warning("%s:%s: warning: Explicit transition to reject not supported on this target",
                            loc.file, loc.line)
                return None
            if n not in rename:
                raise CompileError(loc, f"transition to undefined state {n!r}")
            return rename[n]

        for s in d.states:
            self.state(s, scope, rename[s.name], target, (init if s.name == "start" else []) + s.stmts)
        return rename["start"]

    def _state_name(self, base: str) -> str:
        name, i = base, 0
        while name in self._names:
            name, i = f"{base}_{i}", i + 1
        self._names.add(name)
        return name

    def state(self, s: A.State, scope: Any, name: str, target: Any, stmts: list[A.Stmt]) -> None:
        """One parse state; a sub-parser apply splits it: the statements before it, the sub-parser's
        states (inlined as p4c does), then a continuation state with the rest and the transition."""
        stl = StmtLowerer(scope.child(), self.prog, self)
        stl.allow_jumps = False
        stmts = stl.inliner().stmts(stmts)
        look = LookaheadExpander(lambda e: _is_lookahead(stl, e), lambda t: self.prog.resolve(t, stl.scope),
                                 self.bm.fresh)
        stmts = look.stmts(stmts)
        if s.select is not None:
            pre, keys = look.exprs(s.select)
            stmts, s = stmts + pre, dataclasses.replace(s, select=keys)
        ops: list[dict] = []
        entry = len(self.states)
        self.states.append({"name": name, "id": entry})
        for k, st in enumerate(stmts):
            sub = self._subparser_apply(st, stl)
            if sub is None:
                ops += [self._op(p) for p in stl.stmt(st)]
                continue
            cont = self._state_name(f"{name}_cont")
            start = self.inline_parser(sub, st.call, stl, cont)
            self.states[entry].update({"parser_ops": ops, "transition_key": [], "transitions": [
                {"type": "default", "value": None, "mask": None, "next_state": start}]})
            rest = A.State(s.loc, s.name, s.annos, stmts[k + 1:], s.next, s.select, s.cases, s.trans_loc)
            self.state(rest, stl.scope, cont, target, rest.stmts)
            return
        key, trans = self._transition(stl, s, target, ops)
        self.states[entry].update({"parser_ops": ops, "transitions": trans, "transition_key": key})

    def _subparser_apply(self, st: A.Stmt, sl: StmtLowerer) -> DeclE | None:
        if isinstance(st, A.CallStmt) and isinstance(st.call.func, A.Member) and st.call.func.name == "apply":
            return self.instance_applied(st.call.func.expr, "subparser", sl.scope)
        return None

    def inline_parser(self, ent: DeclE, c: A.Call, sl: StmtLowerer, cont: str) -> str:
        """The states of a sub-parser instance, parameters bound to the apply's arguments; returns
        the name of its start state. Names are prefixed by the instance (`sub.start`)."""
        pd: A.ParserDecl = ent.decl
        sc = self.apply_scope(ent, c, sl)
        sc.add(PREFIX, ConstE(ent.qname, StringT()))
        init: list[A.Stmt] = []
        sub_sl = StmtLowerer(sc, self.prog, self)
        for d in pd.locals:
            self.declare_local(d, sub_sl, init, sc, ent.qname)
        return self.parser_states(pd, sc, f"{ent.qname.split('.', 1)[-1]}.", cont, init)

    @staticmethod
    def _op(p: dict) -> dict:
        if p["op"] == "assign":
            dst, src = p["parameters"]
            if src.get("type") == "stack_field":  # bmv2 sets from one as an expression only (as p4c writes it)
                src = {"type": "expression", "value": src}
            return {"op": "set", "parameters": [dst, src]}
        if p["op"] in ("extract", "extract_VL", "verify", "advance", "set"):
            return {"op": p["op"], "parameters": p["parameters"]}
        return {"op": "primitive", "parameters": [{"op": p["op"], "parameters": p["parameters"],
                                                   "source_info": p.get("source_info")}]}

    def special_call(self, sl: StmtLowerer, c: A.Call) -> list[dict] | None:
        """Parser calls: extract, advance, verify."""
        f = c.func
        if isinstance(f, A.Name) and f.name == "verify":
            if len(c.args) != 2:
                raise CompileError(c.loc, "verify takes 2 arguments")
            b = sl.expr(c.args[0].expr)
            e = sl.expr(c.args[1].expr)
            if not isinstance(strip(e.t), ErrorT):
                raise CompileError(c.args[1].expr.loc, f"verify expects an error, found {e.t}")
            return [{"op": "verify", "parameters": [sl.cond(b, c.loc), e.j]}]
        if not (isinstance(f, A.Member) and isinstance(f.expr, A.Name) and _is_packet(sl, f.expr.name)):
            return None
        if f.name == "extract":
            if c.args and isinstance(c.args[0].expr, A.Name) and c.args[0].expr.name == "_":
                c = self._dont_care_header(sl, c)
            if len(c.args) == 2:
                return [self._extract_vl(sl, c)]
            if len(c.args) != 1:
                raise CompileError(c.loc, "extract takes 1 or 2 arguments")
            target, ht = _extract_target(sl, c.args[0].expr)
            if any(isinstance(strip(t), VarbitT) for _, t in ht.fields):
                raise CompileError(c.loc, f"{ht} has a varbit field: extract it with a size")
            return [{"op": "extract", "parameters": [target]}]
        if f.name == "advance":
            n = sl.coerce(sl.expr(c.args[0].expr, BitsT(32)), BitsT(32), c.loc, "advance size")
            return [{"op": "advance", "parameters": [operand(n.j)]}]
        raise CompileError(c.loc, f"packet_in.{f.name} cannot be called as a statement")

    def _dont_care_header(self, sl: StmtLowerer, c: A.Call) -> A.Call:
        """`extract<H>(_)`: into a header of its own (p4c's `arg`), the call rewritten to name it."""
        if len(c.type_args) != 1:
            raise CompileError(c.loc, "extract into _ needs the header type: extract<H>(_)")
        t = self.prog.resolve(c.type_args[0], sl.scope)
        name = self.bm.fresh("arg")
        sl.scope.add(name, self.new_local(name, t, c.loc), c.loc)
        return A.Call(c.loc, c.func, [A.Arg(None, A.Name(c.loc, name))] + c.args[1:], c.type_args)

    @staticmethod
    def _extract_vl(sl: StmtLowerer, c: A.Call) -> dict:
        """`extract(hdr, size_in_bits)` of a header with a varbit field: bmv2's extract_VL."""
        target, ht = _extract_target(sl, c.args[0].expr)
        if not any(isinstance(strip(t), VarbitT) for _, t in ht.fields):
            raise CompileError(c.loc, f"extract with a size needs a header with a varbit field, found {ht}")
        n = sl.coerce(sl.expr(c.args[1].expr, BitsT(32)), BitsT(32), c.args[1].expr.loc, "varbit size")
        return {"op": "extract_VL", "parameters": [target, {"type": "expression", "value": n.j}]}

    def lookahead(self, sl: StmtLowerer, e: A.Expr) -> V | None:
        """`pkt.lookahead<T>()` of bits as a bmv2 lookahead operand (LookaheadExpander leaves no other)."""
        if _is_lookahead(sl, e):
            assert isinstance(e, A.Call)
            if len(e.type_args) != 1:
                raise CompileError(e.loc, "lookahead needs a type argument: lookahead<bit<W>>()")
            t = strip(self.prog.resolve(e.type_args[0], sl.scope))
            if not isinstance(t, (BitsT, BoolT)):
                raise CompileError(e.loc, f"lookahead<{t}>() here: expected bits (assign a lookahead of {t} first)")
            return V({"type": "lookahead", "value": [0, bit_width(t)]}, t)
        return None

    def _transition(self, sl: StmtLowerer, s: A.State, target: Any, ops: list[dict]) -> tuple[list, list]:
        """The select key and transitions of a state; a key that is an expression (bmv2 only selects on
        fields, stack fields and lookaheads) is computed into a temporary by a `set` appended to ops."""
        if s.select is None:
            nxt = s.next or "accept"
            return [], [{"type": "default", "value": None, "mask": None,
                         "next_state": target(nxt, s.trans_loc)}]
        keys, widths = [], []
        for e in s.select:
            v = self.lookahead(sl, e) or sl.expr(e)
            if isinstance(strip(v.t), BoolT):
                v = V(sl.data(v, e.loc), BitsT(1), v.ent)
            if v.j is None or not isinstance(strip(v.t), (BitsT, EnumT, ErrorT)):
                raise CompileError(e.loc, f"cannot select on a value of type {v.t}")
            w = bit_width(strip(v.t))
            if v.j.get("type") not in ("field", "lookahead", "stack_field"):
                tmp = self.new_local(self.bm.fresh("tmp"), BitsT(w), e.loc)
                ops.append({"op": "set", "parameters": [{"type": "field", "value": tmp.ref}, operand(v.j)]})
                v = V({"type": "field", "value": tmp.ref}, BitsT(w))
            keys.append(v.j)
            widths.append(w)
        trans = []
        for case in s.cases:
            ks = case.keyset.items if isinstance(case.keyset, A.ListExpr) else [case.keyset]
            if len(ks) == 1 and isinstance(ks[0], A.Default) or (isinstance(case.keyset, A.Default)):
                trans.append({"type": "default", "value": None, "mask": None,
                              "next_state": target(case.state, case.loc)})
                continue
            vset = self._value_set(sl, case.keyset)
            if vset is not None:
                if vset.extra[1] != sum(widths):
                    raise CompileError(case.loc, f"value set {vset.qname} holds {vset.extra[1]}-bit values, "
                                       f"the select key has {sum(widths)} bits")
                trans.append({"type": "parse_vset", "value": vset.qname, "mask": None,
                              "next_state": target(case.state, case.loc)})
                continue
            if len(ks) != len(keys):
                raise CompileError(case.loc, f"keyset has {len(ks)} values, select has {len(keys)} keys")
            alts: list[list[tuple[int, int]]] = [[]]
            for k, w in zip(ks, widths, strict=False):
                opts = self._keyset(sl, k, w)
                alts = [a + [o] for a in alts for o in opts]
            for alt in alts:
                value = "".join(_hex_bytes(v, w) for (v, _), w in zip(alt, widths, strict=False))
                masks = [m for _, m in alt]
                full = all(m == mask_of(w) for m, w in zip(masks, widths, strict=False))
                mask = None if full else "0x" + "".join(_hex_bytes(m, w) for m, w in zip(masks, widths, strict=False))
                trans.append({"type": "hexstr", "value": "0x" + value, "mask": mask,
                              "next_state": target(case.state, case.loc)})
        return keys, trans

    @staticmethod
    def _value_set(sl: StmtLowerer, k: A.Expr) -> DeclE | None:
        if isinstance(k, A.ListExpr) and len(k.items) == 1:
            k = k.items[0]
        if isinstance(k, A.Name):
            ent = sl.scope.lookup(k.name)
            if isinstance(ent, DeclE) and ent.kind == "value_set":
                return ent
        return None

    def _keyset(self, sl: StmtLowerer, k: A.Expr, w: int) -> list[tuple[int, int]]:
        t = BitsT(w)

        def c(e: A.Expr) -> int:
            v = sl.expr(e, t)
            if isinstance(strip(v.t), BoolT) and v.const is not None:
                return int(v.const)
            v = sl.coerce(v, t, e.loc, "select value")
            if v.const is None:
                raise CompileError(e.loc, "select cases must be compile-time constants or value sets")
            return v.const & mask_of(w)

        if isinstance(k, A.Default):
            return [(0, 0)]
        if isinstance(k, A.Mask):
            m = c(k.mask)
            return [(c(k.value) & m, m)]
        if isinstance(k, A.Range):
            return _range_to_masks(c(k.lo), c(k.hi), w)
        return [(c(k), mask_of(w))]


def _is_lookahead(sl: StmtLowerer, e: A.Expr) -> bool:
    """Is e `pkt.lookahead<...>()` on the parser's packet?"""
    return isinstance(e, A.Call) and isinstance(e.func, A.Member) and e.func.name == "lookahead" and \
        isinstance(e.func.expr, A.Name) and _is_packet(sl, e.func.expr.name)


def _is_packet(sl: StmtLowerer, name: str) -> bool:
    ent = sl.scope.lookup(name)
    return isinstance(ent, DeclE) and ent.kind == "packet"


def _extract_target(sl: StmtLowerer, a: A.Expr) -> tuple[dict, StructT]:
    """The header an extract writes, as bmv2's parameter: `regular` (a header), `stack` (`hs.next`),
    `union_stack` (`us.next.member`); and its header type."""
    if isinstance(a, A.Member) and a.name == "next":
        st = sl.expr(a.expr)
        if not isinstance(st.ent, StackE) or st.ent.type.elem.kind != "header":
            raise CompileError(a.loc, f"{describe(a.expr)} is not a header stack")
        return {"type": "stack", "value": st.ent.name}, st.ent.type.elem
    if isinstance(a, A.Member) and isinstance(a.expr, A.Member) and a.expr.name == "next":
        # a member of the next union of a union stack (bmv2 extracts it and moves next)
        st = sl.expr(a.expr.expr)
        mt = st.ent.type.elem.field_type(a.name) if isinstance(st.ent, StackE) else None
        if mt is None or st.ent.type.elem.kind != "header_union":  # type: ignore[union-attr]
            raise CompileError(a.loc, f"{describe(a)}: expected a member of a header union stack's next")
        return {"type": "union_stack", "value": [st.ent.name, a.name]}, strip(mt)  # type: ignore[union-attr,return-value]
    v = sl.expr(a)
    if not isinstance(v.ent, HeaderE):
        raise CompileError(a.loc, f"extract expects a header, found {v.t}")
    return {"type": "regular", "value": v.ent.inst}, v.ent.type


def _hex_bytes(value: int, width: int) -> str:
    """Hex digits of value in whole bytes (bmv2 builds parser keys from byte-padded fields)."""
    return f"{value:0{(width + 7) // 8 * 2}x}"


def _range_to_masks(lo: int, hi: int, w: int) -> list[tuple[int, int]]:
    """Cover [lo, hi] with value/mask pairs (bmv2 parsers match only value/mask)."""
    out = []
    while lo <= hi:
        size = 0
        while size < w and lo % (1 << (size + 1)) == 0 and lo + (1 << (size + 1)) - 1 <= hi:
            size += 1
        out.append((lo, mask_of(w) & ~mask_of(size)))
        lo += 1 << size
    return out


class DeparserLowerer(BlockContext):
    """Lowers the deparser: the order of emitted headers."""

    def run(self, roles: list) -> dict:
        """Lower the deparser; returns its JSON."""
        d: A.ControlDecl = self.decl
        pkt = d.params[0].name
        self.bind_params(d.params[1:], roles)
        sl = StmtLowerer(self.scope, self.prog, self)
        order: list[str] = []

        def emit(v: V, loc: Any) -> None:
            ent = v.ent
            if isinstance(ent, HeaderE):
                order.append(ent.inst)
            elif isinstance(ent, StackE):
                for h in ent.elems:
                    if isinstance(h, HeaderE):
                        order.append(h.inst)
                    else:  # a union stack: each union's members in order
                        order.extend(m.inst for m in h.members.values())  # type: ignore[attr-defined]
            elif isinstance(ent, StructE):
                for m in ent.members.values():
                    if isinstance(m, (HeaderE, StackE, StructE)):
                        emit(V(None, v.t, m), loc)
            else:
                raise CompileError(loc, f"emit expects a header, a header stack or a struct of headers, found {v.t}")

        def walk(stmts: list[A.Stmt]) -> None:
            for s in stmts:
                if isinstance(s, A.Block):
                    walk(s.stmts)
                elif isinstance(s, A.CallStmt) and isinstance(s.call.func, A.Member) and \
                        isinstance(s.call.func.expr, A.Name) and s.call.func.expr.name == pkt and \
                        s.call.func.name == "emit":
                    if len(s.call.args) != 1:
                        raise CompileError(s.loc, "emit takes one argument")
                    emit(sl.expr(s.call.args[0].expr), s.loc)
                elif isinstance(s, A.Empty):
                    continue
                else:
                    raise CompileError(s.loc, "the deparser may only contain packet.emit(...) calls "
                                       "(bmv2 emits valid headers only, so no conditions are needed)")

        walk(d.body.stmts)
        dj = {"name": "deparser", "id": 0, "source_info": source_info(d.loc, d.name), "order": order,
              "primitives": []}
        self.bm.deparsers.append(dj)
        return dj


class ChecksumLowerer(BlockContext):
    """Lowers VerifyChecksum/ComputeChecksum: verify_checksum/update_checksum calls to bmv2 checksums."""

    def run(self, roles: list, verify: bool) -> None:
        """Add the control's checksums to the JSON."""
        d: A.ControlDecl = self.decl
        self.bind_params(d.params, roles)
        sl = StmtLowerer(self.scope, self.prog, self)
        init: list[A.Stmt] = []
        for loc_decl in d.locals:
            self.declare_local(loc_decl, sl, init)
        want = ("verify_checksum", "verify_checksum_with_payload") if verify else (
            "update_checksum", "update_checksum_with_payload")
        for s in self._flat(d.body.stmts):
            c = s.call if isinstance(s, A.CallStmt) else None
            if c is None or not isinstance(c.func, A.Name) or c.func.name not in want:
                raise CompileError(s.loc, f"control {d.name} may only call {' or '.join(want)}")
            if len(c.args) != 4:
                raise CompileError(c.loc, f"{c.func.name} takes 4 arguments")
            cond = sl.expr(c.args[0].expr)
            jc = sl.cond(cond, c.args[0].expr.loc)
            inputs = field_refs(sl, c.args[1].expr)
            if c.func.name.endswith("_with_payload"):
                inputs.append({"type": "payload", "value": None})
            target = sl.expr(c.args[2].expr)
            if not isinstance(target.ent, FieldE):
                raise CompileError(c.args[2].expr.loc, "the checksum must be a field")
            algo_e = c.args[3].expr
            sl.expr(algo_e)
            if not isinstance(algo_e, A.Member) or algo_e.name not in HASH_ALGOS:
                raise CompileError(algo_e.loc, "expected a HashAlgorithm member")
            calc = self.bm.add_calculation(HASH_ALGOS[algo_e.name], inputs, c.loc, describe(c.args[2].expr))
            self.bm.extern_calls += 1
            self.bm.checksums.append({
                "name": self.bm.unique("cksum"), "id": len(self.bm.checksums),
                "source_info": source_info(c.loc, c.func.name), "target": list(target.ent.ref),
                "type": "generic", "calculation": calc, "verify": verify, "update": not verify,
                "if_cond": jc if cond.const is None else ({"type": "bool", "value": True} if cond.const else
                                                          {"type": "bool", "value": False})})

    def _flat(self, stmts: list[A.Stmt]) -> list[A.Stmt]:
        out: list[A.Stmt] = []
        for s in stmts:
            if isinstance(s, A.Block):
                out += self._flat(s.stmts)
            elif not isinstance(s, A.Empty):
                out.append(s)
        return out

