"""Runtime-state API of the p4sim switch: tables, profiles, counters, registers, meters, PRE, hashes."""

from __future__ import annotations

import pytest

from p4sim.switch import hashes
from p4sim.switch.device import Device
from p4sim.switch.externs import MeterConfig
from p4sim.switch.pre import CloneSession
from p4sim.switch.testdata import programs
from p4sim.switch.values import (
    ActionCall,
    AlreadyExists,
    Exact,
    GroupRef,
    InUse,
    InvalidArgument,
    Lpm,
    MemberRef,
    NotFound,
    Range,
    ReadOnly,
    Ternary,
)


@pytest.fixture
def pl():  # noqa: ANN201
    d = Device(ports={1: "a", 2: "b"})
    return d.load_pipeline(programs.l3_ecmp())


def test_bad_json_is_a_value_error() -> None:
    d = Device()
    for bad, what in ((b"{", "not valid JSON"), (b"[]", "JSON object"), (b'{"__meta__": {"version": [1, 0]}}', "2.x"),
                      (b'{"__meta__": {"version": [2, 23]}, "headers": [{"name": "x"}]}', "malformed")):
        with pytest.raises(ValueError, match=what):
            d.load_pipeline(bad)
    with pytest.raises(ValueError, match="standard_metadata"):
        d.load_pipeline(b'{"__meta__": {"version": [2, 23]}}')


def test_table_info_and_suffix_lookup(pl) -> None:  # noqa: ANN001
    t = pl.table("acl")
    assert t.name == "Ing.acl" and t.info.needs_priority
    assert [(k.name, k.match_type, k.bitwidth) for k in t.info.key] == [
        ("ipv4_src", "ternary", 32), ("ipv4_dst", "ternary", 32), ("ingress_port", "ternary", 9)]
    with pytest.raises(ValueError, match="not found"):
        pl.table("nope")


def test_exact_table_crud_and_errors(pl) -> None:  # noqa: ANN001
    t = pl.table("port_mac")
    e = t.insert((Exact(2),), ActionCall("Eg.set_smac", (5,)))
    assert e.handle > 0 and t.get((Exact(2),)) is e
    with pytest.raises(AlreadyExists):
        t.insert((Exact(2),), ActionCall("Eg.set_smac", (5,)))
    with pytest.raises(InvalidArgument, match="does not fit in 9 bits"):
        t.insert((Exact(512),), ActionCall("Eg.set_smac", (5,)))
    with pytest.raises(InvalidArgument, match="does not fit in 48 bits"):
        t.insert((Exact(3),), ActionCall("Eg.set_smac", (1 << 48,)))
    with pytest.raises(InvalidArgument, match="not one of"):
        t.insert((Exact(3),), ActionCall("Ing.drop"))
    with pytest.raises(InvalidArgument, match="takes 1 arguments"):
        t.insert((Exact(3),), ActionCall("Eg.set_smac", ()))
    with pytest.raises(InvalidArgument, match="priority"):
        t.insert((Exact(3),), ActionCall("Eg.set_smac", (1,)), priority=3)
    t.modify((Exact(2),), ActionCall("NoAction"))
    assert t.get((Exact(2),)).action == ActionCall("NoAction")
    assert t.lookup(2).aid == pl.program.table_actions("Eg.port_mac")["NoAction"].id
    t.delete((Exact(2),))
    with pytest.raises(NotFound):
        t.delete((Exact(2),))
    assert t.lookup(2) is None and len(t) == 0


