"""SCPI text: header matching (long/short forms, case-insensitive), channel lists, error codes.

Pure functions; the emulator's server and the Polatis driver both use them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# SCPI-99 / IEEE 488.2 standard error numbers used by the emulator.
NO_ERROR = (0, "No error")
COMMAND_ERROR = -100
SYNTAX_ERROR = -102
DATA_TYPE_ERROR = -104
PARAMETER_NOT_ALLOWED = -108
MISSING_PARAMETER = -109
UNDEFINED_HEADER = -113
EXECUTION_ERROR = -200
SETTINGS_CONFLICT = -221
DATA_OUT_OF_RANGE = -222
TOO_MUCH_DATA = -223
QUEUE_OVERFLOW = -350

ERROR_TEXT = {
    COMMAND_ERROR: "Command error",
    SYNTAX_ERROR: "Syntax error",
    DATA_TYPE_ERROR: "Data type error",
    PARAMETER_NOT_ALLOWED: "Parameter not allowed",
    MISSING_PARAMETER: "Missing parameter",
    UNDEFINED_HEADER: "Undefined header",
    EXECUTION_ERROR: "Execution error",
    SETTINGS_CONFLICT: "Settings conflict",
    DATA_OUT_OF_RANGE: "Data out of range",
    TOO_MUCH_DATA: "Too much data",
    QUEUE_OVERFLOW: "Queue overflow",
}


class ScpiError(Exception):
    """A command failure with its SCPI error number; the server puts it in the error queue."""

    def __init__(self, code: int, detail: str = "") -> None:
        self.code = code
        self.detail = detail
        super().__init__(format_error(code, detail))


def format_error(code: int, detail: str = "") -> str:
    """The SYSTem:ERRor? answer: `0,"No error"` or `-222,"Data out of range; port 99"`."""
    if code == 0:
        return f'{NO_ERROR[0]},"{NO_ERROR[1]}"'
    text = ERROR_TEXT.get(code, "Error")
    if detail:
        text += "; " + detail.replace('"', "'")
    return f'{code},"{text}"'


def parse_error(answer: str) -> tuple[int, str]:
    """Parse a SYSTem:ERRor? answer into (code, message); raises ValueError if it is not one."""
    m = re.match(r'^\s*([+-]?\d+)\s*,\s*"(.*)"\s*$', answer)
    if not m:
        raise ValueError(f"SYST:ERR? answer {answer!r}: expected <code>,\"<message>\"")
    return int(m.group(1)), m.group(2)


@dataclass(slots=True, frozen=True)
class Mnemonic:
    """One header node, e.g. SWITch: short form "SWIT", long form "SWITCH"."""

    short: str
    long: str

    @classmethod
    def parse(cls, spec: str) -> Mnemonic:
        """From the conventional spelling with the short form in capitals ("CONNect")."""
        short = "".join(c for c in spec if not c.islower())
        return cls(short.upper(), spec.upper())

    def matches(self, word: str) -> bool:
        """True when `word` is the short or the long form (any case)."""
        w = word.upper()
        return w in (self.short, self.long)


@dataclass(slots=True)
class Header:
    """A command header pattern such as ":OXC:SWITch:CONNect:ADD" or "*IDN?"."""

    spec: str
    nodes: tuple[Mnemonic, ...] = field(default=())
    query: bool = False

    def __post_init__(self) -> None:
        text = self.spec.lstrip(":")
        self.query = text.endswith("?")
        text = text.rstrip("?")
        if text.startswith("*"):
            self.nodes = (Mnemonic(text.upper(), text.upper()),)
        else:
            self.nodes = tuple(Mnemonic.parse(part) for part in text.split(":"))

    def matches(self, header: str) -> bool:
        """True when a received header (no parameters) names this command."""
        text = header.strip().lstrip(":")
        query = text.endswith("?")
        if query != self.query:
            return False
        words = text.rstrip("?").split(":")
        return len(words) == len(self.nodes) and all(n.matches(w) for n, w in zip(self.nodes, words, strict=True))


def split_commands(line: str) -> list[str]:
    """Split a line into commands at ';' outside parentheses and quotes."""
    out, depth, quote, cur = [], 0, False, []
    for ch in line:
        if ch == '"':
            quote = not quote
        elif not quote and ch == "(":
            depth += 1
        elif not quote and ch == ")":
            depth -= 1
        if ch == ";" and depth == 0 and not quote:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    out.append("".join(cur).strip())
    return [c for c in out if c]


def split_header(command: str) -> tuple[str, str]:
    """Split "HEADER params" into (header, params)."""
    parts = command.strip().split(None, 1)
    if not parts:
        return "", ""
    return parts[0], parts[1].strip() if len(parts) > 1 else ""


_LIST_RE = re.compile(r"\(\s*@([^)]*)\)")


def parse_channel_lists(params: str, max_channel: int, max_lists: int = 2) -> list[list[int]]:
    """Parse "(@1,2),(@17,18)" (ranges "(@1:4)" allowed) into [[1, 2], [17, 18]].

    Every channel and both ends of every range must lie in 1..max_channel (the switch's 2N ports), one
    list may name at most max_channel channels, and there are at most `max_lists` lists (a connection
    command has two): a range is checked before it is expanded and a list past the last is refused
    before it is read, so a command's memory is bounded by the switch size, never by what it carries
    (6,500 lists on one line of a 1024-port switch once took 516 MiB).
    """
    text = params.strip()
    if not text:
        raise ScpiError(MISSING_PARAMETER, "expected channel lists like (@1,2),(@17,18)")
    lists: list[list[int]] = []
    pos = 0
    while pos < len(text):
        if len(lists) == max_lists:
            raise ScpiError(SYNTAX_ERROR, f"more than {max_lists} channel lists")
        m = _LIST_RE.match(text, pos)
        if not m:
            raise ScpiError(SYNTAX_ERROR, f"bad channel list at {text[pos:pos + 40]!r}")
        lists.append(_parse_channels(m.group(1), max_channel))
        pos = m.end()
        rest = text[pos:].lstrip()
        if rest.startswith(","):
            pos = len(text) - len(rest) + 1
            while pos < len(text) and text[pos].isspace():
                pos += 1
            if pos >= len(text):
                raise ScpiError(SYNTAX_ERROR, "channel list expected after ','")
        elif rest:
            raise ScpiError(SYNTAX_ERROR, f"unexpected {rest[:40]!r} after channel list")
        else:
            break
    return lists


_NUMBER_RE = re.compile(r"[+-]?[0-9]+")  # ASCII only: int() would also take "1_0" or Arabic-Indic digits


def _channel(text: str, max_channel: int) -> int:
    if not _NUMBER_RE.fullmatch(text):
        raise ScpiError(DATA_TYPE_ERROR, f"channel {text[:40]!r} is not a number")
    value = int(text) if len(text) <= 12 else max_channel + 1  # a longer number is out of range anyway
    if not 1 <= value <= max_channel:
        raise ScpiError(DATA_OUT_OF_RANGE, f"channel {text[:12]}: expected 1..{max_channel}")
    return value


def _parse_channels(body: str, max_channel: int) -> list[int]:
    out: list[int] = []
    if not body.strip():
        return out
    for item in body.split(","):
        item = item.strip()
        lo, sep, hi = item.partition(":")
        if sep:
            a, b = _channel(lo.strip(), max_channel), _channel(hi.strip(), max_channel)
            if a > b:
                raise ScpiError(DATA_OUT_OF_RANGE, f"descending range {item}")
            count = b - a + 1
        else:
            a = b = _channel(item, max_channel)
            count = 1
        if len(out) + count > max_channel:
            raise ScpiError(DATA_OUT_OF_RANGE, f"channel list of more than {max_channel} channels: expected "
                                               f"at most the switch's 1..{max_channel}")
        out.extend(range(a, b + 1))
    return out


def format_channel_lists(*lists: list[int]) -> str:
    """Format lists as "(@1,2),(@17,18)"."""
    return ",".join("(@" + ",".join(str(p) for p in lst) + ")" for lst in lists)


def parse_int_param(params: str) -> int:
    """Parse a single integer parameter (NR1)."""
    text = params.strip()
    if not text:
        raise ScpiError(MISSING_PARAMETER, "expected a port number")
    try:
        return int(text)
    except ValueError:
        raise ScpiError(DATA_TYPE_ERROR, f"{text!r} is not an integer") from None


def parse_address(text: str) -> tuple[str, int]:
    """Parse an SCPI endpoint "127.0.0.1:PORT" (PORT may be 0 for any free port, when listening)."""
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise ValueError(f"address {text!r}: expected <ip>:<port>")
    return host, int(port)
