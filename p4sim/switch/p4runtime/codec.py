"""Values between P4Runtime bytestrings and Python ints, and table match keys, checked as PI checks them.

P4Runtime spec section "Bytestrings": a receiver accepts a bytestring of any length whose value fits
in the bitwidth (canonical or padded); a value that does not fit is OUT_OF_RANGE, an empty one is
INVALID_ARGUMENT. Responses use the canonical form (shortest, at least one byte).

Match fields and action parameters arrive as plain tuples (`Match`, `Param`), from protobuf messages
or from the fast wire decoder of Write requests (wire.py). A match key is the p4sim Device's: a tuple with one item per match field, in P4Info (= bmv2 JSON key)
order, `Exact(v)` (exact and optional), `Lpm(v, prefix_len)`, `Ternary(v, mask)`, `Range(low, high)`,
and None for a don't-care field (omitted in the request), so two requests that mean the same entry
give the same tuple.
"""

from __future__ import annotations

from p4sim.switch.p4runtime.errors import OUT_OF_RANGE, P4RuntimeError, invalid
from p4sim.switch.p4runtime.proto import p4r
from p4sim.switch.p4runtime.schema import EXACT, LPM, OPTIONAL, RANGE, TERNARY, ActionInfo, TableInfo
from p4sim.switch.values import Exact, FieldMatch, Lpm, Range, Ternary

# A match field as parsed from the wire: (field_id, kind or None, value/low, prefix_len/mask/high/None)
Match = tuple[int, "str | None", bytes, "bytes | int | None"]
# An action parameter: (param_id, value)
Param = tuple[int, bytes]

_from_bytes = int.from_bytes


def decode(data: bytes, bitwidth: int, what: str) -> int:
    """Return the int a bytestring holds; raise for an empty one or one that does not fit bitwidth."""
    if not data:
        raise invalid(f"empty bytestring for {what}, expected a value of {bitwidth} bits")
    value = _from_bytes(data, "big")
    if value >> bitwidth:
        raise P4RuntimeError(OUT_OF_RANGE, f"value {value:#x} of {what} does not fit in {bitwidth} bits")
    return value


def encode(value: int) -> bytes:
    """Return the canonical bytestring of a non-negative int."""
    return value.to_bytes(max(1, (value.bit_length() + 7) >> 3), "big")


def match_tuple(m: p4r.FieldMatch) -> Match:
    """Return the Match tuple of a FieldMatch message."""
    kind = m.WhichOneof("field_match_type")
    if kind == EXACT:
        return (m.field_id, kind, m.exact.value, None)
    if kind == LPM:
        return (m.field_id, kind, m.lpm.value, m.lpm.prefix_len)
    if kind == TERNARY:
        return (m.field_id, kind, m.ternary.value, m.ternary.mask)
    if kind == RANGE:
        return (m.field_id, kind, m.range.low, m.range.high)
    if kind == OPTIONAL:
        return (m.field_id, kind, m.optional.value, None)
    return (m.field_id, kind, b"", None)


def match_key(table: TableInfo, matches: list[Match]) -> tuple[FieldMatch | None, ...]:
    """Return the match key of an entry's Match tuples, checking every field as PI does."""
    fields = table.match_fields
    if len(fields) == 1 and len(matches) == 1:  # fast path: the common single-field table
        mf = fields[0]
        if matches[0][0] != mf.id:
            raise invalid(f"unknown match field id {matches[0][0]} for table {table.name!r}")
        return (_field(mf.kind, mf.bitwidth, mf.name, matches[0]),)
    given: dict[int, Match] = {}
    by_id = table.fields_by_id
    for m in matches:
        if m[0] not in by_id:
            raise invalid(f"unknown match field id {m[0]} for table {table.name!r}")
        if m[0] in given:
            raise invalid(f"match field {by_id[m[0]].name!r} given twice")
        given[m[0]] = m
    key = []
    for mf in fields:
        m = given.get(mf.id)
        if m is None:
            if mf.kind == EXACT:
                raise invalid(f"missing exact match field {mf.name!r} of table {table.name!r}")
            key.append(None)
        else:
            key.append(_field(mf.kind, mf.bitwidth, mf.name, m))
    return tuple(key)


