"""bmv2 JSON expressions as C: the values of the Python path's unbounded ints, or the program has no
native path.

An expression computes in `V` (a 128-bit signed integer, rt/prog.h). Each translated value carries
what is known of it: an upper bound on the bits of its magnitude, and whether it is exact (its true
value, as the Python path has it) or only right modulo 2^128 (a shift or product that may overflow).
Assignments and masks need only the low bits; comparisons, right shifts, divisions, conditions and
array indices need the exact value, and a program that would give them an inexact one is refused
(`NotNative`), so that both paths always agree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from p4sim.switch.codegen.base import Gen
from p4sim.switch.program import parse_hexstr

EXACT_BITS = 126  # |value| < 2^126: sums and differences of two such values still fit V


class NotNative(ValueError):
    """The program uses something the native path does not run; the Python path runs it."""


@dataclass(slots=True, frozen=True)
class Val:
    """A C expression of type V: bits bounds its magnitude (None: unknown), exact as above."""

    code: str
    bits: int | None
    exact: bool
    nonneg: bool


def const(n: int) -> Val:
    """A constant."""
    if abs(n) >= 1 << EXACT_BITS:
        raise NotNative(f"constant {n:#x} wider than {EXACT_BITS} bits")
    m = abs(n)
    if m < 1 << 63:
        code = f"((V){m}LL)"
    else:
        code = f"(((V){m >> 64:#x}ULL << 64) | (V){m & (2**64 - 1):#x}ULL)"
    return Val(f"(-{code})" if n < 0 else code, n.bit_length(), True, n >= 0)


def _known(bits: int | None) -> bool:
    return bits is not None and bits <= EXACT_BITS


class CExpr:
    """Translates expressions, lvalues and assignments of one program (names from the Python Gen)."""

    def __init__(self, g: Gen) -> None:
        self.g = g
        self.params: tuple[tuple[str, int], ...] | None = None  # the current action's parameters

    def need(self, v: Val, what: str) -> str:
        """The code of a value whose exact value is used; NotNative if it may be inexact."""
        if not v.exact:
            raise NotNative(f"{what}: a value that may exceed {EXACT_BITS} bits")
        return v.code

    def field_ref(self, ref: list[str] | tuple[str, str]) -> tuple[str, int]:
        """(C lvalue, width) of a header field or validity bit."""
        g = self.g
        attr = g.fattr(ref)
        if ref[1] == "$valid$":
            return f"p->{attr}", 1
        if ref[0] in g.varbit and g.varbit[ref[0]][0] == ref[1]:
            raise NotNative(f"field {ref[0]}.{ref[1]}: variable-length")
        w = g.fwidth(ref)
        if w > 64:
            raise NotNative(f"field {ref[0]}.{ref[1]}: {w} bits wide")
        return f"p->{attr}", w

    # --- rvalues ---------------------------------------------------------------------------------

    def ex(self, v: dict[str, Any] | None) -> Val:
        """A bmv2 type-value object as a value (base.Gen.ex's cases)."""
        if v is None:
            raise ValueError("expression: null operand")
        t, val = v["type"], v["value"]
        g = self.g
        if t == "field":
            lv, w = self.field_ref(val)
            if (val[0], val[1]) in g.signed:
                return Val(f"p4s_tcm((V){lv}, {w})", w, True, False)
            return Val(f"((V){lv})", w, True, True)
        if t == "hexstr":
            return const(parse_hexstr(val))
        if t == "bool":
            return const(1 if val else 0)
        if t in ("runtime_data", "local"):
            i = int(val)
            w = self.params[i][1] if self.params is not None and i < len(self.params) else 64
            if w > 64:
                raise NotNative(f"action parameter {i}: {w} bits wide")
            return Val(f"((V)d[{i}])", w, True, True)
        if t == "expression":
            return self.op(val) if "op" in val else self.ex(val)
        if t == "header":
            return Val(f"((V)p->{g.valid[val]})", 1, True, True)
        raise NotNative(f"expression operand of type {t!r}")

    def op(self, e: dict[str, Any]) -> Val:
        """An expression object {op, left, right}."""
        o = e["op"]
        left, right = e.get("left"), e.get("right")
        if o in ("+", "-", "*"):
            a, b = self.ex(left), self.ex(right)
            if a.bits is None or b.bits is None:
                bits = None
            else:
                bits = a.bits + b.bits if o == "*" else max(a.bits, b.bits) + 1
            exact = a.exact and b.exact and _known(bits)
            code = (f"({a.code} {o} {b.code})" if exact
                    else f"((V)((u128){a.code} {o} (u128){b.code}))")
            return Val(code, bits, exact, o != "-" and a.nonneg and b.nonneg)
        if o in ("&", "|", "^"):
            a, b = self.ex(left), self.ex(right)
            code = f"({a.code} {o} {b.code})"
            if o == "&":
                small = [x.bits for x in (a, b) if x.exact and x.nonneg and x.bits is not None]
                if small:
                    return Val(code, min(small), True, True)
            exact = a.exact and b.exact
            bits = None if a.bits is None or b.bits is None else max(a.bits, b.bits)
            return Val(code, bits, exact, a.nonneg and b.nonneg if o != "&" else a.nonneg or b.nonneg)
        if o == "<<":
            a, b = self.ex(left), self.ex(right)
            if right.get("type") == "hexstr":
                k = parse_hexstr(right["value"])
                if k < 0:
                    raise NotNative("a shift by a negative constant")
                bits = None if a.bits is None else a.bits + k
                exact = a.exact and _known(bits)
                code = ("((V)0)" if k >= 128 else f"({a.code} << {k})" if exact
                        else f"((V)((u128){a.code} << {k}))")
                return Val(code, bits, exact, a.nonneg)
            bits = None if a.bits is None or b.bits is None or b.bits > 7 else a.bits + (1 << b.bits) - 1
            return Val(f"p4s_shl({a.code}, {self.need(b, 'a shift amount')})", bits,
                       a.exact and _known(bits), a.nonneg)
        if o == ">>":
            a, b = self.ex(left), self.ex(right)
            return Val(f"p4s_shr({self.need(a, 'a right shift')}, {self.need(b, 'a shift amount')})",
                       a.bits, True, a.nonneg)
        if o in ("==", "!=", ">", ">=", "<", "<="):
            a, b = self.ex(left), self.ex(right)
            return Val(f"((V)({self.need(a, 'a comparison')} {o} {self.need(b, 'a comparison')}))", 1, True, True)
        if o in ("and", "or"):
            c = "&&" if o == "and" else "||"
            return Val(f"((V)({self.cond(left)} {c} {self.cond(right)}))", 1, True, True)
        if o in ("/", "%"):
            a, b = self.ex(left), self.ex(right)
            if right.get("type") != "hexstr" or parse_hexstr(right["value"]) == 0:
                raise NotNative(f"operator {o} by a value that is not a constant other than 0")
            fn = "p4s_fdiv" if o == "/" else "p4s_fmod"
            return Val(f"{fn}({self.need(a, 'a division')}, {b.code})", a.bits, True, a.nonneg and b.nonneg)
        if o == "not":
            return Val(f"((V)!{self.cond(right)})", 1, True, True)
        if o == "~":
            a = self.ex(right)
            return Val(f"(~{a.code})", a.bits, a.exact, not a.nonneg and a.exact)
        if o == "d2b":
            return Val(f"((V)({self.need(self.ex(right), 'a boolean')} != 0))", 1, True, True)
        if o == "b2d":
            return Val(f"((V)({self.need(self.ex(right), 'a boolean')} ? 1 : 0))", 1, True, True)
        if o == "two_comp_mod":
            w = self._width_operand(right, o)
            return Val(f"p4s_tcm({self.ex(left).code}, {w})", w, True, False)
        if o in ("sat_cast", "usat_cast"):
            w = self._width_operand(right, o)
            fn = "p4s_sat_s" if o == "sat_cast" else "p4s_sat_u"
            return Val(f"{fn}({self.need(self.ex(left), o)}, {w})", w, True, o == "usat_cast")
        if o == "valid":
            if right["type"] != "header":
                raise NotNative("validity of a header at a run-time stack index")
            return Val(f"((V)(p->{self.g.valid[right['value']]} == 1))", 1, True, True)
        if o == "valid_union":
            members = self.g.union_members(right)
            if not all(isinstance(h, str) for h in members):
                raise NotNative("validity of a union at a run-time stack index")
            return Val("((V)(" + " || ".join(f"p->{self.g.valid[h]} == 1" for h in members) + "))",  # type: ignore[index]
                       1, True, True)
        if o == "?":
            a, b = self.ex(left), self.ex(right)
            bits = None if a.bits is None or b.bits is None else max(a.bits, b.bits)
            return Val(f"({self.cond(e['cond'])} ? {a.code} : {b.code})", bits, a.exact and b.exact,
                       a.nonneg and b.nonneg)
        if o in ("last_stack_index", "size_stack"):
            nxt = f"((V)p->{self.g.stack_next(right['value'])})"
            return Val(f"({nxt} - 1)" if o == "last_stack_index" else nxt, 8, True, o == "size_stack")
        if o == "access_field":
            hdr = self.g.header_ref(left)
            if not isinstance(hdr, str):
                raise NotNative("a field of a header at a run-time stack index")
            f = self.g.hfields[hdr][int(right)][0]
            return self.ex({"type": "field", "value": [hdr, f]})
        raise NotNative(f"expression operator {o!r}")

    def _width_operand(self, v: dict[str, Any] | None, o: str) -> int:
        if not v or v.get("type") != "hexstr":
            raise NotNative(f"{o} with a width that is not a constant")
        w = parse_hexstr(v["value"])
        if not 0 < w <= 64:
            raise NotNative(f"{o} to {w} bits")
        return w

    def cond(self, v: dict[str, Any] | None) -> str:
        """A condition (the Python path's truthiness of the value)."""
        return f"({self.need(self.ex(v), 'a condition')} != 0)"

    def index(self, v: dict[str, Any], what: str) -> str:
        """An array index: its exact value."""
        return self.need(self.ex(v), what)

    # --- lvalues ---------------------------------------------------------------------------------

    def lvalue(self, v: dict[str, Any]) -> tuple[str, int]:
        """(C lvalue, width) of an assignment target (base.Gen.lvalue's static cases)."""
        if v["type"] == "field":
            return self.field_ref(v["value"])
        if v["type"] == "expression" and "op" not in v["value"]:
            return self.lvalue(v["value"])
        if v["type"] == "expression" and v["value"]["op"] == "access_field":
            e = v["value"]
            hdr = self.g.header_ref(e["left"])
            if not isinstance(hdr, str):
                raise NotNative("an assignment to a header at a run-time stack index")
            f, _w = self.g.hfields[hdr][int(e["right"])]
            return self.field_ref((hdr, f))
        raise NotNative(f"assignment target of type {v['type']!r}")

    def assign(self, dst: dict[str, Any], src: Val, ind: str) -> list[str]:
        """dst = src truncated to dst's width (base.Gen.assign)."""
        target, width = self.lvalue(dst)
        return [f"{ind}{target} = {masked(src.code, width)};"]


def masked(code: str, width: int) -> str:
    """The low `width` bits of a V expression as uint64_t."""
    if width >= 64:
        return f"(uint64_t)({code})"
    return f"((uint64_t)({code}) & {(1 << width) - 1:#x}ULL)"
