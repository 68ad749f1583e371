"""Translate a bmv2 JSON program into Python source: one function per action, table, conditional,
parser and deparser, with header fields as attributes of a per-packet object.

The generated module defines:
  P, TEMPLATE         the packet class and the initial attribute values (all fields 0, metadata valid)
  parse(p, b)         the ingress parser over frame bytes b (sets p._off, standard_metadata.parser_error)
  verify_checksums(p), update_checksums(p)
  ingress(p), egress(p)    the two pipelines
  deparse(p) -> bytes
  ACTIONS             action id -> function(p, d) with d the tuple of action arguments
Runtime state (tables, counters, ...) is bound into the namespace by `bind` once the Pipeline exists.
"""

from __future__ import annotations

import logging
import random
import re
import time
from typing import Any

from p4sim.switch import hashes
from p4sim.switch.codegen_parser import ParserGen
from p4sim.switch.program import Program, parse_hexstr

log = logging.getLogger(__name__)

STD = "standard_metadata"


def san(name: str) -> str:
    """A Python identifier for a JSON name."""
    return re.sub(r"\W", "_", name)


class Gen:
    """Shared naming and expression translation for one program."""

    def __init__(self, prog: Program) -> None:
        self.prog = prog
        self.attr: dict[tuple[str, str], str] = {}
        self.valid: dict[str, str] = {}
        self.hfields: dict[str, list[tuple[str, int]]] = {}
        self.meta: set[str] = set()
        self.signed: set[tuple[str, str]] = set()
        used: set[str] = set()
        for i, (h, hd) in enumerate(prog.headers.items()):
            base = san(h)
            if base in used:
                base = f"{base}_{i}"
            used.add(base)
            self.valid[h] = f"{base}__V"
            fields = [(f, w) for f, w, _ in prog.header_types[hd["header_type"]]]
            self.signed.update((h, f) for f, _w, sgn in prog.header_types[hd["header_type"]] if sgn)
            self.hfields[h] = fields
            if hd.get("metadata"):
                self.meta.add(h)
            for f, _w in fields:
                self.attr[(h, f)] = f"{base}__{san(f)}"
        # headers with a variable-length (last) field: header -> (field, attribute of its length in bits)
        self.varbit: dict[str, tuple[str, str]] = {
            h: (prog.varbit_fields[hd["header_type"]], f"{self.attr[(h, prog.varbit_fields[hd['header_type']])]}_VL")
            for h, hd in prog.headers.items() if hd["header_type"] in prog.varbit_fields}
        self.stacks = prog.header_stacks
        # a header in a union -> the other members (making one valid invalidates them, P4_16 8.20)
        self.union_siblings: dict[str, list[str]] = {
            h: [o for o in members if o != h] for members in prog.header_unions.values() for h in members}
        # standard_metadata fields by name; older (P4_14-derived) programs keep some of them in
        # intrinsic_metadata / queueing_metadata, named through field_aliases as simple_switch does
        self.std: dict[str, str] = {f: self.attr[(STD, f)] for f, _w in self.hfields.get(STD, [])}
        for alias, target in prog.doc.get("field_aliases", []):
            _scope, _, name = alias.partition(".")
            if name not in self.std and (target[0], target[1]) in self.attr:
                self.std[name] = self.attr[(target[0], target[1])]
        for h in ("intrinsic_metadata", "queueing_metadata"):
            for f, _w in self.hfields.get(h, []):
                self.std.setdefault(f, self.attr[(h, f)])
        self.lines: list[str] = []
        self.consts: dict[str, Any] = {}
        self._n = 0

    def uid(self, prefix: str) -> str:
        """A fresh identifier."""
        self._n += 1
        return f"{prefix}{self._n}"

    def const(self, value: Any, prefix: str = "K") -> str:
        """Bind a Python object into the generated namespace and return its name."""
        name = self.uid(prefix)
        self.consts[name] = value
        return name

    def fattr(self, ref: list[str] | tuple[str, str]) -> str:
        """Attribute name of a field reference (header, field); `$valid$` is the validity bit."""
        h, f = ref[0], ref[1]
        if f == "$valid$":
            if h not in self.valid:
                raise ValueError(f"field {h}.$valid$: unknown header {h!r}")
            return self.valid[h]
        a = self.attr.get((h, f))
        if a is None:
            raise ValueError(f"field {h}.{f}: unknown field (header instance and field must exist)")
        return a

    def fwidth(self, ref: list[str] | tuple[str, str]) -> int:
        """Width of a field reference."""
        return self.prog.field_width(tuple(ref))  # type: ignore[arg-type]

    # --- expressions ---------------------------------------------------------------------------

    def ex(self, v: dict[str, Any] | None) -> str:
        """Python source of a bmv2 type-value object in an rvalue position."""
        if v is None:
            raise ValueError("expression: null operand")
        t = v["type"]
        val = v["value"]
        if t == "field":
            if (val[0], val[1]) in self.signed:  # bmv2 signed fields read as two's complement values
                return f"_tcm(p.{self.fattr(val)}, {self.fwidth(val)})"
            return f"p.{self.fattr(val)}"
        if t == "hexstr":
            return str(parse_hexstr(val))
        if t == "bool":
            return "True" if val else "False"
        if t in ("runtime_data", "local"):
            return f"d[{int(val)}]"
        if t == "expression":
            return self.op(val) if "op" in val else self.ex(val)
        if t == "stack_field":
            stack, f = val
            return f"_stack_last(p, {self.const(self._stack_attrs(stack, f))}, p.{self.stack_next(stack)})"
        if t == "string":
            return repr(val)
        if t == "header":
            return f"p.{self.valid[val]}"
        raise ValueError(f"expression: operand type {t!r} is not supported")

    def stack_next(self, stack: str) -> str:
        """Attribute holding a header stack's next index."""
        return f"{san(stack)}__next"

    def _stack_attrs(self, stack: str, field: str) -> tuple[str, ...]:
        return tuple(self.fattr((h, field)) for h in self.stacks[stack])

    def op(self, e: dict[str, Any]) -> str:
        """Python source of a bmv2 expression object {op, left, right}."""
        o = e["op"]
        left, right = e.get("left"), e.get("right")
        binops = {"+": "+", "-": "-", "*": "*", "<<": "<<", ">>": ">>", "&": "&", "|": "|", "^": "^",
                  "==": "==", "!=": "!=", ">": ">", ">=": ">=", "<": "<", "<=": "<=", "/": "//", "%": "%"}
        if o in binops:
            return f"({self.ex(left)} {binops[o]} {self.ex(right)})"
        if o == "and":
            return f"({self.ex(left)} and {self.ex(right)})"
        if o == "or":
            return f"({self.ex(left)} or {self.ex(right)})"
        if o == "not":
            return f"(not {self.ex(right)})"
        if o == "~":
            return f"(~{self.ex(right)})"
        if o == "valid":
            r = right
            if r["type"] == "header":
                return f"(p.{self.valid[r['value']]} == 1)"
            return f"({self.hdr_dyn(r)} == 1)"
        if o == "valid_union":
            if right.get("type") != "header_union" or right["value"] not in self.prog.header_unions:
                raise ValueError(f"expression: valid_union of {right!r}: expected a header_union")
            return "(" + " or ".join(f"p.{self.valid[h]} == 1" for h in self.prog.header_unions[right["value"]]) + ")"
        if o == "d2b":
            return f"({self.ex(right)} != 0)"
        if o == "b2d":
            return f"(1 if {self.ex(right)} else 0)"
        if o == "?":
            return f"({self.ex(left)} if {self.ex(e['cond'])} else {self.ex(right)})"
        if o == "two_comp_mod":
            return f"_tcm({self.ex(left)}, {self.ex(right)})"
        if o == "sat_cast":
            return f"_sat_s({self.ex(left)}, {self.ex(right)})"
        if o == "usat_cast":
            return f"_sat_u({self.ex(left)}, {self.ex(right)})"
        if o == "last_stack_index":
            return f"(p.{self.stack_next(right['value'])} - 1)"
        if o == "size_stack":
            return f"p.{self.stack_next(right['value'])}"
        if o == "access_field":
            hdr, off = self.header_ref(left), int(right)
            if isinstance(hdr, str):
                f = self.hfields[hdr][off][0]
                return f"p.{self.fattr((hdr, f))}"
            stack, idx = hdr
            return f"getattr(p, {self.const(self._stack_attrs(stack, self._stack_field(stack, off)))}[{idx}])"
        raise ValueError(f"expression: operator {o!r} is not supported")

    def _stack_field(self, stack: str, off: int) -> str:
        return self.hfields[self.stacks[stack][0]][off][0]

    def header_ref(self, v: dict[str, Any]) -> str | tuple[str, str]:
        """A header operand: its name, or (stack, index expression) for a run-time stack element."""
        if v["type"] == "header":
            return v["value"]
        if v["type"] == "expression" and v["value"]["op"] == "dereference_header_stack":
            e = v["value"]
            stack = e["left"]["value"]
            idx = e["right"]
            if idx["type"] == "hexstr":
                return self.stacks[stack][parse_hexstr(idx["value"])]
            return (stack, self.ex(idx))
        if v["type"] == "expression":
            return self.header_ref(v["value"]) if "type" in v["value"] else self.header_ref(
                {"type": "expression", "value": v["value"]})
        raise ValueError(f"header operand of type {v['type']!r} is not supported")

    def hdr_dyn(self, v: dict[str, Any]) -> str:
        """Validity of a (possibly run-time indexed) header."""
        h = self.header_ref(v)
        if isinstance(h, str):
            return f"p.{self.valid[h]}"
        stack, idx = h
        names = self.const(tuple(self.valid[x] for x in self.stacks[stack]))
        return f"getattr(p, {names}[{idx}])"

    def lvalue(self, v: dict[str, Any]) -> tuple[str, int]:
        """(assignment target source, width) of a field lvalue; target is 'p.x' or a setattr form."""
        if v["type"] == "field":
            return f"p.{self.fattr(v['value'])}", self.fwidth(v["value"])
        if v["type"] == "expression" and "op" not in v["value"]:
            return self.lvalue(v["value"])
        if v["type"] == "expression" and v["value"]["op"] == "access_field":
            e = v["value"]
            hdr, off = self.header_ref(e["left"]), int(e["right"])
            if isinstance(hdr, str):
                f, w = self.hfields[hdr][off]
                return f"p.{self.fattr((hdr, f))}", w
            stack, idx = hdr
            f, w = self.hfields[self.stacks[stack][0]][off]
            return f"SETATTR:{self.const(self._stack_attrs(stack, f))}[{idx}]", w
        if v["type"] == "stack_field":
            stack, f = v["value"]
            w = self.fwidth((self.stacks[stack][0], f))
            return f"SETATTR:{self.const(self._stack_attrs(stack, f))}[p.{self.stack_next(stack)} - 1]", w
        raise ValueError(f"assignment target of type {v['type']!r} is not supported")

    def src_width(self, v: dict[str, Any] | None) -> int | None:
        """An upper bound on the bits of an rvalue's value when it is known statically (else None)."""
        if not isinstance(v, dict):
            return None
        t = v.get("type")
        if t == "field":
            return None if tuple(v["value"]) in self.signed else self.fwidth(v["value"])
        if t in ("runtime_data", "local"):
            params = self.cur_params
            i = int(v["value"])
            return params[i][1] if params is not None and i < len(params) else None
        if t == "hexstr":
            val = parse_hexstr(v["value"])
            return val.bit_length() if val >= 0 else None
        if t == "expression":
            e = v["value"]
            if "op" not in e:
                return self.src_width(e)
            if e["op"] in ("b2d", "==", "!=", "<", "<=", ">", ">=", "and", "or", "not", "d2b", "valid"):
                return 1
            if e["op"] == "&":
                ws = [w for w in (self.src_width(e.get("left")), self.src_width(e.get("right"))) if w is not None]
                return min(ws) if ws else None
        return None

    cur_params: tuple[tuple[str, int], ...] | None = None

    def assign(self, dst: dict[str, Any], src: str, ind: str, src_json: dict[str, Any] | None = None) -> list[str]:
        """Statements assigning rvalue source src to lvalue dst, truncated to the field width."""
        target, width = self.lvalue(dst)
        mask = (1 << width) - 1
        sw = self.src_width(src_json)
        if src.lstrip("-").isdigit():
            val = str(int(src) & mask)
        elif sw is not None and sw <= width:
            val = src  # already fits: no truncation needed
        else:
            val = f"({src}) & {mask}"
        if target.startswith("SETATTR:"):
            return [f"{ind}setattr(p, {target[8:]}, {val})"]
        return [f"{ind}{target} = {val}"]


