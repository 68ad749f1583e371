"""Actions, tables and the two pipelines of a program as C (codegen/control.py's semantics).

An action is a function over the packet and its arguments; p4c's `_jump_if_zero`/`_jump` are gotos
to the primitive they name. A pipeline is one function whose tables and conditionals are labels:
each node runs, then jumps to its successor (by hit or miss, by the action that ran, or by the
condition), as the graph of the JSON says. Keyless tables with a constant default action (p4c's
stand-ins for statements) run their action with its constant arguments, as the Python path does.
"""

from __future__ import annotations

from typing import Any

from p4sim.switch.codegen.base import Gen
from p4sim.switch.native.cgen.exprs import CExpr, NotNative, Val, masked
from p4sim.switch.native.cgen.parser import ParserC
from p4sim.switch.program import TableInfo, parse_hexstr

DROP_PORT = 511
MODES = {"none": "P4S_MODE_NONE", "exact": "P4S_MODE_EXACT", "lpm": "P4S_MODE_LPM", "ternary": "P4S_MODE_TERNARY",
         "range": "P4S_MODE_RANGE"}


def key_words(info: TableInfo) -> int:
    """64-bit words of a table's concatenated key (at least one)."""
    return max(1, (sum(k.bitwidth for k in info.key) + 63) // 64)


class ControlC:
    """C for the actions, tables and pipelines of one program."""

    def __init__(self, g: Gen, cx: CExpr, pc: ParserC, index: dict[str, dict[str, int]]) -> None:
        self.g = g
        self.cx = cx
        self.pc = pc
        pc.prim = self.primitive
        self.index = index  # kind -> name -> index into the pipeline's arrays (program.Layout)
        self.action_json = {a["id"]: a for a in g.prog.doc.get("actions", [])}
        self.consts: list[str] = []
        self.profile_json: dict[str, dict[str, Any]] = {
            ap["name"]: ap for pl in g.prog.doc.get("pipelines", []) for ap in pl.get("action_profiles", [])}

    def std(self, f: str) -> str:
        """The C lvalue of standard_metadata field f."""
        return f"p->{self.g.std[f]}"

    # --- actions ---------------------------------------------------------------------------------

    def actions(self) -> list[str]:
        """One function per action: a_<id>(P *p, const uint64_t *d, struct ctx *c)."""
        out: list[str] = []
        for aid, a in self.action_json.items():
            self.cx.params = self.g.prog.actions[aid].params
            for name, w in self.cx.params:
                if w > 64:
                    raise NotNative(f"action {a['name']}: parameter {name} is {w} bits wide")
            prims = a.get("primitives", [])
            body: list[str] = []
            for i, pr in enumerate(prims):
                body.append(f"L{i}:;")
                body += self.primitive(pr, "    ", i, len(prims))
            body.append(f"L{len(prims)}:;")
            self.cx.params = None
            out += [f"static void a_{aid}(P *p, const uint64_t *d, struct ctx *c) {{", "    (void)p; (void)d; (void)c;"]
            out += body + ["}", ""]
        return out

    def primitive(self, pr: dict[str, Any], ind: str, at: int = 0, n: int = 0) -> list[str]:
        """Lines of one primitive call (in an action, or a parser state's `primitive` op)."""
        g, cx = self.g, self.cx
        op = pr["op"]
        ps = pr.get("parameters", [])
        ex = cx.ex
        if op in ("_jump", "_jump_if_zero"):
            v = ps[-1].get("value")
            t = int(v, 16) if isinstance(v, str) else int(v)
            if not 0 <= t <= n:
                raise ValueError(f"jump at primitive {at} to {t}: outside the action (0..{n})")
            if op == "_jump":
                return [f"{ind}goto L{t};"]
            return [f"{ind}if (!{cx.cond(ps[0])}) goto L{t};"]
        if op in ("assign", "modify_field"):
            if ps[0]["type"] == "header" or (ps[1]["type"] == "header" and ps[0]["type"] != "field"):
                return self.copy_header(ps[0], ps[1], ind)
            return cx.assign(ps[0], ex(ps[1]), ind)
        if op == "assign_header":
            return self.copy_header(ps[0], ps[1], ind)
        if op in ("add_to_field", "subtract_from_field"):
            sign = "+" if op == "add_to_field" else "-"
            a, b = ex(ps[0]), ex(ps[1])
            return cx.assign(ps[0], Val(f"((V)((u128){a.code} {sign} (u128){b.code}))", None, False, False), ind)
        if op == "add_header":
            h = self._static_header(ps[0], op)
            lines = [f"{ind}if (!p->{g.valid[h]}) {{"]
            lines += [f"{ind}    p->{g.attr[(h, f)]} = 0;" for f, _ in g.hfields[h]]
            lines += [f"{ind}    p->_dlen += {self._fixed_bytes(h)};", f"{ind}    p->{g.valid[h]} = 1;", f"{ind}}}"]
            return lines + [f"{ind}p->{g.valid[o]} = 0;" for o in g.union_siblings.get(h, ())]
        if op == "remove_header":
            h = self._static_header(ps[0], op)
            return [f"{ind}if (p->{g.valid[h]}) {{", f"{ind}    p->_dlen -= {self._fixed_bytes(h)};",
                    f"{ind}    p->{g.valid[h]} = 0;", f"{ind}}}"]
        if op in ("mark_to_drop", "drop"):
            lines = [f"{ind}{self.std('egress_spec')} = {DROP_PORT};"]
            if "mcast_grp" in g.std:
                lines.append(f"{ind}{self.std('mcast_grp')} = 0;")
            return lines
        if op == "no_op":
            return []
        if op == "exit":
            return [f"{ind}p->_exit = 1;"]
        if op == "count":
            c = f"c->pl->counters[{self.index['counter'][ps[0]['value']]}]"
            return [f"{ind}{{ V i = {cx.index(ps[1], 'a counter index')};",
                    f"{ind}  if (i >= 0 && i < (V){c}.size) {{ {c}.pk[(uint64_t)i]++; {c}.by[(uint64_t)i] += p->_ilen; }} }}"]
        if op == "execute_meter":
            m = f"&c->pl->meters[{self.index['meter'][ps[0]['value']]}]"
            i = cx.index(ps[1], "a meter index")
            color = f"((V)p4s_meter_execute({m}, {i} < 0 ? ~0ULL : (uint64_t)({i}), p->_ilen, p->_now))"
            return cx.assign(ps[2], Val(color, 2, True, True), ind)
        if op == "register_read":
            r = f"c->pl->registers[{self.index['register'][ps[1]['value']]}]"
            tmp = self.pc.uid("ri")
            return [f"{ind}V {tmp} = {cx.index(ps[2], 'a register index')};"] + cx.assign(
                ps[0], Val(f"(({tmp} >= 0 && {tmp} < (V){r}.size) ? (V){r}.v[(uint64_t){tmp}] : (V)0)", 64, True, True),
                ind)
        if op == "register_write":
            name = ps[0]["value"]
            r = f"c->pl->registers[{self.index['register'][name]}]"
            width = g.prog.registers[name].bitwidth
            if width > 64:
                raise NotNative(f"register {name}: {width} bits wide")
            tmp = self.pc.uid("ri")
            return [f"{ind}V {tmp} = {cx.index(ps[1], 'a register index')};",
                    f"{ind}if ({tmp} >= 0 && {tmp} < (V){r}.size) {r}.v[(uint64_t){tmp}] = {masked(ex(ps[2]).code, width)};"]
        if op == "modify_field_with_hash_based_offset":
            calc = g.prog.calculations.get(ps[2]["value"])
            if calc is None:
                raise ValueError(f"calculation {ps[2]['value']!r} is not declared")
            h, sz = self.pc.uid("h"), self.pc.uid("sz")
            lines = [f"{ind}{{", f"{ind}    V {sz} = {cx.need(ex(ps[3]), 'a hash size')};"]
            lines += self.pc.hash_lines(calc["algo"], calc.get("input", []), h, ind + "    ")
            base = ex(ps[1])
            val = Val(f"((V)((u128){base.code} + (u128)({sz} ? p4s_fmod((V){h}, {sz}) : (V){h})))", None, False, False)
            return lines + cx.assign(ps[0], val, ind + "    ") + [f"{ind}}}"]
        if op == "modify_field_rng_uniform":
            lo, hi = cx.need(ex(ps[1]), "a random bound"), cx.need(ex(ps[2]), "a random bound")
            return cx.assign(ps[0], Val(f"((V)p4s_rand(c->d, c->pl, (uint64_t)({lo}), (uint64_t)({hi})))", 64, True, True), ind)
        if op in ("clone_ingress_pkt_to_egress", "clone_egress_pkt_to_egress"):
            kind = "ci2e" if op.startswith("clone_ingress") else "ce2e"
            fl = cx.need(ex(ps[1]), "a field list") if len(ps) > 1 else "0"
            return [f"{ind}p->{kind}_sid = (int64_t)({cx.need(ex(ps[0]), 'a clone session')});",
                    f"{ind}p->{kind}_fl = (int64_t)({fl});", f"{ind}p->has_{kind} = 1;"]
        if op in ("resubmit", "recirculate"):
            kind = "resubmit" if op == "resubmit" else "recirc"
            fl = cx.need(ex(ps[0]), "a field list") if ps else "0"
            return [f"{ind}p->{kind} = (int64_t)({fl});", f"{ind}p->has_{kind} = 1;"]
        if op == "generate_digest":
            return [f"{ind}p->digest = (int64_t)({cx.need(ex(ps[1]), 'a digest')});", f"{ind}p->has_digest = 1;"]
        if op == "truncate":
            return [f"{ind}p->_trunc = (int64_t)({cx.need(ex(ps[0]), 'a truncation')});"]
        if op == "log_msg":
            fmt = ps[0]["value"]
            vals = [cx.need(ex(v), "a logged value") for v in ps[1]["value"]] if len(ps) > 1 else []
            arr = self.pc.uid("lv")
            return [f"{ind}if (p4s_log_info(c->d)) {{",
                    f"{ind}    V {arr}[{len(vals) + 1}] = {{{', '.join(vals) or '0'}}};",
                    f"{ind}    p4s_fmt(c->d, {_c_string(fmt)}, {arr}, {len(vals)});", f"{ind}}}"]
        if op in ("assert", "assume"):
            return [f"{ind}if (!{cx.cond(ps[0])}) {{",
                    f"{ind}    p4s_log(c->d, 40, \"{op} failed in the P4 program; dropping the packet\");",
                    f"{ind}    p->_exit = 1;", f"{ind}    {self.std('egress_spec')} = {DROP_PORT};",
                    f"{ind}    return;", f"{ind}}}"]
        if op == "assign_union":
            ds, ss = g.union_members(ps[0]), g.union_members(ps[1])
            if len(ds) != len(ss) or not all(isinstance(h, str) for h in ds + ss):
                raise NotNative("assign_union at a run-time index")
            return [x for d, s in zip(ds, ss, strict=True) for x in self._copy(d, s, ind)]  # type: ignore[arg-type]
        if op in ("assign_header_stack", "assign_union_stack"):
            return self.copy_stack(op, ps[0], ps[1], ind)
        raise NotNative(f"primitive {op!r}")

    def _fixed_bytes(self, h: str) -> int:
        if h in self.g.varbit:
            raise NotNative(f"header {h}: a variable-length field")
        return sum(w for _f, w in self.g.hfields[h]) // 8

    def _static_header(self, v: dict[str, Any], op: str) -> str:
        h = self.g.header_ref(v)
        if not isinstance(h, str):
            raise NotNative(f"{op} of a header at a run-time stack index")
        return h

    def copy_header(self, dst: dict[str, Any], src: dict[str, Any], ind: str) -> list[str]:
        """bmv2's assign_header (ControlGen.copy_header)."""
        return self._copy(self._static_header(dst, "assign_header"), self._static_header(src, "assign_header"), ind)

    def _copy(self, d: str, s: str, ind: str) -> list[str]:
        g = self.g
        if [w for _f, w in g.hfields[d]] != [w for _f, w in g.hfields[s]]:
            raise ValueError(f"copy of header {s} to {d}: the header types differ")
        if d in g.varbit or s in g.varbit:
            raise NotNative(f"a copy of header {s}: a variable-length field")
        lines = [f"p->{g.attr[(d, f)]} = p->{g.attr[(s, f2)]};"
                 for (f, _), (f2, _w) in zip(g.hfields[d], g.hfields[s], strict=True)]
        if d in g.meta or s in g.meta:
            return [ind + x for x in lines]
        lines += [f"p->{g.valid[d]} = 1;"] + [f"p->{g.valid[o]} = 0;" for o in g.union_siblings.get(d, ())]
        return ([f"{ind}if (p->{g.valid[s]}) {{"] + [f"{ind}    {x}" for x in lines]
                + [f"{ind}}} else {{", f"{ind}    p->{g.valid[d]} = 0;", f"{ind}}}"])

    def copy_stack(self, op: str, dst: dict[str, Any], src: dict[str, Any], ind: str) -> list[str]:
        """bmv2 assign_header_stack/assign_union_stack: the next index, then every element."""
        dnext, snext, pairs = self.g.stack_copy_pairs(op, dst, src)
        return [f"{ind}p->{dnext} = p->{snext};"] + [x for d, s in pairs for x in self._copy(d, s, ind)]

    # --- tables and pipelines --------------------------------------------------------------------

    def _may_exit(self, aids: tuple[int, ...]) -> bool:
        return any(pr["op"] == "exit" for a in aids for pr in self.action_json[a].get("primitives", []))

    def pipeline(self, name: str) -> list[str]:
        """static void <name>(P *p, struct ctx *c): the pipeline's graph as labels and gotos."""
        pl = self.g.prog.pipelines[name]
        if pl.get("action_calls"):
            raise ValueError(f"pipeline {pl['name']}: action_calls are not supported (p4c never emits them)")
        nodes = [t["name"] for t in pl.get("tables", [])] + [c["name"] for c in pl.get("conditionals", [])]
        label = {n: f"N{i}" for i, n in enumerate(nodes)}

        def goto(n: str | None) -> str:
            if n is not None and n not in label:
                raise ValueError(f"pipeline {name}: next node {n!r} does not exist")
            return f"goto {label[n]};" if n is not None else "goto end;"

        out = [f"static void {name}(P *p, struct ctx *c) {{", "    (void)c;", f"    {goto(pl.get('init_table'))}"]
        for t in pl.get("tables", []):
            out.append(f"{label[t['name']]}: {{")
            out += self.table(t, goto)
            out.append("}")
        for cnd in pl.get("conditionals", []):
            out += [f"{label[cnd['name']]}:",
                    f"    if {self.cx.cond(cnd['expression'])} {goto(cnd.get('true_next'))}",
                    f"    {goto(cnd.get('false_next'))}"]
        return out + ["end:", "    return;", "}", ""]

    def table(self, t: dict[str, Any], goto: Any) -> list[str]:
        """The lines of one table node: lookup, action, then the jump to what follows."""
        g = self.g
        info = g.prog.tables[t["name"]]
        nt = t.get("next_tables", {})
        base = t.get("base_default_next")
        de = info.default_entry
        out: list[str] = []
        if not info.key and de is not None and de.action_const and not info.const_entries:
            # p4c's stand-in for plain statements: the action with its constant arguments
            args = self.const_args(de.action_data)
            out += [f"    a_{de.action_id}(p, {args}, c);", "    int hit = 0, aid = " + str(de.action_id) + ";"]
            exits = self._may_exit((de.action_id,))
        else:
            out += self.lookup(info)
            out.append("    int aid = a ? a->aid : -1;")
            out.append("    switch (aid) {")
            for aid in info.action_ids:
                out.append(f"    case {aid}: a_{aid}(p, a->args, c); break;")
            out.append("    default: break;")
            out.append("    }")
            exits = self._may_exit(info.action_ids)
        out.append("    (void)hit; (void)aid;")
        if exits:
            out.append("    if (p->_exit) goto end;")
        if "__HIT__" in nt or "__MISS__" in nt:
            out.append(f"    if (hit) {goto(nt.get('__HIT__', base))}")
            out.append(f"    {goto(nt.get('__MISS__', base))}")
            return out
        by_target: dict[str | None, list[int]] = {}
        for aid in info.action_ids:
            by_target.setdefault(nt.get(g.prog.actions[aid].name, base), []).append(aid)
        if len(by_target) > 1 or (by_target and next(iter(by_target)) != base):
            out.append("    switch (aid) {")
            for target, aids in by_target.items():
                out.append("    " + " ".join(f"case {a}:" for a in aids) + f" {goto(target)}")
            out.append("    default: break;")
            out.append("    }")
        out.append(f"    {goto(base)}")
        return out

    def const_args(self, data: tuple[int, ...]) -> str:
        """A static array of constant action arguments."""
        if any(not 0 <= v < 1 << 64 for v in data):
            raise NotNative("an action argument wider than 64 bits")
        name = self.pc.uid("K")
        self.consts.append(f"static const uint64_t {name}[] = {{{', '.join(f'{v:#x}ULL' for v in data) or '0'}}};")
        return name

    def lookup(self, info: TableInfo) -> list[str]:
        """Lines that set `a` (the action to run, NULL for none) and `hit`, as the Python path."""
        g = self.g
        ti = self.index["table"][info.name]
        tbl = f"c->pl->tables[{ti}]"
        out = ["    const struct p4s_act *a;", "    int hit;"]
        if not info.key:
            return out + [f"    a = {tbl}.deflt ? &{tbl}.deflt->a : NULL;", "    hit = 0;"]
        nw = key_words(info)
        out.append(f"    uint64_t k[{nw}] = {{0}};")
        sh = sum(k.bitwidth for k in info.key)
        for k in info.key:
            sh -= k.bitwidth
            if k.bitwidth > 64:
                raise NotNative(f"table {info.name}: key field {k.name} is {k.bitwidth} bits wide")
            src = f"p->{g.valid[k.target]}" if k.match_type == "valid" else self.cx.field_ref(k.target)[0]  # type: ignore[index, arg-type]
            if k.mask is not None:
                src = f"({src} & {k.mask & (2**64 - 1):#x}ULL)"
            word, bit = divmod(sh, 64)
            out.append(f"    k[{word}] |= (uint64_t){src} << {bit};" if bit else f"    k[{word}] |= (uint64_t){src};")
            if bit and bit + k.bitwidth > 64:
                out.append(f"    k[{word + 1}] |= (uint64_t){src} >> {64 - bit};")
        out += [f"    struct p4s_entry *e = p4s_lookup(&{tbl}, k);",
                f"    if (e == NULL) {{ a = {tbl}.deflt ? &{tbl}.deflt->a : NULL; hit = 0; }}",
                "    else {", "        hit = 1;", "        a = &e->a;"]
        if info.with_counters:
            out += ["        e->packets++;", "        e->bytes += p->_ilen;"]
        if info.direct_meters:
            dm = g.prog.meters[info.direct_meters]
            if dm.result_target:
                units = "p->_ilen" if dm.meter_type == "bytes" else "1"
                color = Val(f"((V)p4s_bucket_execute(e->meter, {units}, p->_now))", 2, True, True)
                out += self.cx.assign({"type": "field", "value": list(dm.result_target)}, color, "        ")
        if info.type != "simple":
            ap = self.profile_json.get(info.action_profile or "")
            out += ["        const struct p4s_member *m = e->member;", "        if (m == NULL && e->group != NULL) {",
                    "            const struct p4s_group *gr = e->group;",
                    "            if (gr->n == 1) m = gr->active[0];"]
            if ap is not None and ap.get("selector"):
                out.append("            else if (gr->n) {")
                out += self.pc.hash_lines(ap["selector"]["algo"], ap["selector"]["input"], "hs", "                ")
                out += ["                m = gr->active[hs % gr->n];", "            }"]
            out += ["        }", f"        if (m == NULL) {{ a = {tbl}.deflt ? &{tbl}.deflt->a : NULL; hit = 0; }}",
                    "        else a = &m->a;"]
        return out + ["    }"]


def _c_string(s: str) -> str:
    """A C string literal."""
    out = []
    for ch in s.encode():
        out.append(chr(ch) if 32 <= ch < 127 and ch not in (34, 92) else f"\\{ch:03o}")
    return '"' + "".join(out) + '"'


__all__ = ["ControlC", "MODES", "key_words", "parse_hexstr"]
