"""p4c's STF packet tests (`testdata/p4_16_samples/*.stf`), read and turned into P4Runtime writes.

An STF file is a list of commands, one a line (`#` starts a comment):

    add TABLE [PRIORITY] KEY:VALUE ... ACTION(ARG:VALUE, ...)   a table entry (p4c's tools/stf grammar)
    setdefault TABLE ACTION(ARG:VALUE, ...)                    the table's default action
    packet PORT HEX...                                         a frame into PORT
    expect PORT [HEX...]                                       a frame out of PORT; `*` matches any nibble,
                                                               a final `$` asks for exactly that length;
                                                               no data: anything (or nothing) on PORT
    mirroring_add SESSION PORT, mc_mgrp_create GROUP, mc_node_create RID PORT..., mc_node_associate
    GROUP NODE, wait                                           simple_switch_CLI's commands

Names are matched as p4c's bmv2 STF runner (backends/bmv2/bmv2stf.py) matches them against the JSON: a
table or action by its name or a suffix of it, a key field by its name or a dotted suffix, `f$0` for
`f[0]`, `h.valid`/`h$` for `h.$valid$`. Here they are matched against the P4Info (the same names), so the
entries go over P4Runtime to any switch. Ternary values take their mask from the `*` nibbles, LPM values
their prefix from the digits before the first `*` (or `/LEN`); an STF priority P is P4Runtime priority
P + 1 (both: larger wins; P4Runtime wants it positive).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from p4rt.entities import TableEntry
from p4rt.proto import p4i
from p4rt.resources import CloneSession, MulticastGroup, Replica
from p4rt.schema import P4Schema, resolve_suffix
from p4rt.values import prefix_mask

_ADD = re.compile(r"add\s+(?P<table>\S+)\s+(?:(?P<prio>\d+)\s+)?(?P<keys>.*?)\s*"
                  r"(?P<action>[\w.$\[\]]+)\s*\((?P<args>[^)]*)\)\s*(?:=\s*\w+)?$")
_SETDEFAULT = re.compile(r"setdefault\s+(?P<table>\S+)\s+(?P<action>[\w.$\[\]]+)\s*\((?P<args>[^)]*)\)$")
_STACK_INDEX = re.compile(r"\$(\d+)")
_DIGIT_BITS = {"0x": 4, "0b": 1, "0o": 3}
_MT = p4i.MatchField


@dataclass(slots=True)
class Add:
    """`add`: a table entry in STF's words."""

    line: int
    table: str
    priority: int | None
    keys: list[tuple[str, str]]
    action: str
    args: list[tuple[str, str]]


@dataclass(slots=True)
class SetDefault:
    """`setdefault`: a table's default action."""

    line: int
    table: str
    action: str
    args: list[tuple[str, str]]


@dataclass(slots=True)
class PacketIn:
    """`packet`: a frame sent into a port."""

    line: int
    port: int
    frame: bytes


@dataclass(slots=True)
class Expect:
    """`expect`: a frame out of a port, as hex digits and `*` (None: any output on the port)."""

    line: int
    port: int
    pattern: str | None
    exact_length: bool = False

    def matches(self, frame: bytes) -> bool:
        """True if `frame` is what this expects (p4c's tools/testutils.compare_pkt)."""
        if self.pattern is None:
            return True
        got = frame.hex().upper()
        if len(got) < len(self.pattern) or (self.exact_length and len(got) > len(self.pattern)):
            return False
        return all(e == "*" or e == g for e, g in zip(self.pattern, got, strict=False))


@dataclass(slots=True)
class Pre:
    """A simple_switch_CLI command of the packet replication engine (mirroring_add, mc_*)."""

    line: int
    command: str
    numbers: list[int]


@dataclass(slots=True)
class Script:
    """An STF file: its commands in order."""

    path: Path
    commands: list[Add | SetDefault | PacketIn | Expect | Pre] = field(default_factory=list)

    def ports(self) -> list[int]:
        """Every port a packet is sent into or expected out of."""
        return sorted({c.port for c in self.commands if isinstance(c, PacketIn | Expect)})


def _pairs(text: str, where: str) -> list[tuple[str, str]]:
    out = []
    for item in text.replace(",", " ").split():
        name, sep, value = item.partition(":")
        if not sep or not name or not value:
            raise ValueError(f"{where}: {item!r}: expected NAME:VALUE")
        out.append((name, value))
    return out


def _hex(words: list[str], where: str) -> str:
    text = "".join(words).upper()
    if not re.fullmatch(r"[0-9A-F*]*", text):
        raise ValueError(f"{where}: {' '.join(words)!r}: expected hex digits and '*'")
    return text


