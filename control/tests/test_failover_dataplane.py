"""Data-plane fast failover on and off (ucd4 on p4sim, veth pairs; needs root).

With failover on, cutting the link of the active path at the ingress ToR moves the traffic to the
shadow version without the controller; with failover off (the thesis's switches, for the bbm and
mbb-timed baselines) the traffic stops until the controller moves the path itself.
"""

import ipaddress
import logging
import os
import time

import pytest

from control.events import EventLog
from control.network import Network
from emulation.ocs.delay import DelayModel
from emulation.vethnet import NetTestbed, Stream, udp_frame
from fabric.forwarding import Forwarding
from fabric.state import with_versions
from tablegen.entries import generate_states
from topo.generators import ucd4

log = logging.getLogger(__name__)

pytestmark = [pytest.mark.root, pytest.mark.slow,
              pytest.mark.skipif(os.geteuid() != 0, reason="needs root for veth pairs")]


@pytest.fixture(params=[True, False], ids=["failover-on", "failover-off"])
def bed(request, pipelines):
    topo = ucd4()
    tb = NetTestbed(topo, pipelines[0], pipelines[1], DelayModel.instant()).start()
    net = Network(topo, pipelines[0], events=EventLog(), timeout=5)
    try:
        net.install(generate_states(topo, "ecmp", failover=request.param))
        yield tb, net, request.param
    finally:
        net.close()
        tb.close()


def arrivals(s: Stream, t0: float, t1: float) -> int:
    """Frames that arrived between two monotonic times."""
    return sum(1 for t, _ in list(s.arrivals) if t0 <= t < t1)


def test_link_cut_with_and_without_failover(bed):
    tb, net, failover = bed
    hosts = tb.topo.host_map()
    h2, h3 = hosts["h2"], hosts["h3"]
    addr = int(ipaddress.IPv4Address(h3.address))
    st = net.desired()["s2"]
    (active,), (shadow,) = Forwarding(st).ports(addr, 0), Forwarding(st).ports(addr, 1)
    assert active != shadow
    gw = tb.topo.switch_map()["s2"].ports[1]
    s = Stream(tb.host_if["h2"], tb.host_if["h3"],
               lambda seq: udp_frame(h2.mac, gw, h2.address, h3.address, seq)).start()
    try:
        time.sleep(0.5)
        before = arrivals(s, 0, time.monotonic())
        assert before > 50, "no traffic before the cut"
        t_cut = time.monotonic()
        tb.cut("s2", active)
        time.sleep(0.8)
        # the switch notices the port going down within a few ms; leave it 250 ms on a loaded host
        during = arrivals(s, t_cut + 0.25, t_cut + 0.8)
        log.warning("failover %s: %d frames before the cut, %d in 250-800 ms after it", failover, before, during)
        if failover:  # no controller write since the install (no watcher runs either)
            assert during > 100, f"failover on: {during} frames in 550 ms after the cut"
        else:
            assert during == 0, f"failover off: {during} frames arrived over a cut link"
            # the controller moves the path to its shadow version: traffic comes back
            t_act = time.monotonic()
            net.sync({"s2": with_versions(st, {Forwarding(st).path_of(addr): 1})}, step="move")
            time.sleep(0.6)
            assert arrivals(s, t_act + 0.25, t_act + 0.6) > 50
    finally:
        s.stop()
        tb.cut("s2", active, up=True)


def test_failover_toggled_at_run_time(pipelines):
    topo = ucd4()
    tb = NetTestbed(topo, pipelines[0], pipelines[1], DelayModel.instant()).start()
    net = Network(topo, pipelines[0], events=EventLog(), timeout=5)
    s = None
    try:
        net.install(generate_states(topo, "ecmp"))
        plans = net.set_failover(False)
        # only the port_liveness entries change: one MODIFY per switch port, groups untouched
        for name, p in plans.items():
            nports = len(topo.switch_map()[name].ports)
            assert (p.inserts, p.modifies, p.deletes) == (0, nports, 0), (name, p.lines)
            assert all(line.startswith("~ port_liveness port=") for line in p.lines)
        assert all(p.empty for p in net.set_failover(False).values())
        h2, h3 = topo.host_map()["h2"], topo.host_map()["h3"]
        addr = int(ipaddress.IPv4Address(h3.address))
        (active,) = Forwarding(net.desired()["s2"]).ports(addr, 0)
        gw = topo.switch_map()["s2"].ports[1]
        s = Stream(tb.host_if["h2"], tb.host_if["h3"],
                   lambda seq: udp_frame(h2.mac, gw, h2.address, h3.address, seq)).start()
        time.sleep(0.4)
        tb.cut("s2", active)
        t_cut = time.monotonic()
        time.sleep(0.6)
        assert arrivals(s, t_cut + 0.25, t_cut + 0.6) == 0
        t_on = time.monotonic()
        net.set_failover(True, names=["s2"])  # the port is still down: watching it fails over at once
        time.sleep(0.6)
        assert arrivals(s, t_on + 0.25, t_on + 0.6) > 50
        tb.cut("s2", active, up=True)
    finally:
        if s is not None:
            s.stop()
        net.close()
        tb.close()
