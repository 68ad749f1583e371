"""End to end on Mininet: seed 003's strategies on the hybrid leaf-spine, tiny transfers, one run each.

Needs root, Mininet, iperf3 and the compiled programs (build/ or $P4C); about 2 min. The assertions
are physical: every transfer delivers its bytes; with no direct link the OCS forwards nothing; on
demand the elephants' data crosses the OCS and the mice's does not (the twin paths of
fabric.elephants); UT's plain changes (bbm, no shadow paths) lose frames at the optical links (sent
into the moved link while it is dark: seed 003 §4.1's strays), DT under mbb loses none but its probes.
"""

import json

import pytest

from scripts.experiments import spec as specmod
from scripts.experiments.bulk import Bulk
from scripts.experiments.runner import run_experiment
from scripts.tests.emulated import BUILD, EXPERIMENTS, needs_mininet

MSS = 1448

pytestmark = needs_mininet()

ELEPHANT, MOUSE = 1_500_000, 100_000


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    spec = specmod.shorten(specmod.load(EXPERIMENTS / "e6-strategies.yaml"), runs=1)
    spec.bulk = Bulk(transfers=24, mouse_bytes=MOUSE, elephant_bytes=ELEPHANT, sse_s=1.5)
    spec.variants = [v for v in spec.variants if v.name in ("no-link", "ut", "on-demand", "dt-mbb")]
    out = tmp_path_factory.mktemp("e6")
    lines: list[str] = []
    counts = run_experiment(spec, out, say=lines.append, build=BUILD)
    return out, counts, lines


def _run(out, variant):
    d = out / variant / "run-000"
    return json.loads((d / "metrics.json").read_text()), json.loads((d / "run.json").read_text())


def _ocs_rx(meta):
    return sum(meta["port_counts"]["ocs"]["port_rx"].values())


def test_all_ran_and_delivered(results):
    out, counts, lines = results
    assert counts == {"skipped": 0, "ran": 4, "failed": 0}, lines
    for v in ("no-link", "ut", "on-demand", "dt-mbb"):
        m, _ = _run(out, v)
        assert len(m["flows"]) == 24 and all(f["bytes"] == f["size"] for f in m["flows"])  # analyze checks it too
        assert m["classes"]["elephant"]["n"] == 3 and m["classes"]["mouse"]["n"] == 21


def test_where_the_traffic_went(results):
    out, _, _ = results
    _, none = _run(out, "no-link")
    assert _ocs_rx(none) == 0
    m, od = _run(out, "on-demand")
    assert len(m["changes"]) == 1
    elephant_frames = 3 * ELEPHANT // MSS
    # the elephants' data and ACKs cross the OCS, minus what was sent before the circuit came up
    assert _ocs_rx(od) > 0.5 * elephant_frames
    # leaf1's spine port (3) sent the mice's data; without the elephant far less than with it
    spine_od = od["port_counts"]["leaf1"]["port_tx"]["3"]
    spine_none = none["port_counts"]["leaf1"]["port_tx"]["3"]
    assert spine_none - spine_od > 0.5 * ELEPHANT // MSS


def test_plain_changes_strand_packets_mbb_does_not(results):
    out, _, _ = results
    ut, _ = _run(out, "ut")
    dt, _ = _run(out, "dt-mbb")
    assert len(ut["changes"]) >= 1 and len(dt["changes"]) >= 1
    # lost into the dark: at the optical links, beyond what their own queues dropped (congestion)
    ut_dark = ut["optical_lost"] - ut["optical_queue_drops"]
    dt_dark = dt["optical_lost"] - dt["optical_queue_drops"]
    seen = {v: {k: m[k] for k in ("probes", "optical_lost", "optical_queue_drops", "changes", "cpu_busy_pct")}
            for v, m in (("ut", ut), ("dt-mbb", dt))}
    assert ut["probes"] == 0 and ut_dark > 0, seen  # frames sent into the moved link while it was dark
    # mbb moved the traffic to the electrical path first: only its own probes went into the dark
    assert dt["probes"] > 0 and dt_dark <= dt["probes"], seen
