"""Hash and checksum algorithms of bmv2, bit-exact (bm_sim/calculations.cpp semantics).

Each algorithm takes the input bytes (fields packed big-endian, bit by bit, zero-padded to a whole
byte at the end, as bmv2's BufBuilder) and returns an unsigned integer:
crc16 (CRC-16/ARC), crc32 (CRC-32/ISO-HDLC), crcCCITT, crc8/16/32/64_custom (bmv2's default
parameters), csum16/cksum16 (Internet checksum), identity (first 8 bytes, big-endian), xor16/xor32,
xxh64 is not provided. `random` and round_robin are stateful and live in the generated code.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from functools import cache


def _reflect(v: int, n: int) -> int:
    r = 0
    for _ in range(n):
        r = (r << 1) | (v & 1)
        v >>= 1
    return r


@cache
def _table(width: int, poly: int) -> tuple[int, ...]:
    top = 1 << (width - 1)
    mask = (1 << width) - 1
    out = []
    for d in range(256):
        r = d << (width - 8)
        for _ in range(8):
            r = ((r << 1) ^ poly) if r & top else (r << 1)
        out.append(r & mask)
    return tuple(out)


_REFL8 = tuple(_reflect(i, 8) for i in range(256))


def make_crc(width: int, poly: int, init: int, xorout: int, refin: bool, refout: bool) -> Callable[[bytes], int]:
    """A table-driven CRC with bmv2's crc_custom parameters (same algorithm as bmv2's)."""
    table = _table(width, poly)
    mask = (1 << width) - 1
    shift = width - 8

    def crc(data: bytes) -> int:
        r = init
        for b in data:
            if refin:
                b = _REFL8[b]
            r = table[b ^ (r >> shift)] ^ ((r << 8) & mask)
        if refout:
            r = _reflect(r, width)
        return r ^ xorout

    return crc


_crc16_arc = make_crc(16, 0x8005, 0, 0, True, True)


def crc16(data: bytes) -> int:
    """bmv2 crc16: CRC-16/ARC (poly 0x8005, reflected, init 0)."""
    # binascii has no ARC variant; the reflected table form below is equivalent and faster
    r = 0
    t = _ARC_TABLE
    for b in data:
        r = (r >> 8) ^ t[(r ^ b) & 0xFF]
    return r


def _arc_table() -> tuple[int, ...]:
    out = []
    for i in range(256):
        r = i
        for _ in range(8):
            r = (r >> 1) ^ 0xA001 if r & 1 else r >> 1
        out.append(r)
    return tuple(out)


_ARC_TABLE = _arc_table()


def crc32(data: bytes) -> int:
    """bmv2 crc32: the standard CRC-32 (zlib)."""
    return zlib.crc32(data)


def csum16(data: bytes) -> int:
    """bmv2 csum16/cksum16: Internet checksum (ones' complement of the ones' complement sum)."""
    if len(data) & 1:
        data = data + b"\x00"
    return csum16_int(int.from_bytes(data, "big"))


def csum16_int(x: int) -> int:
    """Internet checksum of an even number of bytes given as one big-endian integer."""
    # 2**16 == 1 (mod 0xFFFF), so the end-around-carry sum of the 16-bit words is x mod 0xFFFF,
    # except that a non-zero sum is never 0 in ones' complement (it is 0xFFFF).
    s = x % 0xFFFF
    if s == 0 and x:
        s = 0xFFFF
    return ~s & 0xFFFF


def identity(data: bytes) -> int:
    """bmv2 identity: the first (up to) 8 bytes as a big-endian integer."""
    return int.from_bytes(data[:8], "big")


def _xor(n: int) -> Callable[[bytes], int]:
    def h(data: bytes) -> int:
        r = 0
        for i in range(0, len(data), n):
            r ^= int.from_bytes(data[i:i + n].ljust(n, b"\x00"), "big")
        return r
    return h


xor16 = _xor(2)
xor32 = _xor(4)

ALGORITHMS: dict[str, Callable[[bytes], int]] = {
    "crc16": crc16,
    "crc32": crc32,
    "crcCCITT": make_crc(16, 0x1021, 0xFFFF, 0, False, False),
    "csum16": csum16,
    "cksum16": csum16,
    "identity": identity,
    "xor16": xor16,
    "xor32": xor32,
    "crc8_custom": make_crc(8, 0x07, 0, 0, False, False),
    "crc16_custom": crc16,
    "crc32_custom": crc32,
    "crc64_custom": make_crc(64, 0x1B, 0, 0, True, True),
}


def algorithm(name: str) -> Callable[[bytes], int]:
    """The hash function called `name` in bmv2 JSON; ValueError for an unknown one."""
    fn = ALGORITHMS.get(name)
    if fn is None:
        raise ValueError(f"hash algorithm {name!r} is not supported; known: {', '.join(sorted(ALGORITHMS))}, random")
    return fn
