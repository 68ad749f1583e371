"""control.strategies: seed 003's strategies as circuit maps over time and a plan transform."""

import pytest

from control.plan import View, no_shadow, plan
from control.strategies import elephants_only, slot_at, slot_maps
from fabric.elephants import ELEPHANT_PATH_OFFSET
from topo import generators

PAIRS = [(1, 4), (2, 5), (3, 6)]


def test_slot_maps():
    assert slot_maps("none", PAIRS) == [[]]
    assert slot_maps("on-demand", PAIRS) == [[(1, 4), (2, 5), (3, 6)]]
    assert slot_maps("ut", PAIRS) == slot_maps("dt", PAIRS) == [[(1, 4)], [(2, 5)], [(3, 6)]]
    with pytest.raises(ValueError, match="strategy 'rr'"):
        slot_maps("rr", PAIRS)
    with pytest.raises(ValueError, match="no ToR pairs"):
        slot_maps("ut", [])


def test_slot_at():
    assert [slot_at(t, 10.0, 3) for t in (0, 9.99, 10, 25, 30, 31)] == [0, 0, 1, 2, 0, 0]
    with pytest.raises(ValueError, match="sse_s 0"):
        slot_at(1.0, 0, 3)


@pytest.fixture(scope="module")
def view():
    topo = generators.hybrid(generators.leafspine(leaves=6, spines=2, hosts_per_leaf=2, rate_mbit=10), replace=True)
    return View(topo, "ocs", 6)


def _twins(states):
    return {n: sorted({int(e.match["path_id"]) for e in st.entries if e.table.endswith("path")
                       and int(e.match.get("path_id", 0)) >= ELEPHANT_PATH_OFFSET}) for n, st in states.items()}


@pytest.mark.parametrize("procedure", ["bbm", "mbb"])
def test_transform_renames_and_rewrites_every_state(view, procedure):
    p = plan(procedure, [(1, 4)], [(2, 5)], view, transforms=[elephants_only(["10.0.1.2", "10.0.4.2",
                                                                               "10.0.2.2", "10.0.5.2"])])
    assert all(k.endswith("-dt") for k in p.states if k != "old")  # the setup's state is not transformed
    for line in p.lines():
        if line.startswith(("prepare", "to-shadow", "routes", "flip", "settle", "new-paths")):
            assert "-dt" in line or "sync" in line
    new = p.states["new-dt"]
    assert _twins(new)["leaf2"] and _twins(new)["leaf5"]  # the newly lit pair's elephants
    # a spine's twins forward like its routes (it has no circuit): harmless copies
    spine = [e for e in new["spine1"].entries if e.table.endswith("path")]
    ports = {(int(e.match["path_id"]), int(e.match["version"])): e.params.get("port") for e in spine}
    assert all(ports[(pid - ELEPHANT_PATH_OFFSET, v)] == port for (pid, v), port in ports.items()
               if pid >= ELEPHANT_PATH_OFFSET)


def test_bbm_with_no_shadow_after(view):
    p = plan("bbm", [], [(1, 4)], view, transforms=[elephants_only(["10.0.1.2", "10.0.4.2"]), no_shadow])
    leaf1 = p.states["new-dt-no-shadow"]["leaf1"]
    mouse = {int(e.match["version"]): e.params["port"] for e in leaf1.entries
             if e.table.endswith("path") and int(e.match["path_id"]) == 4}
    elephant = {int(e.match["version"]): e.params["port"] for e in leaf1.entries
                if e.table.endswith("path") and int(e.match["path_id"]) == 4 + ELEPHANT_PATH_OFFSET}
    assert mouse == {0: 3, 1: 3}  # mice: the spine in both versions
    assert elephant == {0: 4, 1: 4}  # elephants: the circuit, and no electrical shadow (the plain change)
