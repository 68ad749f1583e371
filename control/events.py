"""Experiment event log: one JSON object per line with monotonic and wall-clock timestamps."""

from __future__ import annotations

import json
import logging
import threading
import time
from pathlib import Path
from typing import Any, TextIO

log = logging.getLogger(__name__)


class EventLog:
    """Thread-safe JSON-lines writer; keeps the records in memory too (for reports and tests)."""

    def __init__(self, path: str | Path | None = None, stream: TextIO | None = None) -> None:
        self._file = open(path, "a", buffering=1) if path else None  # noqa: SIM115 - closed in close()
        self._stream = stream
        self._lock = threading.Lock()
        self.records: list[dict[str, Any]] = []

    def log(self, event: str, **fields: Any) -> dict[str, Any]:
        """Record one event and return it."""
        record = {"t_mono": time.monotonic(), "t_wall": time.time(), "event": event, **fields}
        line = json.dumps(record, default=str)
        with self._lock:
            self.records.append(record)
            for out in (self._file, self._stream):
                if out is not None:
                    out.write(line + "\n")
        log.info("%s %s", event, {k: v for k, v in fields.items()})
        return record

    def close(self) -> None:
        """Close the file."""
        if self._file is not None:
            self._file.close()
            self._file = None