def _field(kind: str, bitwidth: int, name: str, m: Match) -> FieldMatch:
    _, which, a, b = m
    if which != kind:
        raise invalid(f"match field {name!r} is {kind}, got a {which or 'missing'} match")
    if kind == EXACT:
        return Exact(decode(a, bitwidth, name))
    if kind == LPM:
        plen = b
        if plen < 0 or plen > bitwidth:
            raise P4RuntimeError(OUT_OF_RANGE, f"prefix length {plen} of {name!r} is not in 0..{bitwidth}")
        if plen == 0:
            raise invalid(f"lpm match on {name!r} with prefix length 0: omit the field instead")
        value = decode(a, bitwidth, name)
        if value & ((1 << (bitwidth - plen)) - 1):
            raise invalid(f"lpm value {value:#x} of {name!r} has bits set beyond prefix length {plen}")
        return Lpm(value, plen)
    if kind == TERNARY:
        value = decode(a, bitwidth, name)
        mask = decode(b, bitwidth, name)
        if mask == 0:
            raise invalid(f"ternary match on {name!r} with mask 0: omit the field instead")
        if value & ~mask:
            raise invalid(f"ternary value {value:#x} of {name!r} has bits set outside mask {mask:#x}")
        return Ternary(value, mask)
    if kind == RANGE:
        low = decode(a, bitwidth, name)
        high = decode(b, bitwidth, name)
        if low > high:
            raise invalid(f"range of {name!r} has low {low:#x} above high {high:#x}")
        if low == 0 and high == (1 << bitwidth) - 1:
            raise invalid(f"range match on {name!r} covers every value: omit the field instead")
        return Range(low, high)
    return Exact(decode(a, bitwidth, name))  # optional


def check_priority(table: TableInfo, prio: int) -> int:
    """Return the entry's priority: required (> 0) for ternary/range/optional tables, else 0."""
    if table.needs_priority:
        if prio <= 0:
            raise invalid(f"table {table.name!r} has ternary, range or optional fields: priority must be > 0")
        if prio > 0x7FFFFFFF:
            raise P4RuntimeError(OUT_OF_RANGE, f"priority {prio} is above the maximum 2147483647")
    elif prio != 0:
        raise invalid(f"priority {prio} given for table {table.name!r}, which has only exact/lpm fields")
    return prio


def key_to_proto(table: TableInfo, key: tuple[FieldMatch | None, ...], entry: p4r.TableEntry) -> None:
    """Append the match fields of a key to a table entry message, omitting don't-care fields."""
    for mf, item in zip(table.match_fields, key, strict=True):
        if item is None:
            continue
        fm = entry.match.add(field_id=mf.id)
        kind = mf.kind
        if kind == EXACT:
            fm.exact.value = encode(item.value)
        elif kind == LPM:
            fm.lpm.value = encode(item.value)
            fm.lpm.prefix_len = item.prefix_len
        elif kind == TERNARY:
            fm.ternary.value = encode(item.value)
            fm.ternary.mask = encode(item.mask)
        elif kind == RANGE:
            fm.range.low = encode(item.low)
            fm.range.high = encode(item.high)
        else:
            fm.optional.value = encode(item.value)


def params_of(msg: p4r.Action) -> list[Param]:
    """Return the Param tuples of an Action message."""
    return [(p.param_id, p.value) for p in msg.params]


def action_args(action: ActionInfo, given: list[Param]) -> list[int]:
    """Return the argument values of an action's Param tuples in parameter order, checking ids and widths."""
    params = action.params
    if len(given) != len(params):
        raise invalid(f"action {action.name!r} takes {len(params)} parameters, got {len(given)}")
    args = [0] * len(params)
    seen = 0
    by_id = action.params_by_id
    order = action.order
    for pid, value in given:
        info = by_id.get(pid)
        if info is None:
            raise invalid(f"unknown parameter id {pid} for action {action.name!r}")
        i = order[pid]
        if seen & (1 << i):
            raise invalid(f"parameter {info.name!r} of action {action.name!r} given twice")
        seen |= 1 << i
        args[i] = decode(value, info.bitwidth, f"parameter {info.name!r}")
    return args


def args_to_proto(action: ActionInfo, args: list[int], msg: p4r.Action) -> None:
    """Fill an action message from an action and its argument values."""
    msg.action_id = action.id
    for p, v in zip(action.params, args, strict=True):
        msg.params.add(param_id=p.id, value=encode(v))