def _tcm(v: int, w: int) -> int:
    """bmv2 two_comp_mod: v as a w-bit two's complement value."""
    v &= (1 << w) - 1
    return v - (1 << w) if v >> (w - 1) else v


def _sat_s(v: int, w: int) -> int:
    lo, hi = -(1 << (w - 1)), (1 << (w - 1)) - 1
    return lo if v < lo else hi if v > hi else v


def _sat_u(v: int, w: int) -> int:
    hi = (1 << w) - 1
    return 0 if v < 0 else hi if v > hi else v


def _stack_last(p: Any, attrs: tuple[str, ...], nxt: int) -> int:
    return getattr(p, attrs[nxt - 1]) if 0 < nxt <= len(attrs) else 0


def _stack_push(p: Any, attrs: tuple[tuple[str, ...], ...], valids: tuple[str, ...], nxt: str, count: int) -> None:
    """P4 push_front(count): shift elements up, the first `count` become invalid."""
    size = len(valids)
    for i in range(size - 1, -1, -1):
        j = i - count
        if j >= 0:
            for a, b in zip(attrs[i], attrs[j], strict=True):
                setattr(p, a, getattr(p, b))
            setattr(p, valids[i], getattr(p, valids[j]))
        else:
            setattr(p, valids[i], 0)
    setattr(p, nxt, min(size, getattr(p, nxt) + count))


