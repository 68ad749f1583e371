"""The fast WriteRequest decoder gives what protobuf gives, and falls back to protobuf for the rest."""

from __future__ import annotations

import random

import pytest
from google.protobuf.message import DecodeError

from p4sim.switch.p4runtime import wire
from p4sim.switch.p4runtime.entries import EntryMsg, entry_msg
from p4sim.switch.p4runtime.proto import p4r


def _random_entry(rng: random.Random) -> p4r.TableEntry:
    te = p4r.TableEntry(table_id=rng.choice([1, 127, 128, 33554433, 0xFFFFFFFF]))
    for fid in rng.sample(range(1, 6), rng.randint(0, 4)):
        fm = te.match.add(field_id=fid)
        kind = rng.choice(["exact", "lpm", "ternary", "range", "optional"])
        v = rng.randbytes(rng.randint(0, 20))
        if kind == "exact":
            fm.exact.value = v
        elif kind == "lpm":
            fm.lpm.value, fm.lpm.prefix_len = v, rng.choice([0, 1, 24, 300, -1])
        elif kind == "ternary":
            fm.ternary.value, fm.ternary.mask = v, rng.randbytes(3)
        elif kind == "range":
            fm.range.low, fm.range.high = v, rng.randbytes(2)
        else:
            fm.optional.value = v
    which = rng.choice(["action", "member", "group", "none"])
    if which == "action":
        te.action.action.action_id = rng.randint(0, (1 << 32) - 1)
        for pid in range(rng.randint(0, 3)):
            te.action.action.params.add(param_id=pid + 1, value=rng.randbytes(rng.randint(0, 200)))
    elif which == "member":
        te.action.action_profile_member_id = rng.randint(0, 1 << 31)
    elif which == "group":
        te.action.action_profile_group_id = rng.randint(0, 1 << 31)
    te.priority = rng.choice([0, 1, 100, 1 << 30, -5])
    return te


def _plain(m: EntryMsg) -> tuple:
    return (m.table_id, m.matches, m.priority, m.action, m.is_default)


def test_fast_path_equals_protobuf() -> None:
    rng = random.Random(4)
    for _ in range(300):
        req = p4r.WriteRequest(device_id=rng.randint(0, 1 << 40), role=rng.choice(["", "r1"]),
                               atomicity=rng.choice([0, 1]))
        if rng.random() < 0.8:
            req.election_id.high, req.election_id.low = rng.randint(0, 3), rng.randint(0, (1 << 64) - 1)
        entries = [_random_entry(rng) for _ in range(rng.randint(0, 5))]
        for te in entries:
            req.updates.add(type=rng.randint(0, 3)).entity.table_entry.CopyFrom(te)
        got = wire.decode_write(req.SerializeToString())
        assert (got.device_id, got.role, got.atomicity) == (req.device_id, req.role, req.atomicity)
        assert got.election_id == ((req.election_id.high, req.election_id.low)
                                   if req.HasField("election_id") else None)
        assert [u for u, _ in got.updates] == [u.type for u in req.updates]
        for (_, ent), te in zip(got.updates, entries, strict=True):
            assert isinstance(ent, EntryMsg)  # every entry above is plain: decoded without protobuf
            assert _plain(ent) == _plain(entry_msg(te))


def test_other_fields_and_entities_fall_back_to_protobuf() -> None:
    req = p4r.WriteRequest(device_id=1)
    te = req.updates.add(type=p4r.Update.INSERT).entity.table_entry
    te.table_id = 5
    te.controller_metadata = 7  # not on the fast path
    req.updates.add(type=p4r.Update.MODIFY).entity.counter_entry.counter_id = 9
    d = req.updates.add(type=p4r.Update.MODIFY).entity.table_entry
    d.table_id, d.is_default_action = 5, True
    got = wire.decode_write(req.SerializeToString())
    assert [type(e) for _, e in got.updates] == [p4r.Entity] * 3
    assert got.updates[0][1].table_entry.controller_metadata == 7
    assert got.updates[1][1].counter_entry.counter_id == 9


def test_malformed_bytes_raise_decode_error() -> None:
    data = p4r.WriteRequest(device_id=1, updates=[p4r.Update(type=1, entity=p4r.Entity(
        table_entry=p4r.TableEntry(table_id=3)))]).SerializeToString()
    with pytest.raises(DecodeError):
        wire.decode_write(data[:-1])
    with pytest.raises(DecodeError):
        wire.decode_write(b"\x22\xff\xff\xff\xff\x0f")


def test_read_encoder_gives_protobuf_bytes() -> None:
    from p4sim.switch.p4runtime.entries import entry_entity_bytes, entry_to_proto
    from p4sim.switch.p4runtime.testing import running_switch
    from p4sim.tests.test_p4runtime_server import (
        ECMP,
        INS,
        SELECTOR,
        SET_NHOP,
        SET_PATH,
        TO_CPU,
        Client,
        acl,
        b,
        route,
    )

    with running_switch() as sw:
        c = Client(sw.address)
        c.arbitrate()
        c.set_pipeline()
        m = p4r.Entity()
        m.action_profile_member.action_profile_id, m.action_profile_member.member_id = SELECTOR, 300
        m.action_profile_member.action.action_id = SET_NHOP
        m.action_profile_member.action.params.add(param_id=1, value=b"\x01")
        m.action_profile_member.action.params.add(param_id=2, value=b"\x02")
        ecmp = p4r.Entity()
        ecmp.table_entry.table_id = ECMP
        ecmp.table_entry.match.add(field_id=1).exact.value = b"\x01\x00"
        ecmp.table_entry.action.action_profile_member_id = 300
        c.write((INS, route(0x0A000000, 8, SET_NHOP, b(300 % 256), b(0xAABBCCDDEEFF, 6))),
                (INS, route(0, 0, SET_PATH, b(0))), (INS, acl(0x0A000001, 0xFFFFFF00 | 1, 1 << 20, TO_CPU, port=300,
                                                              proto=(0, 17))), (INS, m), (INS, ecmp))
        binding = sw.service.committed.binding
        n = 0
        for tb in binding.tables.values():
            for e in tb.table.entries():
                ent = p4r.Entity()
                entry_to_proto(binding, tb, e, ent.table_entry)
                assert entry_entity_bytes(binding, tb, e) == ent.SerializeToString()
                n += 1
        assert n == 4
        c.close()
