"""One control plane for both targets: the TNA programs offer the v1model programs' P4Info interface
(tables, match fields, actions, parameters, widths), except where Tofino forces a difference (listed).

With bf-p4c installed, its P4Info of p4src/tna/*.p4 is compared for Tofino 1 and 2. Without it, the
same comparison runs on p4c's IR of the TNA programs (front and mid end, `--toJSON`): a weaker check
(no bf-p4c back end), but a compiler's reading of the real programs."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from emulation.target import Target
from scripts import tofino_check
from scripts.p4_contract import Interface, Table, compare, from_p4c_ir, from_p4info

P4SRC = Path(__file__).resolve().parents[2] / "p4src"
PROGRAMS = ("fabric", "ocs")
# Where Tofino forces a difference, and why (p4src/README.md, "v1model and TNA").
TOFINO_DIFFERENCES = {
    "table FabricIngress.acl.acl: match field ingress_port: optional on v1model, ternary on tna":
        "Tofino has no `optional` match kind; a full ternary mask is v1model's value match",
    **{f"action {ctl}.clock.set_schedule: parameters [('epoch_us', 48), ('cycle_scale', 64)] != "
       "[('epoch_us', 32), ('cycle_scale', 32)]":
       "Tofino's clock is 32 bits of 1.024 us units and its cycle a power of two (a mask): it cannot "
       "multiply by a run-time 64-bit scale (p4src/README.md, time-flow tables)"
       for ctl in ("OcsIngress", "FabricIngress")},
}
INCLUDE = tofino_check.tofino_include()
BF_P4C = tofino_check.find_bf_p4c()


@pytest.fixture(scope="module")
def v1model(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Interface]:
    out = tmp_path_factory.mktemp("v1model")
    target = Target.from_env()
    for p in PROGRAMS:
        target.compile(P4SRC / f"{p}.p4", out, P4SRC)
    return {p: from_p4info(out / f"{p}.p4info.txtpb") for p in PROGRAMS}


@pytest.mark.skipif(not INCLUDE.is_dir() or shutil.which("p4c-bm2-ss") is None,
                    reason=f"needs p4c-bm2-ss (make setup) and the Tofino architecture files at {INCLUDE}")
@pytest.mark.parametrize("generation", [1, 2], ids=["tna", "t2na"])
@pytest.mark.parametrize("program", PROGRAMS)
def test_front_end_interface_matches(v1model: dict[str, Interface], program: str, generation: int,
                                     tmp_path: Path) -> None:
    ir = tmp_path / "ir.json"
    argv = ["p4c-bm2-ss", f"-D__TARGET_TOFINO__={generation}", "-I", str(INCLUDE), "-I", str(P4SRC),
            str(P4SRC / "tna" / f"{program}.p4"), "-o", str(tmp_path / "x.json"), "--toJSON", str(ir)]
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    assert ir.exists(), f"p4c wrote no IR: {proc.stderr[-2000:]}"
    tna = from_p4c_ir(ir)
    assert compare(v1model[program], tna, TOFINO_DIFFERENCES) == []


@pytest.mark.skipif(BF_P4C is None, reason="bf-p4c is not installed (not on PATH, $BF_P4C or ../shared/toolchain/bin): "
                                         "the P4Info contract with the Tofino compiler cannot run here")
@pytest.mark.parametrize("target", tofino_check.TARGETS, ids=[t.arch for t in tofino_check.TARGETS])
@pytest.mark.parametrize("program", PROGRAMS)
def test_bf_p4c_p4info_matches(v1model: dict[str, Interface], program: str, target: tofino_check.Target,
                               tmp_path: Path) -> None:
    result = tofino_check.compile_bf_p4c(str(BF_P4C), P4SRC / "tna" / f"{program}.p4", target, tmp_path)
    assert result.ok, result.errors
    tna = from_p4info(tmp_path / f"{program}.{target.name}" / f"{program}.p4info.txtpb")
    assert compare(v1model[program], tna, TOFINO_DIFFERENCES) == []


def test_compare_names_every_kind_of_difference() -> None:
    a = Interface({"T.t": Table([("k", 16, "exact")], ["T.a"], "T.prof"), "T.u": Table([], ["T.a"])},
                  {"T.a": [("port", 9)]})
    b = Interface({"T.t": Table([("k", 32, "exact")], ["T.a", "T.b"], None)}, {"T.a": [("port", 16)]})
    assert compare(a, b) == [
        "table T.t: match fields [('k', 16, 'exact')] != [('k', 32, 'exact')]",
        "table T.t: actions ['T.a'] != ['T.a', 'T.b']",
        "table T.t: implementation T.prof != None",
        "action T.a: parameters [('port', 9)] != [('port', 16)]",
        "table T.u: only in v1model"]
    c = Interface({"T.t": Table([("k", 16, "ternary")], ["T.a"], "T.prof"), "T.u": Table([], ["T.a"])},
                  {"T.a": [("port", 9)]})
    assert compare(a, c) == ["table T.t: match field k: exact on v1model, ternary on tna"]
    assert compare(a, c, {"table T.t: match field k: exact on v1model, ternary on tna": "why"}) == []
