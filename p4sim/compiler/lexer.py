"""Tokens of P4_16 (spec section 6.4), with source positions from the preprocessor."""

from __future__ import annotations

import re
from dataclasses import dataclass

from p4sim.compiler.errors import CompileError, Loc
from p4sim.compiler.preprocess import SourceLine
from p4sim.compiler.types import MAX_WIDTH

# the longest digits a literal of MAX_WIDTH bits may be written with (binary, underscores between)
MAX_LITERAL_CHARS = 2 * MAX_WIDTH + 2

KEYWORDS = frozenset("""
abstract action apply bit bool break const continue control default else entries enum error exit extern false for
header header_union if in inout int key list match_kind out package parser priority return select
state string struct switch table this transition true tuple type typedef varbit void
""".split())

_TOKEN = re.compile(r"""
 (?P<ws>\s+)
|(?P<int>(?:(?P<width>\d+)(?P<sign>[ws]))?(?P<digits>0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO][0-7_]+|0[dD][0-9_]+|[0-9][0-9_]*))
|(?P<ident>[A-Za-z_][A-Za-z_0-9]*)
|(?P<string>"(?:[^"\\]|\\.)*")
|(?P<op>&&&|\.\.|\+\+|\|\+\||\|-\||<<|<=|>=|==|!=|&&|\|\||[-+*/%&|^~!?:;,.(){}\[\]<>=@])
""", re.VERBOSE)


@dataclass(slots=True)
class Token:
    """One token: kind is 'int', 'ident', 'string', 'op', 'kw' or 'eof'."""

    kind: str
    text: str
    loc: Loc
    value: int = 0
    width: int | None = None
    signed: bool = False
    base: int = 10
    adjacent: bool = False  # no whitespace before this token (to tell `>>` from `> >`)


def parse_int(digits: str) -> int:
    """Value of a P4 integer literal's digits (0x, 0b, 0o, 0d prefixes, underscores)."""
    d = digits.replace("_", "").lower()
    bases = {"0x": 16, "0b": 2, "0o": 8, "0d": 10}
    if d[:2] in bases:
        return int(d[2:], bases[d[:2]])
    return int(d, 10)


def tokenize(lines: list[SourceLine], end: Loc | None = None) -> list[Token]:
    """Turn preprocessed lines into tokens, ending with an 'eof' token at `end` (the end of the main
    file, Preprocessor.end; else after the last line)."""
    toks: list[Token] = []
    for sl in lines:
        text, pos, prev_end = sl.text, 0, -1
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            loc = Loc(sl.file, sl.line, pos + 1)
            if not m:
                raise CompileError(loc, f"unexpected character {text[pos]!r}")
            if m.group("ws"):
                pos = m.end()
                continue
            adjacent = prev_end == pos
            s = m.group(0)
            if m.group("int") is not None:
                digits = m.group("digits").lower()
                base = {"0x": 16, "0b": 2, "0o": 8}.get(digits[:2], 10)
                width = m.group("width")
                if width and len(width) > len(str(MAX_WIDTH)):
                    raise CompileError(loc, f"integer width {width[:12]}{'...' if len(width) > 12 else ''}: expected "
                                            f"1..{MAX_WIDTH}")
                if len(digits) > MAX_LITERAL_CHARS:
                    raise CompileError(loc, f"integer literal of {len(digits)} characters: expected a value of at "
                                            f"most {MAX_WIDTH} bits")
                tok = Token("int", s, loc, parse_int(digits), base=base, adjacent=adjacent)
                if tok.value.bit_length() > MAX_WIDTH:
                    raise CompileError(loc, f"integer literal of {tok.value.bit_length()} bits: expected at most "
                                            f"{MAX_WIDTH}")
                if width:
                    tok.width = int(width)
                    tok.signed = m.group("sign") == "s"
            elif m.group("ident") is not None:
                tok = Token("kw" if s in KEYWORDS else "ident", s, loc, adjacent=adjacent)
            elif m.group("string") is not None:
                tok = Token("string", s[1:-1], loc, adjacent=adjacent)
            else:
                tok = Token("op", s, loc, adjacent=adjacent)
            toks.append(tok)
            pos = prev_end = m.end()
    if end is None:
        last = lines[-1] if lines else SourceLine("", "<empty>", 1)
        end = Loc(last.file, last.line, len(last.text) + 1)
    toks.append(Token("eof", "<end of file>", end))
    return toks
