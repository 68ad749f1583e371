"""The parser, deparser, checksums and hash inputs of a program as C (codegen/parser.py's semantics).

The parser is a state machine of labels: an extract past the end of the frame stops it with
PacketTooShort, a select with no match with NoMatch, a full stack with StackOutOfBounds, a failed
verify with its error; the packet goes on to ingress with standard_metadata.parser_error set.
Hash inputs are packed as bmv2's BufBuilder does (the fields of invalid headers left out), then
hashed by the runtime's algorithms (rt/externs.c).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from p4sim.switch.codegen.base import Gen
from p4sim.switch.codegen.parser import CORE_ERRORS
from p4sim.switch.native.cgen.exprs import CExpr, NotNative, Val
from p4sim.switch.program import parse_hexstr

# hash algorithm names of bmv2 JSON -> rt/p4s.h P4S_H_* (crc16/32_custom are crc16/32: hashes.py)
ALGOS = {"crc16": "P4S_H_CRC16", "crc16_custom": "P4S_H_CRC16", "crc32": "P4S_H_CRC32",
         "crc32_custom": "P4S_H_CRC32", "crcCCITT": "P4S_H_CRCCCITT", "csum16": "P4S_H_CSUM16",
         "cksum16": "P4S_H_CSUM16", "identity": "P4S_H_IDENTITY", "xor16": "P4S_H_XOR16", "xor32": "P4S_H_XOR32",
         "crc8_custom": "P4S_H_CRC8_CUSTOM", "crc64_custom": "P4S_H_CRC64_CUSTOM"}
MAX_HEADER_BYTES = 4096  # a frame's headers; rt/prog.h's buffers leave that much beside 64 KiB


class ParserC:
    """C for parse(), verify_checksums(), update_checksums(), deparse() and hash inputs."""

    def __init__(self, g: Gen, cx: CExpr, vset_index: dict[str, int]) -> None:
        self.g = g
        self.cx = cx
        self.vset_index = vset_index
        self.prim: Callable[[dict[str, Any], str], list[str]] | None = None  # set by ControlC
        self._n = 0
        deps = g.prog.doc.get("deparsers", [])
        self.order: list[str] = deps[0]["order"] if deps else []

    def uid(self, prefix: str) -> str:
        """A fresh C identifier."""
        self._n += 1
        return f"{prefix}{self._n}"

    def err(self, name: str) -> int:
        """The integer of a core parser error (the program's numbering if it declares it)."""
        return self.g.prog.errors.get(name, CORE_ERRORS[name])

    def stop(self, cond: str, ind: str, error: str = "PacketTooShort") -> list[str]:
        """Lines that end parsing with `error` when cond holds."""
        return [f"{ind}if ({cond}) {{ err = {self.err(error)}; goto done; }}"]

    # --- parser ----------------------------------------------------------------------------------

    def parser(self) -> list[str]:
        """static void parse(P *p, struct ctx *c)."""
        parsers = self.g.prog.doc.get("parsers", [])
        if not parsers:
            raise ValueError("bmv2 JSON: no parser")
        pr = parsers[0]
        states = {s["name"]: i for i, s in enumerate(pr["parse_states"])}
        if pr["init_state"] not in states:
            raise ValueError(f"parser {pr['name']}: init_state {pr['init_state']!r} is not a state")
        out = ["static void parse(P *p, struct ctx *c) {", "    const uint8_t *b = p->_b;",
               "    int64_t n = p->_blen, off = 0;", "    int err = 0;", "    (void)c; (void)b;",
               f"    goto S{states[pr['init_state']]};"]
        for i, s in enumerate(pr["parse_states"]):
            out.append(f"S{i}: {{")
            for op in s.get("parser_ops", []):
                out += self.parser_op(op, "    ")
            out += self.transition(s, states, "    ")
            out.append("}")
        out += ["done:", "    p->_off = (uint32_t)off;"]
        if "parser_error" in self.g.std:
            out.append(f"    p->{self.g.std['parser_error']} = (uint64_t)err;")
        return out + ["}", ""]

    def transition(self, s: dict[str, Any], states: dict[str, int], ind: str) -> list[str]:
        """Lines choosing the next state: transitions in order, a default one takes any key."""
        trans = s.get("transitions", [])
        out = self.select_key(s, ind) if s.get("transition_key") else []

        def goto(nxt: str | None) -> str:
            if nxt is None:
                return "goto done;"
            if nxt not in states:
                raise ValueError(f"parser state {s['name']}: next_state {nxt!r} is not a state")
            return f"goto S{states[nxt]};"

        for t in trans:
            tt = t.get("type", "default")
            if tt == "default":
                return out + [f"{ind}{goto(t.get('next_state'))}"]
            if tt == "parse_vset":
                cond = self.vset_cond(s, t)
            else:
                value = parse_hexstr(t["value"])
                mask = t.get("mask")
                cond = (f"k == {_u128(value)}" if mask is None
                        else f"(k & {_u128(parse_hexstr(mask))}) == {_u128(value & parse_hexstr(mask))}")
            out.append(f"{ind}if ({cond}) {goto(t.get('next_state'))}")
        if not trans:
            return out + [f"{ind}goto done;"]
        return out + [f"{ind}err = {self.err('NoMatch')};", f"{ind}goto done;"]

    def select_key(self, s: dict[str, Any], ind: str) -> list[str]:
        """Lines computing the select key `k` (u128): byte-padded parts, concatenated."""
        out: list[str] = []
        parts = []
        for k in s.get("transition_key", []):
            w = self.g.select_key_width(k)
            if k["type"] == "lookahead":
                pre, val = self.rvalue(k, ind)
                out += pre
                src = val.code
            elif k["type"] == "field":
                if tuple(k["value"]) in self.g.signed:
                    raise NotNative("a signed field as a parser select key")
                src = self.cx.ex(k).code
            else:
                src = self.stack_last(k["value"][0], k["value"][1])
            parts.append((src, (w + 7) // 8 * 8))
        if sum(bits for _, bits in parts) > 128:
            raise NotNative("a parser select key wider than 128 bits")
        expr = "(u128)0"
        for src, bits in parts:
            expr = f"((({expr}) << {bits}) | (u128)({src}))" if expr != "(u128)0" else f"(u128)({src})"
        return out + [f"{ind}u128 k = {expr}; (void)k;"]

    def stack_last(self, stack: str, field: str) -> str:
        """The field of a stack's last valid element (runtime._stack_last), 0 when there is none."""
        g = self.g
        nxt = f"p->{g.stack_next(stack)}"
        expr = "(V)0"
        for i, h in reversed(list(enumerate(g.stacks[stack]))):
            expr = f"({nxt} == {i + 1} ? (V)p->{g.fattr((h, field))} : {expr})"
        return expr

    def vset_cond(self, s: dict[str, Any], t: dict[str, Any]) -> str:
        """A parse_vset transition: the key without byte padding is a member (codegen vset_cond)."""
        name = t["value"]
        widths = self.g.vset_widths(s, name)
        if sum(widths) > 64:
            raise NotNative(f"value set {name}: {sum(widths)}-bit values")
        terms, off, coff = [], 0, 0
        for w in reversed(widths):
            terms.append(f"(((k >> {off}) & {_u128((1 << w) - 1)}) << {coff})")
            off += (w + 7) // 8 * 8
            coff += w
        kc = " | ".join(reversed(terms))
        if t.get("mask") is not None:
            kc = f"(({kc}) & {_u128(parse_hexstr(t['mask']))})"
        return f"p4s_vset_has(&c->pl->vsets[{self.vset_index[name]}], (uint64_t)({kc}))"

    def rvalue(self, v: dict[str, Any], ind: str) -> tuple[list[str], Val]:
        """(lines, value) of a parser rvalue that may be a lookahead."""
        if v["type"] == "lookahead":
            bitoff, w = int(v["value"][0]), int(v["value"][1])
            if w > 64:
                raise NotNative(f"a lookahead of {w} bits")
            tmp = self.uid("la")
            nbytes = (bitoff + w + 7) // 8
            lines = self.stop(f"off + {nbytes} > n", ind)
            lines.append(f"{ind}uint64_t {tmp} = p4s_get(b + off, {bitoff}, {w});")
            return lines, Val(f"((V){tmp})", w, True, True)
        return [], self.cx.ex(v)

    def fields_at(self, hdr: str) -> list[tuple[str, int, int]]:
        """(attribute, bit offset, width) of each field of a header; NotNative for one over 64 bits."""
        out, pos = [], 0
        for f, w in self.g.hfields[hdr]:
            if w > 64:
                raise NotNative(f"field {hdr}.{f}: {w} bits wide")
            out.append((self.g.attr[(hdr, f)], pos, w))
            pos += w
        return out

    def extract(self, hdr: str, ind: str) -> list[str]:
        """Lines extracting header instance hdr at off."""
        g = self.g
        if hdr in g.varbit:
            raise NotNative(f"header {hdr}: a variable-length field")
        nb = g.header_bytes(hdr)
        out = self.stop(f"off + {nb} > n", ind)
        out += [f"{ind}p->{attr} = p4s_get(b + off, {pos}, {w});" for attr, pos, w in self.fields_at(hdr)]
        out.append(f"{ind}p->{g.valid[hdr]} = 1;")
        out += [f"{ind}p->{g.valid[o]} = 0;" for o in g.union_siblings.get(hdr, ())]
        return out + [f"{ind}off += {nb};"]

    def parser_op(self, op: dict[str, Any], ind: str) -> list[str]:
        """Lines of one parser operation."""
        g = self.g
        kind = op["op"]
        params = op.get("parameters", [])
        if kind == "extract":
            t, v = params[0]["type"], params[0]["value"]
            if t == "regular":
                return self.extract(v, ind)
            if t in ("stack", "union_stack"):
                stack = (g.stacks[v] if t == "stack" else
                         [g.prog.header_unions[u][g.prog.union_member_names[u].index(v[1])]
                          for u in g.union_stacks[v[0]]])
                nxt = g.stack_next(v if t == "stack" else v[0])
                out = [f"{ind}{{", f"{ind}    uint64_t i = p->{nxt};"]
                out += self.stop(f"i >= {len(stack)}", ind + "    ", "StackOutOfBounds")
                out.append(f"{ind}    switch (i) {{")
                for j, h in enumerate(stack):
                    out += [f"{ind}    case {j}: {{"] + self.extract(h, ind + "        ") + [f"{ind}        break; }}"]
                return out + [f"{ind}    }}", f"{ind}    p->{nxt} = i + 1;", f"{ind}}}"]
            raise ValueError(f"parser extract of type {t!r} is not supported")
        if kind == "extract_VL":
            raise NotNative("extract_VL (a variable-length field)")
        if kind == "set":
            pre, src = self.rvalue(params[1], ind)
            return pre + self.cx.assign(params[0], src, ind)
        if kind == "verify":
            pre, cond = self.rvalue(params[0], ind)
            _, code = self.rvalue(params[1], ind)
            return pre + [f"{ind}if (!({self.cx.need(cond, 'a verify')} != 0)) "
                          f"{{ err = (int){self.cx.need(code, 'an error code')}; goto done; }}"]
        if kind in ("advance", "shift"):
            pre, amount = self.rvalue(params[0], ind)
            a = self.cx.need(amount, f"an {kind}")
            step = f"(int64_t)p4s_shr({a}, 3)" if kind == "advance" else f"(int64_t)({a})"
            return pre + [f"{ind}off += {step};"] + self.stop("off > n || off < 0", ind)
        if kind == "primitive":
            if params[0].get("op") in ("assert", "assume"):
                raise NotNative("assert in a parser")
            return self.prim(params[0], ind)  # type: ignore[misc]
        raise ValueError(f"parser operation {kind!r} is not supported")

    # --- deparser --------------------------------------------------------------------------------

    def emit_header(self, hdr: str, ind: str) -> list[str]:
        """Lines writing header hdr at out + o when valid."""
        g = self.g
        fields = g.hfields[hdr]
        total = sum(w for _, w in fields)
        out = [f"{ind}if (p->{g.valid[hdr]}) {{", f"{ind}    memset(out + o, 0, {total // 8});"]
        out += [f"{ind}    p4s_put(out + o, {pos}, {w}, p->{attr});" for attr, pos, w in self.fields_at(hdr)]
        return out + [f"{ind}    o += {total // 8};", f"{ind}}}"]

    def deparser(self) -> list[str]:
        """deparse(P *p, out, c) -> length and deparse_after(P *p, i, out) -> length."""
        g = self.g
        for h in self.order:
            if h in g.varbit:
                raise NotNative(f"header {h}: a variable-length field")
        if sum(sum(w for _, w in g.hfields[h]) for h in self.order) // 8 > MAX_HEADER_BYTES:
            raise NotNative(f"the deparser emits more than {MAX_HEADER_BYTES} bytes of headers")
        payload = ["    if (p->_off < p->_blen) {", "        memcpy(out + o, p->_b + p->_off, p->_blen - p->_off);",
                   "        o += p->_blen - p->_off;", "    }", "    return o;", "}", ""]
        out = ["static uint32_t deparse(P *p, uint8_t *out, struct ctx *c) {", "    uint32_t o = 0;", "    (void)c;"]
        for h in self.order:
            out += self.emit_header(h, "    ")
        out += payload
        out += ["static uint32_t deparse_after(P *p, int i, uint8_t *out) {", "    uint32_t o = 0;", "    (void)i;"]
        for j, h in enumerate(self.order):
            out.append(f"    if (i < {j}) {{")
            out += self.emit_header(h, "        ")
            out.append("    }")
        return out + payload

    # --- checksums and hashes --------------------------------------------------------------------

    def checksums(self) -> list[str]:
        """verify_checksums(p, c) and update_checksums(p, c)."""
        g = self.g
        ver = ["static void verify_checksums(P *p, struct ctx *c) {", "    (void)p; (void)c;"]
        upd = ["static void update_checksums(P *p, struct ctx *c) {", "    (void)p; (void)c;"]
        for ck in g.prog.doc.get("checksums", []):
            calc = g.prog.calculations.get(ck["calculation"])
            if calc is None:
                raise ValueError(f"calculation {ck['calculation']!r} is not declared")
            target = ck["target"]
            tgt, width = self.cx.field_ref(target)
            cond = f"p->{g.valid[target[0]]}"
            if ck.get("if_cond") is not None:
                cond = f"{cond} && {self.cx.cond(ck['if_cond'])}"
            body = self.hash_lines(calc["algo"], calc.get("input", []), "ck", "        ")
            if ck.get("verify", True) and "checksum_error" in g.std:
                ver += [f"    if ({cond}) {{"] + body + [
                    f"        if (ck != {tgt}) p->{g.std['checksum_error']} = 1;", "    }"]
            if ck.get("update", True):
                mask = "" if width >= 64 else f" & {(1 << width) - 1:#x}ULL"
                upd += [f"    if ({cond}) {{"] + body + [f"        {tgt} = ck{mask};", "    }"]
        return ver + ["}", ""] + upd + ["}", ""]

    def hash_lines(self, algo: str, inputs: list[dict[str, Any]], var: str, ind: str) -> list[str]:
        """Lines declaring `uint64_t var` = the hash of inputs (codegen input_lines' packing)."""
        g = self.g
        if algo != "random" and algo not in ALGOS:
            raise ValueError(f"hash algorithm {algo!r} is not supported")
        buf, nb = self.uid("hb"), self.uid("nb")
        size = 8 + sum(self._input_bits(i) for i in inputs) // 8
        out = [f"{ind}uint64_t {var};", f"{ind}{{", f"{ind}    uint8_t {buf}[{size}];",
               f"{ind}    uint32_t {nb} = 0;", f"{ind}    memset({buf}, 0, sizeof({buf}));"]
        i2 = ind + "    "
        payload_after = None
        for inp in inputs:
            t, v = inp["type"], inp["value"]
            if t == "field":
                src, w = self.cx.field_ref(v)
                guard = None if (v[0] in g.meta or v[1] == "$valid$") else f"p->{g.valid[v[0]]}"
                put = f"p4s_bits({buf}, &{nb}, {w}, {src});"
                out.append(f"{i2}{put}" if guard is None else f"{i2}if ({guard}) {put}")
                payload_after = v[0]
            elif t == "hexstr":
                w = int(inp["bitwidth"])
                value = parse_hexstr(v) & ((1 << w) - 1)
                while w > 0:
                    take = min(w, 64)
                    out.append(f"{i2}p4s_bits({buf}, &{nb}, {take}, {(value >> (w - take)) & ((1 << take) - 1):#x}ULL);")
                    w -= take
            elif t == "header":
                if v in g.varbit:
                    raise NotNative(f"header {v}: a variable-length field")
                puts = [f"p4s_bits({buf}, &{nb}, {self.cx.field_ref((v, f))[1]}, p->{g.attr[(v, f)]});"
                        for f, _w in g.hfields[v]]
                out.append(f"{i2}if (p->{g.valid[v]}) {{ {' '.join(puts)} }}")
                payload_after = v
            elif t == "payload":
                idx = self.order.index(payload_after) if payload_after in self.order else -1
                out += [f"{i2}{nb} = ({nb} + 7) & ~7U;", f"{i2}memcpy(c->tmp, {buf}, {nb} >> 3);",
                        f"{i2}uint32_t len = ({nb} >> 3) + deparse_after(p, {idx}, c->tmp + ({nb} >> 3));",
                        f"{i2}{var} = {self._algo('c->tmp', 'len', algo)};", f"{ind}}}"]
                return out
            else:
                raise NotNative(f"a hash input of type {t!r}")
        if algo in ("csum16", "cksum16"):
            out.append(f"{i2}{var} = p4s_csum16_bits({buf}, {nb});")
        else:
            out.append(f"{i2}{var} = {self._algo(buf, f'({nb} + 7) >> 3', algo)};")
        return out + [f"{ind}}}"]

    def _input_bits(self, inp: dict[str, Any]) -> int:
        t, v = inp["type"], inp["value"]
        if t == "field":
            return self.g.fwidth(v)
        if t == "hexstr":
            return int(inp["bitwidth"])
        if t == "header":
            return sum(w for _, w in self.g.hfields[v])
        return 0

    def _algo(self, data: str, length: str, algo: str) -> str:
        if algo == "random":
            return "p4s_rand(c->d, c->pl, 0, 0xFFFFFFFFULL)"
        return f"p4s_hash({ALGOS[algo]}, {data}, {length})"


def _u128(n: int) -> str:
    """An unsigned 128-bit constant."""
    if n < 0 or n >= 1 << 128:
        raise NotNative(f"a select value {n:#x} outside 128 bits")
    if n < 1 << 64:
        return f"((u128){n:#x}ULL)"
    return f"(((u128){n >> 64:#x}ULL << 64) | (u128){n & (2**64 - 1):#x}ULL)"
