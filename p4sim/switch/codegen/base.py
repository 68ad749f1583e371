"""What every generator shares: the program's names as Python attributes (`Gen`), and the
translation of bmv2 JSON expressions, field references and assignments into Python."""

from __future__ import annotations

import logging
import re
from typing import Any

from p4sim.switch.program import Program, parse_hexstr

log = logging.getLogger(__name__)

STD = "standard_metadata"

# The Python of a bmv2 expression operator, as a template of its operands' Python: (left, right) or (right,).
_PY_OPS = {"+": "+", "-": "-", "*": "*", "<<": "<<", ">>": ">>", "&": "&", "|": "|", "^": "^", "==": "==",
           "!=": "!=", ">": ">", ">=": ">=", "<": "<", "<=": "<=", "/": "//", "%": "%", "and": "and", "or": "or"}
_BINARY = {o: f"({{}} {py} {{}})" for o, py in _PY_OPS.items()} | {
    "two_comp_mod": "_tcm({}, {})", "sat_cast": "_sat_s({}, {})", "usat_cast": "_sat_u({}, {})"}
_UNARY = {"not": "(not {})", "~": "(~{})", "d2b": "({} != 0)", "b2d": "(1 if {} else 0)"}


def san(name: str) -> str:
    """A Python identifier for a JSON name."""
    return re.sub(r"\W", "_", name)


