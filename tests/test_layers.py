"""The import graph has no upward edge: each layer imports only itself and the layers below it.

    p4sim            the embedded target: imports no other package of the project
    topo             the topology model, generators, validation, the circuit-spec grammar
    p4rt             P4Runtime, program-agnostic: values, schema, entities, client, state, diff, reconcile
    fabric           the contract with p4src/ (names, modes, constants), what entries mean, the walk
    tablegen         table entries from a topology, the checker
    control          the controller, OCS drivers, procedures
    emulation        Mininet, switch processes, the P4 target (and topo.__main__)
    scripts          experiments, reports, benchmarks
    view             the live view and replay (web server, page), over a running emulation or a run's files
    hitless          the `hitless` command and the Python API (Testbed), over all of the above

Tests are above everything and are not checked. Run: .venv/bin/pytest tests/test_layers.py
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ["p4sim", "topo", "p4rt", "fabric", "tablegen", "control", "emulation", "scripts", "view", "hitless"]
APP = ("emulation", "emulation.p4switch", "topo.__main__")  # the Mininet application inside topo/


def layer_of(module: str) -> int | None:
    """The layer index of a module of the project (None: not the project's)."""
    if module.startswith(APP):
        return LAYERS.index("emulation")
    top = module.split(".")[0]
    return LAYERS.index(top) if top in LAYERS else None


def project_modules() -> dict[str, Path]:
    """Every non-test module of the layered packages, by dotted name."""
    out = {}
    for pkg in LAYERS:
        for path in (ROOT / pkg).rglob("*.py"):
            rel = path.relative_to(ROOT).with_suffix("")
            if "tests" in rel.parts or "testdata" in rel.parts:
                continue
            out[".".join(p for p in rel.parts if p != "__init__")] = path
    return out


def imports_of(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every absolute import in a file, at any depth."""
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append((node.lineno, node.module))
    return out


def test_no_upward_imports() -> None:
    upward = []
    for module, path in sorted(project_modules().items()):
        mine = layer_of(module)
        for line, imported in imports_of(path):
            theirs = layer_of(imported)
            if theirs is not None and mine is not None and theirs > mine:
                upward.append(f"{path.relative_to(ROOT)}:{line}: {module} ({LAYERS[mine]}) imports {imported} "
                              f"({LAYERS[theirs]})")
    assert not upward, "upward imports:\n" + "\n".join(upward)


def test_no_module_imports_a_test_module() -> None:
    bad = [f"{path.relative_to(ROOT)}:{line}: imports {imported}"
           for module, path in project_modules().items() for line, imported in imports_of(path)
           if ".tests" in f".{imported}" and layer_of(imported) is not None]
    assert not bad, "\n".join(bad)


def test_p4sim_compiler_and_switch_never_import_each_other() -> None:
    bad = []
    for module, path in project_modules().items():
        for part, other in (("p4sim.compiler", "p4sim.switch"), ("p4sim.switch", "p4sim.compiler")):
            if module.startswith(part):
                bad += [f"{path.relative_to(ROOT)}:{line}: {imported}" for line, imported in imports_of(path)
                        if imported.startswith(other)]
    assert not bad, "\n".join(bad)


def test_the_layer_map_covers_every_package() -> None:
    assert {m.split(".")[0] for m in project_modules()} <= {layer.split(".")[0] for layer in LAYERS}
