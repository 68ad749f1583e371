"""The OCS emulator daemon of a run: its handle, and what its event log says about ports."""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from control.ocs.polatis import PolatisDriver


@dataclass(slots=True)
class OcsProcess:
    """The OCS emulator daemon of one OCS: its SCPI address, process and current circuits."""

    name: str
    size: int
    proc: subprocess.Popen
    address: str
    circuits: list[tuple[int, int]] = field(default_factory=list)

    def driver(self, timeout: float = 5.0):
        """A connected control.ocs.polatis.PolatisDriver to the emulator (close it, or use `with`)."""
        host, port = self.address.rsplit(":", 1)
        return PolatisDriver(host, int(port), timeout=timeout).open()


def ports_up_since(events: Path, offset: int) -> set[int]:
    """OCS slots whose last port event in the emulator's log after `offset` is port-up."""
    with open(events, "rb") as f:
        f.seek(offset)
        lines = f.read().splitlines()
    up: set[int] = set()
    for line in lines:
        try:
            rec = json.loads(line)
        except ValueError:
            continue  # a line still being written
        if rec.get("event") == "port-up":
            up.add(int(rec["slot"]))
        elif rec.get("event") == "port-down":
            up.discard(int(rec["slot"]))
    return up



def first_line(proc: subprocess.Popen, sink: BinaryIO, timeout: float) -> str:
    """The first stdout line of a daemon ('' if it exits or stays silent); later lines go to sink."""
    lines: queue.Queue[bytes] = queue.Queue()

    def pump() -> None:
        assert proc.stdout is not None
        first = True
        try:
            for raw in proc.stdout:
                if first:
                    lines.put(raw)
                    first = False
                else:
                    sink.write(raw)
                    sink.flush()
        except (OSError, ValueError):  # the run closed the pipe or the log while stopping
            pass
        if first:
            lines.put(b"")

    threading.Thread(target=pump, name="ocs-stdout", daemon=True).start()
    try:
        return lines.get(timeout=timeout).decode(errors="replace")
    except queue.Empty:
        return ""
