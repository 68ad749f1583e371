"""The reservation loop's configuration (tablegen/reservation_loop.py) on ocscore: window lengths as
ranges that agree with the rule a burst is sized by, window_more as run_mores gives a window's
slots, a grant path per destination ToR, the clone session to the uplink, and refused settings."""

import pytest

from fabric.schedule import TimeSchedule
from tablegen.reservation import attachment
from tablegen.reservation_loop import (
    Loop,
    ocs_loop_entries,
    tna_ocs_loop_entries,
    tor_loop_entries,
    window_length_entries,
)
from tablegen.schedule import light_spans, route_paths, run_mores

SCHED = TimeSchedule(10, 9000, 1000)


def loop(**kw):
    return Loop(**{"mode": "two-way", "slots": 10, "slot_us": 10_000, "send_us": 6_000, "rate_mbit": 10,
                   "max_slots": 5, **kw})


def length_of(entries, nbytes):
    hits = [e.params["length"] for e in entries if e.match["bytes"]["low"] <= nbytes <= e.match["bytes"]["high"]]
    assert len(hits) == 1, (nbytes, hits)
    return hits[0]


@pytest.mark.parametrize("kw", [{}, {"pace": 0.5, "lost_us": 1500}])
def test_window_lengths_agree_with_the_burst_rule(kw):
    lp = loop(**kw)
    entries = window_length_entries(lp)
    assert entries[0].match["bytes"]["low"] == 0 and entries[-1].match["bytes"]["high"] == (1 << 32) - 1
    for nbytes in (1, 1500, 7_000, 7_500, 8_000, 19_999, 20_000, 40_000, 10**6, (1 << 32) - 1):
        assert length_of(entries, nbytes) == lp.slots_for(nbytes), nbytes
    assert lp.slots_for(7_500) == (1 if not kw else 2)  # 6 ms at 10 Mbit/s: the first slot's send time


def test_tor_loop(ocscore3):
    topo, ocs, states = ocscore3
    lp = loop()
    light = light_spans(SCHED, 1500, 300)
    entries, clones = tor_loop_entries(topo, ocs, "leaf1", route_paths(states["leaf1"]), lp, light)
    oport, up = attachment(ocs, "leaf1")
    grants = [e for e in entries if e.table == "grant_path"]
    assert len(grants) == 2 and {e.params["port"] for e in grants} == {up}
    assert {e.params["ocs_port"] for e in grants} == {attachment(ocs, d)[0] for d in ("leaf2", "leaf3")}
    assert [c.session_id for c in clones] == [grants[0].params["session"]] and clones[0].replicas[0].port == up
    config = [e for e in entries if e.default]
    assert len(config) == 1 and config[0].params["loop_mode"] == 1 and config[0].params["slots"] == 10
    more = {(e.match["slot"], e.match["left"]): (e.params["more_after_day"], e.params["more_after_night"])
            for e in entries if e.table == "window_more"}
    assert len(more) == 10 * 5
    spans, cycle = light
    # slot 9 with 2 slots after it: the window 8, 9, 0, 1 seen from its second slot (it wraps the cycle)
    assert more[(9, 2)] == run_mores(spans, cycle, [8, 9, 0, 1])[1]
    assert more[(3, 0)][0] == 0, "the last slot: nothing after its day"


def test_ocs_loop():
    entries = ocs_loop_entries(loop(trip_slots=1))
    assert entries[0].default and entries[0].params == {"slots": 10, "slot_len_us": 10_000, "trip": 1}
    assert {e.table for e in entries[1:]} == {"window_length"}


def test_tna_ocs_loop_times():
    # 8 slots in a cycle of 2^13 units: 1024 units a slot; a grant's trip of 1 slot
    entries = tna_ocs_loop_entries(loop(slots=8, trip_slots=1, max_slots=4), 8 << 10)
    by = {}
    for e in entries:
        by.setdefault(e.table, []).append(e)
    assert by["reservation_config"][0].params == {"slots": 8, "slot_len": 1024, "cycle_len": 8192}
    times = {e.match["slot"]: e.params for e in by["resv_slot_times"]}
    # asked in slot 7: the earliest window begins at slot 7 + 1 + 1 = 9, the next cycle's slot 1
    assert times[0] == {"earliest": 2048, "limit": 8192} and times[7] == {"earliest": 9216, "limit": 15360}
    assert [e.params["length"] for e in by["resv_span"]] == [1024, 2048, 3072, 4096]
    starts = {e.match["phase"]: e.params["slot"] for e in by["resv_start_slot"]}
    assert len(starts) == 16 and starts[0] == 0 and starts[9216] == 1 and 100 not in starts
    assert {e.match["slot"]: e.params for e in by["resv_slot_phase"]}[3] == {"phase": 3072, "next": 3072 + 8192}


@pytest.mark.parametrize("slots, units, word", [(8, 8190, "divide the cycle"), (70, 70 << 10, "at most 64")])
def test_tna_ocs_loop_refuses_what_tofino_cannot_hold(slots, units, word):
    with pytest.raises(ValueError, match=word):
        tna_ocs_loop_entries(loop(slots=slots, max_slots=4), units)


@pytest.mark.parametrize("kw, word", [
    ({"mode": "both"}, "loop mode"), ({"slots": 600}, "loop slots"), ({"max_slots": 9}, "max_slots"),
    ({"send_us": 20_000}, "send_us"), ({"pace": 0}, "pace"), ({"offset": 0}, "offset"),
])
def test_refused(kw, word):
    with pytest.raises(ValueError, match=word):
        loop(**kw)