def read(path: Path) -> Script:
    """Read an STF file; ValueError naming the file and line of anything it cannot read."""
    script = Script(path)
    for number, raw in enumerate(path.read_text().splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        where = f"{path}:{number}"
        words = line.split()
        cmd = words[0].lower()
        try:
            if cmd == "add" and (m := _ADD.match(line)):
                prio = int(m["prio"]) if m["prio"] is not None else None
                script.commands.append(Add(number, m["table"], prio, _pairs(m["keys"], where), m["action"],
                                           _pairs(m["args"], where)))
            elif cmd == "setdefault" and (m := _SETDEFAULT.match(line)):
                script.commands.append(SetDefault(number, m["table"], m["action"], _pairs(m["args"], where)))
            elif cmd == "packet" and len(words) >= 2:
                script.commands.append(PacketIn(number, int(words[1]), bytes.fromhex(_hex(words[2:], where))))
            elif cmd == "expect" and len(words) >= 2:
                exact = words[-1].endswith("$")
                data = [w.rstrip("$") for w in words[2:]]
                script.commands.append(Expect(number, int(words[1]), _hex(data, where) if data else None, exact))
            elif cmd in ("mirroring_add", "mc_mgrp_create", "mc_node_create", "mc_node_associate"):
                script.commands.append(Pre(number, cmd, [int(w, 0) for w in words[1:]]))
            elif cmd != "wait":
                raise ValueError(f"{where}: {line!r}: not an STF command this runner knows")
        except ValueError as exc:
            raise ValueError(str(exc) if str(exc).startswith(where) else f"{where}: {exc}") from None
    return script


# -- STF names and values to P4Runtime entities -------------------------------------------------------


def _field(table: p4i.Table, name: str) -> p4i.MatchField:
    """The match field STF's `name` means (bmv2stf's rules, on P4Info names)."""
    name = _STACK_INDEX.sub(r"[\1]", name)
    names = [mf.name for mf in table.match_fields]
    for cand in (name, name + "$", name + ".$valid$", name[:-len("valid")] + "$valid$" if name.endswith(".valid")
                 else None):
        if cand in names:
            return table.match_fields[names.index(cand)]
    hits = [n for n in names if n.endswith(("." + name, "." + name + "$"))]
    if name == "valid":
        hits += [n for n in names if n == "$valid$" or n.endswith(".$valid$")]
    if len(hits) != 1:
        raise ValueError(f"key field {name!r} of table {table.preamble.name!r}: "
                         f"{'ambiguous' if hits else 'unknown'}; fields {names}")
    return table.match_fields[names.index(hits[0])]


def _digits(value: str) -> tuple[str, int]:
    """(digits after the base prefix, bits per digit) of an STF number with a 0x/0b/0o prefix."""
    bits = _DIGIT_BITS.get(value[:2].lower())
    if bits is None:
        raise ValueError(f"{value!r}: expected 0x, 0b or 0o digits where '*' may stand")
    return value[2:], bits


def _match_value(mf: p4i.MatchField, value: str) -> Any:
    """The p4rt human match value of an STF key value for field `mf`."""
    if mf.match_type == _MT.TERNARY:
        if "*" not in value and value[:2].lower() not in _DIGIT_BITS:
            number = int(value, 0)
            return {"value": number, "mask": (1 << mf.bitwidth) - 1}
        digits, bits = _digits(value)
        base = 1 << bits
        mask = int("".join(("0" if d == "*" else f"{base - 1:x}") for d in digits) or "0", base)
        number = int(digits.replace("*", "0"), base)
        # digits above the field are not part of it (bmv2's CLI takes the low bits)
        full = (1 << mf.bitwidth) - 1
        return {"value": number & mask & full, "mask": mask & full}
    if mf.match_type == _MT.LPM:
        if "/" in value:
            addr, _, length = value.partition("/")
            number, plen = int(addr.replace("*", "0"), 0), int(length, 0)
        elif value[:2].lower() not in _DIGIT_BITS:
            return int(value, 0)
        else:
            digits, bits = _digits(value)
            number, plen = int(digits.replace("*", "0"), 1 << bits), (len(digits) - digits.count("*")) * bits
        plen = min(plen, mf.bitwidth)
        return f"{number & prefix_mask(plen, mf.bitwidth)}/{plen}"
    return int(value.replace("*", "0"), 0)


def table_entry(schema: P4Schema, cmd: Add | SetDefault) -> TableEntry:
    """The P4Runtime table entry of an `add` or `setdefault` command; ValueError naming its line."""
    try:
        table = schema.tables[resolve_suffix(cmd.table, [t.preamble.name for t in schema.tables], "table")]
        name = table.preamble.name
        actions = {schema.actions[ref.id].preamble.name for ref in table.action_refs}
        action = resolve_suffix(cmd.action, actions, f"action of table {name!r}")
        params = {p: int(v, 0) for p, v in cmd.args}
        if isinstance(cmd, SetDefault):
            return TableEntry(name, action=action, params=params, default=True)
        match = {}
        for key, value in cmd.keys:
            mf = _field(table, key)
            match[mf.name] = _match_value(mf, value)
        priority = 0
        if schema.needs_priority(table):
            priority = (cmd.priority or 0) + 1
        return TableEntry(name, match=match, action=action, params=params, priority=priority)
    except ValueError as exc:
        raise ValueError(f"line {cmd.line}: {exc}") from None


@dataclass(slots=True)
class PreState:
    """Multicast groups and clone sessions as simple_switch_CLI's commands build them."""

    nodes: list[tuple[int, list[int]]] = field(default_factory=list)  # node handle -> (rid, ports)
    groups: dict[int, list[int]] = field(default_factory=dict)        # group -> node handles
    written: set[tuple[str, int]] = field(default_factory=set)

    def apply(self, cmd: Pre) -> tuple[str, Any]:
        """Take one command; return ("insert"|"modify", entity) to write, or ("", None)."""
        n = cmd.numbers
        if cmd.command == "mirroring_add":
            return self._write("clone", n[0], CloneSession(n[0], [Replica(n[1], 0)]))
        if cmd.command == "mc_mgrp_create":
            self.groups[n[0]] = []
            return "", None
        if cmd.command == "mc_node_create":
            self.nodes.append((n[0], n[1:]))
            return "", None
        self.groups.setdefault(n[0], []).append(n[1])
        replicas = [Replica(port, self.nodes[h][0]) for h in self.groups[n[0]] for port in self.nodes[h][1]]
        return self._write("group", n[0], MulticastGroup(n[0], replicas))

    def _write(self, kind: str, ident: int, entity: Any) -> tuple[str, Any]:
        first = (kind, ident) not in self.written
        self.written.add((kind, ident))
        return ("insert" if first else "modify"), entity
