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
    for port in (253, 254, 255):  # every fabric switch's hold loop (emulation/holdloop.py), the CPU port
        t = fattree(4)
        t.switches[0].ports[port] = "02:00:00:01:00:ff"
        _bad(t, rf"port {port}: expected 1\.\.252 \(253 and 254 are the hold loop, 255 the CPU port\)")
    t = fattree(4)
    t.switches[0].ports[252] = "02:00:00:01:00:fc"
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


# -- what Mininet, tc or P4Runtime would crash on or silently ignore (issue: hardening, item 8) ----------


def _bad(t, pattern):
    with pytest.raises(ValueError, match=pattern) as exc:
        validate(t)
    _one_line(exc)


def _rename_host(t, old, new):
    for h in t.hosts:
        if h.name == old:
            h.name = new
    for lk in t.links:
        lk.a, lk.b = (new if lk.a == old else lk.a), (new if lk.b == old else lk.b)


@pytest.mark.parametrize("name", ["h" * 11, "averyverylonghostname"])
def test_host_names_whose_interface_would_not_fit(name):
    t = ucd4()
    _rename_host(t, "h1", name)
    _bad(t, rf"host name '{name}': {len(name)} characters; expected at most 10 .*Linux's 15")
    t = ucd4()
    _rename_host(t, "h1", "h" * 10)  # h...h-eth0: 15 characters, the most Linux takes
    validate(t)


def test_switch_and_ocs_names_whose_interfaces_would_not_fit():
    t = fattree(4)  # edge switches have ports 1..4: <name>-eth4 (the hold loop's <name>-ho is shorter)
    t.switches[0].name = "e" * 11
    _bad(t, r"switch name 'eeeeeeeeeee': 11 characters; expected at most 10")
    t = ucd4()  # OCS ports 1..6 and patch ends <ocs>-eth6t: name + 6
    t.ocs[0].name = "o" * 10
    _bad(t, r"OCS name 'oooooooooo': 10 characters; expected at most 9")


@pytest.mark.parametrize("device_id", [2**64, 2**70, 0, -1, True, 1.5])
def test_device_id_outside_uint64(device_id):
    t = ucd4()
    t.switches[0].device_id = device_id
    _bad(t, r"device_id=.*: expected an integer 1\.\.2\^64-1")


def test_device_id_at_the_top_of_uint64():
    t = ucd4()
    t.switches[0].device_id = 2**64 - 1
    validate(t)


@pytest.mark.parametrize("rate", [1e-9, 0.0, -5.0, 1000.5, 1e6, float("inf"), float("nan"), True, "10"])
def test_link_rates_mininet_cannot_shape(rate):
    t = ucd4()
    t.links[0].rate_mbit = rate
    _bad(t, r"rate_mbit=.*: expected 0\.001\.\.1000 Mbit/s")
    t = ucd4()
    t.ocs[0].rate_mbit = rate
    _bad(t, r"OCS ocs: rate_mbit=.*: expected 0\.001\.\.1000 Mbit/s")


@pytest.mark.parametrize("rate", [0.001, 1000, 1000.0, 20])
def test_link_rates_in_range(rate):
    t = ucd4()
    t.links[0].rate_mbit = rate
    validate(t)


@pytest.mark.parametrize(("ip", "gateway", "what"), [
    ("224.0.1.2/24", "224.0.1.1", "multicast"), ("127.0.0.2/8", "127.0.0.1", "loopback"),
    ("0.0.0.2/24", "0.0.0.1", "this-network"), ("240.0.0.2/24", "240.0.0.1", "reserved"),
    ("10.0.1.2/24", "239.0.0.1", "multicast"),  # a multicast gateway
    ("10.0.1.0/24", "10.0.1.1", "network address"), ("10.0.1.255/24", "10.0.1.1", "broadcast address"),
    ("10.0.1.2/24", "10.0.1.255", "broadcast address"),
])
def test_host_addresses_that_are_not_a_unicast_host(ip, gateway, what):
    t = ucd4()
    t.hosts[0].ip, t.hosts[0].gateway = ip, gateway
    _bad(t, rf"h1: (ip|gateway)=.*{what}.*; expected a")


def test_point_to_point_subnets_keep_both_addresses():
    t = ucd4()
    t.hosts[0].ip, t.hosts[0].gateway = "10.0.1.0/31", "10.0.1.1"  # RFC 3021: /31 has no broadcast
    validate(t)


@pytest.mark.parametrize("mac", ["ff:ff:ff:ff:ff:ff", "01:00:5e:00:00:01", "33:33:00:00:00:01", "00:00:00:00:00:00"])
def test_broadcast_multicast_and_zero_macs(mac):
    t = ucd4()
    t.hosts[0].mac = mac
    _bad(t, rf"h1: mac={mac}: .*expected a unicast MAC")
    t = ucd4()
    t.switches[0].ports[1] = mac
    _bad(t, rf"s1 port 1: mac={mac}: .*expected a unicast MAC")


def test_ocs_port_beyond_the_ocs_switch():
    t = ucd4()
    t.ocs[0].ports[0].port = 300
    _bad(t, r"OCS ocs port 300: expected 1\.\.254")