def _stack_pop(p: Any, attrs: tuple[tuple[str, ...], ...], valids: tuple[str, ...], nxt: str, count: int) -> None:
    """P4 pop_front(count): shift elements down, the last `count` become invalid."""
    size = len(valids)
    for i in range(size):
        j = i + count
        if j < size:
            for a, b in zip(attrs[i], attrs[j], strict=True):
                setattr(p, a, getattr(p, b))
            setattr(p, valids[i], getattr(p, valids[j]))
        else:
            setattr(p, valids[i], 0)
    setattr(p, nxt, max(0, getattr(p, nxt) - count))


def _fmt(fmt: str, vals: tuple[int, ...]) -> str:
    """bmv2 log_msg formatting: each {} takes the next value."""
    parts = fmt.split("{}")
    out = parts[0]
    for i, rest in enumerate(parts[1:]):
        out += (str(vals[i]) if i < len(vals) else "{}") + rest
    return out


def _assert_failed(p: Any, what: str) -> None:
    """An assert/assume failed: bmv2 aborts the process; p4sim logs it and drops the packet."""
    log.error("%s failed in the P4 program; dropping the packet", what)
    p._exit = True
    p.standard_metadata__egress_spec = 511
    p._dropped_by_assert = True


def generate(prog: Program) -> tuple[str, dict[str, Any]]:
    """Python source for the whole program and the constants it refers to (ValueError for
    constructs p4sim does not support)."""
    from p4sim.switch import codegen_fused
    from p4sim.switch.codegen_control import ControlGen

    g = Gen(prog)
    out: list[str] = []
    out += _packet_class(g)
    pg = ParserGen(g)
    cg = ControlGen(g, pg)
    out += pg.parsers()
    out += pg.checksums()
    out += pg.deparser()
    out += cg.actions()
    out += codegen_fused.fused(g, pg, cg)
    out += cg.pipelines()
    src = "\n".join(out) + "\n"
    return src, g.consts


