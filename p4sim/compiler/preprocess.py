"""The C-style preprocessor subset P4 programs use: includes, object-like macros, conditionals.

The output keeps, for every line, the file and line it came from, so that the lexer reports
errors at the right place inside included files. `#if` is evaluated as C does (cexpr.py). What a
hostile program could make grow without end is bounded, each a located error: includes nested
(_MAX_DEPTH) and included in all (MAX_INCLUDES: a file that includes another twice, twenty deep,
is a million includes), macro expansions of one line (MAX_EXPANSIONS, MAX_LINE_CHARS: a macro
defined as two of the one before, twenty deep, is a million), macros nested (MAX_MACRO_DEPTH), and
the preprocessed text in all (MAX_OUTPUT_CHARS).
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from pathlib import Path

from p4sim.compiler.cexpr import evaluate
from p4sim.compiler.errors import CompileError, Loc

log = logging.getLogger(__name__)

BUILTIN_INCLUDE = Path(__file__).resolve().parent.parent / "p4include"
_IDENT = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")
_DIRECTIVE = re.compile(r"\s*#\s*([a-z_]+)\s*(.*)$")
_IDENT_WORD = re.compile(r"\b[A-Za-z_][A-Za-z_0-9]*")
_SCAN = re.compile(r'"(?:[^"\\]|\\.)*"|\b[A-Za-z_][A-Za-z_0-9]*')
_MAX_DEPTH = 50
MAX_INCLUDES = 4096  # files read in one run (fabric.p4: 60)
MAX_EXPANSIONS = 65_536  # macro expansions in one line
MAX_MACRO_DEPTH = 200  # a macro whose body uses a macro whose body uses ...
MAX_LINE_CHARS = 1 << 20  # one line after expansion
MAX_OUTPUT_CHARS = 64 << 20  # the whole preprocessed program


@dataclass(slots=True)
class SourceLine:
    """One logical line of preprocessed text and where it came from."""

    text: str
    file: str
    line: int


@dataclass(slots=True)
class _Cond:
    active: bool       # this branch is being emitted
    taken: bool        # some branch of this #if chain was already taken
    parent_active: bool
    seen_else: bool = False


@dataclass(slots=True)
class Preprocessor:
    """Expands includes, macros and conditionals into a list of SourceLine."""

    include_dirs: list[Path] = field(default_factory=list)
    macros: dict[str, str] = field(default_factory=dict)
    functions: dict[str, tuple[list[str], str]] = field(default_factory=dict)  # function-like macros
    out: list[SourceLine] = field(default_factory=list)
    end: Loc = Loc("<empty>", 1, 1)  # just after the last character of the main file (set by run)
    _once: set[Path] = field(default_factory=set)
    _includes: int = 0
    _chars: int = 0

    def define(self, spec: str) -> None:
        """Define a macro from a `-D NAME[=VALUE]` argument."""
        name, _, value = spec.partition("=")
        if not _IDENT.fullmatch(name):
            raise ValueError(f"bad -D {spec!r}: expected NAME[=VALUE]")
        self.macros[name] = value if "=" in spec else "1"

    def run(self, path: Path) -> list[SourceLine]:
        """Preprocess the program at path and return its lines."""
        self._file(path, str(path), 0)
        return self.out

    def _find(self, name: str, angled: bool, here: Path, loc: Loc) -> Path:
        dirs = ([] if angled else [here.parent]) + list(self.include_dirs) + [BUILTIN_INCLUDE]
        for d in dirs:
            cand = d / name
            if cand.is_file():
                return cand
        raise CompileError(loc, f"cannot find include file {name!r}")

    def _file(self, path: Path, shown: str, depth: int) -> None:
        if depth > _MAX_DEPTH:
            raise CompileError(Loc(shown, 1, 1), "includes nested too deeply")
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise CompileError(Loc(shown, 1, 1), f"cannot read {path}: {exc.strerror}") from None
        text = _decode(data, shown)
        if depth == 0:
            last = text.rpartition("\n")[2]
            self.end = Loc(shown, text.count("\n") + 1, len(last) + 1)
        lines = _logical_lines(_strip_comments(text, shown))
        stack: list[_Cond] = []
        for lineno, raw in lines:
            loc = Loc(shown, lineno, 1)
            active = not stack or stack[-1].active
            m = _DIRECTIVE.match(raw)
            if m:
                self._directive(m.group(1), m.group(2).strip(), stack, active, path, loc, depth)
                continue
            if active:
                text = self._expand(raw, loc, frozenset(), [MAX_EXPANSIONS])
                self._chars += len(text)
                if self._chars > MAX_OUTPUT_CHARS:
                    raise CompileError(loc, f"the preprocessed program is longer than {MAX_OUTPUT_CHARS} characters")
                self.out.append(SourceLine(text, shown, lineno))
        if stack:
            raise CompileError(Loc(shown, len(lines), 1), "unterminated #if")

    def _directive(self, name: str, arg: str, stack: list[_Cond], active: bool,
                   path: Path, loc: Loc, depth: int) -> None:
        if name in ("if", "ifdef", "ifndef"):
            if not active:
                stack.append(_Cond(False, True, False))
                return
            if name == "if":
                val = self._eval(arg, loc)
            else:
                if not _IDENT.fullmatch(arg):
                    raise CompileError(loc, f"#{name} expects a macro name, got {arg!r}")
                val = (arg in self.macros) == (name == "ifdef")
            stack.append(_Cond(val, val, True))
        elif name in ("elif", "else"):
            if not stack or stack[-1].seen_else:
                raise CompileError(loc, f"#{name} without #if")
            top = stack[-1]
            if name == "else":
                top.seen_else = True
                top.active = top.parent_active and not top.taken
            else:
                top.active = top.parent_active and not top.taken and self._eval(arg, loc)
            top.taken = top.taken or top.active
        elif name == "endif":
            if not stack:
                raise CompileError(loc, "#endif without #if")
            stack.pop()
        elif not active:
            return
        elif name == "include":
            m = re.fullmatch(r'<([^>]+)>|"([^"]+)"', arg)
            if not m:
                raise CompileError(loc, f"#include expects <file> or \"file\", got {arg!r}")
            target = self._find(m.group(1) or m.group(2), m.group(1) is not None, path, loc)
            real = target.resolve()
            if real in self._once:
                return
            if m.group(1) and target.parent == BUILTIN_INCLUDE:
                self._once.add(real)
            shown = m.group(1) or m.group(2)
            if not m.group(1):
                shown = str(target)
            self._includes += 1
            if self._includes > MAX_INCLUDES:
                raise CompileError(loc, f"more than {MAX_INCLUDES} files included (the same ones again and "
                                        "again? an include guard stops that)")
            self._file(target, shown, depth + 1)
        elif name == "define":
            m = re.match(r"([A-Za-z_][A-Za-z_0-9]*)(\(([^)]*)\))?\s*(.*)$", arg)
            if not m:
                raise CompileError(loc, f"#define expects a macro name, got {arg!r}")
            self.macros.pop(m.group(1), None)
            self.functions.pop(m.group(1), None)
            if m.group(2) is not None:  # `#define F(a, b) body`: the '(' follows the name directly
                params = [x.strip() for x in m.group(3).split(",") if x.strip()]
                if any(not _IDENT.fullmatch(x) for x in params):
                    raise CompileError(loc, f"bad parameters of macro {m.group(1)!r}: {m.group(3)!r}")
                self.functions[m.group(1)] = (params, m.group(4).strip())
            else:
                self.macros[m.group(1)] = m.group(4).strip()
        elif name == "undef":
            self.macros.pop(arg, None)
            self.functions.pop(arg, None)
        elif name == "error":
            raise CompileError(loc, f"#error {arg}")
        elif name in ("warning", "pragma", "line"):
            log.debug("%s: ignoring #%s %s", loc, name, arg)
        else:
            raise CompileError(loc, f"unknown preprocessor directive #{name}")

    def _expand(self, text: str, loc: Loc, hidden: frozenset[str], budget: list[int]) -> str:
        """Expand macros in text (not inside strings); a macro is not expanded inside itself. `budget`:
        the expansions the line has left (shared by every level of it)."""
        if not self.macros and not self.functions:
            return text
        if len(hidden) > MAX_MACRO_DEPTH:
            raise CompileError(loc, f"macros nested more than {MAX_MACRO_DEPTH} deep")
        out: list[str] = []
        size = pos = 0
        for m in _SCAN.finditer(text):
            if m.start() < pos:  # inside the arguments of a macro call already expanded
                continue
            out.append(text[pos:m.start()])
            pos = m.end()
            word = m.group(0)
            if word.startswith('"') or word in hidden or (word not in self.macros and word not in self.functions):
                out.append(word)
                continue
            budget[0] -= 1
            if budget[0] < 0:
                raise CompileError(loc, f"more than {MAX_EXPANSIONS} macro expansions in one line")
            if word in self.macros:
                out.append(self._expand(self.macros[word], loc, hidden | {word}, budget))
            else:
                call = _macro_args(text, m.end())
                if call is None:  # a function-like macro name without arguments stays as it is
                    out.append(word)
                    continue
                args, pos = call
                params, body = self.functions[word]
                if len(args) != len(params) and not (not params and args == [""]):
                    raise CompileError(loc, f"macro {word!r} takes {len(params)} arguments, found {len(args)}")
                values = {p: self._expand(a.strip(), loc, hidden, budget) for p, a in zip(params, args, strict=False)}
                body = _IDENT_WORD.sub(lambda x, v=values: v.get(x.group(0), x.group(0)), body)
                out.append(self._expand(body, loc, hidden | {word}, budget))
            size += len(out[-1])
            if size > MAX_LINE_CHARS:
                raise CompileError(loc, f"a line longer than {MAX_LINE_CHARS} characters once its macros are expanded")
        out.append(text[pos:])
        return "".join(out)

    def _eval(self, expr: str, loc: Loc) -> bool:
        """A `#if`/`#elif` condition: `defined`, macros, then undefined identifiers as 0, evaluated as C does."""
        text = re.sub(r"defined\s*\(\s*([A-Za-z_]\w*)\s*\)|defined\s+([A-Za-z_]\w*)",
                      lambda m: "1" if (m.group(1) or m.group(2)) in self.macros else "0", expr)
        text = _IDENT_WORD.sub("0", self._expand(text, loc, frozenset(), [MAX_EXPANSIONS]))  # 0, as in C
        try:
            return bool(evaluate(text))
        except ValueError as exc:
            raise CompileError(loc, f"bad #if expression {expr.strip()[:80]!r}: {exc}") from None


def _macro_args(text: str, pos: int) -> tuple[list[str], int] | None:
    """The arguments of a macro call whose '(' is at or after pos (spaces skipped), and the end."""
    i = pos
    while i < len(text) and text[i] in " \t":
        i += 1
    if i >= len(text) or text[i] != "(":
        return None
    depth, args, cur = 0, [], []
    for j in range(i, len(text)):
        c = text[j]
        if c == "(":
            depth += 1
            if depth == 1:
                continue
        elif c == ")":
            depth -= 1
            if depth == 0:
                args.append("".join(cur))
                return args, j + 1
        elif c == "," and depth == 1:
            args.append("".join(cur))
            cur = []
            continue
        cur.append(c)
    return None


def _decode(data: bytes, shown: str) -> str:
    """The text of a source file; a located error at the first byte that is not UTF-8 (a binary file)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        start = data.rfind(b"\n", 0, exc.start) + 1
        line = data.count(b"\n", 0, exc.start) + 1
        col = len(data[start:exc.start].decode("utf-8")) + 1
        raise CompileError(Loc(shown, line, col), f"byte 0x{data[exc.start]:02x} is not UTF-8 text "
                           "(a P4 program is UTF-8 text; is this a binary file?)") from None


def _strip_comments(text: str, shown: str) -> str:
    """Replace comments by spaces, keeping newlines so line numbers stay right."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                line = text.count("\n", 0, i) + 1
                raise CompileError(Loc(shown, line, 1), "unterminated comment")
            out.append("\n" * text.count("\n", i, j) + " ")
            i = j + 2
        else:
            j = i
            while j < n and text[j] not in '"/':
                j += 1
            if j == i:
                j += 1
            out.append(text[i:j])
            i = j
    return "".join(out)


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """Split into (line number, text), joining backslash-continued lines."""
    res: list[tuple[int, str]] = []
    buf, start = "", 0
    for i, line in enumerate(text.split("\n"), 1):
        if not buf:
            start = i
        if line.endswith("\\"):
            buf += line[:-1] + " "
            continue
        res.append((start, buf + line))
        buf = ""
    if buf:
        res.append((start, buf))
    return res
