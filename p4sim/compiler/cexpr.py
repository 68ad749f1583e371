"""`#if` expressions as C evaluates them (C11 6.10.1): integer constants and the operators of C's
constant expressions, in 64-bit two's complement (intmax_t), nothing else.

Identifiers (after macro expansion and `defined`) are 0, as in C. What C leaves undefined or refuses
is an error here: division by zero, a shift by a negative amount or by 64 or more, an operator C
lacks (`**`, `and`), a constant that does not fit 64 bits, nesting past MAX_DEPTH. As in C, the
operand `&&`, `||` or `?:` does not evaluate is parsed but not computed (`0 && 1/0` is 0).
"""

from __future__ import annotations

import re

MAX_DEPTH = 64  # parentheses, unary and conditional operators nested
_BITS = 64
_TOKEN = re.compile(r"\s*(?:(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)[uUlL]*(?![\w.])|(\|\||&&|<<|>>|<=|>=|==|!=|"
                    r"[-+*/%<>&|^~!?:()]))")

# binary operators by precedence, loosest first (C11 6.5.5-6.5.14)
_LEVELS: list[tuple[str, ...]] = [("||",), ("&&",), ("|",), ("^",), ("&",), ("==", "!="), ("<", "<=", ">", ">="),
                                  ("<<", ">>"), ("+", "-"), ("*", "/", "%")]


def _wrap(v: int) -> int:
    """v as a signed 64-bit value."""
    v &= (1 << _BITS) - 1
    return v - (1 << _BITS) if v >> (_BITS - 1) else v


def evaluate(text: str) -> int:
    """The value of a `#if` expression (identifiers already replaced); ValueError saying what is wrong."""
    toks: list[str] = []
    pos = 0
    while pos < len(text.rstrip()):
        m = _TOKEN.match(text, pos)
        if not m:
            raise ValueError(f"unexpected {text[pos:].strip()[:20]!r}")
        if m.group(1):
            digits = m.group(1)
            value = int(digits, 16 if digits[:2] in ("0x", "0X") else 8 if digits.startswith("0") else 10)
            if value >= 1 << _BITS:
                raise ValueError(f"integer constant {digits[:24]} does not fit in 64 bits")
            toks.append(str(value))
        else:
            toks.append(m.group(2))
        pos = m.end()
    p = _Parser(toks)
    value = p.conditional(0, True)
    if p.i != len(toks):
        raise ValueError(f"unexpected {toks[p.i]!r}")
    return value


class _Parser:
    """Precedence climbing over the tokens; each level returns the value as C computes it (0 where
    `live` is False: an operand C does not evaluate)."""

    def __init__(self, toks: list[str]) -> None:
        self.toks, self.i = toks, 0

    def _peek(self) -> str | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def _take(self, tok: str) -> None:
        if self._peek() != tok:
            raise ValueError(f"expected {tok!r}, found {self._peek() or 'the end'!r}")
        self.i += 1

    def conditional(self, depth: int, live: bool) -> int:
        if depth > MAX_DEPTH:
            raise ValueError(f"nested more than {MAX_DEPTH} levels deep")
        cond = self.binary(0, depth, live)
        if self._peek() != "?":
            return cond
        self.i += 1
        a = self.conditional(depth + 1, live and bool(cond))
        self._take(":")
        b = self.conditional(depth + 1, live and not cond)
        return a if cond else b

    def binary(self, level: int, depth: int, live: bool) -> int:
        if level == len(_LEVELS):
            return self.unary(depth, live)
        left = self.binary(level + 1, depth, live)
        while self._peek() in _LEVELS[level]:
            op = self.toks[self.i]
            self.i += 1
            decided = (op == "&&" and not left) or (op == "||" and bool(left))
            right = self.binary(level + 1, depth, live and not decided)
            left = _apply(op, left, right) if live else 0
        return left

    def unary(self, depth: int, live: bool) -> int:
        if depth > MAX_DEPTH:
            raise ValueError(f"nested more than {MAX_DEPTH} levels deep")
        tok = self._peek()
        if tok in ("+", "-", "~", "!"):
            self.i += 1
            v = self.unary(depth + 1, live)
            return {"+": v, "-": _wrap(-v), "~": _wrap(~v), "!": int(not v)}[tok]
        if tok == "(":
            self.i += 1
            v = self.conditional(depth + 1, live)
            self._take(")")
            return v
        if tok is None or not tok.isdigit():
            raise ValueError(f"expected a number, found {tok or 'the end'!r}")
        self.i += 1
        return _wrap(int(tok))


def _apply(op: str, a: int, b: int) -> int:
    if op in ("/", "%"):
        if b == 0:
            raise ValueError("division by zero")
        q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)  # C truncates toward zero
        return _wrap(q if op == "/" else a - q * b)
    if op in ("<<", ">>"):
        if not 0 <= b < _BITS:
            raise ValueError(f"shift by {b}: expected 0..{_BITS - 1}")
        return _wrap(a << b if op == "<<" else a >> b)
    return {"||": lambda: int(bool(a or b)), "&&": lambda: int(bool(a and b)), "|": lambda: _wrap(a | b),
            "^": lambda: _wrap(a ^ b), "&": lambda: _wrap(a & b), "==": lambda: int(a == b),
            "!=": lambda: int(a != b), "<": lambda: int(a < b), "<=": lambda: int(a <= b),
            ">": lambda: int(a > b), ">=": lambda: int(a >= b), "+": lambda: _wrap(a + b),
            "-": lambda: _wrap(a - b), "*": lambda: _wrap(a * b)}[op]()