def member_stack(union_stack: str, member: int) -> str:
    """The name of member `member` of every element of a union stack, seen as a header stack."""
    return f"{union_stack}[*]#{member}"


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
        # header stacks by name: their element headers
        self.stacks: dict[str, list[str]] = dict(prog.header_stacks)
        # header union stacks: their element unions; one member of every element is also a stack of
        # headers here (member_stack), which is how a run-time index into a union stack is resolved
        self.union_stacks = prog.header_union_stacks
        for us, unions in self.union_stacks.items():
            for m in range(len(prog.header_unions[unions[0]])):
                self.stacks[member_stack(us, m)] = [prog.header_unions[u][m] for u in unions]
        # stacks with a next index (the packet's state)
        self.counted: list[str] = list(prog.header_stacks) + list(self.union_stacks)
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

    def header_bytes(self, h: str) -> int:
        """The bytes of a header of fixed-width fields; ValueError unless they are whole (bmv2 requires it)."""
        total = sum(w for _, w in self.hfields[h])
        if total % 8:
            raise ValueError(f"header {h}: {total} bits is not a whole number of bytes (bmv2 requires it)")
        return total // 8

    def select_key_width(self, k: dict[str, Any]) -> int:
        """The width of one element of a parser state's transition key."""
        if k["type"] == "lookahead":
            return int(k["value"][1])
        if k["type"] == "field":
            return self.fwidth(k["value"])
        if k["type"] == "stack_field":
            stack, f = k["value"]
            return self.fwidth((self.stacks[stack][0], f))
        raise ValueError(f"parser transition key of type {k['type']!r} is not supported")

    def vset_widths(self, s: dict[str, Any], name: str) -> list[int]:
        """The widths of a parse_vset transition's key elements; ValueError unless they make the set's width."""
        if name not in self.prog.parse_vsets:
            raise ValueError(f"parser state {s['name']}: value set {name!r} is not in parse_vsets")
        widths = [self.select_key_width(k) for k in s.get("transition_key", [])]
        if sum(widths) != self.prog.parse_vsets[name]:
            raise ValueError(f"parser state {s['name']}: value set {name!r} holds "
                             f"{self.prog.parse_vsets[name]}-bit values, the key has {sum(widths)} bits")
        return widths

    def stack_copy_pairs(self, op: str, dst: dict[str, Any], src: dict[str, Any]) -> tuple[str, str, list[tuple[str, str]]]:
        """bmv2 assign_header_stack/assign_union_stack: (the next index attributes of dst and src, the
        headers to copy from src to dst, element by element and member by member)."""
        d, s = dst["value"], src["value"]
        stacks = self.union_stacks if op == "assign_union_stack" else self.prog.header_stacks
        if d not in stacks or s not in stacks or len(stacks[d]) != len(stacks[s]):
            raise ValueError(f"{op}: {s!r} to {d!r}: not two stacks of the same size")
        pairs: list[tuple[str, str]] = []
        for de, se in zip(stacks[d], stacks[s], strict=True):
            if op == "assign_union_stack":
                pairs += list(zip(self.prog.header_unions[de], self.prog.header_unions[se], strict=True))
            else:
                pairs.append((de, se))
        return self.stack_next(d), self.stack_next(s), pairs

    def stack_next(self, stack: str) -> str:
        """Attribute holding a header stack's next index."""
        return f"{san(stack)}__next"

    def _stack_attrs(self, stack: str, field: str) -> tuple[str, ...]:
        return tuple(self.fattr((h, field)) for h in self.stacks[stack])

    def op(self, e: dict[str, Any]) -> str:
        """Python source of a bmv2 expression object {op, left, right}."""
        o = e["op"]
        left, right = e.get("left"), e.get("right")
        if o in _BINARY:
            return _BINARY[o].format(self.ex(left), self.ex(right))
        if o in _UNARY:
            return _UNARY[o].format(self.ex(right))
        if o == "valid":
            r = right
            if r["type"] == "header":
                return f"(p.{self.valid[r['value']]} == 1)"
            return f"({self.hdr_dyn(r)} == 1)"
        if o == "valid_union":
            members = self.union_members(right)
            return "(" + " or ".join(f"{self.valid_of(h)} == 1" for h in members) + ")"
        if o == "?":
            return f"({self.ex(left)} if {self.ex(e['cond'])} else {self.ex(right)})"
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
        if v["type"] == "expression" and v["value"].get("op") == "access_union_header":
            u, m = self.union_ref(v["value"]["left"]), int(v["value"]["right"])
            if isinstance(u, str):
                return self.prog.header_unions[u][m]
            return (member_stack(u[0], m), u[1])
        if v["type"] == "expression":
            return self.header_ref(v["value"]) if "type" in v["value"] else self.header_ref(
                {"type": "expression", "value": v["value"]})
        raise ValueError(f"header operand of type {v['type']!r} is not supported")

    def union_ref(self, v: dict[str, Any]) -> str | tuple[str, str]:
        """A header union operand: its name, or (union stack, index expression) for a run-time index."""
        if v["type"] == "header_union":
            if v["value"] not in self.prog.header_unions:
                raise ValueError(f"header union {v['value']!r} is not declared")
            return v["value"]
        if v["type"] == "expression" and "op" not in v["value"]:
            return self.union_ref(v["value"])
        if v["type"] == "expression" and v["value"]["op"] == "dereference_union_stack":
            us, idx = v["value"]["left"]["value"], v["value"]["right"]
            if us not in self.union_stacks:
                raise ValueError(f"header union stack {us!r} is not declared")
            if idx["type"] == "hexstr":
                return self.union_stacks[us][parse_hexstr(idx["value"])]
            return (us, self.ex(idx))
        raise ValueError(f"header union operand of type {v['type']!r} is not supported")

    def union_members(self, v: dict[str, Any]) -> list[str | tuple[str, str]]:
        """The member headers of a union operand, each a name or (member stack, index expression)."""
        u = self.union_ref(v)
        if isinstance(u, str):
            return list(self.prog.header_unions[u])
        n = len(self.prog.header_unions[self.union_stacks[u[0]][0]])
        return [(member_stack(u[0], m), u[1]) for m in range(n)]

    def hdr_dyn(self, v: dict[str, Any]) -> str:
        """Validity of a (possibly run-time indexed) header."""
        return self.valid_of(self.header_ref(v))

    def valid_of(self, h: str | tuple[str, str]) -> str:
        """Validity of a header given by name or as (stack, index expression)."""
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
