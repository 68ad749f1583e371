"""p4sim-compile at its limits: deep nesting, empty and binary input, sizes no target can hold. Each is
one located error (`FILE:LINE:COL: error: ...`); what is accepted compiles and loads in p4sim-switch."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from p4sim.compiler import cli
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