def _packet_class(g: Gen) -> list[str]:
    tmpl: dict[str, Any] = {}
    for h, fields in g.hfields.items():
        tmpl[g.valid[h]] = 1 if h in g.meta else 0
        for f, _w in fields:
            tmpl[g.attr[(h, f)]] = 0
    for s in g.stacks:
        tmpl[g.stack_next(s)] = 0
    for _f, vl in g.varbit.values():
        tmpl[vl] = 0
    # _ilen: the length the packet entered ingress with (bmv2 counts and meters it everywhere);
    # _dlen: bytes add_header/remove_header added since (bmv2's packet length register);
    # _now: when the switch took the packet (us, the meters' clock)
    tmpl.update({"_b": b"", "_off": 0, "_exit": False, "_clone_i2e": None, "_clone_e2e": None,
                 "_resubmit": None, "_recirc": None, "_digest": None, "_trunc": 0, "_ilen": 0, "_dlen": 0,
                 "_now": 0})
    g.consts["TEMPLATE"] = tmpl
    g.consts["STD_ATTRS"] = dict(g.std)
    g.consts["META_ATTRS"] = tuple(g.attr[(h, f)] for h in g.meta for f, _w in g.hfields[h])
    g.consts["FIELD_LISTS"] = {i: tuple(g.fattr(r) for r in refs) for i, refs in g.prog.field_lists.items()}
    g.consts["LEARN_ATTRS"] = {i: tuple(g.fattr(r) for r in ll.fields) for i, ll in g.prog.learn_lists.items()}
    g.consts["FUSED_ATTRS"] = tuple(tmpl)
    g.consts["FUSED_INIT"] = tuple(tmpl.values())
    return ["class P:", "    pass", "", "for _k, _v in TEMPLATE.items():", "    setattr(P, _k, _v)", "",
            "def _spill(L):", "    p = P()", "    p.__dict__.update({a: L[a] for a in FUSED_ATTRS})", "    return p",
            ""] + _fast_path(g)


