"""Spec files: every shipped spec loads; bad specs fail with one line naming the key."""

import re
from pathlib import Path

import pytest

from scripts.experiments.reconf import write_bytes
from scripts.experiments.spec import at_link_rate, at_rate, load, make_topology, parse, shorten, stretch

EXPERIMENTS = Path(__file__).resolve().parents[1] / "experiments"


@pytest.mark.parametrize("path", sorted(EXPERIMENTS.glob("*.yaml")), ids=lambda p: p.stem)
def test_shipped_specs_load(path):
    spec = load(path)
    assert spec.variants and spec.runs >= 1
    topo = make_topology(spec)
    hosts = {h.name for h in topo.hosts}
    for s in spec.streams:
        assert s.src in hosts and s.dst in hosts
    if spec.kind in ("reconfiguration", "route-flip"):
        assert spec.scale is not None  # every result states its scale factor


def base(**kw):
    d = {"name": "x", "kind": "reconfiguration", "streams": [{"src": "h2", "dst": "h3"}]}
    d.update(kw)
    return d


def test_switch_queue_goes_to_the_topology():
    topo = make_topology(parse(base(topology={"generator": "ucd4", "rate_mbit": 20, "switch_queue_pkts": 4})))
    assert topo.params["switch_queue_pkts"] == 4 and topo.params["rate_mbit"] == 20
    assert "switch_queue_pkts" not in make_topology(parse(base())).params  # the kernel's default
    with pytest.raises(ValueError, match="switch_queue_pkts=0: expected an integer >= 1"):
        make_topology(parse(base(topology={"generator": "ucd4", "switch_queue_pkts": 0})))


def test_variants_shorthand_and_defaults():
    s = parse(base(variants=["bbm", {"name": "slow", "procedure": "mbb-timed", "hold_s": 2}],
                   defaults={"rto_min": "800ms"}))
    assert [(v.name, v.procedure, v.rto_min, v.hold_s) for v in s.variants] == [
        ("bbm", "bbm", "800ms", 1.0), ("slow", "mbb-timed", "800ms", 2)]
    lb = parse({"name": "y", "kind": "load-balancing", "topology": {"generator": "fattree"}, "variants": ["spray"]})
    assert lb.variants[0].mode == "spray"
    assert shorten(s, runs=2, duration_s=5, event_at_s=2).runs == 2


def reservation(**kw):
    d = {"name": "r", "kind": "reservation", "topology": {"generator": "ocscore", "tors": 3, "spines": 1},
         "defaults": {"tdc": 2}, "variants": ["two-way", "one-way", "electrical"]}
    d.update(kw)
    return d


def test_alltoall_variants_may_bring_their_own_fabric():
    s = parse(reservation(kind="alltoall", defaults={}, variants=["gated", {"name": "electrical", "gating": "electrical",
                          "topology": {"generator": "leafspine", "leaves": 3, "spines": 1, "hosts_per_leaf": 1}}]))
    assert [v.gating for v in s.variants] == ["gated", "electrical"]
    assert make_topology(s, s.variants[0]).ocs and not make_topology(s, s.variants[1]).ocs


def test_reservation_variants_are_a_reservation_at_a_tdc():
    s = parse(reservation())
    assert [(v.name, v.reservation, v.tdc) for v in s.variants] == [
        ("two-way", "two-way", 2), ("one-way", "one-way", 2), ("electrical", "electrical", 2)]
    assert s.reservation.slot_ms == 10 and s.reservation.depth == 48


@pytest.mark.parametrize("data, msg", [
    (reservation(defaults={"tdc": 3}), "tdc 3: expected 1..2 for the 3 ToRs"),
    (reservation(defaults={}), "reservation 'two-way', tdc None with kind 'reservation'"),
    (reservation(variants=["two-way", "both-ways"]), "reservation 'both-ways'"),
    (reservation(topology={"generator": "ocscore", "tors": 3}), "reservation electrical: the topology has no"),
    (reservation(reservation={"slot_ms": 4}), "reservation.slot_ms 4.0: its day less the guards"),
    (reservation(reservation={"hold_passes": 0}), "reservation.hold_passes 0"),
    (reservation(reservation={"slots_ms": 4}), "unknown key 'slots_ms'"),
    (reservation(reservation={"flows_per_server": 3}), "tdc 2: reservation.flows_per_server 3 does not split"),
    (base(variants=[{"name": "a", "tdc": 1}]), "reservation None, tdc 1 with kind 'reconfiguration'"),
    (base(variants=[{"name": "a", "gating": "gated"}]), "gating 'gated' with kind 'reconfiguration'"),
    (reservation(kind="alltoall", defaults={}, variants=["gated", "sometimes"]), "gating 'sometimes'"),
    (reservation(kind="alltoall", defaults={}, variants=[{"name": "g", "gating": "gated", "topology": {
        "generator": "leafspine", "leaves": 3, "spines": 1}}]), "gating gated: expected a topology with one OCS"),
    (reservation(kind="alltoall", defaults={}, variants=["blind"], alltoall={"size": 9000}), "alltoall.size 9000"),
])
def test_bad_reservation_specs_say_what_is_wrong(data, msg):
    with pytest.raises(ValueError, match=re.escape(msg)):
        parse(data)


