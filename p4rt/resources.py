"""Counters, meters, registers, multicast groups, clone sessions, packet-in/out and digests."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from p4rt import values
from p4rt.entities import ActionProfileGroup, ActionProfileMember, TableEntry
from p4rt.proto import p4r
from p4rt.schema import P4Schema, short_name


def _checked_index(kind: str, name: str, index: int, size: int) -> int:
    """The index of a cell of an array of `size` cells; ValueError if it is outside the array."""
    if not 0 <= index < size:
        raise ValueError(f"{kind} {name!r} index {index}: expected 0..{size - 1}")
    return index


@dataclass(slots=True)
class CounterEntry:
    """An indirect counter cell (index None = every cell, for reads)."""

    counter: str
    index: int | None = None
    packets: int = 0
    bytes: int = 0

    def to_proto(self, schema: P4Schema) -> p4r.Entity:
        """Encode as a p4r.Entity (write sets the cell, read with index None reads all)."""
        info = schema.counters[self.counter]
        msg = p4r.CounterEntry(counter_id=info.preamble.id)
        if self.index is not None:
            msg.index.index = _checked_index("counter", self.counter, self.index, info.size)
            msg.data.packet_count, msg.data.byte_count = self.packets, self.bytes
        return p4r.Entity(counter_entry=msg)

    @classmethod
    def from_proto(cls, schema: P4Schema, entity: p4r.Entity) -> CounterEntry:
        """Decode from a p4r.Entity."""
        msg = entity.counter_entry
        name = short_name(schema.counters[msg.counter_id].preamble.name)
        return cls(name, msg.index.index, msg.data.packet_count, msg.data.byte_count)

    def __str__(self) -> str:
        return f"{short_name(self.counter)}[{self.index}] packets={self.packets} bytes={self.bytes}"


@dataclass(slots=True)
class DirectCounterEntry:
    """The direct counter cell of one table entry."""

    entry: TableEntry
    packets: int = 0
    bytes: int = 0

    def to_proto(self, schema: P4Schema) -> p4r.Entity:
        """Encode as a p4r.Entity."""
        msg = p4r.DirectCounterEntry()
        msg.table_entry.CopyFrom(self.entry.to_proto(schema).table_entry)
        msg.data.packet_count, msg.data.byte_count = self.packets, self.bytes
        return p4r.Entity(direct_counter_entry=msg)

    @classmethod
    def from_proto(cls, schema: P4Schema, entity: p4r.Entity) -> DirectCounterEntry:
        """Decode from a p4r.Entity."""
        msg = entity.direct_counter_entry
        entry = TableEntry.from_proto(schema, msg.table_entry)
        return cls(entry, msg.data.packet_count, msg.data.byte_count)

    def __str__(self) -> str:
        return f"[{self.entry}] packets={self.packets} bytes={self.bytes}"


@dataclass(slots=True)
class MeterEntry:
    """An indirect meter cell's configuration (rates in units/s, bursts in units)."""

    meter: str
    index: int | None = None
    cir: int = 0
    cburst: int = 0
    pir: int = 0
    pburst: int = 0

    def to_proto(self, schema: P4Schema) -> p4r.Entity:
        """Encode as a p4r.Entity."""
        info = schema.meters[self.meter]
        msg = p4r.MeterEntry(meter_id=info.preamble.id)
        if self.index is not None:
            msg.index.index = _checked_index("meter", self.meter, self.index, info.size)
            if self.cir > self.pir:
                raise ValueError(f"meter {self.meter!r}: cir {self.cir} above pir {self.pir}")
            msg.config.cir, msg.config.cburst = self.cir, self.cburst
            msg.config.pir, msg.config.pburst = self.pir, self.pburst
        return p4r.Entity(meter_entry=msg)

    @classmethod
    def from_proto(cls, schema: P4Schema, entity: p4r.Entity) -> MeterEntry:
        """Decode from a p4r.Entity."""
        msg = entity.meter_entry
        c = msg.config
        name = short_name(schema.meters[msg.meter_id].preamble.name)
        return cls(name, msg.index.index, c.cir, c.cburst, c.pir, c.pburst)

    def __str__(self) -> str:
        return (f"{short_name(self.meter)}[{self.index}] cir={self.cir} cburst={self.cburst} "
                f"pir={self.pir} pburst={self.pburst}")