QUEUE_TIME_FIELDS = ("egress_global_timestamp", "enq_timestamp", "deq_timedelta")


def reads_std(prog: Program, names: tuple[str, ...]) -> bool:
    """True if the program reads or writes one of these standard_metadata fields (under any of
    the names simple_switch gives them)."""
    scopes = (STD, "intrinsic_metadata", "queueing_metadata")

    def walk(v: Any) -> bool:
        if isinstance(v, dict):
            if v.get("type") == "field" and isinstance(v.get("value"), list) and len(v["value"]) == 2:
                return v["value"][0] in scopes and v["value"][1] in names
            return any(walk(x) for x in v.values())
        if isinstance(v, list):
            return any(walk(x) for x in v)
        return False

    return any(walk(prog.doc.get(k)) for k in ("parsers", "deparsers", "actions", "pipelines", "calculations",
                                                "checksums", "field_lists", "learn_lists"))


def egress_start(g: Gen, sm: Any, ind: str) -> list[str]:
    """Lines that end ingress of a unicast packet and start its egress, as simple_switch does:
    instance_type back to 0, a priority past the queues drops it, queue and egress timestamps
    (real clock reads only in a program that looks at them), egress_spec 0, packet_length from
    the length register. Expects `spec` (the egress port) and `now` (the packet's time)."""
    out: list[str] = []
    if "instance_type" in g.std:
        out.append(f"{ind}{sm('instance_type')} = 0")
    if "priority" in g.std:
        out += [f"{ind}if {sm('priority')} >= NB_QUEUES:", f"{ind}    return []"]
    out += [f"{ind}{sm('egress_port')} = spec", f"{ind}{sm('egress_spec')} = 0",
            f"{ind}{sm('packet_length')} = p._ilen + p._dlen"]
    if reads_std(g.prog, QUEUE_TIME_FIELDS):
        out += [f"{ind}tq = dev.now_us()"]
        if "enq_timestamp" in g.std:
            out.append(f"{ind}{sm('enq_timestamp')} = tq & 0xFFFFFFFF")
        out += [f"{ind}te = dev.now_us()"]
        if "egress_global_timestamp" in g.std:
            out.append(f"{ind}{sm('egress_global_timestamp')} = te")
        if "deq_timedelta" in g.std:
            out.append(f"{ind}{sm('deq_timedelta')} = (te - tq) & 0xFFFFFFFF")
    else:
        if "enq_timestamp" in g.std:
            out.append(f"{ind}{sm('enq_timestamp')} = now & 0xFFFFFFFF")
        if "egress_global_timestamp" in g.std:
            out.append(f"{ind}{sm('egress_global_timestamp')} = now")
    return out


