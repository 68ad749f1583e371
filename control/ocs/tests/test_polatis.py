import socket
import threading
import time

import pytest

from control.ocs.driver import OcsError, OcsTimeout, duplex_pairs
from control.ocs.polatis import PolatisDriver
from emulation.ocs.delay import DelayModel
from emulation.ocs.emulator import EmulatedOcs
from emulation.ocs.server import ScpiServer


@pytest.fixture
def emulator():
    ocs = EmulatedOcs(8, DelayModel(mirror_ms=25, lock_ms=10, lock_jitter_ms=0, poll_period_ms=20,
                                    missed_poll_prob=0, missed_poll_jitter_ms=0))
    srv = ScpiServer(("127.0.0.1", 0), ocs)
    srv.start()
    yield ocs, srv.port
    srv.shutdown()
    srv.server_close()
    ocs.close()


def test_driver_against_emulator_over_tcp(emulator):
    ocs, port = emulator
    with PolatisDriver("127.0.0.1", port, timeout=2) as drv:
        assert drv.identify().startswith("HITLESS,OCS-EMULATOR")
        assert drv.size == 8
        drv.connect(duplex_pairs([(1, 2), (3, 4)], 8))
        assert drv.query() == {1: 10, 2: 9, 3: 12, 4: 11}
        t0 = time.monotonic()
        drv.wait_complete()
        assert time.monotonic() - t0 <= 0.1
        st = drv.port_status(10)
        assert st.connected_to == 1
        assert ocs.wait_settled(2)
        assert drv.port_status(10).light is True
        drv.disconnect([(1, 10)])
        assert drv.query() == {2: 9, 3: 12, 4: 11}
        drv.set_map(duplex_pairs([(1, 3)], 8))
        assert drv.query() == {1: 11, 3: 9}
        drv.set_map([])
        assert drv.query() == {}
        drv.reset()


def test_device_errors_raise_with_code(emulator):
    ocs, port = emulator
    with PolatisDriver("127.0.0.1", port, timeout=2) as drv:
        drv.connect([(1, 9)])
        with pytest.raises(OcsError) as exc:
            drv.connect([(2, 9)])  # output 9 busy: the emulator says -221
        assert exc.value.code == -221
        with pytest.raises(OcsError) as exc:
            drv.command(":OXC:SWIT:BOGUS")
        assert exc.value.code == -113
        with pytest.raises(OcsError) as exc:
            drv.ask(":OXC:SWIT:CONN:PORT? 99")
        assert exc.value.code == -222
        # the session still works after errors
        assert drv.query() == {1: 9}
        with pytest.raises(ValueError, match="expected input in 1..8"):
            drv.connect([(9, 1)])


def _silent_server():
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    conns = []

    def accept():
        try:
            c, _ = srv.accept()
            conns.append(c)
        except OSError:
            pass

    threading.Thread(target=accept, daemon=True).start()
    return srv, conns


def test_timeout_when_the_device_does_not_answer():
    srv, conns = _silent_server()
    try:
        drv = PolatisDriver("127.0.0.1", srv.getsockname()[1], timeout=0.2)
        t0 = time.monotonic()
        with pytest.raises(OcsTimeout, match="no answer within 0.2"):
            drv.open()
        assert time.monotonic() - t0 < 1.0
        drv.close()
    finally:
        srv.close()
        for c in conns:
            c.close()


def test_connection_refused():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    with pytest.raises(OcsError, match="127.0.0.1"):
        PolatisDriver("127.0.0.1", port, timeout=0.5).open()


def test_session_is_reopened_after_a_timeout(emulator):
    ocs, port = emulator
    drv = PolatisDriver("127.0.0.1", port, timeout=2).open()
    try:
        ocs_wait = ocs.wait_complete
        ocs.wait_complete = lambda timeout=None: time.sleep(0.5)  # a slow *OPC?
        with pytest.raises(OcsTimeout):
            drv.wait_complete(timeout=0.1)
        ocs.wait_complete = ocs_wait
        drv.connect([(1, 9)])  # a fresh session; the late "1" of the old one is not read as an answer
        assert drv.query() == {1: 9}
    finally:
        drv.close()
