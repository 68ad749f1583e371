"""p4sim's modules import each other without a circle, counting every import: at module level, inside
functions and under TYPE_CHECKING (a type-only circle still ties two modules into one concept).

An edge goes from a module to each p4sim module it names (`from p4sim.x import y` names `p4sim.x.y` when
that is a module, else `p4sim.x`); a package's `__init__` is not implied. Run:
.venv/bin/pytest p4sim/tests/test_import_cycles.py
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def p4sim_modules() -> dict[str, Path]:
    """Every module of p4sim (tests included), by dotted name."""
    out = {}
    for path in sorted((ROOT / "p4sim").rglob("*.py")):
        rel = path.relative_to(ROOT).with_suffix("")
        out[".".join(p for p in rel.parts if p != "__init__")] = path
    return out


def import_graph(modules: dict[str, Path], outside: bool = False) -> dict[str, dict[str, int]]:
    """module -> {imported module of `modules`: line of the first such import}; with `outside`, an
    import of anything else too, by its top-level name (`grpc`; tests/test_layers.py)."""
    graph: dict[str, dict[str, int]] = {}
    for module, path in modules.items():
        edges: dict[str, int] = {}
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in modules else node.module
                         for a in node.names]
            for name in names:
                name = name if name in modules or not outside else name.split(".")[0]
                if (name in modules or outside) and name != module:
                    edges[name] = min(edges.get(name, node.lineno), node.lineno)
        graph[module] = edges
    return graph


def find_cycle(graph: dict[str, dict[str, int]]) -> list[str] | None:
    """One import circle (its modules in order, the first repeated at the end), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        path.append(m)
        for n in sorted(graph[m]):
            if state.get(n) == 1:
                return path[path.index(n):] + [n]
            if n not in state:
                found = visit(n)
                if found:
                    return found
        path.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state:
            found = visit(m)
            if found:
                return found
    return None


def describe_cycle(graph: dict[str, dict[str, int]], modules: dict[str, Path], cycle: list[str]) -> str:
    """The circle, one import per line: `file:line: a imports b`."""
    return "\n".join(f"{modules[a].relative_to(ROOT)}:{graph[a][b]}: {a} imports {b}"
                     for a, b in zip(cycle, cycle[1:], strict=False))


def test_p4sim_has_no_import_cycle() -> None:
    modules = p4sim_modules()
    graph = import_graph(modules)
    cycle = find_cycle(graph)
    assert cycle is None, "import circle:\n" + describe_cycle(graph, modules, cycle or [])


@pytest.mark.parametrize(("edges", "expected"), [
    ({"a": {"b": 1}, "b": {"c": 2}, "c": {"a": 3}}, ["a", "b", "c", "a"]),
    ({"a": {"b": 1}, "b": {}, "c": {"b": 1}}, None),
    ({"a": {"b": 1, "c": 1}, "b": {}, "c": {"c2": 1}, "c2": {"c": 4}}, ["c", "c2", "c"]),
])
def test_find_cycle_finds_circles_and_only_them(edges: dict[str, dict[str, int]], expected: list[str] | None) -> None:
    assert find_cycle(edges) == expected


def test_type_checking_imports_count(tmp_path: Path) -> None:
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from p4sim.b import B\n")
    b.write_text("def f():\n    from p4sim import a\n")
    graph = import_graph({"p4sim.a": a, "p4sim.b": b})
    assert graph == {"p4sim.a": {"p4sim.b": 3}, "p4sim.b": {"p4sim.a": 2}}
    assert find_cycle(graph) == ["p4sim.a", "p4sim.b", "p4sim.a"]


def test_compiler_and_switch_never_import_each_other() -> None:
    modules = p4sim_modules()
    graph = import_graph(modules)
    bad = [f"{modules[m].relative_to(ROOT)}:{line}: {m} imports {n}" for m, edges in graph.items()
           for n, line in edges.items()
           for part, other in (("p4sim.compiler", "p4sim.switch"), ("p4sim.switch", "p4sim.compiler"))
           if m.startswith(part) and n.startswith(other)]
    assert not bad, "\n".join(bad)
