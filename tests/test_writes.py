"""Every table write of the product goes through a switch's desired state: `SwitchSession` (control/
switch.py: sync, apply, recover) is the only caller of a P4Runtime client's writing methods outside
p4rt/, so a reconnect's reconcile never deletes what was written beside it. Run:
.venv/bin/pytest tests/test_writes.py

A raw write is a call of one of WRITES on an expression that names a client (`client.insert(...)`,
`sess.client.delete(...)`, `self.ocs_client.install(...)`). Tests may write raw (to plant what a
reconcile must fix); so may the benchmarks that time the client and the switches' write paths
themselves (BENCHES)."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.test_layers import MODULES, ROOT, place

WRITES = {"write", "insert", "modify", "delete", "install", "clear_tables", "set_pipeline", "set_pipeline_files"}
OWNER = {"control.switch"}  # the session; p4rt/ is the client itself
BENCHES = {"scripts.bench.control", "scripts.bench.targets", "scripts.bench.control_stall"}


def raw_writes(path: Path, root: Path = ROOT) -> list[str]:
    """`file:line: call` for each call of a client's writing method in a module: on an expression that
    names a client, or on a name the module binds to a `P4RuntimeClient(...)` (`c = ...`, `with ... as c`)."""
    tree = ast.parse(path.read_text(), str(path))
    bound = set()
    for node in ast.walk(tree):
        made = isinstance(getattr(node, "value", None), ast.Call) and "P4RuntimeClient" in ast.unparse(node.value.func)
        if isinstance(node, ast.Assign) and made:
            bound |= {ast.unparse(t) for t in node.targets}
        elif isinstance(node, ast.withitem) and "P4RuntimeClient" in ast.unparse(node.context_expr) \
                and node.optional_vars is not None:
            bound.add(ast.unparse(node.optional_vars))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in WRITES:
            receiver = ast.unparse(node.func.value)
            if "client" in receiver.lower() or receiver in bound:
                out.append((node.lineno, f"{path.relative_to(root)}:{node.lineno}: {ast.unparse(node.func)}(...)"))
    return [line for _, line in sorted(out)]


def product_modules() -> list[str]:
    """The modules whose writes must go through a session: every layer but p4rt, tests and BENCHES."""
    return sorted(m for m in MODULES if place(m, MODULES) not in ("tests", "p4rt") and m not in OWNER | BENCHES)


def test_no_raw_table_write_outside_the_session() -> None:
    assert BENCHES <= set(MODULES), f"benchmarks gone: {sorted(BENCHES - set(MODULES))}"
    assert all(raw_writes(MODULES[b]) for b in BENCHES), "a benchmark listed writes through the session now"
    bad = [line for m in product_modules() for line in raw_writes(MODULES[m])]
    assert not bad, "raw writes (expected SwitchSession.sync or .apply):\n" + "\n".join(bad)


def test_the_check_catches_a_planted_raw_write(tmp_path: Path) -> None:
    planted = tmp_path / "seed.py"
    planted.write_text("def grant(emu, entries, out):\n"
                       "    emu.controller.sessions['leaf1'].client.insert(entries)\n"
                       "    out.write('done')\n"  # a file's write is not a table write
                       "    ocs_client.clear_tables(('slot_circuit',))\n"
                       "    with P4RuntimeClient('127.0.0.1:9559', 1) as c:\n"
                       "        c.delete(entries)\n"
                       "    ocs = P4RuntimeClient('127.0.0.1:9560', 2)\n"
                       "    ocs.modify(entries)\n"
                       "    entries.insert(0, None)\n")  # a list's insert is not a table write
    assert raw_writes(planted, tmp_path) == [
        "seed.py:2: emu.controller.sessions['leaf1'].client.insert(...)",
        "seed.py:4: ocs_client.clear_tables(...)",
        "seed.py:6: c.delete(...)",
        "seed.py:8: ocs.modify(...)"]
