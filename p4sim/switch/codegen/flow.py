"""Structured code for a pipeline's control graph: one Python function per pipeline.

p4c emits the control flow of a structured P4 control as a DAG of tables and conditionals. Each
branch of a node rejoins at the node's immediate post-dominator, so the graph can be written back as
nested if/else without goto: emit(node, stop) writes node, its branches up to their join point, then
continues at the join. Keyless tables with a constant default action (p4c's stand-ins for plain
statements) are inlined as their action's body. If the graph is not structured (the emitted size
grows past a bound), the caller falls back to one function per node.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class Unstructured(Exception):
    """The control graph does not fold back into nested if/else within the size bound."""


class FlowGen:
    """Writes `def <name>(p):` for one pipeline from its tables and conditionals."""

    def __init__(self, pl: dict[str, Any], table_code: Callable[[dict[str, Any], str, str], tuple[list[str], bool]],
                 cond_expr: Callable[[dict[str, Any]], str]) -> None:
        self.pl = pl
        self.table_code = table_code  # (table, indent, 'hit'|'aid'|'') -> (lines, _)
        self.cond_expr = cond_expr
        self.nodes: dict[str, dict[str, Any]] = {}
        self.kind: dict[str, str] = {}
        for t in pl.get("tables", []):
            self.nodes[t["name"]] = t
            self.kind[t["name"]] = "table"
        for c in pl.get("conditionals", []):
            self.nodes[c["name"]] = c
            self.kind[c["name"]] = "cond"
        self.succ = {n: self._succ(n) for n in self.nodes}
        self.ipdom = self._post_dominators()
        self.budget = 4 * max(1, len(self.nodes)) + 8

    def _succ(self, n: str) -> list[str | None]:
        node = self.nodes[n]
        if self.kind[n] == "cond":
            return [node.get("true_next"), node.get("false_next")]
        out = list(node.get("next_tables", {}).values()) + [node.get("base_default_next")]
        return list(dict.fromkeys(out))

    def _post_dominators(self) -> dict[str, str | None]:
        order: list[str] = []
        seen: set[str] = set()

        def visit(n: str | None) -> None:
            if n is None or n in seen:
                return
            if n not in self.nodes:
                raise ValueError(f"pipeline {self.pl['name']}: next node {n!r} does not exist")
            seen.add(n)
            for s in self.succ[n]:
                visit(s)
            order.append(n)  # post-order: successors first

        for n in self.nodes:
            visit(n)
        pdom: dict[str | None, frozenset[str | None]] = {None: frozenset([None])}
        for n in order:
            sets = [pdom[s] for s in self.succ[n]]
            common = frozenset.intersection(*sets) if sets else frozenset([None])
            pdom[n] = common | {n}
        ipdom: dict[str, str | None] = {}
        for n in order:
            strict = pdom[n] - {n}
            # the immediate post-dominator is the strict one with the most post-dominators itself
            ipdom[n] = max(strict, key=lambda d: len(pdom[d]))
        return ipdom

    def function(self, name: str, init: str | None) -> list[str]:
        """Source of `def name(p):` running the pipeline from node init."""
        body = self.emit(init, None, "    ")
        return [f"def {name}(p):"] + (body or ["    return None"]) + [""]

    def emit(self, node: str | None, stop: str | None, ind: str) -> list[str]:
        """Lines running the graph from node until stop (exclusive)."""
        out: list[str] = []
        while node is not None and node != stop:
            self.budget -= 1
            if self.budget < 0:
                raise Unstructured(self.pl["name"])
            n = self.nodes[node]
            join = self.ipdom[node]
            if self.kind[node] == "cond":
                t = self.emit(n.get("true_next"), join, ind + "    ")
                f = self.emit(n.get("false_next"), join, ind + "    ")
                out.append(f"{ind}if {self.cond_expr(n['expression'])}:")
                out += t or [f"{ind}    pass"]
                if f:
                    out.append(f"{ind}else:")
                    out += f
            else:
                branches = len(set(self.succ[node])) > 1
                nt = n.get("next_tables", {})
                need = "" if not branches else ("hit" if ("__HIT__" in nt or "__MISS__" in nt) else "aid")
                lines, _ = self.table_code(n, ind, need)
                out += lines
                if branches:
                    out += self._dispatch(n, join, ind)
            node = join
        return out

    def _dispatch(self, t: dict[str, Any], join: str | None, ind: str) -> list[str]:
        nt = t.get("next_tables", {})
        out: list[str] = []
        if "__HIT__" in nt or "__MISS__" in nt:
            hit = self.emit(nt.get("__HIT__"), join, ind + "    ")
            miss = self.emit(nt.get("__MISS__"), join, ind + "    ")
            if hit:
                out += [f"{ind}if hit:"] + hit
                if miss:
                    out += [f"{ind}else:"] + miss
            elif miss:
                out += [f"{ind}if not hit:"] + miss
            return out
        by_target: dict[str | None, list[int]] = {}
        base = t.get("base_default_next")
        # an action without a next_tables entry, and a miss without a default entry (aid -1), go to
        # base_default_next, as in bmv2
        for aname, aid in zip(t.get("actions", []), t.get("action_ids", []), strict=False):
            by_target.setdefault(nt.get(aname, base), []).append(aid)
        by_target.setdefault(base, []).append(-1)
        first = True
        for target, aids in by_target.items():
            body = self.emit(target, join, ind + "    ")
            if not body:
                continue
            kw = "if" if first else "elif"
            out += [f"{ind}{kw} aid in {tuple(sorted(aids))!r}:"] + body
            first = False
        return out
