import pytest

from p4rt.entities import TableEntry
from p4rt.proto import p4r
from p4rt.resources import (
    CloneSession,
    CounterEntry,
    DigestConfig,
    DigestList,
    DirectCounterEntry,
    MeterEntry,
    MulticastGroup,
    Packet,
    RegisterEntry,
    decode_entity,
)


def test_counter_meter_register(schema):
    c = CounterEntry("port_rx", 3, 10, 1000)
    ent = c.to_proto(schema)
    assert ent.counter_entry.counter_id == 4001 and ent.counter_entry.index.index == 3
    assert str(decode_entity(schema, ent)) == "port_rx[3] packets=10 bytes=1000"
    assert not CounterEntry("port_rx").to_proto(schema).counter_entry.HasField("index")
    with pytest.raises(ValueError, match="index 512"):
        CounterEntry("port_rx", 512).to_proto(schema)
    m = MeterEntry("rate", 1, cir=100, cburst=10, pir=200, pburst=20)
    assert str(decode_entity(schema, m.to_proto(schema))) == "rate[1] cir=100 cburst=10 pir=200 pburst=20"
    with pytest.raises(ValueError, match="above pir"):
        MeterEntry("rate", 1, cir=300, pir=200).to_proto(schema)
    r = RegisterEntry("spray_rr", 7, 513)
    assert r.to_proto(schema).register_entry.data.bitstring == b"\x02\x01"
    assert str(decode_entity(schema, r.to_proto(schema))) == "spray_rr[7] = 513"


def test_direct_counter(schema):
    e = TableEntry.from_dict({"table": "path", "match": {"path_id": 2, "version": 0}, "action": "path_ecmp"})
    dc = DirectCounterEntry(e, 5, 500)
    back = decode_entity(schema, dc.to_proto(schema))
    assert str(back) == "[path path_id=2 version=0 -> path_ecmp()] packets=5 bytes=500"


def test_pre_entries(schema):
    mg = MulticastGroup.from_dict({"group_id": 1, "replicas": [1, {"port": 2, "instance": 1}]})
    assert str(decode_entity(schema, mg.to_proto(schema))) == "multicast 1 -> [1.0, 2.1]"
    cs = CloneSession.from_dict({"session_id": 5, "replicas": [255]})
    assert str(decode_entity(schema, cs.to_proto(schema))) == "clone 5 -> [255.0]"
    with pytest.raises(ValueError, match="replica"):
        MulticastGroup.from_dict({"group_id": 1, "replicas": ["x"]})


def test_packets_and_digests(schema):
    out = Packet(b"\x01\x02", {"egress_port": 3}).to_packet_out(schema)
    assert out.metadata[0].metadata_id == 1 and out.metadata[0].value == b"\x03"
    with pytest.raises(ValueError, match="packet_out metadata"):
        Packet(b"", {"ingress_port": 1}).to_packet_out(schema)
    pin = p4r.PacketIn(payload=b"xyz")
    pin.metadata.add(metadata_id=1, value=b"\x01\x00")
    assert Packet.from_packet_in(schema, pin) == Packet(b"xyz", {"ingress_port": 256})
    dl = p4r.DigestList(digest_id=8001, list_id=4, timestamp=9)
    d = dl.data.add()
    d.struct.members.add(bitstring=b"\x0a")
    d.struct.members.add(bitstring=b"\x00\x01")
    got = DigestList.from_proto(schema, dl)
    assert got.digest == "learn_t" and got.data == [(10, 1)] and got.list_id == 4


def test_digest_config(schema):
    cfg = DigestConfig("learn_t", max_timeout_ns=5, max_list_size=10, ack_timeout_ns=7)
    ent = cfg.to_proto(schema)
    assert ent.digest_entry.digest_id == 8001 and ent.digest_entry.config.max_list_size == 10
    assert decode_entity(schema, ent) == cfg
