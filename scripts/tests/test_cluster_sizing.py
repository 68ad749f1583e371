"""The cluster sizing model (scripts/tools/cluster_sizing.py): the fat-tree's counts, the hops, the table."""

from __future__ import annotations

import pytest

from scripts.tools.cluster_sizing import TARGETS, fat_tree, main, mean_hops, row


def test_fat_tree_counts_and_hops() -> None:
    assert fat_tree(4) == (20, 16, 16)
    assert fat_tree(16) == (320, 1024, 1024)
    # k=4: of 15 other hosts 1 on the same edge switch, 2 in the pod, 12 in other pods
    assert mean_hops(4) == pytest.approx((1 * 1 + 2 * 3 + 12 * 5) / 15)


def test_one_server_has_no_tunnels_and_more_traffic_needs_more_servers(capsys: pytest.CaptureFixture[str]) -> None:
    small = row(16, TARGETS[0], 1.0, 24.0, 2).strip(" |").split(" | ")
    assert small[4:7] == ["1", "0", "0"]  # servers, links between them, their traffic
    busy = row(16, TARGETS[0], 100.0, 24.0, 2).strip(" |").split(" | ")
    assert int(busy[4]) > 1 and int(busy[5]) > 0
    assert main(["--rate-mbit", "2"]) == 0 and "| 48 | 2880 / 27648 |" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["--server-cores", "0"])
