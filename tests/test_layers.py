"""The import graph of the whole tree, checked. Run: .venv/bin/pytest tests/test_layers.py

Layers: each package imports only itself and the packages listed before it.

    p4sim            the embedded target and the choice of target (target.py): imports no other package
    p4rt             P4Runtime, program- and topology-agnostic: values, schema, entities, client, state,
                     diff, reconcile
    topo             the topology model, generators, validation, the circuit-spec grammar
    fabric           the contract with p4src/ (names, modes, constants), what entries mean, the walk
    tablegen         table entries from a topology, the checker
    control          the controller, OCS drivers, plans and procedures
    emulation        Mininet, switch processes, the emulated OCS
    scripts          experiments, reports, benchmarks
    view             the live view and replay (web server, page), over a running emulation or a run's files
    hitless          the `hitless` command and the Python API (Testbed), over all of the above

Tests sit above every layer: the packages' tests/ folders, tests/, ptf-tests/ (its modules import each
other by bare name, as PTF runs them) and conftest.py may import any package; no package imports them.
Every top-level folder of the tree that holds Python is one of these, so a new one fails here until it
has its place.

Inside the packages, tests included:
- no import circle, counting every import (module level, in functions, under TYPE_CHECKING), as
  p4sim/tests/test_import_cycles.py counts them;
- p4sim's compiler and switch never import each other;
- the modules that say they are pure (PURE) do no I/O: neither they nor any module of the project they
  reach imports a module that talks to the network, other processes or threads, or reads the clock (IO);
- a package with rooms (ROOMS: scripts/) imports within itself only downward: a room imports only itself
  and the rooms listed before it, and the package's own top-level modules sit above every room.
"""

from __future__ import annotations

import os
from collections import deque
from pathlib import Path

from p4sim.tests.test_import_cycles import find_cycle, import_graph

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ["p4sim", "p4rt", "topo", "fabric", "tablegen", "control", "emulation", "scripts", "view", "hitless"]
TESTS = ["tests", "ptf-tests", "conftest.py"]  # above every layer
SKIP_DIRS = {"build", "build-p4sim", "results", "node_modules", "__pycache__"}  # outputs, never sources

# Modules whose docstrings say they are pure, and what they may not reach
PURE = ["control.plan", "control.demand", "control.ocs.scpi", "p4rt.diff", "p4rt.reconcile", "tablegen.entries",
        "tablegen.reservation", "tablegen.schedule"]
IO = ["asyncio", "concurrent", "grpc", "http", "mininet", "multiprocessing", "queue", "select", "selectors",
      "socket", "socketserver", "subprocess", "threading", "time", "urllib"]
# (importer, imported): prefixes of modules that never import each other's
APART = [("p4sim.compiler", "p4sim.switch"), ("p4sim.switch", "p4sim.compiler")]
# package -> its sub-packages, lowest first (scripts/README.md)
ROOMS = {"scripts": ["hosts", "analysis", "experiments", "report", "tools", "bench"]}

Graph = dict[str, dict[str, int]]  # module -> {what it imports: line of the first such import}


def python_files(root: Path) -> list[Path]:
    """Every .py file of the tree, outside hidden folders, build outputs and *.egg-info."""
    out = []
    for here, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIP_DIRS
                         and not d.endswith(".egg-info"))
        out += [Path(here) / f for f in sorted(files) if f.endswith(".py")]
    return out


def tree_modules(root: Path = ROOT) -> dict[str, Path]:
    """Every module of the tree by the name it is imported as: dotted from the root in a package
    folder (one with __init__.py), bare in a folder of scripts (ptf-tests/); ValueError on a clash."""
    out: dict[str, Path] = {}
    for path in python_files(root):
        rel = path.relative_to(root)
        top = rel.parts[0]
        base = rel if len(rel.parts) == 1 or (root / top / "__init__.py").exists() else rel.relative_to(top)
        name = ".".join(p for p in base.with_suffix("").parts if p != "__init__")
        if name in out:
            raise ValueError(f"module {name}: both {out[name]} and {path}; expected one file per name")
        out[name] = path
    return out