@dataclass(slots=True)
class RegisterEntry:
    """A register cell holding a bitstring (bmv2's PI cannot serve these; p4sim can)."""

    register: str
    index: int | None = None
    value: int = 0

    def to_proto(self, schema: P4Schema) -> p4r.Entity:
        """Encode as a p4r.Entity."""
        info = schema.registers[self.register]
        msg = p4r.RegisterEntry(register_id=info.preamble.id)
        if self.index is not None:
            msg.index.index = _checked_index("register", self.register, self.index, info.size)
            width = info.type_spec.bitstring.bit.bitwidth or info.type_spec.bitstring.int.bitwidth
            msg.data.bitstring = values.encode(self.value, width)
        return p4r.Entity(register_entry=msg)

    @classmethod
    def from_proto(cls, schema: P4Schema, entity: p4r.Entity) -> RegisterEntry:
        """Decode from a p4r.Entity."""
        msg = entity.register_entry
        name = short_name(schema.registers[msg.register_id].preamble.name)
        return cls(name, msg.index.index, int.from_bytes(msg.data.bitstring, "big"))

    def __str__(self) -> str:
        return f"{short_name(self.register)}[{self.index}] = {self.value}"


@dataclass(slots=True)
class Replica:
    """One copy made by the packet replication engine."""

    port: int
    instance: int = 0


def _replicas(items: list[Any]) -> list[Replica]:
    out = []
    for r in items:
        if isinstance(r, int):
            out.append(Replica(r))
        elif isinstance(r, dict):
            out.append(Replica(int(r["port"]), int(r.get("instance", 0))))
        elif isinstance(r, Replica):
            out.append(r)
        else:
            raise ValueError(f"replica {r!r}: expected a port number or {{'port': P, 'instance': I}}")
    return out


def _replica_dicts(replicas: list[Replica]) -> list[dict[str, int]]:
    return [{"port": r.port, "instance": r.instance} if r.instance else {"port": r.port} for r in replicas]


def _encode_replicas(replicas: list[Replica], msgs: Any) -> None:
    """Add the replicas to a repeated p4r.Replica (egress_port form, which bmv2's PI and p4sim accept)."""
    for r in replicas:
        msgs.add(egress_port=r.port, instance=r.instance)


def _replicas_text(replicas: list[Replica]) -> str:
    return ", ".join(f"{r.port}.{r.instance}" for r in replicas)


def _decode_replicas(msgs) -> list[Replica]:
    out = []
    for r in msgs:
        which = r.WhichOneof("port_kind")
        port = values.decode(r.port, 32) if which == "port" else r.egress_port
        out.append(Replica(port, r.instance))
    return out


@dataclass(slots=True)
class MulticastGroup:
    """A multicast group: the ports (and instances) a packet is copied to."""

    group_id: int
    replicas: list[Replica] = field(default_factory=list)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> MulticastGroup:
        """Build from {"group_id": G, "replicas": [port | {"port","instance"}, ...]}."""
        return cls(int(d["group_id"]), _replicas(list(d.get("replicas") or [])))

    def to_dict(self) -> dict[str, Any]:
        """The JSON form of from_dict (a replica of instance 0 is its port number)."""
        return {"group_id": self.group_id, "replicas": _replica_dicts(self.replicas)}

    def to_proto(self, schema: P4Schema | None = None) -> p4r.Entity:
        """Encode as a p4r.Entity (egress_port form, which bmv2's PI and p4sim accept)."""
        msg = p4r.MulticastGroupEntry(multicast_group_id=self.group_id)
        _encode_replicas(self.replicas, msg.replicas)
        ent = p4r.Entity()
        ent.packet_replication_engine_entry.multicast_group_entry.CopyFrom(msg)
        return ent

    @classmethod
    def from_proto(cls, schema: P4Schema | None, entity: p4r.Entity) -> MulticastGroup:
        """Decode from a p4r.Entity."""
        msg = entity.packet_replication_engine_entry.multicast_group_entry
        return cls(msg.multicast_group_id, _decode_replicas(msg.replicas))

    def __str__(self) -> str:
        return f"multicast {self.group_id} -> [{_replicas_text(self.replicas)}]"


