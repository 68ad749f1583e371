"""p4sim-compile's P4Info is p4c's, whole: every program of the corpus and the project's programs
compiled by both, and every field of both P4Info files compared (objects matched by id, so only their
order may differ). A difference this test knows of is listed in KNOWN with where it is and why it is
left; any other difference fails, and so does a listed one that is gone (fixed: take it out).

Needs p4c-bm2-ss (skipped with the reason without it). Run:
.venv/bin/pytest p4sim/tests/test_compiler_p4info_parity.py
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format, text_format
from p4.config.v1 import p4info_pb2

from p4sim.compiler.compile import compile_file

ROOT = Path(__file__).resolve().parents[2]
P4C = shutil.which("p4c-bm2-ss")
# fabric.p4 and ocs.p4 are compared by test_compiler_stf.py, with the STF corpus
# programs p4c refuses, so there is no P4Info to compare: name -> why
P4C_REFUSES = {"special_ops": "v1model's resubmit, recirculate and clone3 with field lists, which p4c 1.2.5 removed"}
PROGRAMS = [p for p in sorted((ROOT / "p4sim" / "tests" / "corpus").glob("*.p4")) if p.stem not in P4C_REFUSES] + [
    ROOT / "p4sim" / "switch" / "p4runtime" / "testdata" / "rt_basic.p4"]
# program -> {path of the difference: why it is left}
KNOWN: dict[str, dict[str, str]] = {
    "lang": {"actions[Ing.leave]": "an action only called from another action's body: p4c inlines it and leaves it out"},
}


def _build(source: Path, tmp: Path) -> tuple[Any, Any]:
    include = [str(source.parent)] if source.parent.name == "p4src" else []
    out = tmp / "p4c.p4info.txtpb"
    cmd = [P4C, str(source), "-o", str(tmp / "p4c.json"), "--p4runtime-files", str(out)]
    res = subprocess.run(cmd + (["-I", include[0]] if include else []), capture_output=True, text=True, check=False)
    assert res.returncode == 0, f"p4c refuses {source.name}: {res.stderr.strip().splitlines()[-1:]}"
    theirs = text_format.Parse(out.read_text(), p4info_pb2.P4Info())
    return theirs, compile_file(source, include_dirs=include).p4info


def _key(d: dict[str, Any]) -> str | None:
    """What matches two elements of a repeated field: a preamble's name, a field's name, an id."""
    if "preamble" in d:
        return d["preamble"].get("name")
    return d.get("name") or (str(d["id"]) if "id" in d else None)


def diff(a: Any, b: Any, path: str = "") -> list[str]:
    """Paths where two P4Info messages (as dicts) differ; lists matched by _key, else by position."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b)):
            sub = f"{path}.{k}" if path else k
            out += [sub] if (k in a) != (k in b) else diff(a[k], b[k], sub)
        return out
    if isinstance(a, list) and isinstance(b, list) and all(isinstance(x, dict) for x in a + b):
        ka = {_key(x) or str(i): x for i, x in enumerate(a)}
        kb = {_key(x) or str(i): x for i, x in enumerate(b)}
        out = []
        for k in sorted(set(ka) | set(kb)):
            sub = f"{path}[{k}]"
            out += [sub] if (k in ka) != (k in kb) else diff(ka[k], kb[k], sub)
        return out
    return [] if a == b else [path]


def _top(paths: list[str]) -> set[str]:
    """Each difference at the object it is in when the whole object differs (an id of its preamble)."""
    return {p.rsplit(".preamble", 1)[0] if ".preamble" in p else p for p in paths}


@pytest.mark.skipif(P4C is None, reason="p4c-bm2-ss is not installed (the reference toolchain has it)")
@pytest.mark.parametrize("source", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_p4info_is_p4cs(source: Path, tmp_path: Path) -> None:
    theirs, ours = _build(source, tmp_path)
    found = _top(diff(json_format.MessageToDict(theirs), json_format.MessageToDict(ours)))
    known = KNOWN.get(source.stem, {})
    new = sorted(p for p in found if not any(p == k or p.startswith(k + ".") or p.startswith(k + "[") for k in known))
    gone = sorted(k for k in known if not any(p == k or p.startswith(k + ".") or p.startswith(k + "[") for p in found))
    assert not new, f"{source.stem}: P4Info differs from p4c's at {new}"
    assert not gone, f"{source.stem}: no longer differs at {gone}: take it out of KNOWN"


def test_noaction_as_p4c_lists_it(tmp_path: Path) -> None:
    """A table without a default action gets NoAction, default-only, and every table its initial default
    (the case a program outside the project's tests found)."""
    src = tmp_path / "na.p4"
    src.write_text("""#include <core.p4>
#include <v1model.p4>
header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
struct headers { eth_t eth; }
struct meta_t { }
parser P(packet_in pkt, out headers h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.eth); transition accept; }
}
control VC(inout headers h, inout meta_t m) { apply { } }
control I(inout headers h, inout meta_t m, inout standard_metadata_t sm) {
    action fwd(bit<9> port) { sm.egress_spec = port; }
    table t1 { key = { h.eth.dst: exact; } actions = { fwd; } }
    table t2 { key = { h.eth.src: exact; } actions = { fwd; NoAction; } default_action = NoAction(); }
    table t3 { key = { h.eth.type: exact; } actions = { fwd; } default_action = fwd(7); }
    apply { t1.apply(); t2.apply(); t3.apply(); }
}
control E(inout headers h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers h) { apply { pkt.emit(h.eth); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
""")
    info = compile_file(src).p4info
    noaction = next(a.preamble.id for a in info.actions if a.preamble.name == "NoAction")
    t1 = next(t for t in info.tables if t.preamble.name == "I.t1")
    assert [(r.id, p4info_pb2.ActionRef.Scope.Name(r.scope), list(r.annotations)) for r in t1.action_refs][-1] == \
        (noaction, "DEFAULT_ONLY", ["@defaultonly"])
    assert t1.initial_default_action.action_id == noaction
    t3 = next(t for t in info.tables if t.preamble.name == "I.t3")
    assert [(a.param_id, a.value) for a in t3.initial_default_action.arguments] == [(1, b"\x00\x07")]
    if P4C is not None:
        theirs, _ = _build(src, tmp_path)
        assert not diff(json_format.MessageToDict(theirs), json_format.MessageToDict(info))
