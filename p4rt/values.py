"""Human-readable values <-> P4Runtime canonical bytestrings (P4Runtime spec section 8.4)."""

from __future__ import annotations

import ipaddress
import re

_MAC_RE = re.compile(r"^[0-9a-fA-F]{2}([:-][0-9a-fA-F]{2}){5}$")

Value = int | str | bytes


def parse_int(value: Value, bitwidth: int) -> int:
    """Return the integer meant by a human-readable value, checked to fit `bitwidth` bits."""
    number: int
    if isinstance(value, bool):
        raise ValueError(f"value {value!r}: expected an integer, address or hex string, not a bool")
    if isinstance(value, int):
        number = value
    elif isinstance(value, bytes):
        number = int.from_bytes(value, "big")
    elif isinstance(value, str):
        number = _parse_str(value.strip())
    else:
        raise ValueError(f"value {value!r}: expected int, str or bytes, got {type(value).__name__}")
    if number < 0 or number >= (1 << bitwidth):
        raise ValueError(f"value {value!r}: does not fit in {bitwidth} bits")
    return number


def _parse_str(text: str) -> int:
    if _MAC_RE.match(text):
        return int(text.replace(":", "").replace("-", ""), 16)
    if text.lower().startswith("0x"):
        try:
            return int(text, 16)
        except ValueError:
            raise ValueError(f"value {text!r}: bad hex number") from None
    if text.isdigit():
        return int(text)
    if "." in text or ":" in text:
        try:
            return int(ipaddress.ip_address(text))
        except ValueError:
            pass
    raise ValueError(f"value {text!r}: expected an integer, 0x hex, IPv4/IPv6 address or MAC address")


def encode(value: Value, bitwidth: int) -> bytes:
    """Encode a human-readable value as the canonical (shortest, at least one byte) bytestring."""
    return to_canonical(parse_int(value, bitwidth))


def to_canonical(number: int) -> bytes:
    """The shortest big-endian bytestring of a non-negative integer (one zero byte for 0)."""
    return number.to_bytes(max(1, (number.bit_length() + 7) // 8), "big")


def decode(data: bytes, bitwidth: int) -> int:
    """Decode a bytestring (canonical or padded) into an int, checked against `bitwidth`."""
    number = int.from_bytes(data, "big")
    if number >= (1 << bitwidth):
        raise ValueError(f"bytestring {data.hex()}: does not fit in {bitwidth} bits")
    return number


def prefix_mask(prefix_len: int, bitwidth: int) -> int:
    """The integer mask of an LPM prefix of `prefix_len` bits in a `bitwidth`-bit field."""
    return ((1 << prefix_len) - 1) << (bitwidth - prefix_len)


def parse_lpm(value: Value, bitwidth: int) -> tuple[int, int]:
    """Parse "10.1.0.0/16" (or a bare value, meaning a full-length prefix) into (value, prefix_len)."""
    if isinstance(value, str) and "/" in value:
        addr, _, length = value.partition("/")
        if not length.strip().isdigit():
            raise ValueError(f"lpm value {value!r}: expected ADDRESS/PREFIX_LENGTH")
        plen = int(length)
        if plen > bitwidth:
            raise ValueError(f"lpm value {value!r}: prefix length above the field's {bitwidth} bits")
        number = parse_int(addr, bitwidth)
    else:
        number, plen = parse_int(value, bitwidth), bitwidth
    if number & ~prefix_mask(plen, bitwidth):
        raise ValueError(f"lpm value {value!r}: bits set beyond the /{plen} prefix")
    return number, plen


def parse_ternary(value: object, bitwidth: int) -> tuple[int, int]:
    """Parse {"value": V, "mask": M} into (value, mask); value bits outside the mask are refused."""
    if not isinstance(value, dict) or set(value) != {"value", "mask"}:
        raise ValueError(f"ternary value {value!r}: expected {{'value': V, 'mask': M}}")
    number = parse_int(value["value"], bitwidth)
    mask = parse_int(value["mask"], bitwidth)
    if number & ~mask:
        raise ValueError(f"ternary value {value!r}: value has bits set outside the mask")
    return number, mask


def parse_range(value: object, bitwidth: int) -> tuple[int, int]:
    """Parse {"low": V, "high": V} into (low, high) with low <= high."""
    if not isinstance(value, dict) or set(value) != {"low", "high"}:
        raise ValueError(f"range value {value!r}: expected {{'low': V, 'high': V}}")
    low, high = parse_int(value["low"], bitwidth), parse_int(value["high"], bitwidth)
    if low > high:
        raise ValueError(f"range value {value!r}: low is above high")
    return low, high


def format_value(number: int, bitwidth: int, name: str = "") -> str:
    """Render an integer the way a person writes it: MAC for 48 bits, IPv4 for 32-bit address fields."""
    lname = name.lower()
    if bitwidth == 48 and ("mac" in lname or lname.endswith(("dst", "src"))):
        raw = number.to_bytes(6, "big")
        return ":".join(f"{b:02x}" for b in raw)
    if bitwidth == 32 and ("ip" in lname or "addr" in lname):
        return str(ipaddress.IPv4Address(number))
    if bitwidth == 128 and ("ip" in lname or "addr" in lname):
        return str(ipaddress.IPv6Address(number))
    return str(number)