@dataclass(slots=True)
class CloneSession:
    """A clone session: where cloned packets go."""

    session_id: int
    replicas: list[Replica] = field(default_factory=list)
    class_of_service: int = 0
    packet_length_bytes: int = 0

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> CloneSession:
        """Build from {"session_id": S, "replicas": [...], "class_of_service": C, "packet_length_bytes": L}."""
        return cls(int(d["session_id"]), _replicas(list(d.get("replicas") or [])),
                   int(d.get("class_of_service", 0)), int(d.get("packet_length_bytes", 0)))

    def to_dict(self) -> dict[str, Any]:
        """The JSON form of from_dict (zero class of service and packet length left out)."""
        d: dict[str, Any] = {"session_id": self.session_id, "replicas": _replica_dicts(self.replicas)}
        if self.class_of_service:
            d["class_of_service"] = self.class_of_service
        if self.packet_length_bytes:
            d["packet_length_bytes"] = self.packet_length_bytes
        return d

    def to_proto(self, schema: P4Schema | None = None) -> p4r.Entity:
        """Encode as a p4r.Entity."""
        msg = p4r.CloneSessionEntry(session_id=self.session_id, class_of_service=self.class_of_service,
                                    packet_length_bytes=self.packet_length_bytes)
        _encode_replicas(self.replicas, msg.replicas)
        ent = p4r.Entity()
        ent.packet_replication_engine_entry.clone_session_entry.CopyFrom(msg)
        return ent

    @classmethod
    def from_proto(cls, schema: P4Schema | None, entity: p4r.Entity) -> CloneSession:
        """Decode from a p4r.Entity."""
        msg = entity.packet_replication_engine_entry.clone_session_entry
        return cls(msg.session_id, _decode_replicas(msg.replicas), msg.class_of_service, msg.packet_length_bytes)

    def __str__(self) -> str:
        return f"clone {self.session_id} -> [{_replicas_text(self.replicas)}]"


# -- packets and digests ----------------------------------------------------------------------------


@dataclass(slots=True)
class Packet:
    """A packet-in or packet-out: payload plus controller header fields by name."""

    payload: bytes
    metadata: dict[str, int] = field(default_factory=dict)

    def to_packet_out(self, schema: P4Schema) -> p4r.PacketOut:
        """Encode as a PacketOut using the "packet_out" controller header of the P4Info."""
        header = schema.packet_metadata["packet_out"]
        msg = p4r.PacketOut(payload=self.payload)
        given = dict(self.metadata)
        for md in header.metadata:
            if md.name in given:
                msg.metadata.add(metadata_id=md.id, value=values.encode(given.pop(md.name), md.bitwidth))
        if given:
            raise ValueError(f"packet_out metadata {sorted(given)}: expected some of "
                             f"{[m.name for m in header.metadata]}")
        return msg

    @classmethod
    def from_packet_in(cls, schema: P4Schema | None, msg: p4r.PacketIn) -> Packet:
        """Decode a PacketIn (metadata by name when a schema is known, else by id)."""
        meta: dict[str, int] = {}
        names: dict[int, str] = {}
        if schema is not None and len(schema.packet_metadata):
            try:
                names = {m.id: m.name for m in schema.packet_metadata["packet_in"].metadata}
            except ValueError:
                names = {}
        for m in msg.metadata:
            meta[names.get(m.metadata_id, str(m.metadata_id))] = int.from_bytes(m.value, "big")
        return cls(msg.payload, meta)


