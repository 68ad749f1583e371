"""A Mininet node whose shell cannot start fails at once, naming the node and mnexec's words; a good
one starts as before. Needs root and Mininet (mnexec)."""

from __future__ import annotations

import os
import time

import pytest

pytestmark = [pytest.mark.root, pytest.mark.skipif(os.geteuid() != 0, reason="Mininet nodes need root")]
pytest.importorskip("mininet.node", reason="Mininet is not installed (make setup)")

from emulation.nodestart import NodeStartError, TimedHost  # noqa: E402 - after the skip checks

NAME = f"ns{os.getpid() % 10000}"


class _ForeignNamespace(TimedHost):
    """mnexec told to attach to the namespaces of a process that does not exist: it exits at once, as
    it does with `remount: Invalid argument` in a chroot whose root is not a mount point."""

    def startShell(self, mnopts: str | None = None) -> None:  # noqa: N802 - Mininet's name
        super().startShell("-cda999999999")


def test_a_node_whose_shell_exits_fails_with_its_name_and_why() -> None:
    t0 = time.monotonic()
    with pytest.raises(NodeStartError) as err:
        _ForeignNamespace(f"{NAME}x")
    assert time.monotonic() - t0 < 5
    msg = str(err.value)
    assert msg.startswith(f"node {NAME}x: its shell did not start (mnexec exited with 1)"), msg
    assert "/proc/999999999/ns/net" in msg and "mount point" in msg, msg


def test_a_node_whose_shell_never_prompts_times_out() -> None:
    class Silent(TimedHost):
        start_timeout = 1.0

        def _popen(self, cmd: list[str], **params: object) -> object:
            # a process that never prints the shell's prompt: Mininet's read would wait forever
            return super()._popen(["sleep", "60"], **params)

    t0 = time.monotonic()
    with pytest.raises(NodeStartError, match=rf"node {NAME}s: its shell did not start \(no prompt after 1 s\)"):
        Silent(f"{NAME}s")
    assert time.monotonic() - t0 < 5


def test_a_good_node_starts_and_runs_commands() -> None:
    host = TimedHost(f"{NAME}g")
    try:
        assert host.cmd("echo started").strip() == "started"
    finally:
        host.terminate()