@pytest.mark.parametrize("data, msg", [
    (base(kind="nope"), "kind 'nope'"),
    (base(variants=["fast"]), "procedure 'fast'"),
    (base(variants=[{"name": "a", "procedure": "mbb", "failover": False}]), "failover false"),
    (base(variants=["bbm", "bbm"]), "variant names"),
    (base(colour="red"), "<spec>: unknown key 'colour'"),
    (base(streams=[]), "no streams"),
    (base(event_at_s=30), "event_at_s 30"),
    (base(topology={"generator": "ring"}), "topology.generator 'ring'"),
    (base(streams=[{"src": "h2", "dst": "h3", "proto": "sctp"}]), "proto 'sctp'"),
    (base(variants=[{"name": "a", "strategy": "ut"}]), "strategy 'ut' with kind 'reconfiguration'"),
    (base(kind="strategies", variants=[{"name": "a", "strategy": "rr"}]), "strategy 'rr'"),
    (base(kind="strategies", topology={"generator": "leafspine"}), "without topology.hybrid"),
    (base(kind="strategies", topology={"generator": "leafspine", "hybrid": {}}, bulk={"transfers": 9}),
     "bulk.transfers 9"),
    (base(bulk={"size": 1}), "bulk: unknown key 'size'"),
])
def test_bad_specs(data, msg):
    with pytest.raises(ValueError, match=msg):
        parse(data)


def test_load_errors(tmp_path):
    with pytest.raises(ValueError, match="expected a readable YAML"):
        load(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: [unclosed\n")
    with pytest.raises(ValueError, match="not YAML"):
        load(bad)


def test_stretch_scales_sizes_and_sse_only():
    spec = load(EXPERIMENTS / "e6-strategies.yaml")
    full = stretch(spec, 2)
    assert (full.bulk.mouse_bytes, full.bulk.elephant_bytes, full.bulk.sse_s) == (1048576, 12884902, 10)
    assert full.bulk.transfers == spec.bulk.transfers and full.topology == spec.topology
    assert (spec.bulk.mouse_bytes, spec.bulk.sse_s) == (524288, 5)  # the original is left alone
    assert stretch(spec, None) is spec and stretch(spec, 1) is spec
    with pytest.raises(ValueError, match="stretch 0: expected a factor above 0"):
        stretch(spec, 0)
    with pytest.raises(ValueError, match="stretch with kind 'reconfiguration': expected kind strategies"):
        stretch(parse(base()), 2)


def test_at_rate_sets_the_dynamic_fixed_rate_streams_only():
    spec = parse(base(streams=[{"src": "h2", "dst": "h3", "rate_mbit": 16},
                               {"src": "h1", "dst": "h4", "rate_mbit": 5, "role": "static"},
                               {"src": "h4", "dst": "h1"}]))
    slow = at_rate(spec, 4)
    assert [s.rate_mbit for s in slow.streams] == [4.0, 5.0, 0.0]  # static and saturating ones keep theirs
    assert [s.rate_mbit for s in spec.streams] == [16.0, 5.0, 0.0]  # the original is left alone
    assert at_rate(spec, None) is spec
    for bad in (0, -1, True, "4"):
        with pytest.raises(ValueError, match="expected Mbit/s above 0"):
            at_rate(spec, bad)
    with pytest.raises(ValueError, match="expected a dynamic stream of a fixed rate"):
        at_rate(parse(base()), 4)


def test_at_link_rate_sets_every_topologys_links_and_the_scale_factor():
    spec = load(Path(__file__).resolve().parents[1] / "experiments" / "e6-hybrid-leafspine.yaml")
    slow = at_link_rate(spec, 10)
    assert slow.link_rate_mbit == 10.0 and spec.link_rate_mbit == 20.0  # the original is left alone
    assert slow.scale == spec.scale / 2
    topo = make_topology(slow)
    assert {lk.rate_mbit for lk in topo.links} == {10.0} and topo.ocs[0].rate_mbit == 10.0
    assert topo.params["switch_queue_pkts"] == 20  # queues keep their frames
    assert at_link_rate(spec, None) is spec
    for bad in (0, -1, True, "10"):
        with pytest.raises(ValueError, match="link rate .*expected Mbit/s above 0"):
            at_link_rate(spec, bad)


def test_iperf_blocks_follow_the_rate():
    # a block every WRITE_MS at any rate (iperf3's own 128 KB would leave 65-262 ms silences)
    assert write_bytes(16) == 16_000 and write_bytes(4) == 4_000
    assert write_bytes(0.1) == 1024  # never below 1 KB
