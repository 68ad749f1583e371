"""Code generation for actions (v1model primitives), tables, conditionals and the two pipelines.

A pipeline is a graph of nodes (tables and conditionals); each node becomes a function returning
the next node's function (or None at the end), and ingress(p)/egress(p) walk the graph.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from p4sim.switch.codegen.flow import FlowGen, Unstructured
from p4sim.switch.codegen.parser import ParserGen
from p4sim.switch.program import parse_hexstr

if TYPE_CHECKING:
    from p4sim.switch.codegen.base import Gen

log = logging.getLogger(__name__)

DROP_PORT = 511


class ControlGen:
    """Generates ACTIONS, the table/conditional node functions, ingress(p), egress(p), _bind_state."""

    def __init__(self, g: Gen, pg: ParserGen | None = None) -> None:
        self.g = g
        self.pg = pg or ParserGen(g)
        self.pg.prim = self.primitive
        self.pg.bind = self.bind  # value sets in parsers are run-time state too
        self.binds: dict[str, str] = {}  # generated global -> python expression on `pl`
        # fused mode (p4sim.switch.codegen.fused): actions, hashes and selectors are inlined and an
        # `exit` leaves the enclosing single-pass loop instead of returning from a function
        self.fused = False
        self.exit_stmt = "return"
        self.profile_json: dict[str, dict[str, Any]] = {
            ap["name"]: ap for pl in g.prog.doc.get("pipelines", []) for ap in pl.get("action_profiles", [])}

    def std(self, f: str) -> str:
        """Attribute of standard_metadata field f."""
        return f"p.{self.g.std[f]}"

    def bind(self, kind: str, name: str, expr: str) -> str:
        """A generated global bound at load time to `expr` (evaluated with pl = the Pipeline)."""
        glob = f"{kind}_{self.g.uid('')}_{_short(name)}"
        self.binds[glob] = expr
        return glob

    # --- actions -------------------------------------------------------------------------------

    def actions(self) -> list[str]:
        """Source of one function per action and the ACTIONS table."""
        out = []
        names = {}
        self.action_json = {a["id"]: a for a in self.g.prog.doc.get("actions", [])}
        for aid, a in self.action_json.items():
            fn = f"a{aid}_{_short(a['name'])}"
            names[aid] = fn
            body: list[str] = []
            self.g.cur_params = self.g.prog.actions[aid].params
            body += self.primitives(a.get("primitives", []), "    ")
            self.g.cur_params = None
            out.append(f"def {fn}(p, d):")
            out += body or ["    pass"]
            out.append("")
        out.append("ACTIONS = {" + ", ".join(f"{aid}: {fn}" for aid, fn in names.items()) + "}")
        out.append("")
        return out

    def primitives(self, prims: list[dict[str, Any]], ind: str) -> list[str]:
        """Lines for an action body; p4c's `_jump_if_zero`/`_jump` (absolute offsets) are folded back into
        if/else when they only jump forward within their block (an `if` around extern calls), else (the
        backward jumps of a `for` loop) the body runs as a program counter over its basic blocks."""
        try:
            return self._prim_range(prims, 0, len(prims), ind) or []
        except _Unfoldable:
            return self._prim_machine(prims, ind)

    def _prim_machine(self, prims: list[dict[str, Any]], ind: str) -> list[str]:
        """An action body with arbitrary jumps: basic blocks dispatched on `_pc` in a loop."""
        if self.exit_stmt != "return":
            raise Unstructured("an action with backward jumps")  # `exit` must leave the whole pipeline
        n = len(prims)
        jumps = {i: _jump_abs(pr["parameters"][-1], i, n) for i, pr in enumerate(prims)
                 if pr["op"] in ("_jump", "_jump_if_zero")}
        leaders = sorted({0} | {t for t in jumps.values() if t < n} | {i + 1 for i in jumps if i + 1 < n})
        out = [f"{ind}_pc = 0", f"{ind}while True:"]
        for k, lo in enumerate(leaders):
            hi = leaders[k + 1] if k + 1 < len(leaders) else n
            out.append(f"{ind}    {'if' if k == 0 else 'elif'} _pc == {lo}:")
            body: list[str] = []
            for i in range(lo, hi):
                pr = prims[i]
                if pr["op"] == "_jump":
                    body.append(f"{ind}        _pc = {jumps[i]}")
                elif pr["op"] == "_jump_if_zero":
                    body.append(f"{ind}        _pc = {i + 1} if {self.g.ex(pr['parameters'][0])} else {jumps[i]}")
                else:
                    body += self.primitive(pr, ind + "        ")
            if hi - 1 not in jumps:
                body.append(f"{ind}        _pc = {hi}")
            out += body
        return out + [f"{ind}    else:", f"{ind}        break"]

    def _prim_range(self, prims: list[dict[str, Any]], lo: int, hi: int, ind: str) -> list[str]:
        out: list[str] = []
        i = lo
        while i < hi:
            pr = prims[i]
            if pr["op"] == "_jump_if_zero":
                ps = pr.get("parameters", [])
                target = _jump_target(ps[-1], i, hi)
                then_hi, els = target, None
                last = prims[target - 1] if target - 1 > i else None
                if last is not None and last["op"] == "_jump":
                    end = _jump_target(last["parameters"][-1], target - 1, hi)
                    if end > target:  # else non-empty (a jump to target itself ends an empty else)
                        then_hi, els = target - 1, (target, end)
                out.append(f"{ind}if {self.g.ex(ps[0])}:")
                out += self._prim_range(prims, i + 1, then_hi, ind + "    ") or [f"{ind}    pass"]
                if els is not None:
                    out.append(f"{ind}else:")
                    out += self._prim_range(prims, els[0], els[1], ind + "    ") or [f"{ind}    pass"]
                i = els[1] if els is not None else target
            elif pr["op"] == "_jump":
                # only a jump to the end of the enclosing range is structured (p4c emits no other)
                if _jump_target(pr["parameters"][-1], i, hi) != hi:
                    raise _Unfoldable(f"primitive _jump at {i}: unstructured jump")
                return out
            else:
                out += self.primitive(pr, ind)
                i += 1
        return out

    def primitive(self, pr: dict[str, Any], ind: str) -> list[str]:
        """Lines for one primitive call (in an action or a parser state)."""
        g = self.g
        op = pr["op"]
        ps = pr.get("parameters", [])
        ex = g.ex
        if op in ("assign", "modify_field"):
            if ps[0]["type"] == "header" or (ps[1]["type"] == "header" and ps[0]["type"] != "field"):
                return self.copy_header(ps[0], ps[1], ind)
            return g.assign(ps[0], ex(ps[1]), ind, ps[1])
        if op == "assign_header":
            return self.copy_header(ps[0], ps[1], ind)
        if op in ("add_to_field", "subtract_from_field"):
            sign = "+" if op == "add_to_field" else "-"
            return g.assign(ps[0], f"{ex(ps[0])} {sign} {ex(ps[1])}", ind)
        if op == "add_header":
            h = self._static_header(ps[0], op)
            lines = [f"{ind}if not p.{g.valid[h]}:"]
            lines += [f"{ind}    p.{g.attr[(h, f)]} = 0" for f, _ in g.hfields[h]]
            if h in g.varbit:
                lines.append(f"{ind}    p.{g.varbit[h][1]} = 0")
            # bmv2 keeps the packet's length in a register that add_header/remove_header move by the
            # header's size; egress starts with standard_metadata.packet_length set from it
            lines.append(f"{ind}    p._dlen += {self._fixed_bytes(h)}")
            # a union member made valid invalidates the other members
            return lines + [f"{ind}    p.{g.valid[h]} = 1"] + [f"{ind}p.{g.valid[o]} = 0" for o in g.union_siblings.get(h, ())]
        if op == "remove_header":
            h = self._static_header(ps[0], op)
            size = str(self._fixed_bytes(h))
            if h in g.varbit:
                size += f" + p.{g.varbit[h][1]} // 8"
            return [f"{ind}if p.{g.valid[h]}:", f"{ind}    p._dlen -= {size}", f"{ind}    p.{g.valid[h]} = 0"]
        if op in ("mark_to_drop", "drop"):
            lines = [f"{ind}{self.std('egress_spec')} = {DROP_PORT}"]
            if "mcast_grp" in g.std:
                lines.append(f"{ind}{self.std('mcast_grp')} = 0")
            return lines
        if op == "no_op":
            return [f"{ind}pass"]
        if op == "exit":
            # bmv2 (core primitive exit_): the packet is marked, the action runs to its end, then the
            # pipeline stops (checked after every table)
            return [f"{ind}p._exit = True"]
        if op == "count":
            c = self.bind("CTR", ps[0]["value"], f"pl.counters[{ps[0]['value']!r}]")
            return [f"{ind}i = {ex(ps[1])}", f"{ind}if 0 <= i < {c}.size:",
                    f"{ind}    {c}.packets[i] += 1", f"{ind}    {c}.bytes[i] += p._ilen"]
        if op == "execute_meter":
            m = self.bind("MTR", ps[0]["value"], f"pl.meters[{ps[0]['value']!r}]")
            return g.assign(ps[2], f"{m}.execute({ex(ps[1])}, p._ilen, p._now)", ind)
        if op == "register_read":
            r = self.bind("REG", ps[1]["value"], f"pl.registers[{ps[1]['value']!r}]")
            return [f"{ind}i = {ex(ps[2])}"] + g.assign(ps[0], f"{r}.cells[i] if 0 <= i < {r}.size else 0", ind)
        if op == "register_write":
            r = self.bind("REG", ps[0]["value"], f"pl.registers[{ps[0]['value']!r}]")
            width = g.prog.registers[ps[0]["value"]].bitwidth
            return [f"{ind}i = {ex(ps[1])}", f"{ind}if 0 <= i < {r}.size:",
                    f"{ind}    {r}.cells[i] = ({ex(ps[2])}) & {(1 << width) - 1}"]
        if op == "modify_field_with_hash_based_offset":
            size = ex(ps[3])
            hline = (self.pg.calc_inline(ps[2]["value"], "h", ind) if self.fused
                     else [f"{ind}h = {self.pg.calc(ps[2]['value'])}(p)"])
            return [f"{ind}sz = {size}"] + hline + g.assign(
                ps[0], f"{ex(ps[1])} + (h % sz if sz else h)", ind)
        if op == "modify_field_rng_uniform":
            return g.assign(ps[0], f"_rand({ex(ps[1])}, {ex(ps[2])})", ind)
        if op in ("clone_ingress_pkt_to_egress", "clone_egress_pkt_to_egress"):
            fl = ex(ps[1]) if len(ps) > 1 else "0"
            attr = "_clone_i2e" if op.startswith("clone_ingress") else "_clone_e2e"
            return [f"{ind}p.{attr} = ({ex(ps[0])}, {fl})"]
        if op in ("resubmit", "recirculate"):
            fl = ex(ps[0]) if ps else "0"
            return [f"{ind}p._{'resubmit' if op == 'resubmit' else 'recirc'} = {fl}"]
        if op == "generate_digest":
            return [f"{ind}p._digest = {ex(ps[1])}"]
        if op == "truncate":
            return [f"{ind}p._trunc = {ex(ps[0])}"]
        if op == "log_msg":
            fmt = ps[0]["value"]
            vals = ", ".join(ex(v) for v in ps[1]["value"]) if len(ps) > 1 else ""
            return [f"{ind}_log.info('log_msg: %s', _fmt({fmt!r}, ({vals}{',' if vals else ''})))"]
        if op in ("assert", "assume"):
            return [f"{ind}if not {ex(ps[0])}:", f"{ind}    _assert_failed(p, {op!r})", f"{ind}    return"]
        if op in ("push", "pop"):
            return self.shift(op, ps[0], ex(ps[1]), ind)
        if op == "assign_union":
            return self.copy_union(ps[0], ps[1], ind)
        if op in ("assign_header_stack", "assign_union_stack"):
            return self.copy_stack(op, ps[0], ps[1], ind)
        if op == "assign_VL":
            return self.copy_varbit(ps[0], ps[1], ind)
        raise ValueError(f"primitive {op!r} is not supported by p4sim")

    def _fixed_bytes(self, h: str) -> int:
        """Bytes of a header's fixed-width fields (a variable-length field counts 0)."""
        vl = self.g.varbit.get(h, (None,))[0]
        return sum(w for f, w in self.g.hfields[h] if f != vl) // 8

    def _static_header(self, v: dict[str, Any], op: str) -> str:
        h = self.g.header_ref(v)
        if not isinstance(h, str):
            raise ValueError(f"primitive {op}: a run-time indexed header stack element is not supported")
        return h

    def copy_header(self, dst: dict[str, Any], src: dict[str, Any], ind: str) -> list[str]:
        """Lines copying a whole header as bmv2's assign_header: an invalid source only invalidates the
        destination; a valid one is copied field by field and makes the destination valid (and the
        other members of its union invalid). Metadata (struct) copies are plain field copies."""
        d, s = self._static_header(dst, "assign_header"), self._static_header(src, "assign_header")
        return self._copy(d, s, ind)

    def _copy(self, d: str, s: str, ind: str) -> list[str]:
        g = self.g
        if [w for _f, w in g.hfields[d]] != [w for _f, w in g.hfields[s]]:
            raise ValueError(f"copy of header {s} to {d}: the header types differ")
        lines = [f"p.{g.attr[(d, f)]} = p.{g.attr[(s, f2)]}"
                 for (f, _), (f2, _w) in zip(g.hfields[d], g.hfields[s], strict=True)]
        if d in g.varbit or s in g.varbit:
            if not (d in g.varbit and s in g.varbit):
                raise ValueError(f"copy of header {s} to {d}: both or neither must have a variable-length field")
            lines.append(f"p.{g.varbit[d][1]} = p.{g.varbit[s][1]}")
        if d in g.meta or s in g.meta:
            return [ind + x for x in lines]
        lines += [f"p.{g.valid[d]} = 1"] + [f"p.{g.valid[o]} = 0" for o in g.union_siblings.get(d, ())]
        return ([f"{ind}if p.{g.valid[s]}:"] + [f"{ind}    {x}" for x in lines]
                + [f"{ind}else:", f"{ind}    p.{g.valid[d]} = 0"])

    def copy_union(self, dst: dict[str, Any], src: dict[str, Any], ind: str) -> list[str]:
        """bmv2 assign_union: assign_header member by member."""
        ds, ss = self.g.union_members(dst), self.g.union_members(src)
        if len(ds) != len(ss) or not all(isinstance(h, str) for h in ds + ss):
            raise ValueError("assign_union: the unions differ, or an index is known only at run time")
        return [x for d, s in zip(ds, ss, strict=True) for x in self._copy(d, s, ind)]  # type: ignore[arg-type]

    def copy_stack(self, op: str, dst: dict[str, Any], src: dict[str, Any], ind: str) -> list[str]:
        """bmv2 assign_header_stack/assign_union_stack: the next index, then every element."""
        dnext, snext, pairs = self.g.stack_copy_pairs(op, dst, src)
        return [f"{ind}p.{dnext} = p.{snext}"] + [x for d, s in pairs for x in self._copy(d, s, ind)]

    def copy_varbit(self, dst: dict[str, Any], src: dict[str, Any], ind: str) -> list[str]:
        """bmv2 assign_VL: a variable-length field's value and length."""
        g = self.g
        (dh, df), (sh, sf) = dst["value"], src["value"]
        if g.varbit.get(dh, (None,))[0] != df or g.varbit.get(sh, (None,))[0] != sf:
            raise ValueError(f"assign_VL of {sh}.{sf} to {dh}.{df}: expected two variable-length fields")
        return [f"{ind}p.{g.attr[(dh, df)]} = p.{g.attr[(sh, sf)]}", f"{ind}p.{g.varbit[dh][1]} = p.{g.varbit[sh][1]}"]

    def shift(self, op: str, stack_ref: dict[str, Any], count: str, ind: str) -> list[str]:
        """push_front/pop_front of a header stack or a header union stack."""
        g = self.g
        name = stack_ref["value"]
        if stack_ref["type"] == "header_union_stack":
            elems = [g.prog.header_unions[u] for u in g.union_stacks[name]]
        else:
            elems = [[h] for h in g.stacks[name]]
        attrs = g.const(tuple(tuple(a for h in hs for a in [g.attr[(h, f)] for f, _ in g.hfields[h]] + [g.valid[h]])
                              for hs in elems))
        valids = g.const(tuple(tuple(g.valid[h] for h in hs) for hs in elems))
        return [f"{ind}_stack_{op}(p, {attrs}, {valids}, {g.stack_next(name)!r}, {count})"]

    # --- tables and control flow ---------------------------------------------------------------

    def node_fn(self, pipeline: str, name: str | None) -> str:
        """Function name of a pipeline node, or 'None'."""
        if name is None:
            return "None"
        return f"n_{_short(pipeline)}_{_short(name)}_{self.ids[(pipeline, name)]}"

    def pipelines(self) -> list[str]:
        """Source of every node function, ingress(p), egress(p) and _bind_state(pl)."""
        g = self.g
        out: list[str] = []
        self.ids: dict[tuple[str, str], int] = {}
        for pl in g.prog.doc["pipelines"]:
            for t in pl.get("tables", []):
                self.ids[(pl["name"], t["name"])] = len(self.ids)
            for c in pl.get("conditionals", []):
                self.ids[(pl["name"], c["name"])] = len(self.ids)
            if pl.get("action_calls"):
                raise ValueError(f"pipeline {pl['name']}: action_calls are not supported (p4c never emits them)")
        tail: list[str] = []
        for pl in g.prog.doc["pipelines"]:
            for ap in pl.get("action_profiles", []):
                self.profile_json[ap["name"]] = ap
                if ap.get("selector"):
                    out += self.selector(ap)
        for name in ("ingress", "egress"):
            pl = g.prog.pipelines[name]
            try:
                out += FlowGen(pl, self.inline_table, g.ex).function(name, pl.get("init_table"))
                continue
            except Unstructured:
                log.info("pipeline %s is not structured: one function per node", name)
            for t in pl.get("tables", []):
                body, post = self.table(pl["name"], t)
                out += body
                tail += post
            for c in pl.get("conditionals", []):
                out += [f"def {self.node_fn(pl['name'], c['name'])}(p):",
                        f"    if {g.ex(c['expression'])}:",
                        f"        return {self.node_fn(pl['name'], c.get('true_next'))}",
                        f"    return {self.node_fn(pl['name'], c.get('false_next'))}", ""]
            out += [f"def {name}(p):", f"    n = {self.node_fn(name, pl.get('init_table'))}",
                    "    while n is not None:", "        n = n(p)", ""]
        out += tail
        out += g.lines
        out.append("def _bind_state(pl):")
        if self.binds:
            out.append("    global " + ", ".join(self.binds))
            out += [f"    {k} = {v}" for k, v in self.binds.items()]
        out.append("    return None")
        out.append("")
        return out

    def _may_exit(self, aids: tuple[int, ...]) -> bool:
        return any(pr["op"] == "exit" for a in aids for pr in self.action_json[a].get("primitives", []))

    def inline_table(self, t: dict[str, Any], ind: str, need: str = "aid") -> tuple[list[str], bool]:
        """Lines applying table t inside a pipeline function; they set `hit` or `aid` if `need` says."""
        g = self.g
        info = g.prog.tables[t["name"]]
        de = info.default_entry
        if not info.key and de is not None and de.action_const and not info.const_entries:
            # p4c's stand-in for plain statements: the action body, with its constant arguments
            a = self.action_json[de.action_id]
            out = [f"{ind}hit = False"] if need == "hit" else [f"{ind}aid = {de.action_id}"] if need else []
            if de.action_data:
                out.append(f"{ind}d = {tuple(de.action_data)!r}")
            g.cur_params = g.prog.actions[de.action_id].params
            out += self.primitives(a.get("primitives", []), ind)
            g.cur_params = None
            if self._may_exit((de.action_id,)):
                out += [f"{ind}if p._exit:", f"{ind}    {self.exit_stmt}"]
            return out, False
        tbl = self.bind("T", t["name"], f"pl.tables[{t['name']!r}]")
        out: list[str] = []
        if info.key:
            look = self.bind("TL", t["name"], f"pl.tables[{t['name']!r}].lookup")
            out += [f"{ind}e = {look}({self.key_expr(info)})", f"{ind}if e is None:",
                    f"{ind}    e = {tbl}.default", f"{ind}    hit = False", f"{ind}else:", f"{ind}    hit = True"]
            i2 = ind + "    "
            if info.with_counters:
                out += [f"{i2}e.packets += 1", f"{i2}e.bytes += p._ilen"]
            if info.direct_meters:
                dm = g.prog.meters[info.direct_meters]
                m = self.bind("DM", dm.name, f"pl.direct_meters[{dm.name!r}]")
                if dm.result_target:
                    out += g.assign({"type": "field", "value": list(dm.result_target)},
                                    f"{m}.execute(e, p._ilen, p._now)", i2)
            if info.type != "simple":
                ap = self.profile_json.get(info.action_profile or "")
                sel = getattr(self, "sel_fns", {}).get(info.action_profile or "")
                out += [f"{i2}m = e.member", f"{i2}if m is None:"]
                # one active member (a liveness group, a single path): no hash needed, x % 1 == 0
                if ap is None or not ap.get("selector"):
                    out += [f"{i2}    pass"]
                elif self.fused:
                    out += [f"{i2}    a = e.group.active", f"{i2}    na = len(a)", f"{i2}    if na == 1:",
                            f"{i2}        m = a[0]", f"{i2}    elif na:"]
                    out += self.pg.input_lines(ap["selector"]["algo"], ap["selector"]["input"], i2 + "        ", "hs")
                    out += [f"{i2}        m = a[hs % na]"]
                else:
                    out += [f"{i2}    a = e.group.active", f"{i2}    na = len(a)",
                            f"{i2}    m = a[0] if na == 1 else a[{sel}(p) % na] if na else None"]
                out += [f"{i2}if m is None:", f"{i2}    e = {tbl}.default", f"{i2}    hit = False",
                        f"{i2}else:", f"{i2}    e = m"]
        else:
            out += [f"{ind}e = {tbl}.default", f"{ind}hit = False"]
        if self.fused:
            out += [f"{ind}aid = e.aid if e is not None else -1", f"{ind}d = e.args if e is not None else ()"]
            first = True
            for a_id in info.action_ids:
                body: list[str] = []
                g.cur_params = g.prog.actions[a_id].params
                body += self.primitives(self.action_json[a_id].get("primitives", []), ind + "    ")
                g.cur_params = None
                if not body:
                    continue
                out.append(f"{ind}{'if' if first else 'elif'} aid == {a_id}:")
                out += body
                first = False
        elif need == "aid":
            out += [f"{ind}if e is not None:", f"{ind}    aid = e.aid", f"{ind}    e.fn(p, e.args)",
                    f"{ind}else:", f"{ind}    aid = -1"]
        elif info.default_entry is not None:
            out += [f"{ind}e.fn(p, e.args)"]
        else:
            out += [f"{ind}if e is not None:", f"{ind}    e.fn(p, e.args)"]
        if self._may_exit(info.action_ids):
            out += [f"{ind}if p._exit:", f"{ind}    {self.exit_stmt}"]
        return out, True

    def key_expr(self, info: Any) -> str:
        """Source of the concatenated key value of a table."""
        g = self.g
        terms = []
        sh = sum(k.bitwidth for k in info.key)
        for k in info.key:
            sh -= k.bitwidth
            src = f"p.{g.valid[k.target]}" if k.match_type == "valid" else f"p.{g.fattr(k.target)}"
            if k.mask is not None:
                src = f"({src} & {k.mask})"
            terms.append(f"({src} << {sh})" if sh else src)
        return " | ".join(terms)

    def selector(self, ap: dict[str, Any]) -> list[str]:
        """Source of the selector hash function of an action selector."""
        fn = f"SEL_{_short(ap['name'])}_{ap['id']}"
        self.sel_fns = getattr(self, "sel_fns", {})
        self.sel_fns[ap["name"]] = fn
        return self.pg.input_fn(fn, ap["selector"]["algo"], ap["selector"]["input"])

    def table(self, pipeline: str, t: dict[str, Any]) -> tuple[list[str], list[str]]:
        """Source of one table's node function, and lines to run after all definitions."""
        g = self.g
        info = g.prog.tables[t["name"]]
        fn = self.node_fn(pipeline, t["name"])
        tbl = self.bind("T", t["name"], f"pl.tables[{t['name']!r}]")
        look = self.bind("TL", t["name"], f"pl.tables[{t['name']!r}].lookup")
        out = [f"def {fn}(p):"]
        if info.key:
            terms = []
            sh = sum(k.bitwidth for k in info.key)
            for k in info.key:
                sh -= k.bitwidth
                if k.match_type == "valid":
                    src = f"p.{g.valid[k.target]}"  # type: ignore[index]
                else:
                    src = f"p.{g.fattr(k.target)}"  # type: ignore[arg-type]
                if k.mask is not None:
                    src = f"({src} & {k.mask})"
                terms.append(f"({src} << {sh})" if sh else src)
            out += [f"    e = {look}({' | '.join(terms)})", "    if e is None:"]
        else:
            out += ["    e = None", "    if True:"]
        out += [f"        e = {tbl}.default", "        hit = False"]
        out += ["    else:", "        hit = True"]
        if info.with_counters:
            out += ["        e.packets += 1", "        e.bytes += p._ilen"]
        if info.direct_meters:
            dm = g.prog.meters[info.direct_meters]
            m = self.bind("DM", dm.name, f"pl.direct_meters[{dm.name!r}]")
            if dm.result_target:
                out += g.assign({"type": "field", "value": list(dm.result_target)},
                                f"{m}.execute(e, p._ilen, p._now)", "        ")
        if info.type != "simple":
            sel = getattr(self, "sel_fns", {}).get(info.action_profile or "")
            out += ["        m = e.member", "        if m is None:"]
            if sel:
                out += [f"            m = e.group.pick({sel}(p)) if e.group.active else None"]
            else:
                out += ["            pass"]
            out += ["        if m is None:", f"            e = {tbl}.default", "            hit = False",
                    "        else:", "            e = m"]
        base_next = self.node_fn(pipeline, t.get("base_default_next"))
        nt = t.get("next_tables", {})
        hit_miss = "__HIT__" in nt or "__MISS__" in nt
        # bmv2: a miss without a default entry runs nothing, then follows __MISS__ if the table has it
        no_entry = self.node_fn(pipeline, nt.get("__MISS__")) if hit_miss else base_next
        out += ["    if e is None:", f"        return {no_entry}", "    e.fn(p, e.args)", "    if p._exit:",
                "        return None"]
        if hit_miss:
            out += [f"    return {self.node_fn(pipeline, nt.get('__HIT__'))} if hit else "
                    f"{self.node_fn(pipeline, nt.get('__MISS__'))}", ""]
            return out, []
        nxt = g.uid("NEXT")
        out += [f"    return {nxt}.get(e.aid, {base_next})", ""]
        pairs = []
        for aid in info.action_ids:
            aname = g.prog.actions[aid].name
            target = nt[aname] if aname in nt else t.get("base_default_next")
            pairs.append(f"{aid}: {self.node_fn(pipeline, target)}")
        return out, [f"{nxt} = {{{', '.join(pairs)}}}", ""]


class _Unfoldable(ValueError):
    """The jumps of an action body are not the forward ones of an if/else."""


def _jump_abs(param: dict[str, Any], at: int, n: int) -> int:
    """The absolute offset of a jump primitive, 0..n (n: the end of the action)."""
    v = param.get("value")
    t = int(v, 16) if isinstance(v, str) else int(v)
    if not 0 <= t <= n:
        raise ValueError(f"jump at primitive {at} to {t}: outside the action (0..{n})")
    return t


def _jump_target(param: dict[str, Any], at: int, hi: int) -> int:
    """The absolute offset of a jump primitive; only forward jumps within the enclosing block fold."""
    v = param.get("value")
    t = int(v, 16) if isinstance(v, str) else int(v)
    if not at < t <= hi:
        raise _Unfoldable(f"jump at primitive {at} to {t}: not a forward jump within its block (<= {hi})")
    return t


def _short(name: str) -> str:
    import re

    return re.sub(r"\W", "_", name.split(".")[-1])[:40]


__all__ = ["ControlGen", "parse_hexstr"]
