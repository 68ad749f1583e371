"""p4sim compiler: preprocessor (includes, macros, conditionals) and lexer."""

from __future__ import annotations

from pathlib import Path

import pytest

from p4sim.compiler.errors import CompileError
from p4sim.compiler.lexer import parse_int, tokenize
from p4sim.compiler.preprocess import Preprocessor, SourceLine


def texts(pp: Preprocessor, path: Path) -> list[tuple[str, int]]:
    return [(sl.text.strip(), sl.line) for sl in pp.run(path) if sl.text.strip()]


def test_macros_conditionals_comments_and_positions(tmp_path: Path) -> None:
    (tmp_path / "inc.h").write_text("#define W 8\n")
    (tmp_path / "a.p4").write_text(
        '#include "inc.h"\n#if defined(W) && W > 4\nbit<W> x;\n#elif 1\nno;\n#else\nno;\n#endif\n'
        "#ifndef Y\n/* multi\n line */ const bit<W> k = 1; // c\n#endif\n")
    assert texts(Preprocessor(), tmp_path / "a.p4") == [("bit<8> x;", 3), ("const bit<8> k = 1;", 11)]


def test_nested_conditionals_elif_and_strings(tmp_path: Path) -> None:
    (tmp_path / "n.p4").write_text(
        "#define A 2\n#if A == 1\none\n#elif A == 2\n#ifdef B\nb\n#else\ntwo\n#endif\n#else\nother\n#endif\n"
        'log("A stays A");\n#undef A\n#ifdef A\nbad\n#endif\n')
    assert texts(Preprocessor(), tmp_path / "n.p4") == [("two", 8), ('log("A stays A");', 13)]


def test_function_like_macros(tmp_path: Path) -> None:
    (tmp_path / "f.p4").write_text(
        "#define K 0x10\n#define IS(sm, v) (sm.instance_type == (v))\n#define TWICE(x) ((x) + (x))\n"
        "#define NOARGS() 7\n#define SPACED (a)\n"
        "if (IS(standard_metadata, K)) { y = TWICE(IS(s, 2)); }\nz = NOARGS() + TWICE;\nw = SPACED;\n"
        "#if TWICE(K) == 0x20\nok\n#endif\n")
    assert [t for t, _ in texts(Preprocessor(), tmp_path / "f.p4")] == [
        "if ((standard_metadata.instance_type == (0x10))) { y = (((s.instance_type == (2))) + ((s.instance_type == (2)))); }",
        "z = 7 + TWICE;", "w = (a);", "ok"]


def test_define_option_include_dirs_and_guards(tmp_path: Path) -> None:
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "g.p4").write_text("#ifndef G_P4\n#define G_P4\nonce\n#endif\n")
    (tmp_path / "m.p4").write_text("#include <g.p4>\n#include \"g.p4\"\n#if SIZE == 4\nfour\n#endif\n")
    pp = Preprocessor([inc])
    pp.define("SIZE=4")
    assert [t for t, _ in texts(pp, tmp_path / "m.p4")] == ["once", "four"]
    with pytest.raises(ValueError, match="expected NAME"):
        pp.define("1BAD")


@pytest.mark.parametrize(("text", "message"), [
    ("#include <nothere.p4>\n", "x.p4:1:1: error: cannot find include file 'nothere.p4'"),
    ("#if 1\nx\n", "unterminated #if"),
    ("#endif\n", "#endif without #if"),
    ('#error "stop here"\n', '#error "stop here"'),
    ("#define F(x) x\nF(1, 2)\n", "macro 'F' takes 1 arguments, found 2"),
    ("/* open\n", "unterminated comment"),
    ("#frobnicate\n", "unknown preprocessor directive #frobnicate"),
])
def test_preprocessor_errors(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "x.p4").write_text(text)
    with pytest.raises(CompileError) as exc:
        Preprocessor().run(tmp_path / "x.p4")
    assert message in str(exc.value)


def test_error_in_include_names_the_included_file(tmp_path: Path) -> None:
    (tmp_path / "bad.p4").write_text("ok\n#if\n")
    (tmp_path / "top.p4").write_text('#include "bad.p4"\n')
    with pytest.raises(CompileError, match=r"bad.p4:2:1: error: bad #if expression"):
        Preprocessor().run(tmp_path / "top.p4")


def test_lexer_literals_and_shift_tokens() -> None:
    toks = tokenize([SourceLine("8w0x1F 16s5 0b101 1_000 x >> 2 &&& ..", "f.p4", 1)])
    ints = [(t.value, t.width, t.signed) for t in toks if t.kind == "int"]
    assert ints == [(31, 8, False), (5, 16, True), (5, None, False), (1000, None, False), (2, None, False)]
    gt = [t for t in toks if t.text == ">"]
    assert len(gt) == 2 and gt[1].adjacent
    assert [t.text for t in toks if t.kind == "op"][-2:] == ["&&&", ".."]
    assert (parse_int("0o17"), parse_int("0d12"), parse_int("0B11"), parse_int("0")) == (15, 12, 3, 0)


def test_lexer_reports_bad_characters() -> None:
    with pytest.raises(CompileError, match=r"f.p4:3:5: error: unexpected character '\$'"):
        tokenize([SourceLine("x = $;", "f.p4", 3)])