def test_lpm_longest_prefix_wins_and_validation(pl) -> None:  # noqa: ANN001
    prof = pl.profile("ecmp_selector")
    prof.insert_member(1, ActionCall("Ing.set_next_hop", (1, 1)))
    prof.insert_member(2, ActionCall("Ing.set_next_hop", (2, 2)))
    t = pl.table("route")
    t.insert((Lpm(0x0A000000, 8),), MemberRef(1))
    t.insert((Lpm(0x0A010000, 16),), MemberRef(2))
    assert t.lookup(0x0A010203).member.id == 2
    assert t.lookup(0x0A020203).member.id == 1
    assert t.lookup(0x0B000000) is None
    t.insert((None,), MemberRef(1))  # /0 (P4Runtime omits it)
    assert t.lookup(0x0B000000).member.id == 1
    with pytest.raises(InvalidArgument, match="bits set past"):
        t.insert((Lpm(0x0A000001, 8),), MemberRef(1))
    with pytest.raises(InvalidArgument, match="member, group or action set"):
        t.insert((Lpm(0x0C000000, 8),), ActionCall("Ing.drop"))
    with pytest.raises(InUse):
        prof.delete_member(1)
    t.delete((Lpm(0x0A000000, 8),))
    t.delete((None,))
    prof.delete_member(1)
    with pytest.raises(NotFound):
        t.insert((Lpm(0x0C000000, 8),), MemberRef(1))


def test_ternary_priority_and_missing_priority(pl) -> None:  # noqa: ANN001
    t = pl.table("acl")
    with pytest.raises(InvalidArgument, match="must be > 0"):
        t.insert((None, None, None), ActionCall("Ing.drop"))
    t.insert((Ternary(0x0A000000, 0xFF000000), None, None), ActionCall("Ing.drop"), priority=1)
    t.insert((Ternary(0x0A000001, 0xFFFFFFFF), None, None), ActionCall("NoAction"), priority=9)
    key = (0x0A000001 << 41) | (0x01020304 << 9) | 1
    assert t.lookup(key).priority == 9
    assert t.lookup((0x0A000002 << 41) | 1).priority == 1
    with pytest.raises(InvalidArgument, match="outside mask"):
        t.insert((Ternary(0x0A000001, 0xFF000000), None, None), ActionCall("NoAction"), priority=3)
    # same key, different priority: a different entry (P4Runtime identity is key + priority)
    t.insert((Ternary(0x0A000001, 0xFFFFFFFF), None, None), ActionCall("NoAction"), priority=4)
    assert len(t.entries()) == 3


def test_range_match() -> None:
    b = programs.Builder("r")
    b.header_type("h_t", [("a", 16), ("b", 8)])
    b.header("h", "h_t")
    b.doc["parsers"] = [{"name": "parser", "id": 0, "init_state": "start", "parse_states": [
        {"name": "start", "id": 0, "parser_ops": [], "transition_key": [], "transitions": [
            {"type": "default", "value": None, "mask": None, "next_state": None}]}]}]
    b.action("NoAction", [], [])
    ing = b.pipeline("ingress")
    b.pipeline("egress")
    ing["init_table"] = "t"
    b.table(ing, "t", [("range", ["h", "a"], "a"), ("exact", ["h", "b"], "b")], ["NoAction"], "NoAction")
    t = Device().load_pipeline(b.json()).table("t")
    t.insert((Range(100, 200), Exact(7)), ActionCall("NoAction"), priority=1)
    t.insert((Range(150, 160), Exact(7)), ActionCall("NoAction"), priority=2)
    assert t.lookup((155 << 8) | 7).priority == 2
    assert t.lookup((120 << 8) | 7).priority == 1
    assert t.lookup((201 << 8) | 7) is None and t.lookup((120 << 8) | 8) is None
    with pytest.raises(InvalidArgument, match="low"):
        t.insert((Range(5, 4), Exact(1)), ActionCall("NoAction"), priority=1)


def test_default_action_and_const(pl) -> None:  # noqa: ANN001
    t = pl.table("port_mac")
    assert t.get_default() == ActionCall("NoAction")
    t.set_default(ActionCall("Eg.set_smac", (7,)))
    assert t.default.args == (7,)
    t.reset_default()
    assert t.get_default() == ActionCall("NoAction")
    with pytest.raises(ReadOnly):
        pl.table("tbl_drop").set_default(ActionCall("Ing.drop"))


