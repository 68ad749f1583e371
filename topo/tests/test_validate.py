"""Validation: each defect gives one ValueError line naming the bad value."""

import pytest

from topo.generators import fattree, ucd4
from topo.model import Link, OcsPort
from topo.validate import validate


def _one_line(exc):
    assert "\n" not in str(exc.value)


def test_generated_topologies_are_valid():
    validate(fattree(4))
    validate(ucd4())


def test_unknown_node_in_link():
    t = fattree(4)
    t.links.append(Link("ghost", 1, "e0_0", 1))
    with pytest.raises(ValueError, match="unknown node 'ghost'") as exc:
        validate(t)
    _one_line(exc)


def test_port_used_twice():
    t = fattree(4)
    t.links[20] = Link(t.links[20].a, t.links[20].a_port, t.links[21].b, t.links[21].b_port)
    with pytest.raises(ValueError, match=r"port \w+:\d+: used twice") as exc:
        validate(t)
    _one_line(exc)


def test_port_the_switch_lacks():
    t = fattree(4)
    t.links.append(Link("e0_0", 9, "e0_1", 9))
    with pytest.raises(ValueError, match="port e0_0:9"):
        validate(t)


def test_duplicate_ip():
    t = fattree(4)
    t.hosts[1].ip = t.hosts[0].ip
    with pytest.raises(ValueError, match=r"IPv4 address 10\.0\.0\.2: used by h0_0_0 and h0_0_1"):
        validate(t)


def test_duplicate_mac_and_device_id():
    t = fattree(4)
    t.hosts[1].mac = t.hosts[0].mac
    with pytest.raises(ValueError, match="MAC 00:00:0a:00:00:02"):
        validate(t)
    t = fattree(4)
    t.switches[1].device_id = 1
    with pytest.raises(ValueError, match="device_id 1: used by e0_0 and e0_1"):
        validate(t)


def test_gateway_outside_subnet():
    t = fattree(4)
    t.hosts[0].gateway = "10.9.9.1"
    with pytest.raises(ValueError, match="gateway=10.9.9.1"):
        validate(t)


def test_ocs_port_wired_twice():
    t = ucd4()
    t.ocs[0].ports.append(OcsPort(1, "s3", 3))
    with pytest.raises(ValueError, match="OCS ocs port 1: wired twice"):
        validate(t)


def test_ocs_fibre_on_a_linked_port():
    t = ucd4()
    t.ocs[0].ports[0] = OcsPort(1, "s1", 4)  # s1:4 is the bypass link
    with pytest.raises(ValueError, match=r"port s1:4: used twice"):
        validate(t)


def test_bad_circuit_maps():
    t = ucd4()
    t.ocs[0].circuit_maps["bad"] = [(1, 3), (3, 4)]
    with pytest.raises(ValueError, match="port 3 is in two circuits"):
        validate(t)
    t = ucd4()
    t.ocs[0].circuit_maps["bad"] = [(1, 9)]
    with pytest.raises(ValueError, match="port 9 is not wired"):
        validate(t)
    t = ucd4()
    t.ocs[0].default_map = "nope"
    with pytest.raises(ValueError, match="default_map='nope'"):
        validate(t)


def test_bad_role_delay_and_cpu_port():
    t = fattree(4)
    t.switches[0].role = "router"
    with pytest.raises(ValueError, match="role='router'"):
        validate(t)
    t = fattree(4)
    t.links[0].delay = "fast"
    with pytest.raises(ValueError, match="delay='fast'"):
        validate(t)
    t = fattree(4)
    t.switches[0].ports[255] = "02:00:00:01:00:ff"
    with pytest.raises(ValueError, match="port 255"):
        validate(t)


def test_host_without_link_and_duplicate_name():
    t = fattree(4)
    t.links = [lk for lk in t.links if lk.a != "h0_0_0"]
    with pytest.raises(ValueError, match="host h0_0_0: has 0 links"):
        validate(t)
    t = fattree(4)
    t.hosts[0].name = "e0_0"
    with pytest.raises(ValueError, match="name 'e0_0': used twice"):
        validate(t)


@pytest.mark.parametrize("queue", [0, -3, "4", 2.5, True])
def test_bad_switch_queue(queue):
    t = ucd4()
    t.params["switch_queue_pkts"] = queue
    with pytest.raises(ValueError, match=f"params.switch_queue_pkts={queue!r}: expected an integer >= 1") as exc:
        validate(t)
    _one_line(exc)
    t.params["switch_queue_pkts"] = 4
    validate(t)