def place(module: str, modules: dict[str, Path], root: Path = ROOT) -> str:
    """The layer a module of the tree is in, or "tests"."""
    rel = modules[module].relative_to(root)
    return "tests" if rel.parts[0] in TESTS or "tests" in rel.parts else rel.parts[0]


def where(modules: dict[str, Path], module: str, line: int, root: Path = ROOT) -> str:
    """`file:line` of a module's import."""
    return f"{modules[module].relative_to(root)}:{line}"


def upward_imports(modules: dict[str, Path], graph: Graph, root: Path = ROOT) -> list[str]:
    """`file:line: a (layer) imports b (layer)` for every import of a later layer or of a test module."""
    out = []
    for m, edges in sorted(graph.items()):
        mine = place(m, modules, root)
        if mine == "tests":
            continue
        for n, line in sorted(edges.items()):
            if n not in modules:
                continue
            theirs = place(n, modules, root)
            if theirs == "tests" or LAYERS.index(theirs) > LAYERS.index(mine):
                out.append(f"{where(modules, m, line, root)}: {m} ({mine}) imports {n} ({theirs})")
    return out


def import_circle(modules: dict[str, Path], graph: Graph, root: Path = ROOT) -> list[str]:
    """One import circle of the tree, one import a line (`file:line: a imports b`), or []."""
    inner = {m: {n: line for n, line in edges.items() if n in modules} for m, edges in graph.items()}
    cycle = find_cycle(inner) or []
    return [f"{where(modules, a, inner[a][b], root)}: {a} imports {b}" for a, b in zip(cycle, cycle[1:], strict=False)]


def apart_imports(modules: dict[str, Path], graph: Graph, root: Path = ROOT) -> list[str]:
    """Imports between the parts APART keeps apart."""
    return [f"{where(modules, m, line, root)}: {m} imports {n}" for m, edges in sorted(graph.items())
            for n, line in sorted(edges.items()) for a, b in APART if m.startswith(a) and n.startswith(b)]


def room_of(module: str, package: str, rooms: list[str]) -> int | None:
    """The index of a module's room in its package, len(rooms) for the package's own modules, None outside."""
    parts = module.split(".")
    if parts[0] != package or "tests" in parts:
        return None
    return rooms.index(parts[1]) if len(parts) > 2 and parts[1] in rooms else len(rooms)


def room_imports(modules: dict[str, Path], graph: Graph, rooms: dict[str, list[str]] = ROOMS,
                 root: Path = ROOT) -> list[str]:
    """`file:line: a imports b (a later room)` for every import of a package's module from a room above its own."""
    out = []
    for package, order in rooms.items():
        for m, edges in sorted(graph.items()):
            mine = room_of(m, package, order)
            if mine is None:
                continue
            for n, line in sorted(edges.items()):
                theirs = room_of(n, package, order)
                if n in modules and theirs is not None and theirs > mine:
                    out.append(f"{where(modules, m, line, root)}: {m} imports {n} (a later room)")
    return out


def io_reached(modules: dict[str, Path], graph: Graph, pure: list[str], root: Path = ROOT) -> list[str]:
    """For each pure module that reaches an IO module: the shortest chain of imports to it."""
    out = []
    for start in pure:
        came: dict[str, str | None] = {start: None}
        todo = deque([start])
        while todo:
            m = todo.popleft()
            hit = next((n for n in sorted(graph[m]) if n in IO), None)
            if hit is not None:
                chain = [(m, hit)]
                while came[chain[0][0]] is not None:
                    chain.insert(0, (came[chain[0][0]], chain[0][0]))
                steps = " -> ".join(f"{b} ({where(modules, a, graph[a][b], root)})" for a, b in chain)
                out.append(f"{start} is pure but reaches I/O: {start} -> {steps}")
                break
            for n in sorted(graph[m]):
                if n in modules and n not in came:
                    came[n] = m
                    todo.append(n)
    return out


