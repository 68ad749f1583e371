"""End to end on Mininet: seed 001's two-way and one-way reservation, 3 ToRs, TDC 2 (each ToR's
host sends to both others, so two sources compete for every destination's downlink): the loop in the
data plane (two-way, one-way: requests and grants between the ToRs and the OCS's scheduler) and the
controller's loop (two-way-controller).

Needs root, Mininet and the compiled programs (build/ or $P4C); about 2 min. The assertions are the
physics, not tuned numbers: two-way reservation never lights one output from two inputs (read back
from the OCS's slot_circuit during the run), so no burst is lost to contention; one-way sends
without asking the destination's side, so when two sources' windows overlap on a downlink the OCS
has no circuit for the second (unlit drops; how often they overlap is TCP's doing, not asserted), on top of whatever the emulation's timing drops in both
(which is why the OCS's totals of the two are not compared: in one bmv2 run at TDC 3 two-way carried
more and the timing dropped more, 237 frames against one-way's 184).
Not asserted: zero OCS drops under two-way. On this 2-core machine the software switches' lag
drops 1-5% at the OCS under any schedule (docs/experiments.md, time-sliced schedules; and
docs/seed001-reservation.md), which a strict zero would test instead of the reservation.
"""

from dataclasses import asdict

import pytest

from scripts.experiments import spec as specmod
from scripts.tests.emulated import EXPERIMENTS, needs_mininet, run_once

pytestmark = needs_mininet()


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The e9 spec at 3 ToRs, TDC 2, 64 KB flows, 40 s at most, the OCS read back every 5 rounds."""
    data = asdict(specmod.load(EXPERIMENTS / "e9-seed001-reservation.yaml"))
    data["topology"]["tors"] = 3
    data["reservation"].update(flow_kb=64, sample_s=0.5, audit_every=5)
    data["variants"] = [{"name": v, "reservation": v, "tdc": 2} for v in ("two-way", "one-way", "two-way-controller")]
    return run_once(specmod.parse({**data, "duration_s": 40.0}, "test_seed001"), tmp_path_factory.mktemp("seed001"))


def test_data_plane_two_way_grants_every_burst_without_a_controller(runs):
    """Every request answered by the OCS's scheduler, no window lost to contention (none can be: the
    horizons), and the loop (request sent to grant received) well inside a slot. The bound is a whole
    slot, not the issue's 10%: that is measured by the experiment, not asserted on a loaded CI machine."""
    r = runs["two-way"]
    assert r["loop"] == "data plane" and r["grants"] > 10, r
    assert r["bursts_lost"] == 0 and r["booked"] >= r["grants"], r
    assert r["loop_time_us"]["grants"] >= r["grants"], r["loop_time_us"]  # refused answers are timed too
    assert r["loop_time_us"]["median"] < r["loop_time_us"]["slot_us"], r["loop_time_us"]
    assert all(f["fct_s"] is not None for f in r["flows"].values()), "every flow completed"


def test_two_way_controller_never_lights_an_output_twice(runs):
    r = runs["two-way-controller"]
    assert r["grants"] > 10, r
    assert r["bursts_lost"] == 0
    assert r["audits"] > 0, "the OCS's slot_circuit was never read back"
    assert r["audit_conflicts"] == [], r["audit_conflicts"]
    # hold_overflow is not asserted: a full ToR queue (depth 48) against TCP's window is the paper's
    # buffer overflow, not a burst lost to contention (p4sim dropped 1 frame there in one run)


def test_one_way_drops_the_bursts_it_loses_at_the_ocs(runs):
    """A lost burst's ToR still sends in its window, and the OCS, never lit for it, drops the frames.
    How many bursts collide is not asserted: TCP backs off after a loss and the sources fall out of
    each other's way (bmv2, 3 ToRs, TDC 2, 256 KB flows: 2, 2, 5, 8 of 180-369 lost in four runs,
    0 in one CI run; with all sources sending to one ToR, 0-1 of 54-61)."""
    r = runs["one-way"]
    assert r["grants"] > 10, r
    if r["bursts_lost"]:
        assert r["unlit_drops"] > 0, f"one-way lost {r['bursts_lost']} bursts but the OCS dropped nothing: {r}"
