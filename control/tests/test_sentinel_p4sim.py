"""The liveness sentinel against a real switch process: an older layout is rebuilt sentinel first,
then the switch is in sync, and toggling failover only modifies the port_liveness entries."""

import pytest

from control.switch import SwitchSession
from control.tests.netbed import compile_program
from emulation.testing import SwitchProcess
from fabric.state import with_failover
from p4rt.entities import ActionProfileGroup, ActionProfileMember, GroupMember
from tablegen.entries import generate_states
from topo.generators import fattree


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    pipeline = compile_program("fabric", tmp_path_factory.mktemp("fabric"))
    sw = SwitchProcess(device_id=1).start()
    sess = SwitchSession("e0_0", sw.address, 1, pipeline, timeout=5)
    try:
        sess.connect()
        yield sess
    finally:
        sess.close()
        sw.stop()


def old_layout(st):
    """The layout before the sentinel: one watched port_up member per port, member id = port."""
    old = st.copy()
    old.members = [m for m in old.members if m.profile != "liveness_selector"]
    old.groups = [g for g in old.groups if g.profile != "liveness_selector"]
    ports = [int(e.match["port"]) for e in old.entries if e.table == "port_liveness"]
    old.members[:0] = [ActionProfileMember("liveness_selector", p, "port_up") for p in ports]
    old.groups[:0] = [ActionProfileGroup("liveness_selector", p, [GroupMember(p, 1, p)]) for p in ports]
    return old


def test_old_layout_rebuilt_then_clean_toggles(session):
    want = generate_states(fattree(4), "ecmp")["e0_0"]
    assert not session.sync(old_layout(want)).rebuilt
    p = session.sync(want)
    assert p.rebuilt == ["liveness_selector"]
    first_insert = next(line for line in p.lines if line.startswith("+"))
    assert first_insert == "+ liveness_selector member 1 -> port_down()"
    assert session.sync(want).empty
    off = session.sync(with_failover(want, False))
    assert (off.inserts, off.modifies, off.deletes) == (0, 4, 0) and not off.rebuilt
    assert all(line.startswith("~ port_liveness port=") for line in off.lines)
    assert session.sync(want).modifies == 4
    assert session.sync(want, trust_cache=False).empty  # read back from the switch: nothing to write
