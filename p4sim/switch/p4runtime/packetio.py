"""Packet-in and packet-out: the controller headers of P4Info controller_packet_metadata, as bits.

As in PI for bmv2 (proto/frontend/src/packet_io_mgr.cpp): a PacketOut becomes one frame arriving on
the CPU port, the `packet_out` header (its metadata fields packed in P4Info order, most significant
bit first; a field not given is 0, a field given twice takes the last value) followed by the
payload; a frame the program sends to the CPU port starts with the `packet_in` header, which is
unpacked into PacketIn metadata (every field, padding included) and removed from the payload. PI
drops a frame shorter than the packet_in header, and rejects unknown metadata ids and values too
wide for their field; bmv2's PI does so silently (no StreamError unless the client asks for error
reporting), p4sim answers with a StreamError.
"""

from __future__ import annotations

from p4sim.switch.p4runtime import codec
from p4sim.switch.p4runtime.errors import P4RuntimeError, invalid
from p4sim.switch.p4runtime.proto import p4r
from p4sim.switch.p4runtime.schema import MetadataInfo


def header_bytes(fields: list[MetadataInfo]) -> int:
    """Return the size in bytes of a controller header (its fields' bits rounded up to bytes)."""
    return (sum(f.bitwidth for f in fields) + 7) // 8


def packet_out_frame(fields: list[MetadataInfo], msg: p4r.PacketOut) -> bytes:
    """Return the frame a PacketOut injects on the CPU port: packed packet_out header + payload."""
    if not fields:
        if len(msg.metadata):
            raise invalid("the P4Info declares no packet_out header, yet the PacketOut has metadata")
        return msg.payload
    by_id = {f.id: f for f in fields}
    values: dict[int, int] = {}
    for md in msg.metadata:
        f = by_id.get(md.metadata_id)
        if f is None:
            raise invalid(f"unknown packet_out metadata id {md.metadata_id}")
        # given twice: the last value counts (PI); a field not given is 0 (PI)
        values[md.metadata_id] = codec.decode(md.value, f.bitwidth, f"packet_out metadata {f.name!r}")
    acc = 0
    bits = 0
    for f in fields:
        acc = (acc << f.bitwidth) | values.get(f.id, 0)
        bits += f.bitwidth
    pad = (-bits) % 8
    return (acc << pad).to_bytes((bits + pad) // 8, "big") + msg.payload


def packet_in_message(fields: list[MetadataInfo], frame: bytes) -> p4r.PacketIn:
    """Return the PacketIn of a frame sent to the CPU port (header unpacked, payload after it)."""
    msg = p4r.PacketIn()
    size = header_bytes(fields)
    if not fields:
        msg.payload = frame
        return msg
    if len(frame) < size:
        raise P4RuntimeError(3, f"frame of {len(frame)} bytes to the CPU port is shorter than the "
                                f"{size}-byte packet_in header")
    total = sum(f.bitwidth for f in fields)
    acc = int.from_bytes(frame[:size], "big") >> (size * 8 - total)
    shift = total
    for f in fields:
        shift -= f.bitwidth
        msg.metadata.add(metadata_id=f.id, value=codec.encode((acc >> shift) & ((1 << f.bitwidth) - 1)))
    msg.payload = frame[size:]
    return msg
