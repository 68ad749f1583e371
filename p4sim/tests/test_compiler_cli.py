"""p4sim-compile: the p4c-bm2-ss command shape, exit codes and atomic outputs."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from p4sim.compiler import cli
from p4sim.tests.corpus import BODY_LINE, CORPUS, source


def test_cli_writes_both_files_or_none(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out, info = tmp_path / "o.json", tmp_path / "o.p4info.txtpb"
    assert cli.main([str(CORPUS / "l3_basic.p4"), "-o", str(out), "--p4runtime-files", str(info)]) == 0
    assert json.loads(out.read_text())["pipelines"] and 'name: "MyIngress.ipv4_lpm"' in info.read_text()
    bad = tmp_path / "bad.p4"
    bad.write_text(source("m.x = q;"))
    out2, info2 = tmp_path / "b.json", tmp_path / "b.txtpb"
    assert cli.main([str(bad), "-o", str(out2), "--p4runtime-files", str(info2)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"{bad}:{BODY_LINE}:") and ": error: q: undefined name" in err
    assert not out2.exists() and not info2.exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".p4sim-")] == []


def test_cli_include_dirs_and_defines(tmp_path: Path) -> None:
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "body.p4").write_text("m.x = VALUE;\n")
    prog = tmp_path / "p.p4"
    prog.write_text(source('#include "body.p4"'))
    out = tmp_path / "p.json"
    assert cli.main([str(prog), "-o", str(out), "-I", str(inc), "-D", "VALUE=7"]) == 0
    prims = [p for a in json.loads(out.read_text())["actions"] for p in a["primitives"]]
    assert prims[0]["parameters"][1] == {"type": "hexstr", "value": "0x07"}


def test_cli_missing_program(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main([str(tmp_path / "none.p4"), "-o", str(tmp_path / "o.json")]) == 1
    assert "error: cannot read" in capsys.readouterr().err


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to make a device node")
def test_cli_writes_into_a_device_and_never_replaces_it(tmp_path: Path) -> None:
    """`-o /dev/null` as with p4c: the device stays a device (renaming over it once turned this
    machine's /dev/null into a regular file). Tested on a null device of its own in tmp_path."""
    null = tmp_path / "null"
    os.mknod(null, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    assert cli.main([str(CORPUS / "l3_basic.p4"), "-o", str(null), "--p4runtime-files", str(null)]) == 0
    assert stat.S_ISCHR(null.stat().st_mode)
    assert [p.name for p in tmp_path.iterdir()] == ["null"]