def test_const_entries_are_read_only() -> None:
    b = programs.Builder("c")
    b.header_type("h_t", [("a", 8)])
    b.header("h", "h_t")
    b.doc["parsers"] = [{"name": "parser", "id": 0, "init_state": "start", "parse_states": [
        {"name": "start", "id": 0, "parser_ops": [], "transition_key": [], "transitions": [
            {"type": "default", "value": None, "mask": None, "next_state": None}]}]}]
    b.action("NoAction", [], [])
    b.action("set", [("v", 8)], [programs.assign(programs.F("h", "a"), programs.R(0))])
    ing = b.pipeline("ingress")
    b.pipeline("egress")
    t = b.table(ing, "t", [("ternary", ["h", "a"], "a")], ["set", "NoAction"], "NoAction")
    t["entries"] = [
        {"match_key": [{"match_type": "ternary", "key": "0x01", "mask": "0xff"}],
         "action_entry": {"action_id": 1, "action_data": ["0x05"]}, "priority": 1},
        {"match_key": [{"match_type": "ternary", "key": "0x00", "mask": "0x00"}],
         "action_entry": {"action_id": 1, "action_data": ["0x09"]}, "priority": 2}]
    tbl = Device().load_pipeline(b.json()).table("t")
    assert [(e.is_const, e.args) for e in tbl.entries()] == [(True, (5,)), (True, (9,))]
    assert tbl.lookup(1).args == (5,) and tbl.lookup(2).args == (9,)  # first entry has the highest priority
    with pytest.raises(ReadOnly):
        tbl.insert((Ternary(3, 0xFF),), ActionCall("NoAction"), priority=1)


def test_profile_groups(pl) -> None:  # noqa: ANN001
    prof = pl.profile("ecmp_selector")
    prof.insert_member(1, ActionCall("Ing.set_next_hop", (1, 1)))
    with pytest.raises(AlreadyExists):
        prof.insert_member(1, ActionCall("Ing.set_next_hop", (1, 1)))
    with pytest.raises(InvalidArgument, match="not one of"):
        prof.insert_member(2, ActionCall("Eg.set_smac", (1,)))
    g = prof.insert_group(5, [(1, 2, None)])
    assert [m.id for m in g.active] == [1, 1]
    with pytest.raises(NotFound):
        prof.modify_group(5, [(9, 1, None)])
    with pytest.raises(InUse):
        prof.delete_member(1)
    pl.table("route").insert((Lpm(0, 0),), GroupRef(5))
    with pytest.raises(InUse):
        prof.delete_group(5)
    pl.table("route").delete((Lpm(0, 0),))
    prof.delete_group(5)
    prof.delete_member(1)


def test_counters_registers_meters(pl) -> None:  # noqa: ANN001
    c = pl.counter("port_rx")
    c.write(3, 10, 1000)
    assert c.read(3) == (10, 1000)
    c.reset()
    assert c.read(3) == (0, 0)
    with pytest.raises(InvalidArgument, match="index 512"):
        c.read(512)
    assert pl.direct_counters == {"Ing.acl_counter": "Ing.acl"}
    d = Device()
    rp = d.load_pipeline(programs.replicate())
    r = rp.register("reg")
    r.write(1, 0xFFFFFFFF)
    with pytest.raises(InvalidArgument, match="32 bits"):
        r.write(1, 1 << 32)
    m = rp.meter("meter")
    assert m.get_config(0) is None
    m.set_config(0, MeterConfig(10, 5, 20, 10))
    assert m.get_config(0) == MeterConfig(10, 5, 20, 10)
    with pytest.raises(InvalidArgument, match="cir"):
        m.set_config(1, MeterConfig(30, 5, 20, 10))


def test_pre(pl) -> None:  # noqa: ANN001
    d = Device()
    d.pre.insert_group(1, [(1, 0), (2, 0)])
    with pytest.raises(AlreadyExists):
        d.pre.insert_group(1, [])
    with pytest.raises(InvalidArgument, match="appears twice"):
        d.pre.modify_group(1, [(1, 0), (1, 0)])
    d.pre.modify_group(1, [(3, 1)])
    assert d.pre.groups[1] == ((3, 1),)
    d.pre.insert_session(100, CloneSession(((255, 0),), class_of_service=1, packet_length_bytes=128))
    with pytest.raises(NotFound):
        d.pre.delete_session(101)
    with pytest.raises(InvalidArgument, match="port 600"):
        d.pre.insert_session(2, CloneSession(((600, 0),)))


