"""A fast decoder of WriteRequest bytes for the hot path: plain table entries without protobuf objects.

Written when the runtime was protobuf 3.20's pure-Python one: parsing a WriteRequest of 1,000 table
entries into messages cost ~130 µs per entry, twice the cost of applying it (measured with
scripts/bench/p4runtime.py and cProfile); upb parses in ~0.3 µs an entry, but reading the parsed
messages' fields from Python still costs (scripts/bench/proto_runtime.py). This module reads the wire format
(protobuf encoding spec: varints, length-delimited fields) directly. A table entry with only
table_id, match, action (a direct action, a member or a group) and priority becomes an EntryMsg;
every other entity, or an entry with any other field, is parsed by protobuf (`p4r.Entity.FromString`)
so no field is ever ignored.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from google.protobuf.descriptor import Descriptor, FieldDescriptor

from p4sim.switch.p4runtime.entries import EntryMsg
from p4sim.switch.p4runtime.proto import p4r

_KINDS = {2: "exact", 3: "ternary", 4: "lpm", 6: "range", 7: "optional"}


class _Fallback(Exception):
    """The bytes hold something the fast path does not decode: use protobuf."""


@dataclass(slots=True)
class WriteMsg:
    """A decoded WriteRequest: header fields and (update type, EntryMsg or p4r.Entity) per update."""

    device_id: int = 0
    election_id: tuple[int, int] | None = None
    role: str = ""
    atomicity: int = 0
    updates: list[tuple[int, EntryMsg | p4r.Entity]] = field(default_factory=list)


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    b = buf[pos]
    if b < 0x80:
        return b, pos + 1
    result = b & 0x7F
    shift = 7
    pos += 1
    while True:
        b = buf[pos]
        result |= (b & 0x7F) << shift
        pos += 1
        if b < 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise _Fallback


def _len(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    """Read a length prefix; return (start, stop) of the field's bytes."""
    n = buf[pos]
    if n < 0x80:
        pos += 1
    else:
        n, pos = _varint(buf, pos)
    stop = pos + n
    if stop > end:
        raise _Fallback
    return pos, stop


def _match(buf: bytes, pos: int, end: int) -> tuple:
    # FieldMatch: 1 field_id (varint); 2 exact, 3 ternary, 4 lpm, 6 range, 7 optional (messages)
    fid = 0
    kind = None
    a: bytes = b""
    b: bytes | int | None = None
    while pos < end:
        tag = buf[pos]
        pos += 1
        if tag == 0x08:
            fid, pos = _varint(buf, pos)
            continue
        num = tag >> 3
        if tag & 7 != 2 or num not in _KINDS or kind is not None:
            raise _Fallback
        kind = _KINDS[num]
        s, pos = _len(buf, pos, end)
        b = 0 if num == 4 else (b"" if num in (3, 6) else None)
        while s < pos:
            t2 = buf[s]
            s += 1
            if t2 == 0x0A:  # value / low
                s, e = _len(buf, s, pos)
                a = buf[s:e]
                s = e
            elif t2 == 0x10 and num == 4:  # prefix_len
                v, s = _varint(buf, s)
                b = v - (1 << 64) if v >= 1 << 63 else v
            elif t2 == 0x12 and num in (3, 6):  # mask / high
                s, e = _len(buf, s, pos)
                b = buf[s:e]
                s = e
            else:
                raise _Fallback
    return (fid, kind, a, b)


def _action(buf: bytes, pos: int, end: int) -> tuple | None:
    # TableAction: 1 action (message), 2 member id, 3 group id (varints); 4 action set: protobuf
    if pos >= end:
        return None
    tag = buf[pos]
    pos += 1
    if tag == 0x10 or tag == 0x18:
        v, pos = _varint(buf, pos)
        if pos != end:
            raise _Fallback
        return ("member" if tag == 0x10 else "group", v)
    if tag != 0x0A:
        raise _Fallback
    s, pos = _len(buf, pos, end)
    if pos != end:
        raise _Fallback
    # Action: 1 action_id (varint), 4 params (messages: 2 param_id varint, 3 value bytes)
    aid = 0
    params = []
    while s < pos:
        t2 = buf[s]
        s += 1
        if t2 == 0x08:
            aid, s = _varint(buf, s)
        elif t2 == 0x22:
            ps, pe = _len(buf, s, pos)
            pid, pval = 0, b""
            while ps < pe:
                t3 = buf[ps]
                ps += 1
                if t3 == 0x10:
                    pid, ps = _varint(buf, ps)
                elif t3 == 0x1A:
                    vs, ve = _len(buf, ps, pe)
                    pval = buf[vs:ve]
                    ps = ve
                else:
                    raise _Fallback
            params.append((pid, pval))
            s = pe
        else:
            raise _Fallback
    return ("action", aid, params)


