"""Entry files: write a whole network's documents lazily (one switch at a time), read them back, and
render entries as canonical one-line strings for tests, diffs and logs."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tablegen.entries import Doc, ocs_docs, switch_doc
from tablegen.graph import Fabric
from tablegen.routing import planner
from topo.model import encode

log = logging.getLogger(__name__)

@dataclass(slots=True)
class Summary:
    """What a generation run wrote."""

    files: int = 0
    members: int = 0
    groups: int = 0
    entries: int = 0
    by_table: dict[str, int] = field(default_factory=dict)

    def add(self, doc: Doc) -> None:
        """Count one document."""
        self.files += 1
        self.members += len(doc["action_profile_members"])
        self.groups += len(doc["action_profile_groups"])
        self.entries += len(doc["table_entries"])
        for e in doc["table_entries"]:
            self.by_table[e["table"]] = self.by_table.get(e["table"], 0) + 1


def documents(fabric: Fabric, mode: str, spray: str = "random", failover: bool | str = True) -> Iterator[Doc]:
    """Every switch's document, then every OCS's, computed one at a time."""
    plan = planner(fabric, spread=(mode == "static"))
    for name in fabric.switches:
        yield switch_doc(fabric, plan(name), mode, spray, failover)
    yield from ocs_docs(fabric)


def dumps(doc: Doc) -> str:
    """A document as JSON text with one entity per line."""
    parts = [f'  "switch": {json.dumps(doc["switch"])},', f'  "device_id": {doc["device_id"]},',
             f'  "program": {json.dumps(doc["program"])},']
    keys = ("action_profile_members", "action_profile_groups", "table_entries")
    for i, key in enumerate(keys):
        end = "," if i < len(keys) - 1 else ""
        items = doc[key]
        if items:
            body = ",\n".join("    " + encode(x) for x in items)
            parts.append(f'  "{key}": [\n{body}\n  ]{end}')
        else:
            parts.append(f'  "{key}": []{end}')
    return "{\n" + "\n".join(parts) + "\n}\n"


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
    for doc in documents(fabric, mode, spray, failover):
        (out / f"{doc['switch']}.json").write_text(dumps(doc))
        summary.add(doc)
    log.info("wrote %d files to %s: %d entries, %d members, %d groups", summary.files, out,
             summary.entries, summary.members, summary.groups)
    return summary


def read(path: str | Path) -> Doc:
    """Read one entry file."""
    try:
        doc = json.loads(Path(path).read_text())
    except OSError as exc:
        raise ValueError(f"entry file {str(path)!r}: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"entry file {str(path)!r}: not JSON ({exc.msg} at line {exc.lineno})") from None
    for key in ("switch", "program", "table_entries"):
        if not isinstance(doc, dict) or key not in doc:
            raise ValueError(f"entry file {str(path)!r}: missing {key!r}")
    return doc


def _value(v: Any) -> str:
    if isinstance(v, dict):
        if "mask" in v:
            return f"{v['value']}&&&{v['mask']}"
        if "low" in v:
            return f"{v['low']}..{v['high']}"
    return str(v)


def entry_str(entry: Doc) -> str:
    """A table entry as one canonical line, e.g. "route ipv4_dst=10.0.1.0/24 -> set_path(path_id=3)"."""
    match = " ".join(f"{k}={_value(v)}" for k, v in sorted(entry.get("match", {}).items()))
    head = entry["table"] + (" default" if entry.get("default") else "") + (f" {match}" if match else "")
    if "priority" in entry:
        head += f" priority={entry['priority']}"
    if "group_id" in entry:
        return f"{head} -> group {entry['group_id']}"
    if "member_id" in entry:
        return f"{head} -> member {entry['member_id']}"
    params = ", ".join(f"{k}={_value(v)}" for k, v in sorted(entry.get("params", {}).items()))
    return f"{head} -> {entry['action']}({params})"


def doc_lines(doc: Doc) -> list[str]:
    """Every entity of a document as canonical lines (members, groups, entries), for diffs."""
    lines = []
    for m in doc.get("action_profile_members", []):
        params = ", ".join(f"{k}={v}" for k, v in sorted(m["params"].items()))
        lines.append(f"member {m['profile']} {m['member_id']} -> {m['action']}({params})")
    for g in doc.get("action_profile_groups", []):
        ms = " ".join(f"{m['member_id']}@{m.get('watch_port', '-')}" for m in g["members"])
        lines.append(f"group {g['profile']} {g['group_id']} = [{ms}]")
    lines.extend(entry_str(e) for e in doc["table_entries"])
    return lines
