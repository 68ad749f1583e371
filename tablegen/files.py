"""Entry files: write a whole network's states lazily (one switch at a time, tablegen.entries.network_states)
as the documents of tablegen/FORMAT.md, and read them back as states."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from p4rt.state import SwitchState
from tablegen.entries import network_states
from tablegen.graph import Fabric

log = logging.getLogger(__name__)


@dataclass(slots=True)
class Summary:
    """What a generation run wrote."""

    files: int = 0
    members: int = 0
    groups: int = 0
    entries: int = 0
    by_table: dict[str, int] = field(default_factory=dict)

    def add(self, state: SwitchState) -> None:
        """Count one switch's state (default entries included)."""
        self.files += 1
        self.members += len(state.members)
        self.groups += len(state.groups)
        self.entries += len(state.entries) + len(state.defaults)
        for e in state.entries + state.defaults:
            self.by_table[e.table] = self.by_table.get(e.table, 0) + 1


def write(fabric: Fabric, mode: str, out_dir: str | Path, spray: str = "random",
          failover: bool | str = True) -> Summary:
    """Write DIR/<switch>.json for every switch and DIR/<ocs>.json for every OCS; return counts."""
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise ValueError(f"output {str(out)!r}: exists and is not a directory; expected a directory (new or "
                         "existing) for one file per switch")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"output {str(out)!r}: cannot create it ({exc.strerror}); expected a writable "
                         "directory") from None
    summary = Summary()
    for st in network_states(fabric, mode, spray, failover):
        (out / f"{st.name}.json").write_text(st.to_json())
        summary.add(st)
    log.info("wrote %d files to %s: %d entries, %d members, %d groups", summary.files, out,
             summary.entries, summary.members, summary.groups)
    return summary


def read(path: str | Path) -> SwitchState:
    """Read one entry file; a file that cannot be read or parsed is named in a one-line ValueError."""
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise ValueError(f"entry file {str(path)!r}: {exc.strerror}") from None
    return SwitchState.from_json(text, f"entry file {str(path)!r}")
