"""Link settings of the emulation that need no root: the RPS CPU mask."""

from __future__ import annotations

import pytest

from emulation import links


@pytest.mark.parametrize(("cpus", "mask"), [(1, "1"), (2, "3"), (32, "ffffffff"), (40, "ff,ffffffff")])
def test_cpu_mask_covers_every_cpu_in_sysfs_format(monkeypatch: pytest.MonkeyPatch, cpus: int, mask: str) -> None:
    monkeypatch.setattr(links.os, "cpu_count", lambda: cpus)
    assert links.cpu_mask() == mask


def test_host_rps_command_writes_the_hosts_sysfs_and_never_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(links.os, "cpu_count", lambda: 2)
    cmd = links.steer_by_flow_command("h1-eth0")
    assert cmd.argv == ["tee", "/sys/class/net/h1-eth0/queues/rx-0/rps_cpus"] and cmd.stdin == "3\n"
    assert cmd.may_fail  # a kernel without RPS: the host is still configured