def test_hashes_are_bmv2_bit_exact() -> None:
    check = b"123456789"
    assert hashes.crc16(check) == 0xBB3D  # CRC-16/ARC
    assert hashes.crc32(check) == 0xCBF43926
    assert hashes.algorithm("crc16_custom")(check) == 0xBB3D
    assert hashes.algorithm("crcCCITT")(check) == 0x29B1
    assert hashes.algorithm("crc8_custom")(check) == 0xF4
    assert hashes.identity(b"\x01\x02\x03") == 0x010203
    assert hashes.identity(bytes(range(1, 11))) == 0x0102030405060708
    assert hashes.xor16(b"\x12\x34\x56\x78\x9a") == 0x1234 ^ 0x5678 ^ 0x9A00
    hdr = bytes.fromhex("450000730000400040110000c0a80001c0a800c7")
    assert hashes.csum16(hdr) == 0xB861
    assert hashes.csum16(b"\x00\x00") == 0xFFFF and hashes.csum16(b"\xff\xff") == 0
    with pytest.raises(ValueError, match="not supported"):
        hashes.algorithm("sha1")


def test_single_rate_meters() -> None:
    """srTCM (RFC 2697) and single-rate two-colour meters, packet units, times in µs."""
    rp = Device().load_pipeline(programs.replicate())
    m = rp.meter("meter")
    # cir 1000 pkt/s, committed bucket 2, excess bucket 1: a burst of 4 is G G Y R
    m.set_config(0, MeterConfig(cir=1000, cburst=2, eburst=1, kind="srTCM"))
    assert [m.execute(0, 64, 0) for _ in range(4)] == [0, 0, 1, 2]
    # 1 ms later one token arrived: it refills the committed bucket first
    assert [m.execute(0, 64, 1000) for _ in range(2)] == [0, 2]
    # 10 ms idle: committed bucket full (2), the overflow tops up the excess bucket (1)
    assert [m.execute(0, 64, 11000) for _ in range(4)] == [0, 0, 1, 2]
    m.set_config(1, MeterConfig(cir=1000, cburst=1, kind="sr2C"))
    assert [m.execute(1, 64, 0) for _ in range(2)] == [0, 2]
    assert m.execute(1, 64, 1000) == 0
    # a single-rate meter has no cir <= pir rule; an unknown kind is refused
    m.set_config(2, MeterConfig(cir=30, cburst=5, eburst=10, kind="srTCM"))
    with pytest.raises(InvalidArgument, match="kind 'xx'"):
        m.set_config(3, MeterConfig(cir=1, cburst=1, kind="xx"))


def test_commit_exempts_the_loaded_program_from_garbage_collection() -> None:
    import gc

    d = Device(ports={1: "a"}, freeze_heap=True)
    pl = d.load_pipeline(programs.l3_ecmp())
    gc.unfreeze()
    d.commit_pipeline(pl)
    try:
        # a full collection afterwards scans only what came later, not the program and its tables
        assert gc.get_freeze_count() > 1000 and d.pipeline is pl
    finally:
        gc.unfreeze()


def test_commit_frees_the_replaced_pipeline() -> None:
    import gc
    import weakref

    d = Device(ports={1: "a"}, freeze_heap=True)
    d.commit_pipeline(d.load_pipeline(programs.l3_ecmp()))
    old = weakref.ref(d.pipeline)
    d.commit_pipeline(d.load_pipeline(programs.l3_ecmp()))
    try:
        # a pipeline is cyclic garbage once replaced: a freeze that outlives it would keep it forever
        assert old() is None and d.pipeline is not None
    finally:
        gc.unfreeze()
