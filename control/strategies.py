"""Seed 003's four ways to use the direct optical links, as circuit maps over time and plan transforms.

- `none`: no circuit ever (the electrical leaf-spine only);
- `ut` (undifferentiated traffic): the ToR pairs take turns, one space-switch epoch (SSE) each, round
  robin; the granted pair sends all its traffic over its circuit;
- `dt` (differentiated traffic): the same turns, elephants only (`fabric.elephants`);
- `on-demand`: every pair's circuit is set up when its elephants start and kept, elephants only.

Each change of circuits is one run of a procedure (control.procedures): `bbm` is the plain change
(seed 003's "moved link", whose buffer strands packets), `mbb` the hitless one.
"""

from __future__ import annotations

from dataclasses import replace

from control.plan import Circuits, Plan, Prepare, Sync, Transform
from fabric.elephants import differentiated

STRATEGIES = ("none", "ut", "dt", "on-demand")


def check_strategy(name: str) -> str:
    """The name, if it is one of STRATEGIES."""
    if name not in STRATEGIES:
        raise ValueError(f"strategy {name!r}: expected one of {STRATEGIES}")
    return name


def elephants_only(addresses: list[str]) -> Transform:
    """A plan transform: every state the plan writes lets only these hosts' traffic use a circuit.

    Apply it before `no_shadow` (which copies version 0 into the shadow)."""
    addrs = list(addresses)

    def transform(p: Plan) -> Plan:
        name = {k: f"{k}-dt" for k in p.states}
        steps = tuple(replace(s, states=tuple(name[k] for k in s.states)) if isinstance(s, Prepare) else
                      replace(s, state=name[s.state]) if isinstance(s, Sync) else s for s in p.steps)
        states = {name[k]: {n: differentiated(st, addrs) if st.program == "fabric" else st
                            for n, st in sts.items()} for k, sts in p.states.items()}
        return replace(p, steps=steps, states=states)

    return transform


def slot_maps(strategy: str, pairs: Circuits) -> list[Circuits]:
    """The circuit maps a strategy cycles through, one per SSE (a single map: it never changes)."""
    check_strategy(strategy)
    if strategy == "none":
        return [[]]
    if strategy == "on-demand":
        return [sorted(tuple(c) for c in pairs)]
    if not pairs:
        raise ValueError(f"strategy {strategy!r}: no ToR pairs; expected at least one circuit to share")
    return [[tuple(c)] for c in pairs]


def slot_at(t_s: float, sse_s: float, n: int) -> int:
    """Which of n round-robin slots holds the circuit t_s seconds after the start."""
    if sse_s <= 0:
        raise ValueError(f"sse_s {sse_s}: expected > 0 seconds")
    return int(max(0.0, t_s) // sse_s) % n
