"""control/demand.py: largest pending demand first, matchings only, every demand served."""

from __future__ import annotations

import pytest

from control.demand import largest_first


def test_the_largest_demand_goes_first_and_is_served() -> None:
    demand = {(1, 2): 30, (3, 4): 10, (1, 3): 20, (2, 4): 5}
    slots = largest_first(demand, slot_bytes=10)
    assert slots[0] == [(1, 2), (3, 4)]  # 30 first; then 20 (1-3) collides with 1, 10 (3-4) fits
    served: dict[tuple[int, int], int] = {}
    for m in slots:
        ports = [p for pair in m for p in pair]
        assert len(ports) == len(set(ports)), f"not a matching: {m}"
        for pair in m:
            served[pair] = served.get(pair, 0) + 10
    for (a, b), n in demand.items():
        assert served.get((min(a, b), max(a, b)), 0) >= n


def test_both_directions_share_a_duplex_circuit_and_limits_hold() -> None:
    assert largest_first({(2, 1): 25, (1, 2): 5}, slot_bytes=10) == [[(1, 2)]] * 3
    assert len(largest_first({(1, 2): 10_000}, slot_bytes=10, max_slots=4)) == 4
    assert largest_first({}, slot_bytes=10) == []


@pytest.mark.parametrize("demand, slot, word", [({(1, 1): 5}, 10, "two different ToRs"),
                                                ({(1, 2): -1}, 10, "bytes >= 0"),
                                                ({(1, 2): 1}, 0, "slot_bytes=0")])
def test_bad_input_is_refused(demand: dict, slot: int, word: str) -> None:
    with pytest.raises(ValueError, match=word):
        largest_first(demand, slot)
