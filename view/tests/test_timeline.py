"""The folders of view/timeline.py on records shaped as the run writes them (control/events.py,
emulation/ocs's event log, Emulation.port_counters, `ss -tin`)."""

from __future__ import annotations

from scripts.hosts.kernel import parse_ss
from topo.generators import ucd4
from view.graph import build
from view.timeline import EventFolder, FlowFolder, LinkRates, OcsFolder

GRAPH = build(ucd4())


def test_a_procedure_becomes_spans_and_its_writes_stay_in_their_step() -> None:
    f = EventFolder()
    got = [s for e in [
        {"event": "procedure-start", "t_wall": 10.0, "procedure": "mbb"},
        {"event": "step-start", "t_wall": 10.1, "step": "to-shadow"},
        {"event": "to-shadow", "t_wall": 10.2, "inserts": 0, "modifies": 10, "deletes": 0},
        {"event": "step-done", "t_wall": 10.3, "step": "to-shadow"},
        {"event": "probe-ok", "t_wall": 10.4, "src": ["s2", 2], "dst": ["s3", 2]},
        {"event": "procedure-error", "t_wall": 10.5, "step": "probe", "error": "timeout"},
        {"event": "install", "t_wall": 11.0, "inserts": 3, "modifies": 1, "deletes": 0},
    ] for s in f.feed(e)]
    assert [(s.lane, s.label, s.t, s.t_end, s.open) for s in got] == [
        ("procedure", "mbb", 10.0, None, True),
        ("steps", "to-shadow", 10.1, None, True),
        ("steps", "to-shadow", 10.1, 10.3, False),
        ("steps", "probe s2:2>s3:2", 10.4, None, False),
        ("procedure", "mbb failed at probe: timeout", 10.0, 10.5, False),
        ("controller", "install: 4 writes", 11.0, None, False),
    ]
    assert got[0].id == got[4].id and got[4].kind == "failed"


def test_a_circuit_is_lit_once_both_its_ports_are_up_after_the_command() -> None:
    f = OcsFolder(GRAPH)  # ucd4's OCS has 6 ports: output o is port o - 6
    _, s = f.feed({"event": "command", "t_wall": 1.0, "removed": [], "added": [[3, 10], [4, 9]]})
    assert s.lit == []  # connected, but no light yet
    for port in (3, 4):
        spans, s = f.feed({"event": "port-down", "t_wall": 1.1, "slot": port})
        assert spans[0].lane == f"dark {GRAPH.fibres[port]}" and spans[0].open
    _, s = f.feed({"event": "port-up", "t_wall": 1.5, "slot": 3})
    assert (s.lit, s.dark) == ([], [4])
    spans, s = f.feed({"event": "port-up", "t_wall": 1.6, "slot": 4})
    assert (s.lit, s.dark) == ([(3, 4)], [])
    assert (spans[0].t, spans[0].t_end, spans[0].open) == (1.1, 1.6, False)
    _, s = f.feed({"event": "command", "t_wall": 2.0, "removed": [[3, 10]], "added": []})
    assert s.lit == []


def test_rates_each_way_from_one_end_and_a_missing_switch_keeps_its_last_reading() -> None:
    rates = LinkRates(GRAPH)
    edge = "s2:2-ocs:3"  # s2 is its source: port_tx is forward, port_rx back
    r0 = {"s2": {"port_tx": {2: (0, 0)}, "port_rx": {2: (0, 0)}, "port_enq": {2: (5, 0)}, "port_deq": {2: (5, 0)}}}
    assert rates.feed(100.0, r0, {}) is None
    r1 = {"s2": {"port_tx": {"2": (10, 2_500_000)}, "port_rx": {"2": (5, 125_000)},
                 "port_enq": {"2": (20, 0)}, "port_deq": {"2": (17, 0)}}}
    s = rates.feed(101.0, r1, {"s2": {2: 1}}, times={"s2": 101.0})
    assert (s.links[edge].forward, s.links[edge].back, s.links[edge].drops) == (20.0, 1.0, 3)
    assert s.versions == {"s2": {2: 1}}
    assert edge not in rates.feed(102.0, {}, {}).links  # s2 not read this time: no rate, not zero
    s = rates.feed(103.0, {"s2": {"port_tx": {"2": (20, 5_000_000)}}}, {})
    assert s.links[edge].forward == 10.0  # 2.5 MB over the 2 s since s2's last reading
    assert s.links[edge].forward * s.links[edge].seconds == 20.0  # rate x its interval: what the link carried


def test_flow_points_from_ss_samples_without_the_control_connection() -> None:
    def sample(t: float, rtt: float, cwnd: int, acked: int, retrans: int) -> str:
        return (f"@@ {t}\nESTAB 0 0 10.0.2.2:40001 10.0.3.2:5201\n\t cubic rtt:{rtt}/1 cwnd:{cwnd} "
                f"bytes_acked:{acked} retrans:0/{retrans}\n"
                "ESTAB 0 0 10.0.2.2:40002 10.0.3.2:5201\n\t cubic rtt:1/1 cwnd:10 bytes_acked:50\n")

    text = sample(1.0, 5.0, 10, 100_000, 0) + sample(1.5, 6.0, 12, 725_000, 1)
    points = FlowFolder().feed(parse_ss(text))
    assert list(points) == ["10.0.2.2:40001>10.0.3.2:5201"]
    first, second = points["10.0.2.2:40001>10.0.3.2:5201"]
    assert (first.rate_mbit, first.rtt_ms, first.cwnd, first.retrans) == (None, 5.0, 10, 0)
    assert (second.rate_mbit, second.rtt_ms, second.cwnd, second.retrans) == (10.0, 6.0, 12, 1)
