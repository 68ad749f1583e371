"""scripts.experiments.strategies: the per-run loss accounting at the optical links (pure parts)."""

import pytest

from scripts.experiments.strategies import DRAIN_MS, drain_ms, hosts_by_tor, optical_lost
from topo import generators


def _counts(tor_tx, ocs_rx, dark, ocs_tx, tor_rx):
    return {"leaf1": {"port_tx": {"4": tor_tx[0]}, "port_rx": {"4": tor_rx[0]}},
            "leaf4": {"port_tx": {"4": tor_tx[1]}, "port_rx": {"4": tor_rx[1]}},
            "ocs": {"port_rx": {"1": ocs_rx[0], "2": ocs_rx[1]}, "port_tx": {"1": ocs_tx[0], "2": ocs_tx[1]},
                    "dark_drops": {"1": dark}}}


PORTS = [["leaf1", 4], ["leaf4", 4]]


def test_optical_lost_sums_both_directions_and_the_dark_port():
    # leaf1 sent 100, the OCS got 90 (10 lost on the way up), 3 of those hit a dark port; leaf4 sent
    # 50, all arrived; the OCS sent 87 + 50 down and leaf4 got 85 (2 lost on the way down)
    c = _counts(tor_tx=(100, 50), ocs_rx=(90, 50), dark=3, ocs_tx=(50, 87), tor_rx=(50, 85))
    assert optical_lost(c, PORTS) == 10 + 3 + 2


def test_optical_lost_nothing_without_ports_or_counts():
    assert optical_lost({}, PORTS) == 0
    c = _counts(tor_tx=(5, 5), ocs_rx=(5, 5), dark=0, ocs_tx=(5, 5), tor_rx=(5, 5))
    assert optical_lost(c, PORTS) == 0
    assert optical_lost(c, []) == 0


def test_hosts_by_tor_in_address_order():
    topo = generators.leafspine(leaves=2, spines=1, hosts_per_leaf=11, rate_mbit=4)
    hosts = hosts_by_tor(topo)
    assert hosts["leaf1"][:3] == ["h1_1", "h1_2", "h1_3"] and hosts["leaf1"][-1] == "h1_11"  # .2 .. .12
    assert "spine1" not in hosts


def test_drain_ms_empties_a_full_optical_queue():
    topo = generators.hybrid(generators.leafspine(leaves=6, spines=2, hosts_per_leaf=2, rate_mbit=4), replace=True)
    assert drain_ms(topo) == DRAIN_MS  # the kernel's queue: not bounded by the spec, the default
    topo.params["switch_queue_pkts"] = 4
    assert drain_ms(topo) == DRAIN_MS  # 4 frames at 4 Mbit/s: 12.3 ms, under the default
    topo.params["switch_queue_pkts"] = 64
    # 64 frames of 1538 B at the OCS's 4 Mbit/s: 197 ms, and a quarter more
    assert drain_ms(topo) == pytest.approx(1.25 * 64 * 1538 * 8 / 4000)
    assert drain_ms(generators.leafspine(leaves=2, spines=1, hosts_per_leaf=1)) == DRAIN_MS  # no OCS
