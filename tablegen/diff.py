"""Differences between two entry documents of one switch (e.g. two circuit maps of ucd4), in an
order that is safe to apply: inserts and modifies bottom-up (members, groups, entries), then deletes
top-down (entries, groups, members), so no entry ever points at a missing group or member."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from tablegen.files import doc_lines, entry_str

Doc = dict[str, Any]


@dataclass(slots=True)
class Change:
    """One entity to insert, modify or delete; old/new are the entities of the two documents."""

    op: str  # "insert" | "modify" | "delete"
    kind: str  # "member" | "group" | "entry"
    old: dict[str, Any] | None
    new: dict[str, Any] | None

    def __str__(self) -> str:
        """One canonical line: "+ ...", "- ..." or "~ old => new"."""
        def line(x: dict[str, Any]) -> str:
            doc = {"action_profile_members": [x] if self.kind == "member" else [],
                   "action_profile_groups": [x] if self.kind == "group" else [],
                   "table_entries": [x] if self.kind == "entry" else []}
            return doc_lines(doc)[0] if self.kind != "entry" else entry_str(x)

        if self.op == "insert":
            return f"+ {line(self.new or {})}"
        if self.op == "delete":
            return f"- {line(self.old or {})}"
        return f"~ {line(self.old or {})} => {line(self.new or {})}"


def _key(kind: str, x: dict[str, Any]) -> tuple[Any, ...]:
    if kind == "member":
        return (x["profile"], x["member_id"])
    if kind == "group":
        return (x["profile"], x["group_id"])
    return (x["table"], json.dumps(x.get("match", {}), sort_keys=True), bool(x.get("default")),
            x.get("priority"))


def diff_docs(old: Doc, new: Doc) -> list[Change]:
    """The changes that turn the switch state of `old` into that of `new`, in a safe order."""
    if old.get("switch") != new.get("switch"):
        raise ValueError(f"documents of {old.get('switch')!r} and {new.get('switch')!r}: expected one switch")
    sections = (("member", "action_profile_members"), ("group", "action_profile_groups"),
                ("entry", "table_entries"))
    ups: list[Change] = []
    downs: list[Change] = []
    for kind, field in sections:
        a = {_key(kind, x): x for x in old.get(field, [])}
        b = {_key(kind, x): x for x in new.get(field, [])}
        for k, x in b.items():
            if k not in a:
                ups.append(Change("insert", kind, None, x))
            elif a[k] != x:
                ups.append(Change("modify", kind, a[k], x))
        downs.extend(Change("delete", kind, x, None) for k, x in a.items() if k not in b)
    order = {"entry": 0, "group": 1, "member": 2}
    downs.sort(key=lambda c: order[c.kind])
    return ups + downs
