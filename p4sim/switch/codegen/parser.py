"""Code generation for parsers, the deparser, checksums and calculations (hash inputs).

Parser semantics follow bmv2: headers are byte-aligned; an extract or lookahead past the end of the
frame stops the parser with PacketTooShort, a select with no match with NoMatch, a full stack with
StackOutOfBounds, a failed verify with its error; the packet then continues to ingress with
standard_metadata.parser_error set (v1model), keeping the headers extracted so far.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from p4sim.switch import hashes
from p4sim.switch.program import parse_hexstr

if TYPE_CHECKING:
    from p4sim.switch.codegen.base import Gen

CORE_ERRORS = {"NoError": 0, "PacketTooShort": 1, "NoMatch": 2, "StackOutOfBounds": 3,
               "HeaderTooShort": 4, "ParserTimeout": 5, "ParserInvalidArgument": 6}
STD = "standard_metadata"
BYTES_OF_X = "x.to_bytes(nb >> 3, 'big')"


class ParserGen:
    """Generates parse(), verify_checksums(), update_checksums(), deparse() and calc helpers."""

    def __init__(self, g: Gen) -> None:
        self.g = g
        self.prim = None  # set by ControlGen: (primitive dict, indent) -> lines
        self.bind: Any = None  # set by ControlGen: (kind, name, expr on pl) -> a global bound at load
        self.calc_names: dict[str, str] = {}

    def err(self, name: str) -> int:
        """The integer of a core parser error (the program's numbering if it declares it)."""
        return self.g.prog.errors.get(name, CORE_ERRORS[name])

    def has_std(self, f: str) -> bool:
        """True if standard_metadata has field f."""
        return f in self.g.std

    # --- parser --------------------------------------------------------------------------------

    def parsers(self) -> list[str]:
        """Source of parse(p, b) for the (single, v1model) parser."""
        g = self.g
        parsers = g.prog.doc.get("parsers", [])
        if not parsers:
            raise ValueError("bmv2 JSON: no parser")
        pr = parsers[0]
        states = {s["name"]: i for i, s in enumerate(pr["parse_states"])}
        if pr["init_state"] not in states:
            raise ValueError(f"parser {pr['name']}: init_state {pr['init_state']!r} is not a state")
        inline = self._inline_parser(pr, fresh=False)
        if inline is not None:
            out: list[str] = []
            # parse_fresh: for a new packet (all metadata 0), zero-initialisations are skipped
            for name, body in (("parse", inline), ("parse_fresh", self._inline_parser(pr, fresh=True))):
                out += [f"def {name}(p, b):", "    n = len(b)", "    off = 0", "    err = 0", "    while True:"]
                out += (body or []) + ["        break", "    p._off = off"]
                if self.has_std("parser_error"):
                    out.append(f"    p.{g.std['parser_error']} = err")
                out.append("")
            return out
        out = ["def parse_fresh(p, b):", "    return parse(p, b)", "",
               "def parse(p, b):", "    n = len(b)", "    off = 0", "    err = 0",
               f"    st = {states[pr['init_state']]}", "    while True:"]
        for i, s in enumerate(pr["parse_states"]):
            out.append(f"        {'if' if i == 0 else 'elif'} st == {i}:")
            body: list[str] = []
            for op in s.get("parser_ops", []):
                body += self.parser_op(op, "            ")
            body += self.transition(s, states, "            ")
            out += body
        out.append("        break")
        out.append("    p._off = off")
        if self.has_std("parser_error"):
            out.append(f"    p.{g.std['parser_error']} = err")
        out.append("")
        return out

    def _inline_parser(self, pr: dict[str, Any], fresh: bool) -> list[str] | None:
        """The parser as nested code (one pass, no state dispatch) if its states form a small DAG.
        fresh: drop the leading `meta.x = 0` sets of the start state (they are no-ops on a new packet)."""
        by_name = {s["name"]: s for s in pr["parse_states"]}
        budget = [8 * len(by_name) + 16]

        def emit(name: str | None, ind: str, path: tuple[str, ...]) -> list[str] | None:
            if name is None:
                return [f"{ind}break"]
            if name in path or name not in by_name:
                return None  # a loop (header stacks) or a bad name: use the state machine
            budget[0] -= 1
            if budget[0] < 0:
                return None
            s = by_name[name]
            out: list[str] = []
            leading = fresh and not path
            assigned: set[tuple[str, str]] = set()
            for op in s.get("parser_ops", []):
                if leading and op.get("op") == "set":
                    dst = op["parameters"][0]
                    ref = tuple(dst["value"]) if dst["type"] == "field" else None
                    if ref is not None and ref not in assigned and self._zero_meta_set(op):
                        continue
                    if ref is None:
                        leading = False
                    else:
                        assigned.add(ref)  # type: ignore[arg-type]
                else:
                    leading = False
                out += self.parser_op(op, ind)
            trans = s.get("transitions", [])
            keyed = [t for t in trans if t.get("type", "default") != "default"]
            default = next((t for t in trans if t.get("type", "default") == "default"), None)
            if keyed:
                out += self.select_key(s, ind)
            for i, t in enumerate(keyed):
                if t.get("type") == "parse_vset":
                    cond = self.vset_cond(s, t)
                else:
                    value = parse_hexstr(t["value"])
                    mask = t.get("mask")
                    cond = (f"k == {value}" if mask is None
                            else f"k & {parse_hexstr(mask)} == {value & parse_hexstr(mask)}")
                out.append(f"{ind}{'if' if i == 0 else 'elif'} {cond}:")
                body = emit(t.get("next_state"), ind + "    ", path + (name,))
                if body is None:
                    return None
                out += body
            tail_ind = ind + "    " if keyed else ind
            if keyed:
                out.append(f"{ind}else:")
            if default is not None:
                body = emit(default.get("next_state"), tail_ind, path + (name,))
                if body is None:
                    return None
                out += body
            elif keyed:
                out += [f"{tail_ind}err = {self.err('NoMatch')}", f"{tail_ind}break"]
            else:
                out.append(f"{tail_ind}break")
            return out

        return emit(pr["init_state"], "        ", ())

    def _zero_meta_set(self, op: dict[str, Any]) -> bool:
        """True for `set(user_metadata_field, 0)`."""
        if op.get("op") != "set":
            return False
        dst, src = op["parameters"]
        return (dst["type"] == "field" and dst["value"][0] in self.g.meta and dst["value"][0] != STD
                and src["type"] == "hexstr" and parse_hexstr(src["value"]) == 0)

    def select_key(self, s: dict[str, Any], ind: str) -> list[str]:
        """Lines computing the select key `k` of a state (byte-padded fields, concatenated)."""
        out: list[str] = []
        parts = []
        for k in s.get("transition_key", []):
            if k["type"] == "lookahead":
                w = int(k["value"][1])
                pre, src = self.rvalue(k, ind)
                out += pre
            elif k["type"] == "field":
                w = self.g.fwidth(k["value"])
                src = self.g.ex(k)
            elif k["type"] == "stack_field":
                stack, f = k["value"]
                w = self.g.fwidth((self.g.stacks[stack][0], f))
                src = self.g.ex(k)
            else:
                raise ValueError(f"parser transition key of type {k['type']!r} is not supported")
            parts.append((src, ((w + 7) // 8) * 8))
        expr = ""
        for src, bits in parts:
            expr = f"(({expr}) << {bits}) | {src}" if expr else src
        return out + [f"{ind}k = {expr or 0}"]

    def vset_cond(self, s: dict[str, Any], t: dict[str, Any]) -> str:
        """Condition of a parse_vset transition: the key without byte padding is a member of the set
        (bmv2 compares value sets on the compressed key)."""
        name = t["value"]
        widths = self.g.vset_widths(s, name)
        terms, off, coff = [], 0, 0
        for w in reversed(widths):  # least significant key last in k
            part = f"((k >> {off}) & {(1 << w) - 1})" if off or len(widths) > 1 else "k"
            terms.append(f"({part} << {coff})" if coff else part)
            off += (w + 7) // 8 * 8
            coff += w
        kc = " | ".join(reversed(terms))
        if t.get("mask") is not None:
            kc = f"(({kc}) & {parse_hexstr(t['mask'])})"
        vs = self.bind("VS", name, f"pl.value_sets[{name!r}].members")
        return f"({kc}) in {vs}"

    def too_short(self, cond: str, ind: str, error: str = "PacketTooShort") -> list[str]:
        """Lines that stop the parser with `error` when cond holds."""
        return [f"{ind}if {cond}:", f"{ind}    err = {self.err(error)}", f"{ind}    break"]

    def extract_vl(self, hdr: str, size: str, ind: str) -> list[str]:
        """Lines extracting header hdr whose last field is variable-length, `size` bits of it (P4_16 spec:
        more than the maximum is HeaderTooShort, not whole bytes here ParserInvalidArgument, too few
        bytes PacketTooShort)."""
        g = self.g
        fields = g.hfields[hdr]
        vf, vl = g.varbit[hdr]
        fixed = sum(w for f, w in fields if f != vf)
        vmax = dict(fields)[vf]
        out = [f"{ind}vl = {size}"]
        out += self.too_short(f"vl > {vmax}", ind, "HeaderTooShort")
        out += self.too_short("vl % 8", ind, "ParserInvalidArgument")
        out += [f"{ind}e = off + {fixed // 8} + (vl >> 3)"] + self.too_short("e > n", ind)
        out.append(f"{ind}v = int.from_bytes(b[off:e], 'big')")
        sh = fixed
        for f, w in fields:
            if f == vf:
                continue
            sh -= w
            out.append(f"{ind}p.{g.attr[(hdr, f)]} = (v >> (vl + {sh})) & {(1 << w) - 1}")
        out += [f"{ind}p.{g.attr[(hdr, vf)]} = v & ((1 << vl) - 1)", f"{ind}p.{vl} = vl",
                f"{ind}p.{g.valid[hdr]} = 1", f"{ind}off = e"]
        out += [f"{ind}p.{g.valid[o]} = 0" for o in g.union_siblings.get(hdr, ())]
        return out

    def extract(self, hdr: str, ind: str) -> list[str]:
        """Lines extracting header instance hdr at off."""
        g = self.g
        if hdr in g.varbit:
            raise ValueError(f"header {hdr}: extract of a header with a variable-length field needs extract_VL")
        fields = g.hfields[hdr]
        nb = g.header_bytes(hdr)
        total = nb * 8
        out = [f"{ind}e = off + {nb}"] + self.too_short("e > n", ind)
        out.append(f"{ind}v = int.from_bytes(b[off:e], 'big')")
        sh = total
        for f, w in fields:
            sh -= w
            expr = "v" if sh == 0 else f"(v >> {sh})"
            if sh + w != total:
                expr = f"{expr} & {(1 << w) - 1}"
            out.append(f"{ind}p.{g.attr[(hdr, f)]} = {expr}")
        out.append(f"{ind}p.{g.valid[hdr]} = 1")
        out += [f"{ind}p.{g.valid[o]} = 0" for o in g.union_siblings.get(hdr, ())]
        out.append(f"{ind}off = e")
        return out

    def parser_op(self, op: dict[str, Any], ind: str) -> list[str]:
        """Lines of one parser operation."""
        g = self.g
        kind = op["op"]
        params = op.get("parameters", [])
        if kind in ("extract", "extract_VL"):
            pre, size = self.rvalue(params[1], ind) if kind == "extract_VL" else ([], "")

            def one(h: str, ind2: str) -> list[str]:
                if kind == "extract":
                    return self.extract(h, ind2)
                if h not in g.varbit:
                    raise ValueError(f"extract_VL of {h!r}: expected a header with a variable-length field")
                return self.extract_vl(h, "vls", ind2)

            t, v = params[0]["type"], params[0]["value"]
            out = pre + ([f"{ind}vls = {size}"] if kind == "extract_VL" else [])
            if t == "regular":
                return out + one(v, ind)
            if t in ("stack", "union_stack"):
                # the next element of a stack, or member v[1] of the next union of a union stack (bmv2
                # ParserOpExtractStack / ParserOpExtractUnionStack, with or without a variable length)
                stack = (g.stacks[v] if t == "stack" else
                         [g.prog.header_unions[u][g.prog.union_member_names[u].index(v[1])]
                          for u in g.union_stacks[v[0]]])
                nxt = g.stack_next(v if t == "stack" else v[0])
                out += [f"{ind}i = p.{nxt}"] + self.too_short(f"i >= {len(stack)}", ind, "StackOutOfBounds")
                for j, h in enumerate(stack):
                    out.append(f"{ind}{'if' if j == 0 else 'elif'} i == {j}:")
                    out += one(h, ind + "    ")
                out.append(f"{ind}p.{nxt} = i + 1")
                return out
            raise ValueError(f"parser {kind} of type {t!r} is not supported")
        if kind == "set":
            pre, src = self.rvalue(params[1], ind)
            return pre + g.assign(params[0], src, ind, params[1] if params[1]["type"] != "lookahead" else None)
        if kind == "verify":
            pre, cond = self.rvalue(params[0], ind)
            _, code = self.rvalue(params[1], ind)
            return pre + [f"{ind}if not {cond}:", f"{ind}    err = {code}", f"{ind}    break"]
        if kind in ("advance", "shift"):
            pre, amount = self.rvalue(params[0], ind)
            step = f"(({amount}) >> 3)" if kind == "advance" else f"({amount})"
            return pre + [f"{ind}off += {step}"] + self.too_short("off > n", ind)
        if kind == "primitive":
            return self.prim(params[0], ind)  # type: ignore[misc]
        raise ValueError(f"parser operation {kind!r} is not supported")

    def rvalue(self, v: dict[str, Any], ind: str) -> tuple[list[str], str]:
        """(lines computing temporaries, source) for a parser rvalue that may be a lookahead."""
        if v["type"] == "lookahead":
            bitoff, w = int(v["value"][0]), int(v["value"][1])
            tmp = self.g.uid("la")
            nbytes = (bitoff + w + 7) // 8
            lines = [f"{ind}le = off + {nbytes}"] + self.too_short("le > n", ind)
            lines.append(f"{ind}{tmp} = (int.from_bytes(b[off:le], 'big') >> {nbytes * 8 - bitoff - w}) & {(1 << w) - 1}")
            return lines, tmp
        return [], self.g.ex(v)

    def transition(self, s: dict[str, Any], states: dict[str, int], ind: str) -> list[str]:
        """Lines selecting the next state."""
        trans = s.get("transitions", [])
        out: list[str] = self.select_key(s, ind) if s.get("transition_key") else []

        def goto(nxt: str | None, ind2: str) -> list[str]:
            if nxt is None:
                return [f"{ind2}break"]
            if nxt not in states:
                raise ValueError(f"parser state {s['name']}: next_state {nxt!r} is not a state")
            return [f"{ind2}st = {states[nxt]}", f"{ind2}continue"]

        for t in trans:
            tt = t.get("type", "default")
            if tt == "default":
                out += goto(t.get("next_state"), ind)
                return out
            if tt == "parse_vset":
                out.append(f"{ind}if {self.vset_cond(s, t)}:")
                out += goto(t.get("next_state"), ind + "    ")
                continue
            value = parse_hexstr(t["value"])
            mask = t.get("mask")
            if mask is None:
                out.append(f"{ind}if k == {value}:")
            else:
                m = parse_hexstr(mask)
                out.append(f"{ind}if k & {m} == {value & m}:")
            out += goto(t.get("next_state"), ind + "    ")
        if not trans:
            return out + [f"{ind}break"]
        out += [f"{ind}err = {self.err('NoMatch')}", f"{ind}break"]
        return out

    # --- deparser ------------------------------------------------------------------------------

    def emit_header(self, hdr: str, ind: str, target: str) -> list[str]:
        """Lines appending header hdr's bytes to list `target` if valid."""
        g = self.g
        fields = g.hfields[hdr]
        if hdr in g.varbit:
            vf, vl = g.varbit[hdr]
            fixed = [(f, w) for f, w in fields if f != vf]
            sh = sum(w for _, w in fixed)
            terms = [f"p.{g.attr[(hdr, vf)]}"]
            for f, w in fixed:
                sh -= w
                terms.append(f"(p.{g.attr[(hdr, f)]} << (p.{vl} + {sh}))")
            nb = sum(w for _, w in fixed) // 8
            return [f"{ind}if p.{g.valid[hdr]}:",
                    f"{ind}    {target}.append(({' | '.join(terms)}).to_bytes({nb} + (p.{vl} >> 3), 'big'))"]
        total = sum(w for _, w in fields)
        terms = []
        sh = total
        for f, w in fields:
            sh -= w
            terms.append(f"(p.{g.attr[(hdr, f)]} << {sh})" if sh else f"p.{g.attr[(hdr, f)]}")
        return [f"{ind}if p.{g.valid[hdr]}:",
                f"{ind}    {target}.append(({' | '.join(terms)}).to_bytes({total // 8}, 'big'))"]

    def deparser(self) -> list[str]:
        """Source of deparse(p) -> bytes and deparse_parts(p) -> [(header, bytes)]."""
        deps = self.g.prog.doc.get("deparsers", [])
        order = deps[0]["order"] if deps else []
        self.order = order
        out = ["def deparse(p):", "    parts = []"]
        for h in order:
            out += self.emit_header(h, "    ", "parts")
        out += ["    parts.append(p._b[p._off:])", "    return b''.join(parts)", ""]
        out += ["def deparse_after(p, i):", "    parts = []"]
        for j, h in enumerate(order):
            out.append(f"    if i < {j}:")
            out += self.emit_header(h, "        ", "parts")
        out += ["    parts.append(p._b[p._off:])", "    return b''.join(parts)", ""]
        return out

    # --- checksums and calculations ------------------------------------------------------------

    def calc(self, name: str) -> str:
        """Name of a generated function computing calculation `name` on a packet."""
        if name in self.calc_names:
            return self.calc_names[name]
        c = self.g.prog.calculations.get(name)
        if c is None:
            raise ValueError(f"calculation {name!r} is not declared")
        fn = self.g.uid("calc_")
        self.calc_names[name] = fn
        self.g.lines += self.input_fn(fn, c["algo"], c.get("input", []))
        return fn

    def input_fn(self, fn: str, algo: str, inputs: list[dict[str, Any]]) -> list[str]:
        """Source of fn(p) -> hash of inputs (bmv2 BufBuilder packing) with algorithm algo."""
        return [f"def {fn}(p):"] + self.input_lines(algo, inputs, "    ", None) + [""]

    def calc_inline(self, name: str, var: str, ind: str) -> list[str]:
        """Lines computing calculation `name` into local `var` (for the fused fast path)."""
        c = self.g.prog.calculations.get(name)
        if c is None:
            raise ValueError(f"calculation {name!r} is not declared")
        return self.input_lines(c["algo"], c.get("input", []), ind, var)

    def input_lines(self, algo: str, inputs: list[dict[str, Any]], ind: str, var: str | None) -> list[str]:
        """Lines hashing inputs (bmv2 BufBuilder packing) with algo; `return` it, or assign to var."""
        g = self.g
        out = [f"{ind}x = 0", f"{ind}nb = 0"]
        result = (lambda e: f"{ind}return {e}") if var is None else (lambda e: f"{ind}{var} = {e}")
        payload_after = None
        # consecutive inputs under the same validity guard become one expression (bmv2 skips the
        # fields of invalid headers)
        segs: list[tuple[str | None, list[tuple[str, int]]]] = []

        def add(guard: str | None, term: str, w: int) -> None:
            if segs and segs[-1][0] == guard:
                segs[-1][1].append((term, w))
            else:
                segs.append((guard, [(term, w)]))

        def flush() -> None:
            for guard, terms in segs:
                expr = "x"
                for term, w in terms:
                    expr = f"(({expr}) << {w}) | {term}"
                total = sum(w for _, w in terms)
                if guard is None:
                    out.extend([f"{ind}x = {expr}", f"{ind}nb += {total}"])
                else:
                    out.extend([f"{ind}if {guard}:", f"{ind}    x = {expr}", f"{ind}    nb += {total}"])
            segs.clear()

        for inp in inputs:
            t, v = inp["type"], inp["value"]
            hdr = v if t == "header" else v[0] if t == "field" else None
            vf = g.varbit.get(hdr, (None, None))  # type: ignore[arg-type]
            if t == "field" and v[1] == vf[0]:
                # a variable-length field counts with the length it was extracted with (bmv2 BufBuilder)
                flush()
                out += [f"{ind}if p.{g.valid[hdr]}:", f"{ind}    x = (x << p.{vf[1]}) | p.{g.fattr(v)}",
                        f"{ind}    nb += p.{vf[1]}"]
                payload_after = v[0]
                continue
            if t == "header" and vf[0] is not None:
                flush()
                out.append(f"{ind}if p.{g.valid[v]}:")
                for f, w in g.hfields[v]:
                    width = f"p.{vf[1]}" if f == vf[0] else str(w)
                    out += [f"{ind}    x = (x << {width}) | p.{g.attr[(v, f)]}", f"{ind}    nb += {width}"]
                payload_after = v
                continue
            if t == "field":
                guard = None if (v[0] in g.meta or v[1] == "$valid$") else f"p.{g.valid[v[0]]}"
                add(guard, f"p.{g.fattr(v)}", g.fwidth(v))
                payload_after = v[0]
            elif t == "hexstr":
                w = int(inp["bitwidth"])
                add(None, str(parse_hexstr(v) & ((1 << w) - 1)), w)
            elif t == "header":
                for f, w in g.hfields[v]:
                    add(f"p.{g.valid[v]}", f"p.{g.attr[(v, f)]}", w)
                payload_after = v
            elif t == "payload":
                flush()
                order = self.g.prog.doc.get("deparsers", [{}])[0].get("order", [])
                idx = order.index(payload_after) if payload_after in order else -1
                out += [f"{ind}pad = -nb % 8", f"{ind}x <<= pad", f"{ind}nb += pad",
                        f"{ind}data = x.to_bytes(nb >> 3, 'big') + deparse_after(p, {idx})"]
                return out + [result(self._algo_call(algo, "data"))]
            else:
                raise ValueError(f"calculation input of type {t!r} is not supported")
        flush()
        if algo in ("csum16", "cksum16"):
            return out + [f"{ind}pad = -nb % 16", result("csum16_int(x << pad)")]
        return out + [f"{ind}pad = -nb % 8", f"{ind}x <<= pad", f"{ind}nb += pad",
                      result(self._algo_call(algo, BYTES_OF_X))]

    def _algo_call(self, algo: str, data: str) -> str:
        if algo == "random":
            return "_rand(0, 0xFFFFFFFF)"
        name = self.g.const(hashes.algorithm(algo), "ALG_")
        return f"{name}({data})"

    def checksums(self) -> list[str]:
        """Source of verify_checksums(p) and update_checksums(p)."""
        g = self.g
        ver = ["def verify_checksums(p):"]
        upd = ["def update_checksums(p):"]
        for ck in g.prog.doc.get("checksums", []):
            fn = self.calc(ck["calculation"])
            target = ck["target"]
            tattr = g.fattr(target)
            cond = f"p.{g.valid[target[0]]}"
            if ck.get("if_cond") is not None:
                cond = f"{cond} and {g.ex(ck['if_cond'])}"
            if ck.get("verify", True) and self.has_std("checksum_error"):
                ver += [f"    if {cond} and {fn}(p) != p.{tattr}:",
                        f"        p.{g.std['checksum_error']} = 1"]
            if ck.get("update", True):
                w = g.fwidth(target)
                upd += [f"    if {cond}:", f"        p.{tattr} = {fn}(p) & {(1 << w) - 1}"]
        ver.append("    return None")
        upd.append("    return None")
        return ver + [""] + upd + [""]
