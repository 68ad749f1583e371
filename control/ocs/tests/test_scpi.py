import pytest

from control.ocs import scpi
from control.ocs.scpi import Header, ScpiError


@pytest.mark.parametrize("text", [":OXC:SWITch:CONNect:ADD", "oxc:swit:conn:add", ":oxc:switch:connect:add",
                                  "OXC:SWIT:CONNECT:ADD"])
def test_long_and_short_forms_case_insensitive(text):
    assert Header(":OXC:SWITch:CONNect:ADD").matches(text)


@pytest.mark.parametrize("text", [":OXC:SWITC:CONN:ADD", ":OXC:SWIT:CONN:ADD?", ":OXC:SWIT:CONN", ":OX:SWIT:CONN:ADD"])
def test_partial_or_wrong_forms_do_not_match(text):
    assert not Header(":OXC:SWITch:CONNect:ADD").matches(text)


def test_common_commands_and_queries():
    assert Header("*IDN?").matches("*idn?")
    assert not Header("*IDN?").matches("*IDN")
    assert Header(":SYSTem:ERRor?").matches("SYST:ERR?")
    assert Header(":SYSTem:ERRor?").matches(":system:error?")


def test_channel_lists():
    assert scpi.parse_channel_lists("(@1,2),(@17,18)", 32) == [[1, 2], [17, 18]]
    assert scpi.parse_channel_lists("(@1:3), (@17:19)", 32) == [[1, 2, 3], [17, 18, 19]]
    assert scpi.parse_channel_lists("(@),(@)", 32) == [[], []]
    assert scpi.format_channel_lists([1, 2], [17, 18]) == "(@1,2),(@17,18)"
    for bad, code in [("", scpi.MISSING_PARAMETER), ("1,2", scpi.SYNTAX_ERROR), ("(@1,x)", scpi.DATA_TYPE_ERROR),
                      ("(@1),", scpi.SYNTAX_ERROR), ("(@3:1)", scpi.DATA_OUT_OF_RANGE), ("(@1) junk", scpi.SYNTAX_ERROR)]:
        with pytest.raises(ScpiError) as exc:
            scpi.parse_channel_lists(bad, 32)
        assert exc.value.code == code, bad


@pytest.mark.parametrize(("text", "code"), [
    ("(@1:30000000),(@17:30000016)", scpi.DATA_OUT_OF_RANGE),  # 2.3 GiB when expanded before the check
    ("(@1:" + "9" * 5000 + ")", scpi.DATA_OUT_OF_RANGE),  # int() of this alone raises in Python 3.11
    ("(@0)", scpi.DATA_OUT_OF_RANGE), ("(@-1)", scpi.DATA_OUT_OF_RANGE), ("(@33)", scpi.DATA_OUT_OF_RANGE),
    ("(@" + ",".join(["1:32"] * 2) + ")", scpi.DATA_OUT_OF_RANGE),  # 64 channels named on a 2x16 switch
    ("(@1_0)", scpi.DATA_TYPE_ERROR), ("(@\u0661)", scpi.DATA_TYPE_ERROR),
])
def test_channels_are_checked_against_the_switch_before_ranges_expand(text, code):
    with pytest.raises(ScpiError) as exc:
        scpi.parse_channel_lists(text, 32)
    assert exc.value.code == code, (text[:40], exc.value)
    assert "1..32" in str(exc.value) or code == scpi.DATA_TYPE_ERROR


def test_split_and_errors():
    assert scpi.split_commands("*CLS; :OXC:SWIT:CONN:ADD (@1;2),(@3) ;*IDN?") == [
        "*CLS", ":OXC:SWIT:CONN:ADD (@1;2),(@3)", "*IDN?"]
    assert scpi.split_header(":OXC:SWIT:CONN:PORT?  5 ") == (":OXC:SWIT:CONN:PORT?", "5")
    assert scpi.format_error(0) == '0,"No error"'
    assert scpi.format_error(-113, "FOO") == '-113,"Undefined header; FOO"'
    assert scpi.parse_error('-222,"Data out of range; port 99"') == (-222, "Data out of range; port 99")
    with pytest.raises(ValueError, match="SYST:ERR"):
        scpi.parse_error("1")
