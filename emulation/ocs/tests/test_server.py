import socket
import time

import pytest

from control.ocs.scpi import parse_address
from emulation.ocs.delay import DelayModel
from emulation.ocs.emulator import EmulatedOcs
from emulation.ocs.server import ScpiServer, Session


@pytest.fixture
def server():
    ocs = EmulatedOcs(16, DelayModel(mirror_ms=30, lock_ms=0, lock_jitter_ms=0, poll_period_ms=0))
    srv = ScpiServer(("127.0.0.1", 0), ocs)
    srv.start()
    yield srv
    srv.shutdown()
    srv.server_close()
    ocs.close()


class Line:
    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=3)
        self.f = self.sock.makefile("rwb")

    def send(self, text):
        self.f.write(text.encode() + b"\n")
        self.f.flush()

    def ask(self, text):
        self.send(text)
        return self.f.readline().decode().strip()

    def close(self):
        self.f.close()
        self.sock.close()


def test_session_commands_long_short_forms():
    ocs = EmulatedOcs(16, DelayModel.instant())
    s = Session(ocs)
    try:
        assert s.execute_line("*IDN?").startswith("HITLESS,OCS-EMULATOR,16x16")
        assert s.execute_line(":OXC:SWITch:SIZE?") == "16,16"
        assert s.execute_line(":OXC:SWITch:CONNect:ADD (@1,2),(@17,18)") is None
        assert s.execute_line(":oxc:swit:conn:stat?") == "(@1,2),(@17,18)"
        assert s.execute_line(":OXC:SWIT:CONN:PORT? 17;:OXC:SWIT:CONN:PORT? 3") == "1;0"
        s.execute_line(":OXC:SWITCH:CONNECT:SUBTRACT (@1),(@17)")
        assert s.execute_line(":OXC:SWIT:CONN:STAT?") == "(@2),(@18)"
        s.execute_line(":OXC:SWIT:CONN:ONLY (@20,5),(@3,21)")  # either order in a pair
        assert ocs.query() == {3: 20, 5: 21}
        s.execute_line(":OXC:SWIT:DISC:ALL")
        assert s.execute_line(":OXC:SWIT:CONN:STAT?") == "(@),(@)"
        assert s.execute_line("*OPC?") == "1"
        assert s.execute_line("SYST:ERR?") == '0,"No error"'
    finally:
        ocs.close()


@pytest.mark.parametrize("line,code", [
    ("FOO:BAR", -113), (":OXC:SWIT:CONN:ADD (@1),(@99)", -222), (":OXC:SWIT:CONN:ADD (@1,2),(@17)", -102),
    (":OXC:SWIT:CONN:ADD", -109), ("*IDN? 3", -108), (":OXC:SWIT:CONN:PORT? x", -104),
    (":OXC:SWIT:CONN:SUB (@1),(@17)", -221), (":OXC:SWIT:CONN:PORT? 40", -222),
])
def test_errors_go_to_the_queue(line, code):
    ocs = EmulatedOcs(16, DelayModel.instant())
    s = Session(ocs)
    try:
        assert s.execute_line(line) is None
        err = s.execute_line(":SYSTem:ERRor?")
        assert err.startswith(f"{code},"), err
        assert s.execute_line(":SYST:ERR?") == '0,"No error"'
    finally:
        ocs.close()


def test_error_queue_overflow_and_cls():
    ocs = EmulatedOcs(4, DelayModel.instant())
    s = Session(ocs)
    try:
        for _ in range(12):
            s.execute_line("BAD")
        errs = [s.execute_line("SYST:ERR?") for _ in range(11)]
        assert errs[8].startswith("-113") and errs[9].startswith("-350") and errs[10].startswith("0,")
        s.execute_line("BAD")
        s.execute_line("*CLS")
        assert s.execute_line("SYST:ERR?") == '0,"No error"'
    finally:
        ocs.close()


def test_tcp_many_clients_bad_command_keeps_connection(server):
    a, b = Line(server.port), Line(server.port)
    try:
        a.send("NOT:A:COMMAND")
        b.send(":OXC:SWIT:CONN:ADD (@1),(@17)")
        assert b.ask(":SYST:ERR?") == '0,"No error"'
        assert a.ask(":SYST:ERR?").startswith("-113,")  # a's error stays in a's queue
        assert a.ask(":OXC:SWIT:CONN:PORT? 1") == "17"
        t0 = time.monotonic()
        a.send(":OXC:SWIT:CONN:ADD (@2),(@18)")
        assert a.ask("*OPC?") == "1"
        assert time.monotonic() - t0 >= 0.025  # mirror time
        assert b.ask(":OXC:SWIT:PORT:STAT? 18") == "1"
    finally:
        a.close()
        b.close()


def test_parse_address():
    assert parse_address("127.0.0.1:0") == ("127.0.0.1", 0)
    with pytest.raises(ValueError, match="expected <ip>:<port>"):
        parse_address("localhost")
