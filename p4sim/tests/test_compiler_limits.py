"""p4sim-compile at its limits: deep nesting, empty and binary input, sizes no target can hold. Each is
one located error (`FILE:LINE:COL: error: ...`); what is accepted compiles and loads in p4sim-switch."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from p4sim.compiler import cli
from p4sim.compiler.preprocess import MAX_EXPANSIONS, MAX_INCLUDES, MAX_MACRO_DEPTH
from p4sim.compiler.syntax import MAX_NESTING
from p4sim.switch import heap
from p4sim.switch.device import Device
from p4sim.tests.corpus import BODY_LINE, build, error_of, source

DEEP = {
    "parentheses": lambda n: "m.x = " + "(" * n + "m.x" + ")" * n + ";",
    "an operator chain": lambda n: "m.x = m.x" + " + 8w1" * n + ";",
    "prefix operators": lambda n: "m.x = " + "~" * n + "m.x;",
    "conditional operators": lambda n: "m.x = " + "m.f ? 8w1 : " * n + "8w2;",
    "casts": lambda n: "m.x = " + "(bit<8>)" * n + "m.x;",
    "ifs": lambda n: "if (m.f) {" * n + "m.x = 1;" + "}" * n,
    "blocks": lambda n: "{" * n + "m.x = 1;" + "}" * n,
}
NESTED_TOO_DEEP = f"nested more than {MAX_NESTING} levels deep"


@pytest.mark.parametrize("what", DEEP)
def test_nesting_up_to_the_limit_compiles_and_loads(tmp_path: Path, what: str) -> None:
    res = build(tmp_path, DEEP[what](MAX_NESTING - 8))
    Device().load_pipeline(json.dumps(res.json))  # the switch's code generator takes it too


@pytest.mark.parametrize("what", DEEP)
@pytest.mark.parametrize("depth", [MAX_NESTING + 1, 1000, 100_000])
def test_deeper_nesting_is_a_located_error(tmp_path: Path, what: str, depth: int) -> None:
    msg = error_of(tmp_path, DEEP[what](depth))
    assert re.match(rf"{re.escape(str(tmp_path / 'prog.p4'))}:{BODY_LINE}:\d+: error: .*{NESTED_TOO_DEEP}", msg), msg


def _cli(tmp_path: Path, data: bytes, capsys: pytest.CaptureFixture[str]) -> str:
    prog, out = tmp_path / "in.p4", tmp_path / "out.json"
    prog.write_bytes(data)
    assert cli.main([str(prog), "-o", str(out), "--p4runtime-files", str(tmp_path / "out.txtpb")]) == 1
    assert not out.exists()
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1, lines
    return lines[0].replace(str(prog), "in.p4")


def test_empty_and_binary_inputs_are_located_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _cli(tmp_path, b"", capsys) == "in.p4:1:1: error: no package instance `main` (e.g. V1Switch(...) main;)"
    assert _cli(tmp_path, b"\n\n", capsys).startswith("in.p4:3:1: error: no package instance `main`")
    # the first byte that is not UTF-8, by line and column
    assert _cli(tmp_path, bytes([0x7F, 0x45, 0x4C, 0x46, 0x02, 0x01, 0xBC, 0x00]), capsys) == (
        "in.p4:1:7: error: byte 0xbc is not UTF-8 text (a P4 program is UTF-8 text; is this a binary file?)")
    assert _cli(tmp_path, "const bit<8> X = 1;\n// é\n\xff".encode("latin-1"), capsys).startswith(
        "in.p4:2:4: error: byte 0xe9 is not UTF-8 text")
    assert _cli(tmp_path, b"const bit<8> X = 1;\x00\n", capsys) == "in.p4:1:20: error: unexpected character '\\x00'"
    # an included binary file: located in it
    (tmp_path / "blob.bin").write_bytes(b"\x89PNG\r\n")
    msg = _cli(tmp_path, source('#include "blob.bin"').encode(), capsys)
    assert msg.startswith(f"{tmp_path / 'blob.bin'}:1:1: error: byte 0x89 is not UTF-8 text"), msg


@pytest.mark.parametrize(("decl", "message"), [
    ("counter(4294967296000, CounterType.packets) c;", "c: size 4294967296000 is not in 0..4294967295 "
                                                       "(counter declares its size bit<32>)"),
    ("counter(-1, CounterType.packets) c;", "c: size -1 is not in 0..4294967295"),
    ("meter(32w0 ++ 32w0 ++ 32w1, MeterType.packets) mt;", "mt: size has type bit<96>, expected bit<32>"),
    ("counter(8w5, CounterType.packets) c;", "c: size has type bit<8>, expected bit<32>"),
    ("meter(1 << 40, MeterType.bytes) mt;", "mt: size 1099511627776 is not in 0..4294967295"),
    ("register<bit<8>>(4294967296) r;", "r: size 4294967296 is not in 0..4294967295 (register declares its size bit<32>)"),
    ("action_profile(4294967296) ap;", "ap: size 4294967296 is not in 0..4294967295"),
    ("action_selector(HashAlgorithm.crc16, 4294967296, 14) sel;", "sel: size 4294967296 is not in 0..4294967295"),
    ("action_selector(HashAlgorithm.crc16, 64, 4294967296) sel;", "sel: outputWidth 4294967296 is not in"),
    ("action a() {} table t { actions = { a; } size = 2147483648; }", "table t: size 2147483648 is not in "
                                                                     "0..2147483647 (p4c holds a table size in an int)"),
])
def test_sizes_no_target_can_hold_are_located_errors(tmp_path: Path, decl: str, message: str) -> None:
    msg = error_of(tmp_path, "t.apply();" if "table t" in decl else "", locals_=decl)
    assert re.match(rf"{re.escape(str(tmp_path / 'prog.p4'))}:{BODY_LINE - 2}:\d+: error: ", msg), msg
    assert message in msg


def test_a_size_that_fits_its_type_but_not_the_machine_is_left_to_the_switch(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # counter(4294967295, ...) compiles, as with p4c (it fits bit<32>); whether a switch can hold it
    # depends on its memory (bmv2 here: std::bad_alloc), so p4sim-switch checks that when it loads
    doc = build(tmp_path, "c.count(32w1);", locals_="counter(512, CounterType.packets) c;").json
    doc["counter_arrays"][0]["size"] = 4294967295
    monkeypatch.setattr(heap, "available_bytes", lambda: 16 << 30)
    with pytest.raises(ValueError, match=r"counter I\.c: size 4294967295 needs 64\.0 GiB .* than the 16\.0 GiB"):
        Device().load_pipeline(json.dumps(doc))


# -- hostile input: #if, shifts, literals, macro and include growth (each once hung, took gigabytes or
# was an internal error) ------------------------------------------------------------------------------

TOP_LINE = source(top="@TOP").split("\n").index("@TOP") + 1

@pytest.mark.parametrize(("cond", "value"), [
    ("1 + 2 * 3 == 7", True), ("(1 << 63) < 0", True), ("-7 / 2 == -3 && -7 % 2 == -1", True),
    ("0 && 1 / 0", False), ("1 || 1 / 0", True), ("1 ? 2 : 1 / 0", True), ("0x10 == 16 && 010 == 8", True),
    ("!defined(NOPE) && UNDEFINED == 0", True), ("~0 == -1", True), ("10UL > 9", True),
])
def test_if_is_evaluated_as_c_does(tmp_path: Path, cond: str, value: bool) -> None:
    top = f"#if {cond}\nconst bit<8> K = 1;\n#else\nconst bit<8> K = 2;\n#endif\n"
    res = build(tmp_path, "m.x = K;", top=top)
    assert ("0x01" if value else "0x02") in json.dumps(res.json), cond


@pytest.mark.parametrize(("cond", "why"), [
    ("9**9**9", "expected a number, found '*'"), ("1 / 0", "division by zero"), ("1 << 64", "shift by 64"),
    ("1 << -1", "shift by -1"), ("99999999999999999999", "does not fit in 64 bits"),
    ("(" * 100 + "1" + ")" * 100, "nested more than 64 levels deep"), ("1 and 2", "unexpected '0'"),
    ("2 ? 3", "expected ':'"), ("08", "unexpected '08'"),
])
def test_bad_if_expressions_are_located_errors(tmp_path: Path, cond: str, why: str) -> None:
    msg = error_of(tmp_path, top=f"#if {cond}\n#endif\n")
    assert re.match(rf"{re.escape(str(tmp_path / 'prog.p4'))}:{TOP_LINE}:1: error: bad #if expression .*: ", msg), msg
    assert why in msg, msg


@pytest.mark.parametrize(("body", "message"), [
    ("m.x = (bit<8>)(1 << 2000000000);", "1-bit value << 2000000000: expected a result of at most 4096 bits"),
    ("m.x = (bit<8>)(1 << 100000000000);", "expected a result of at most 4096 bits"),
    ("m.x = " + "9" * 2_000_000 + ";", "integer literal of 2000000 characters: expected a value of at most 2048"),
    ("m.x = (bit<8>)(" + "1" * 700 + ");", "integer literal of 2323 bits: expected at most 2048"),
    ("m.x = (bit<8>)(100000000000w1);", "integer width 100000000000: expected 1..2048"),
    ("m.x = (bit<8>)(2049w1);", "integer width 2049: expected 1..2048"),
])
def test_huge_constants_are_located_errors(tmp_path: Path, body: str, message: str) -> None:
    msg = error_of(tmp_path, body)
    assert re.match(rf"{re.escape(str(tmp_path / 'prog.p4'))}:{BODY_LINE}:\d+: error: ", msg), msg
    assert message in msg, msg


def test_shifts_past_the_width_fold_to_zero_without_making_the_bits(tmp_path: Path) -> None:
    """`8w1 << 100000000000` once made the 10^11 bits (MemoryError); past the width it is 0, as 8w1 << 8."""
    def actions(body: str) -> str:
        doc = build(tmp_path, body).json
        return re.sub(r'"source_info": \{[^}]*\}', "", json.dumps(doc["actions"]))

    assert actions("m.x = 8w1 << 100000000000; m.y = 16w128 >> 100000000000;") == \
        actions("m.x = 8w1 << 8; m.y = 16w128 >> 16;")


def test_macro_doubling_is_a_located_error(tmp_path: Path) -> None:
    """A macro defined as two of the one before, 20 deep: 2^20 expansions (7.6 s and 238 MB once)."""
    defs = "#define A0 x\n" + "".join(f"#define A{i} A{i - 1} A{i - 1}\n" for i in range(1, 21))
    msg = error_of(tmp_path, top=defs + "const bit<8> K = A20;\n")
    assert re.match(rf"{re.escape(str(tmp_path / 'prog.p4'))}:{TOP_LINE + 21}:1: error: more than {MAX_EXPANSIONS} macro "
                    "expansions in one line", msg), msg
    chain = "".join(f"#define B{i} B{i + 1}\n" for i in range(300)) + "#define B300 1\n"
    assert f"macros nested more than {MAX_MACRO_DEPTH} deep" in error_of(tmp_path, top=chain + "const bit<8> K = B0;\n")


def test_include_fan_out_is_a_located_error(tmp_path: Path) -> None:
    """Each file includes the next twice, 20 deep: 2^20 includes (25.6 s at depth 18 once)."""
    for i in range(20):
        (tmp_path / f"f{i}.p4").write_text(f'#include "f{i + 1}.p4"\n#include "f{i + 1}.p4"\n')
    (tmp_path / "f20.p4").write_text("\n")
    msg = error_of(tmp_path, top='#include "f0.p4"\n')
    assert f"error: more than {MAX_INCLUDES} files included" in msg, msg
    assert re.match(rf"{re.escape(str(tmp_path))}/f\d+\.p4:[12]:1: error: ", msg), msg
