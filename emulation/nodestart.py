"""A Mininet node whose shell must start in time, or the run stops with the node's name and why.

Mininet starts each node's shell (`mnexec ... bash`) on a pseudo-terminal and reads until the
prompt. When mnexec fails (in a chroot whose root is not a mount point it prints `remount: Invalid
argument` and exits), the prompt never comes, and since Mininet keeps the terminal's other end open
the read never ends: the run waited forever, silently. Here a watchdog thread closes that end once
the shell has exited, or after NODE_START_TIMEOUT_S, so the read fails and the start raises
NodeStartError with what the shell printed.
"""

from __future__ import annotations

import logging
import os
import threading
import time

from mininet.node import Host

log = logging.getLogger(__name__)

NODE_START_TIMEOUT_S = 30.0


class NodeStartError(RuntimeError):
    """A node's shell did not start: the node's name, mnexec's exit status and output."""


class TimedStart:
    """Mixin for a Mininet Node: startShell with a deadline (see the module docstring)."""

    start_timeout: float = NODE_START_TIMEOUT_S

    def startShell(self, mnopts: str | None = None) -> None:  # noqa: N802 - Mininet's name
        """Mininet's startShell; NodeStartError when the shell exits or hangs before its prompt."""
        self._start_output: list[str] = []
        self._start_failed = threading.Event()
        done = threading.Event()
        watchdog = threading.Thread(target=self._watch_start, args=(done,), daemon=True)
        self._starting = True
        watchdog.start()
        try:
            super().startShell(mnopts)  # type: ignore[misc]
        except (OSError, IndexError):  # EIO from the hung-up terminal, or an empty read
            if not self._start_failed.is_set():
                raise
        finally:
            self._starting = False
            done.set()
            watchdog.join()
        if self._start_failed.is_set():
            why = self._why()
            self.stdin.close()  # type: ignore[attr-defined]  # our end of the terminal; the node never joins the net
            self.shell = None
            raise NodeStartError(why)

    def read(self, size: int = 1024) -> str:
        """Mininet's read; while the shell starts, what it prints is kept for the error message."""
        data = super().read(size)  # type: ignore[misc]
        if getattr(self, "_starting", False):
            self._start_output.append(data)
        return data

    def _watch_start(self, done: threading.Event) -> None:
        """Until the start is done: if the shell exited, or time ran out (then it is killed), close the
        terminal's other end, so Mininet's read of the prompt fails instead of waiting forever."""
        deadline = time.monotonic() + self.start_timeout
        while not done.wait(0.1):
            shell = getattr(self, "shell", None)
            exited = shell is not None and shell.poll() is not None
            if exited or time.monotonic() > deadline:
                if shell is not None and not exited:
                    shell.kill()
                    shell.wait()
                self._start_failed.set()
                os.close(self.slave)  # type: ignore[attr-defined]
                self.slave = None
                return

    def _why(self) -> str:
        shell = getattr(self, "shell", None)
        code = shell.returncode if shell is not None else None
        said = " ".join("".join(self._start_output).replace("\x7f", "").split())
        how = (f"mnexec exited with {code}" if code is not None and code >= 0
               else f"no prompt after {self.start_timeout:.0f} s")
        return (f"node {self.name}: its shell did not start ({how}){': ' + said if said else ''}; "  # type: ignore[attr-defined]
                "Mininet needs root, and a root file system that is a mount point (a container, not a chroot)")


class TimedHost(TimedStart, Host):
    """A Mininet host whose shell starts within NODE_START_TIMEOUT_S or raises NodeStartError."""