def decode_p4data(data: p4r.P4Data) -> Any:
    """A P4Data as Python: int for bitstrings, tuple for structs/headers, bool, str for enums."""
    which = data.WhichOneof("data")
    if which == "bitstring":
        return int.from_bytes(data.bitstring, "big")
    if which == "bool":
        return data.bool
    if which == "struct":
        return tuple(decode_p4data(m) for m in data.struct.members)
    if which == "tuple":
        return tuple(decode_p4data(m) for m in data.tuple.members)
    if which == "header":
        return tuple(int.from_bytes(b, "big") for b in data.header.bitstrings)
    if which == "enum":
        return data.enum
    return None


@dataclass(slots=True)
class DigestConfig:
    """A DigestEntry: turns a digest's delivery on (spec: lists of up to max_list_size, or after max_timeout_ns)."""

    digest: str
    max_timeout_ns: int = 0
    max_list_size: int = 1
    ack_timeout_ns: int = 1_000_000_000

    def to_proto(self, schema: P4Schema) -> p4r.Entity:
        """Encode as a p4r.Entity (INSERT to enable, MODIFY to change, DELETE to stop)."""
        info = schema.digests[self.digest]
        msg = p4r.DigestEntry(digest_id=info.preamble.id)
        msg.config.max_timeout_ns = self.max_timeout_ns
        msg.config.max_list_size = self.max_list_size
        msg.config.ack_timeout_ns = self.ack_timeout_ns
        return p4r.Entity(digest_entry=msg)

    @classmethod
    def from_proto(cls, schema: P4Schema, entity: p4r.Entity) -> DigestConfig:
        """Decode from a p4r.Entity."""
        msg = entity.digest_entry
        c = msg.config
        name = short_name(schema.digests[msg.digest_id].preamble.name)
        return cls(name, c.max_timeout_ns, c.max_list_size, c.ack_timeout_ns)

    def __str__(self) -> str:
        return (f"digest {short_name(self.digest)} max_list_size={self.max_list_size} "
                f"max_timeout_ns={self.max_timeout_ns} ack_timeout_ns={self.ack_timeout_ns}")


@dataclass(slots=True)
class DigestList:
    """A digest message: the learned data of one digest, to be acknowledged with its list id."""

    digest: str
    digest_id: int
    list_id: int
    data: list[Any]
    timestamp: int

    @classmethod
    def from_proto(cls, schema: P4Schema | None, msg: p4r.DigestList) -> DigestList:
        """Decode a DigestList."""
        name = str(msg.digest_id)
        if schema is not None and msg.digest_id in schema.digests.by_id:
            name = short_name(schema.digests[msg.digest_id].preamble.name)
        return cls(name, msg.digest_id, msg.list_id, [decode_p4data(d) for d in msg.data], msg.timestamp)


def decode_entity(schema: P4Schema, entity: p4r.Entity) -> Any:
    """Decode any read p4r.Entity into its entity object (TableEntry, CounterEntry, ...)."""
    which = entity.WhichOneof("entity")
    if which == "table_entry":
        return TableEntry.from_proto(schema, entity)
    if which == "action_profile_member":
        return ActionProfileMember.from_proto(schema, entity)
    if which == "action_profile_group":
        return ActionProfileGroup.from_proto(schema, entity)
    if which == "counter_entry":
        return CounterEntry.from_proto(schema, entity)
    if which == "direct_counter_entry":
        return DirectCounterEntry.from_proto(schema, entity)
    if which == "meter_entry":
        return MeterEntry.from_proto(schema, entity)
    if which == "register_entry":
        return RegisterEntry.from_proto(schema, entity)
    if which == "digest_entry":
        return DigestConfig.from_proto(schema, entity)
    if which == "packet_replication_engine_entry":
        pre = entity.packet_replication_engine_entry
        if pre.WhichOneof("type") == "multicast_group_entry":
            return MulticastGroup.from_proto(schema, entity)
        return CloneSession.from_proto(schema, entity)
    raise ValueError(f"entity kind {which!r}: not supported by decode_entity")