def _table_entry(buf: bytes, pos: int, end: int) -> EntryMsg:
    # TableEntry: 1 table_id, 2 match (repeated), 3 action, 4 priority; anything else: protobuf
    msg = EntryMsg(0, [], 0, None)
    seen_action = False
    while pos < end:
        tag = buf[pos]
        pos += 1
        if tag == 0x08:
            msg.table_id, pos = _varint(buf, pos)
        elif tag == 0x12:
            s, pos = _len(buf, pos, end)
            msg.matches.append(_match(buf, s, pos))
        elif tag == 0x1A and not seen_action:
            s, pos = _len(buf, pos, end)
            msg.action = _action(buf, s, pos)
            seen_action = True
        elif tag == 0x20:
            v, pos = _varint(buf, pos)
            msg.priority = v - (1 << 64) if v >= 1 << 63 else v
        else:
            raise _Fallback
    return msg


def _entity(buf: bytes, pos: int, end: int) -> EntryMsg | p4r.Entity:
    # Entity: 2 table_entry; every other entity kind is parsed by protobuf
    try:
        if buf[pos] == 0x12:
            s, e = _len(buf, pos + 1, end)
            if e == end:
                return _table_entry(buf, s, e)
    except (_Fallback, IndexError):
        pass
    return p4r.Entity.FromString(buf[pos:end])


def decode_write(data: bytes) -> WriteMsg:
    """Decode a serialized WriteRequest; raise google.protobuf DecodeError if it is malformed."""
    try:
        msg = WriteMsg()
        pos, end = 0, len(data)
        updates = msg.updates
        while pos < end:
            tag = data[pos]
            pos += 1
            if tag == 0x22:  # 4 updates: 1 type (varint), 2 entity (message)
                s, pos = _len(data, pos, end)
                utype = 0
                ent: EntryMsg | p4r.Entity | None = None
                while s < pos:
                    t2 = data[s]
                    s += 1
                    if t2 == 0x08:
                        utype, s = _varint(data, s)
                    elif t2 == 0x12:
                        es, s = _len(data, s, pos)
                        ent = _entity(data, es, s)
                    else:
                        raise _Fallback
                updates.append((utype, p4r.Entity() if ent is None else ent))
            elif tag == 0x08:
                msg.device_id, pos = _varint(data, pos)
            elif tag == 0x1A:  # 3 election_id: 1 high, 2 low
                s, pos = _len(data, pos, end)
                hi = lo = 0
                while s < pos:
                    t2 = data[s]
                    s += 1
                    if t2 == 0x08:
                        hi, s = _varint(data, s)
                    elif t2 == 0x10:
                        lo, s = _varint(data, s)
                    else:
                        raise _Fallback
                msg.election_id = (hi, lo)
            elif tag == 0x28:
                msg.atomicity, pos = _varint(data, pos)
            elif tag == 0x32:
                s, pos = _len(data, pos, end)
                msg.role = data[s:pos].decode()
            elif tag == 0x10:
                _, pos = _varint(data, pos)  # role_id (deprecated)
            else:
                raise _Fallback
        return msg
    except (_Fallback, IndexError, UnicodeDecodeError):
        return from_proto(p4r.WriteRequest.FromString(data))


def bad_utf8_field(desc: Descriptor, data: bytes) -> str | None:
    """The full name of the first string field in `data` (a `desc` message) that is not UTF-8, else None.
    The upb runtime's DecodeError does not name it (the pure-Python runtime's UnicodeDecodeError did)."""
    try:
        return _bad_utf8(desc, data, 0, len(data))
    except (_Fallback, IndexError):
        return None


def _bad_utf8(desc: Descriptor, buf: bytes, pos: int, end: int) -> str | None:
    while pos < end:
        key, pos = _varint(buf, pos)
        wire_type = key & 7
        if wire_type == 0:
            _, pos = _varint(buf, pos)
        elif wire_type in (1, 5):
            pos += 8 if wire_type == 1 else 4
        elif wire_type == 2:
            s, pos = _len(buf, pos, end)
            field = desc.fields_by_number.get(key >> 3)
            if field is None:
                continue
            if field.type == FieldDescriptor.TYPE_STRING:
                try:
                    buf[s:pos].decode()
                except UnicodeDecodeError:
                    return field.full_name
            elif field.type == FieldDescriptor.TYPE_MESSAGE:
                found = _bad_utf8(field.message_type, buf, s, pos)
                if found:
                    return found
        else:  # groups: not in proto3
            return None
    return None


def from_proto(req: p4r.WriteRequest) -> WriteMsg:
    """Return the WriteMsg of a parsed WriteRequest (every update as a p4r.Entity)."""
    election = (req.election_id.high, req.election_id.low) if req.HasField("election_id") else None
    return WriteMsg(req.device_id, election, req.role, req.atomicity,
                    [(u.type, u.entity) for u in req.updates])