def _fast_path(g: Gen) -> list[str]:
    """FAST(b, port, now, dev, pl) -> [(port, frame)]: the unicast case in one function, with direct
    attribute names. Anything else (clone, digest, resubmit, multicast, recirculate) is handed to
    SLOW(dev, pl, p, egress_port or None, now), the general flow of p4sim.switch.engine."""
    need = ("ingress_port", "packet_length", "egress_spec", "egress_port")
    if any(f not in g.std for f in need):
        return ["FAST = None", ""]

    def sm(f: str) -> str:
        return f"p.{g.std[f]}"

    out = ["def FAST(b, port, now, dev, pl):", "    p = P()", "    p._b = b", f"    {sm('ingress_port')} = port",
           f"    {sm('packet_length')} = len(b)", "    p._ilen = len(b)", "    p._now = now"]
    if "ingress_global_timestamp" in g.std:
        out.append(f"    {sm('ingress_global_timestamp')} = now")
    mcast = f" or {sm('mcast_grp')}" if "mcast_grp" in g.std else ""
    out += ["    parse_fresh(p, b)", "    verify_checksums(p)", "    ingress(p)", "    p._exit = False",
            f"    if p._clone_i2e is not None or p._digest is not None or p._resubmit is not None{mcast}:",
            "        return SLOW(dev, pl, p, None, now)",
            f"    spec = {sm('egress_spec')}", "    if spec == 511:", "        return []"]
    out += egress_start(g, sm, "    ")
    out += ["    egress(p)", "    p._exit = False",
            "    if p._clone_e2e is not None or p._recirc is not None:", "        return SLOW(dev, pl, p, spec, now)",
            f"    if {sm('egress_spec')} == 511:", "        return []",
            "    update_checksums(p)", "    out = deparse(p)", "    if p._trunc and len(out) > p._trunc:",
            "        out = out[:p._trunc]", "    return [(spec, out)]", ""]
    return out


def load(src: str, consts: dict[str, Any], prog: Program, pipeline: Any) -> dict[str, Any]:
    """Execute generated source; return its namespace (runtime state is bound later by `bind`)."""
    ns: dict[str, Any] = {
        "_tcm": _tcm, "_sat_s": _sat_s, "_sat_u": _sat_u, "_stack_last": _stack_last,
        "_rand": random.randint, "_time": time.monotonic, "hashes": hashes,
        "csum16_int": hashes.csum16_int, "_stack_push": _stack_push, "_stack_pop": _stack_pop,
        "_fmt": _fmt, "_log": logging.getLogger("p4sim.switch.program_log"), "_assert_failed": _assert_failed,
    }
    from p4sim.switch.engine import continue_slow

    ns["SLOW"] = continue_slow
    ns.update(consts)
    ns["PIPELINE"] = pipeline
    ns["NB_QUEUES"] = getattr(pipeline, "nb_queues", 1)
    ns["QUEUE_TIME"] = reads_std(prog, QUEUE_TIME_FIELDS)
    code = compile(src, f"<p4sim:{prog.doc.get('program', 'program')}>", "exec")
    exec(code, ns)  # noqa: S102 - the source is generated from the validated program
    return ns


def bind(ns: dict[str, Any], pipeline: Any) -> None:
    """Bind the Pipeline's runtime state objects into the generated namespace."""
    for name, fn in list(ns.items()):
        if name.startswith("_bind_"):
            fn(pipeline)
