"""Golden outputs (bmv2 JSON + P4Info) of the project's programs and the compiler corpus.

Regenerate after an intended change: `.venv/bin/python -m p4sim.tests.golden --update`.
"""

from __future__ import annotations

import json
from pathlib import Path

from p4sim.compiler.compile import compile_file
from p4sim.compiler.p4info import to_text

ROOT = Path(__file__).resolve().parents[3]
HERE = Path(__file__).resolve().parent
# name -> (program relative to the repository root, include dirs)
PROGRAMS = {
    "fabric": ("p4src/fabric.p4", ["p4src"]),
    "ocs": ("p4src/ocs.p4", ["p4src"]),
    "l3_basic": ("p4sim/tests/corpus/l3_basic.p4", []),
    "features": ("p4sim/tests/corpus/features.p4", []),
    "externs": ("p4sim/tests/corpus/externs.p4", []),
    "parser_errors": ("p4sim/tests/corpus/parser_errors.p4", []),
    "special_ops": ("p4sim/tests/corpus/special_ops.p4", []),
    "nested": ("p4sim/tests/corpus/nested.p4", []),
    "parsing": ("p4sim/tests/corpus/parsing.p4", []),
    "json_forms": ("p4sim/tests/corpus/json_forms.p4", []),
    "lang": ("p4sim/tests/corpus/lang.p4", []),
    "apply_loop": ("p4sim/tests/corpus/apply_loop.p4", []),
    "stacks": ("p4sim/tests/corpus/stacks.p4", []),
    "keys": ("p4sim/tests/corpus/keys.p4", []),
}


def render(name: str) -> tuple[str, str]:
    """(bmv2 JSON text, P4Info text) of a golden program, with paths relative to the repository."""
    prog, incs = PROGRAMS[name]
    res = compile_file(ROOT / prog, [str(ROOT / i) for i in incs])
    text = json.dumps(res.json, indent=2, sort_keys=False) + "\n"
    return text.replace(str(ROOT) + "/", ""), to_text(res.p4info)


def paths(name: str) -> tuple[Path, Path]:
    """The golden files of a program."""
    return HERE / f"{name}.json", HERE / f"{name}.p4info.txtpb"


def update() -> list[str]:
    """Rewrite every golden file; returns the names written."""
    for name in PROGRAMS:
        j, p = render(name)
        jp, pp = paths(name)
        jp.write_text(j)
        pp.write_text(p)
    return list(PROGRAMS)
