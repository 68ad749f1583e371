"""A demand-aware cycle of circuit maps: the largest pending demand first (issue 20; OCSEMU names
demand-aware scheduling but builds only the round robin, seed 002 section III).

From a demand matrix (bytes each ToR has for each other ToR) and what one slot carries per circuit,
each slot is a matching built greedily: the pair with the most bytes pending first, then the next
largest among the ToRs still free, and so on (a greedy maximum-weight matching, within a factor 2
of the best). The slot's circuits then carry up to `slot_bytes` each, and the next slot is built
on what is left, until every demand is served or `max_slots` is reached. Circuits are duplex, as
ocscore's maps: a pair's demand is the larger of its two directions. Pure: the controller turns the
maps into time-flow entries (tablegen/schedule.py) and writes them once.
"""

from __future__ import annotations

Pair = tuple[int, int]


def largest_first(demand: dict[Pair, int], slot_bytes: int, max_slots: int = 64) -> list[list[Pair]]:
    """Matchings (duplex pairs, a < b) serving `demand` {(src, dst): bytes}, largest pending first."""
    if slot_bytes <= 0:
        raise ValueError(f"slot_bytes={slot_bytes}: expected a positive number of bytes")
    if max_slots < 1:
        raise ValueError(f"max_slots={max_slots}: expected at least 1")
    pending: dict[Pair, int] = {}
    for (a, b), n in demand.items():
        if a == b or n < 0:
            raise ValueError(f"demand {a}->{b}: {n} bytes; expected two different ToRs and bytes >= 0")
        key = (min(a, b), max(a, b))
        pending[key] = max(pending.get(key, 0), n) if (b, a) in demand else pending.get(key, 0) + n
    slots: list[list[Pair]] = []
    while any(pending.values()) and len(slots) < max_slots:
        busy: set[int] = set()
        matching: list[Pair] = []
        # largest first; ties in pair order, so the cycle is the same for the same demand
        for (a, b), n in sorted(pending.items(), key=lambda kv: (-kv[1], kv[0])):
            if n > 0 and a not in busy and b not in busy:
                matching.append((a, b))
                busy.update((a, b))
        for pair in matching:
            pending[pair] = max(0, pending[pair] - slot_bytes)
        slots.append(sorted(matching))
    return slots
