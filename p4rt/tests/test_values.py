import pytest

from p4rt import values


def test_canonical_encoding_is_shortest_with_one_byte_for_zero():
    assert values.encode(0, 9) == b"\x00"
    assert values.encode(1, 9) == b"\x01"
    assert values.encode(256, 9) == b"\x01\x00"
    assert values.encode("10.0.0.1", 32) == bytes([10, 0, 0, 1])
    assert values.encode("0.0.0.5", 32) == b"\x05"
    assert values.encode("00:00:00:00:00:01", 48) == b"\x01"
    assert values.encode("aa:bb:cc:dd:ee:ff", 48) == bytes.fromhex("aabbccddeeff")
    assert values.encode("0x0800", 16) == b"\x08\x00"
    assert values.encode("42", 16) == b"\x2a"


@pytest.mark.parametrize("bad,width", [(512, 9), (-1, 9), ("10.0.0.256", 32), ("zz", 8),
                                       ("1.2.3.4", 16), (True, 1), (1.5, 8)])
def test_bad_values_raise_one_line(bad, width):
    with pytest.raises(ValueError) as exc:
        values.encode(bad, width)
    assert "\n" not in str(exc.value)
    assert repr(bad) in str(exc.value) or str(bad) in str(exc.value)


def test_decode_accepts_padded_and_checks_width():
    assert values.decode(b"\x00\x00\x01", 9) == 1
    with pytest.raises(ValueError):
        values.decode(b"\x02\x00", 9)


def test_lpm_ternary_range():
    assert values.parse_lpm("10.1.0.0/16", 32) == (0x0A010000, 16)
    assert values.parse_lpm("10.1.0.7", 32) == (0x0A010007, 32)
    with pytest.raises(ValueError, match="beyond the /16"):
        values.parse_lpm("10.1.0.1/16", 32)
    with pytest.raises(ValueError, match="prefix length"):
        values.parse_lpm("10.1.0.0/33", 32)
    assert values.parse_ternary({"value": "10.0.0.0", "mask": "255.255.255.0"}, 32) == (0x0A000000, 0xFFFFFF00)
    with pytest.raises(ValueError, match="outside the mask"):
        values.parse_ternary({"value": "10.0.0.2", "mask": "255.255.255.0"}, 32)
    assert values.parse_ternary({"value": 0x800, "mask": "0xffff"}, 16) == (0x800, 0xFFFF)
    assert values.parse_range({"low": 10, "high": 20}, 16) == (10, 20)
    with pytest.raises(ValueError, match="low is above high"):
        values.parse_range({"low": 30, "high": 20}, 16)
    with pytest.raises(ValueError):
        values.parse_range({"low": 3}, 16)


def test_format_value_by_width_and_name():
    assert values.format_value(0x0A000001, 32, "ipv4_dst") == "10.0.0.1"
    assert values.format_value(1, 48, "dmac") == "00:00:00:00:00:01"
    assert values.format_value(7, 16, "path_id") == "7"
