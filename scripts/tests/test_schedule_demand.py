"""The demand-aware cycle of scripts/experiments/schedule_alltoall.py (alltoall.schedule largest-first): from the UDP
workload's demand to the OCS's directed port maps, without an emulation."""

from scripts.experiments import schedule_alltoall
from scripts.experiments.spec import Alltoall
from topo.generators import ocscore


def maps_for(pps: float, hot_pps: float | None = None) -> tuple[list[dict[int, int]], dict[str, int]]:
    topo = ocscore(4, 1, uplinks=1, rate_mbit=2.0)
    a = Alltoall(pps=pps, hot_pps=hot_pps, size=1000, schedule="largest-first")
    port = {p.switch: p.port for p in topo.ocs[0].ports}
    return schedule_alltoall.demand_maps(topo, a, 2.0, day_us=9000), port


def slots_of(maps: list[dict[int, int]], a: int, b: int) -> int:
    return sum(m.get(a) == b for m in maps)


def test_a_hot_pair_gets_the_slots_its_demand_needs():
    """ToR 1 <-> ToR 2 at 120 datagrams/s against 20 for the rest: the cycle gives the hot pair six
    times the slots of each other pair, which get one each."""
    maps, port = maps_for(20, 120)
    l1, l2, l3, l4 = (port[f"leaf{t}"] for t in range(1, 5))
    assert slots_of(maps, l1, l2) == slots_of(maps, l2, l1) == 6
    for a, b in ((l1, l3), (l1, l4), (l2, l3), (l2, l4), (l3, l4)):
        assert slots_of(maps, a, b) == slots_of(maps, b, a) == 1
    for m in maps:  # each slot a matching: duplex circuits, no port twice
        assert all(m[m[p]] == p for p in m) and len(set(m.values())) == len(m)


def test_uniform_demand_is_a_fair_cycle():
    maps, port = maps_for(20)
    counts = {slots_of(maps, port[f"leaf{a}"], port[f"leaf{b}"]) for a in range(1, 5) for b in range(1, 5) if a != b}
    assert counts == {1} and len(maps) == 3  # the round robin's three matchings