MODULES = tree_modules()
GRAPH = import_graph(MODULES, outside=True)


def test_every_folder_of_the_tree_has_a_place() -> None:
    tops = {p.relative_to(ROOT).parts[0] for p in python_files(ROOT)}
    assert tops == set(LAYERS) | set(TESTS), f"not in the layer map: {sorted(tops - set(LAYERS) - set(TESTS))}; " \
        f"listed but gone: {sorted(set(LAYERS) | set(TESTS) - tops)}"


def test_no_upward_imports() -> None:
    bad = upward_imports(MODULES, GRAPH)
    assert not bad, "upward imports:\n" + "\n".join(bad)


def test_no_import_circle() -> None:
    circle = import_circle(MODULES, GRAPH)
    assert not circle, "import circle:\n" + "\n".join(circle)


def test_p4sim_compiler_and_switch_never_import_each_other() -> None:
    bad = apart_imports(MODULES, GRAPH)
    assert not bad, "\n".join(bad)


def test_rooms_import_downward() -> None:
    for package, order in ROOMS.items():
        have = {m.split(".")[1] for m in MODULES if m.startswith(package + ".") and len(m.split(".")) > 2} - {"tests"}
        assert have == set(order), f"{package}'s rooms: {sorted(have)}, listed {order}"
    bad = room_imports(MODULES, GRAPH)
    assert not bad, "imports of a later room:\n" + "\n".join(bad)


def test_pure_modules_reach_no_io() -> None:
    assert set(PURE) <= set(MODULES), f"pure modules gone: {sorted(set(PURE) - set(MODULES))}"
    bad = io_reached(MODULES, GRAPH, PURE)
    assert not bad, "\n".join(bad)


def test_the_checks_catch_planted_edges(tmp_path: Path) -> None:
    files = {
        "topo/__init__.py": "",
        "topo/model.py": "from control.plan import plan\n",  # upward
        "control/__init__.py": "",
        "control/plan.py": "import json\n\ndef plan():\n    from control.network import Network\n",
        "control/network.py": "import threading\n",
        "scripts/__init__.py": "",
        "scripts/report.py": "from scripts.schedule import summary\n",
        "scripts/schedule.py": "import os\nfrom scripts import report\n",  # a circle
        "scripts/hosts/__init__.py": "",
        "scripts/hosts/capture.py": "from scripts.analysis.plots import cdf\n",  # a later room
        "scripts/analysis/__init__.py": "",
        "scripts/analysis/plots.py": "import os\n",
        "scripts/tests/__init__.py": "",
        "scripts/tests/test_report.py": "from control import plan\n",  # a test may import anything
        "ptf-tests/base.py": "import topo.model\n",
        "ptf-tests/routing.py": "from base import Test\n",  # by bare name
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    modules = tree_modules(tmp_path)
    assert {"base", "routing", "scripts.tests.test_report"} <= set(modules)
    graph = import_graph(modules, outside=True)
    assert graph["routing"] == {"base": 1} and graph["scripts.tests.test_report"] == {"control.plan": 1}
    assert upward_imports(modules, graph, tmp_path) == [
        "topo/model.py:1: topo.model (topo) imports control.plan (control)"]
    assert import_circle(modules, graph, tmp_path) == [
        "scripts/report.py:1: scripts.report imports scripts.schedule",
        "scripts/schedule.py:2: scripts.schedule imports scripts.report"]
    assert room_imports(modules, graph, {"scripts": ["hosts", "analysis"]}, tmp_path) == [
        "scripts/hosts/capture.py:1: scripts.hosts.capture imports scripts.analysis.plots (a later room)"]
    assert io_reached(modules, graph, ["control.plan"], tmp_path) == [
        "control.plan is pure but reaches I/O: control.plan -> control.network (control/plan.py:4) -> "
        "threading (control/network.py:1)"]
