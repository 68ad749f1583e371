"""Entries of reservations (tablegen/reservation.py) on ocscore with an electrical spine."""

import pytest

from fabric.schedule import TimeSchedule
from tablegen.reservation import grant_ocs_entries, grant_paths, grant_tor_entries, tor_base_entries
from tablegen.schedule import light_spans, route_paths, uplink_byte_ns


def canon(e):
    m = " ".join(f"{k}={v}" for k, v in e.match.items())
    p = ", ".join(f"{k}={v}" for k, v in e.params.items())
    return f"{e.table} {m} -> {e.action}({p})"


def test_base_entries_hold_every_optical_path_and_light_none(ocscore3):
    topo, ocs, docs = ocscore3
    sched = TimeSchedule(10, 4000, 1000, 123)
    entries = tor_base_entries(topo, ocs, "leaf1", route_paths(docs["leaf1"]), sched, max_hold_us=1_500_000,
                               depth=48, before_us=1500, after_us=300)
    tables = [e.table for e in entries]
    assert tables.count("slot_policy") == 2 and "slot_path" not in tables
    assert {e.action for e in entries if e.table == "slot_policy"} == {"slot_hold"}
    assert entries[0].params == {"epoch_us": 123, "cycle_scale": sched.scale}
    assert tables.count("schedule_phase") == 30  # night, day, guard before the next night: per slot


def test_grant_entries(ocscore3):
    topo, ocs, docs = ocscore3
    paths = grant_paths(topo, ocs, "leaf1", route_paths(docs["leaf1"]))
    assert sorted(paths) == ["leaf2", "leaf3"]
    a = next(p for p in ocs.ports if p.switch == "leaf1")
    b = next(p for p in ocs.ports if p.switch == "leaf3")
    dmac = next(s for s in topo.switches if s.name == "leaf3").ports[b.switch_port]
    sched = TimeSchedule(10, 4000, 1000, 123)
    spans, cycle = light_spans(sched, before_us=1500, after_us=300)
    tor = [canon(e) for e in grant_tor_entries(topo, ocs, "leaf1", "leaf3", paths["leaf3"], [7, 8, 9, 0],
                                               (spans, cycle))]
    # every slot of the window, lit through its inner nights, the budget running to the end of
    # its last day (slot 0's, a cycle on: the window wraps round the cycle's end)
    last = spans[0][1] + cycle
    mores = [(last - spans[7][1], 0), (last - spans[8][1], last - spans[8][0]),
             (last - spans[9][1], last - spans[9][0]), (0, spans[0][1] - spans[0][0])]
    assert tor == [f"slot_path path_id={paths['leaf3']} slot={s} -> slot_port(port={a.switch_port}, dmac={dmac}, "
                   f"byte_ns={uplink_byte_ns(ocs)}, more_after_day={d}, more_after_night={n})"
                   for s, (d, n) in zip((7, 8, 9, 0), mores, strict=True)]
    # 5 ms slots: 2^20 / 10 phase units each; the day (from 1300 to 3500 us into the slot) and
    # the gap to the next day (the guard, the night and its guard: 2.8 ms) in those units
    assert spans[1][1] - spans[1][0] == round(2200 / 5000 * (1 << 20) / 10)
    assert spans[8][0] - spans[7][1] == round(2800 / 5000 * (1 << 20) / 10)
    got = [canon(e) for e in grant_ocs_entries(ocs, "leaf1", "leaf3", [9, 0, 1])]
    assert got == [f"slot_circuit slot=9 night=0 ingress_port={a.port} -> slot_cross_connect(port={b.port})",
                   f"slot_circuit slot=0 night=0 ingress_port={a.port} -> slot_cross_connect(port={b.port})",
                   f"slot_circuit slot=0 night=1 ingress_port={a.port} -> slot_cross_connect(port={b.port})",
                   f"slot_circuit slot=1 night=0 ingress_port={a.port} -> slot_cross_connect(port={b.port})",
                   f"slot_circuit slot=1 night=1 ingress_port={a.port} -> slot_cross_connect(port={b.port})"]


def test_a_switch_without_one_uplink_is_refused(ocscore3):
    topo, ocs, _ = ocscore3
    with pytest.raises(ValueError, match="spine1.*expected exactly one uplink"):
        grant_ocs_entries(ocs, "spine1", "leaf1", [0])
