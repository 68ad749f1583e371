"""tablegen/schedule.py on ocscore: the OCS's cycle and each ToR's uplink per slot agree with the
topology's round-robin slot maps, nights keep only unchanged circuits, and bad input is refused."""

from __future__ import annotations

import pytest

from fabric.schedule import TimeSchedule
from tablegen.schedule import (
    cycle_maps,
    duplex,
    ocs_schedule_entries,
    route_paths,
    tor_schedule_entries,
)
from tablegen.tests.conftest import states_of
from topo.generators import ocscore


def dicts(entries):
    return [e.to_dict() for e in entries]


SCHED = TimeSchedule(slots=3, day_us=10_000, night_us=1_000)


def test_ocs_cycle_follows_the_slot_maps() -> None:
    topo = ocscore(4, 1)
    ocs = topo.ocs[0]
    maps = cycle_maps(ocs)
    assert maps == [ocs.circuit_maps[f"slot{s}"] for s in range(3)]
    entries = dicts(ocs_schedule_entries(duplex(maps), SCHED))
    assert entries[0] == {"table": "schedule_config", "default": True, "action": "set_schedule",
                          "params": {"epoch_us": 0, "cycle_scale": SCHED.scale}}
    days = {(e["match"]["slot"], e["match"]["ingress_port"]): e["params"]["port"] for e in entries
            if e["table"] == "slot_circuit" and e["match"]["night"] == 0}
    for s, pairs in enumerate(maps):
        for a, b in pairs:
            assert days[(s, a)] == b and days[(s, b)] == a
    # a round robin changes every circuit: no port is lit at night
    assert not [e for e in entries if e["table"] == "slot_circuit" and e["match"]["night"] == 1]
    assert len([e for e in entries if e["table"] == "schedule_phase"]) == 6


def test_nights_keep_unchanged_circuits() -> None:
    entries = dicts(ocs_schedule_entries([{1: 2, 2: 1, 3: 4}, {1: 2, 2: 1, 3: 5}], TimeSchedule(2, 100, 10)))
    nights = sorted((e["match"]["slot"], e["match"]["ingress_port"]) for e in entries
                    if e["table"] == "slot_circuit" and e["match"]["night"] == 1)
    assert nights == [(0, 1), (0, 2), (1, 1), (1, 2)]


def test_tor_takes_the_uplink_of_each_slot() -> None:
    topo = ocscore(4, 2, uplinks=1)
    ocs = topo.ocs[0]
    maps = cycle_maps(ocs)
    states = states_of(topo, circuits="slot0")
    routes = route_paths(states["leaf1"])
    entries = dicts(tor_schedule_entries(topo, ocs, "leaf1", routes, duplex(maps), SCHED, depth=16, before_us=300, after_us=100))
    policy = {e["match"]["path_id"]: (e["action"], e["params"]) for e in entries if e["table"] == "slot_policy"}
    # fresh_us: half the before guard unless given
    assert len(policy) == 3 and all(p == ("slot_hold", {"max_hold_us": SCHED.cycle_us, "depth": 16, "fresh_us": 150})
                                    for p in policy.values())
    given = dicts(tor_schedule_entries(topo, ocs, "leaf1", routes, duplex(maps), SCHED, before_us=300, fresh_us=0))
    assert {e["params"]["fresh_us"] for e in given if e["table"] == "slot_policy"} == {0}
    with pytest.raises(ValueError, match="fresh_us=-1"):
        tor_schedule_entries(topo, ocs, "leaf1", routes, duplex(maps), SCHED, fresh_us=-1)
    uplink = [p.switch_port for p in ocs.ports if p.switch == "leaf1"][0]
    slots = {}
    for e in entries:
        if e["table"] == "slot_path":
            assert e["params"]["port"] == uplink
            slots.setdefault(e["match"]["path_id"], []).append(e["match"]["slot"])
    # every other ToR once per cycle (4 ToRs: 3 rounds, one circuit of leaf1's each)
    assert sorted(s for v in slots.values() for s in v) == [0, 1, 2] and all(len(v) == 1 for v in slots.values())
    phases = [e for e in entries if e["table"] == "schedule_phase"]
    assert len(phases) == 9  # the guard before each night is a range of its own


def test_electrical_policy_and_bad_input() -> None:
    topo = ocscore(4, 1, spines=1)
    ocs = topo.ocs[0]
    states = states_of(topo, circuits="slot0")
    entries = dicts(tor_schedule_entries(topo, ocs, "leaf2", route_paths(states["leaf2"]), duplex(cycle_maps(ocs)), SCHED,
                                    policy="electrical"))
    assert {e["action"] for e in entries if e["table"] == "slot_policy"} == {"slot_electrical"}
    with pytest.raises(ValueError, match="policy='drop'"):
        tor_schedule_entries(topo, ocs, "leaf2", {}, cycle_maps(ocs), SCHED, policy="drop")
    with pytest.raises(ValueError, match="'spine1': not attached"):
        tor_schedule_entries(topo, ocs, "spine1", {}, cycle_maps(ocs), SCHED)
    with pytest.raises(ValueError, match="2 circuit maps for a schedule of 3 slots"):
        ocs_schedule_entries(duplex(cycle_maps(ocs, ["slot0", "slot1"])), SCHED)
    with pytest.raises(ValueError, match="cycle maps"):
        cycle_maps(ocs, ["slot9"])
